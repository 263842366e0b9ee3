"""A circuit breaker: after a few failures in a row, stop calling a service for a while.

Retries help against a blip; against an outage they multiply the wait by every request a run
makes (a thousand tokens, each retried four times). So each client keeps one breaker: after
`threshold` consecutive failed attempts (its clients use their attempts per request, so the
first request to meet an outage still gets all its retries) it opens, and every call fails at
once with the reason (`CircuitOpen`) until `cooldown` seconds have passed; then one call may
try again (a success closes it, a failure opens it for another cooldown). A server asking for
a `Retry-After` beyond what a client waits opens it at once. The cooldown is shorter than the
scheduler's hourly slots, so the next run of a job tries the service afresh.

The breaker lives in the client, which the scheduler keeps for the process's life and shares
between its job threads; a lock keeps its counts whole. Its clock is `time.monotonic` (a
transport detail, like the pacing of requests), injectable for tests.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

DEFAULT_THRESHOLD = 3
DEFAULT_COOLDOWN = 300.0


class CircuitOpen(Exception):
    """A call not made because the service failed too often just now; says why."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class CircuitBreaker:
    """Counts consecutive failures of one service; `check` refuses calls while open."""

    def __init__(
        self,
        label: str,
        logger: logging.Logger,
        *,
        threshold: int = DEFAULT_THRESHOLD,
        cooldown: float = DEFAULT_COOLDOWN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threshold < 1 or cooldown < 0:
            raise ValueError("a breaker needs threshold >= 1 and cooldown >= 0")
        self.label = label
        self.threshold = threshold
        self.cooldown = cooldown
        self._logger = logger
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._last = ""
        self._opened_at: float | None = None

    def check(self) -> None:
        """Return if a call may be made; CircuitOpen (with the reason) if not."""
        with self._lock:
            if self._opened_at is None:
                return
            left = self._opened_at + self.cooldown - self._clock()
            if left <= 0:
                return  # one call may try again; its outcome decides
            raise CircuitOpen(
                f"{self.label} not called: {self._failures} failure(s) in a row "
                f"(last: {self._last}); next try in {left:.0f} s"
            )

    def succeeded(self) -> None:
        """The service answered: close the circuit."""
        with self._lock:
            if self._opened_at is not None:
                self._logger.warning("%s answers again; circuit closed", self.label)
            self._failures = 0
            self._opened_at = None

    def failed(self, description: str, *, trip: bool = False) -> None:
        """One failed attempt; opens the circuit at the threshold, or at once when `trip`."""
        with self._lock:
            self._failures += 1
            self._last = description
            if trip or self._failures >= self.threshold:
                if self._opened_at is None or self._clock() >= self._opened_at + self.cooldown:
                    self._logger.error(
                        "%s failed %d time(s) in a row (last: %s); not called for %.0f s",
                        self.label,
                        self._failures,
                        description,
                        self.cooldown,
                    )
                self._opened_at = self._clock()

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None and self._clock() < self._opened_at + self.cooldown
