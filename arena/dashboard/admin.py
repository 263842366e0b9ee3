"""The admin password gate of the dashboard's Operations page.

Constant-time comparison, and a lockout after repeated failures: after `max_failures` wrong
passwords in a row, every attempt is refused (even the right one) until `lockout` has passed.
One gate is shared by every browser session of a dashboard process, so opening new sessions
does not reset the count. Time is passed in, so the rule is testable.
"""

import hmac
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

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
