"""The admin password gate of the dashboard's Operations page.

Two rules, so that a stranger can neither guess fast nor lock the operator out:

- **Per session**: after `max_failures` wrong passwords in a row, that browser session is
  refused every attempt (even the right one) until `lockout` has passed. The count lives in the
  session's own state (`SessionTries` in st.session_state), so another visitor's wrong guesses
  never refuse the operator's right password: a lockout shared by every session would let anyone
  lock the page for everyone with five bad guesses.
- **Across sessions**: opening a new session escapes its own lockout, so wrong guesses also pass
  one process-wide `GuessPacer`: each wrong answer is held back until the next free slot on a
  timeline spaced `interval` apart (at most `most`), so a burst of wrong guesses from many
  sessions is answered one by one, slowly. The right password is checked first and is never
  held back or refused by the pacer.

The comparison is constant-time (`hmac.compare_digest`). Time is passed in, so the rules are
testable (`AdminGate.check`); `require_unlock` is the page's form around them.
"""

import hmac
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

import streamlit as st
from pydantic import SecretStr

Verdict = Literal["ok", "wrong", "locked"]
PACE = timedelta(seconds=1)  # the pacer's slot: wrong guesses answered at most one per second
MOST_HELD = timedelta(seconds=30)  # the longest a wrong answer is held back


@dataclass
class SessionTries:
    """One browser session's wrong passwords in a row, and its lockout."""

    failures: int = 0
    locked_until: datetime | None = None


@dataclass
class GuessPacer:
    """A process-wide timeline of wrong answers, one slot per `interval`."""

    interval: timedelta = PACE
    most: timedelta = MOST_HELD
    free_at: datetime | None = None  # when the next slot is free
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def charge(self, now: datetime) -> timedelta:
        """Book a wrong guess's slot: how long its answer is held back (≥ `interval`, growing
        with the wrong guesses still waiting, at most `most`)."""
        with self._lock:
            start = now if self.free_at is None or self.free_at < now else self.free_at
            held = min(start + self.interval - now, self.most)
            self.free_at = now + held
            return held


@dataclass(frozen=True)
class Attempt:
    """What one password attempt got: the verdict, and how long to hold a wrong answer."""

    verdict: Verdict
    held: timedelta = timedelta(0)


@dataclass
class AdminGate:
    max_failures: int = 5
    lockout: timedelta = timedelta(minutes=15)
    pacer: GuessPacer = field(default_factory=GuessPacer)

    def check(self, entered: str, secret: str, now: datetime, tries: SessionTries) -> Attempt:
        """Whether `entered` unlocks, is wrong (and how long its answer is held), or is refused
        because this session (`tries`, updated in place) is locked out."""
        if tries.locked_until is not None and now < tries.locked_until:
            return Attempt("locked")
        matched = bool(secret) and hmac.compare_digest(
            entered.encode("utf-8"), secret.encode("utf-8")
        )
        if matched:
            tries.failures, tries.locked_until = 0, None
            return Attempt("ok")
        tries.failures += 1
        if tries.failures >= self.max_failures:
            tries.failures, tries.locked_until = 0, now + self.lockout
        return Attempt("wrong", self.pacer.charge(now))


UNLOCKED = "_operations_unlocked"
WRONG = "_operations_wrong_password"
TRIES = "_operations_tries"
NO_PASSWORD = (
    "Locked: this page needs an admin password. Set ARENA_ADMIN_PASSWORD in the "
    "dashboard's environment (or .env) and restart it."
)
LOCKED = "Too many wrong passwords in this browser session: locked for 15 minutes."


@st.cache_resource(show_spinner=False)
def _gate() -> AdminGate:
    """One gate (and so one pacer) per dashboard process, shared by every session."""
    return AdminGate(pacer=GuessPacer(interval=PACE, most=MOST_HELD))


def _tries() -> SessionTries:
    """This browser session's own count of wrong passwords."""
    tries: SessionTries = st.session_state.setdefault(TRIES, SessionTries())
    return tries


def require_unlock(secret: SecretStr | None) -> None:
    """Stop the page run unless this session entered `secret`: the password form while
    locked (nothing at all when no password is configured), a Lock button once unlocked."""
    if secret is None or not secret.get_secret_value():
        st.warning(NO_PASSWORD)
        st.stop()
        return

    def check_password() -> None:
        """On Enter: unlock on a constant-time match; a wrong one is answered after the
        pacer's delay and counts towards this session's lockout."""
        entered = str(st.session_state.get("admin-password") or "")
        st.session_state["admin-password"] = ""  # never keep the secret in the session
        if not entered:
            return
        attempt = _gate().check(entered, secret.get_secret_value(), datetime.now(UTC), _tries())
        if attempt.held:
            time.sleep(attempt.held.total_seconds())  # this session waits; others do not
        st.session_state[UNLOCKED] = attempt.verdict == "ok"
        st.session_state[WRONG] = attempt.verdict

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
            st.error(LOCKED)
        st.stop()

    if st.button("Lock", key="lock"):
        st.session_state[UNLOCKED] = False
        st.rerun()
