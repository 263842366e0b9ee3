"""A circuit breaker: after a few failures in a row, stop calling a service for a while.

Retries help against a blip; against an outage they multiply the wait by every request a run
makes (a thousand tokens, each retried four times). So each client keeps one breaker: after
`threshold` consecutive failed attempts (its clients use their attempts per request, so the
first request to meet an outage still gets all its retries) it opens, and every call fails at
once with the reason (`CircuitOpen`) until `cooldown` seconds have passed; then one call may
try again (a success closes it, a failure opens it for another cooldown). A server asking for
a `Retry-After` beyond what a client waits opens it at once. The cooldown is shorter than the
scheduler's hourly slots, so the next run of a job tries the service afresh.

A breaker counts within one job run. The client lives as long as the scheduler process and
is shared by its job threads, but a run's outage is that run's: `run_job` opens a
`breaker_run()` scope (a context variable, so each job thread has its own), and a breaker
keeps one count per scope, dropped when the run ends. So the next run, an hour or, on the
demo's simulated clock, a moment later, meets the service afresh, and a hanging CLOB in a
decision run does not refuse the snapshot job's reads beside it. Outside any run (a command
of its own, a test) there is one count, which only the cooldown resets. A lock keeps counts
whole. The clock is `time.monotonic` (a transport detail, like the pacing of requests),
injectable for tests.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

DEFAULT_THRESHOLD = 3
DEFAULT_COOLDOWN = 300.0


class _Run:
    """One job run's scope (weakly referenced by the breakers' counts)."""


_run: ContextVar[_Run | None] = ContextVar("arena_breaker_run", default=None)
_OUTSIDE = _Run()  # the one scope of everything outside a job run


@contextmanager
def breaker_run() -> Iterator[None]:
    """Count every breaker's failures inside the block apart from any other run's."""
    token = _run.set(_Run())
    try:
        yield
    finally:
        _run.reset(token)


@dataclass
class _Count:
    failures: int = 0
    last: str = ""
    opened_at: float | None = None


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
        self._counts: weakref.WeakKeyDictionary[_Run, _Count] = weakref.WeakKeyDictionary()

    def _count(self) -> _Count:
        """This run's count (the caller holds the lock)."""
        scope = _run.get() or _OUTSIDE
        found = self._counts.get(scope)
        if found is None:
            found = self._counts[scope] = _Count()
        return found

    def check(self) -> None:
        """Return if a call may be made; CircuitOpen (with the reason) if not."""
        with self._lock:
            count = self._count()
            if count.opened_at is None:
                return
            left = count.opened_at + self.cooldown - self._clock()
            if left <= 0:
                return  # one call may try again; its outcome decides
            raise CircuitOpen(
                f"{self.label} not called: {count.failures} failure(s) in a row "
                f"(last: {count.last}); next try in {left:.0f} s"
            )

    def succeeded(self) -> None:
        """The service answered: close the circuit."""
        with self._lock:
            count = self._count()
            if count.opened_at is not None:
                self._logger.warning("%s answers again; circuit closed", self.label)
            count.failures = 0
            count.opened_at = None

    def failed(self, description: str, *, trip: bool = False) -> None:
        """One failed attempt; opens the circuit at the threshold, or at once when `trip`."""
        with self._lock:
            count = self._count()
            count.failures += 1
            count.last = description
            if trip or count.failures >= self.threshold:
                now = self._clock()
                if count.opened_at is None or now >= count.opened_at + self.cooldown:
                    self._logger.error(
                        "%s failed %d time(s) in a row (last: %s); not called for %.0f s",
                        self.label,
                        count.failures,
                        description,
                        self.cooldown,
                    )
                count.opened_at = now

    @property
    def is_open(self) -> bool:
        with self._lock:
            count = self._count()
            return count.opened_at is not None and self._clock() < count.opened_at + self.cooldown
