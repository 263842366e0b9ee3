"""The admin password gate of the dashboard's Operations page.

Constant-time comparison, and a lockout after repeated failures: after `max_failures` wrong
passwords in a row, every attempt is refused (even the right one) until `lockout` has passed.
One gate is shared by every browser session of a dashboard process, so opening new sessions
does not reset the count. Time is passed in, so the rule is testable (`AdminGate`);
`require_unlock` is the page's form around it.
"""

import hmac
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

import streamlit as st
from pydantic import SecretStr

Verdict = Literal["ok", "wrong", "locked"]


@dataclass
class AdminGate:
    max_failures: int = 5
    lockout: timedelta = timedelta(minutes=15)
    failures: int = 0
    locked_until: datetime | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self, entered: str, secret: str, now: datetime) -> Verdict:
        """Whether `entered` unlocks, is wrong, or is refused because of the lockout."""
        with self._lock:
            if self.locked_until is not None and now < self.locked_until:
                return "locked"
            matched = bool(secret) and hmac.compare_digest(
                entered.encode("utf-8"), secret.encode("utf-8")
            )
            if matched:
                self.failures, self.locked_until = 0, None
                return "ok"
            self.failures += 1
            if self.failures >= self.max_failures:
                self.failures, self.locked_until = 0, now + self.lockout
            return "wrong"


UNLOCKED = "_operations_unlocked"
WRONG = "_operations_wrong_password"
NO_PASSWORD = (
    "Locked: this page needs an admin password. Set ARENA_ADMIN_PASSWORD in the "
    "dashboard's environment (or .env) and restart it."
)


@st.cache_resource(show_spinner=False)
def _gate() -> AdminGate:
    """One gate per dashboard process: new browser sessions do not reset the failure count."""
    return AdminGate()


def require_unlock(secret: SecretStr | None) -> None:
    """Stop the page run unless this session entered `secret`: the password form while
    locked (nothing at all when no password is configured), a Lock button once unlocked."""
    if secret is None or not secret.get_secret_value():
        st.warning(NO_PASSWORD)
        st.stop()
        return

    def check_password() -> None:
        """On Enter: unlock on a constant-time match; count failures and lock out after five."""
        entered = str(st.session_state.get("admin-password") or "")
        st.session_state["admin-password"] = ""  # never keep the secret in the session
        if not entered:
            return
        verdict = _gate().check(entered, secret.get_secret_value(), datetime.now(UTC))
        st.session_state[UNLOCKED] = verdict == "ok"
        st.session_state[WRONG] = verdict

    if not st.session_state.get(UNLOCKED):
        st.text_input(
            "Admin password (press Enter)",
            type="password",
            key="admin-password",
            on_change=check_password,
        )
        st.button("Unlock", key="unlock")
        if st.session_state.get(WRONG) == "wrong":
            st.error("Wrong password.")
        elif st.session_state.get(WRONG) == "locked":
            st.error("Too many wrong passwords: locked for 15 minutes.")
        st.stop()

    if st.button("Lock", key="lock"):
        st.session_state[UNLOCKED] = False
        st.rerun()
