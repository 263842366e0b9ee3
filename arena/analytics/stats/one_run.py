"""Within one run of the hourly analyses, each expensive draw is computed once per scope.

Why: the leaderboard, the calibration summary and "When will we know?" rest on the very same
cluster bootstrap (`bootstrap.family_bootstrap`: one draw, so their intervals agree), and the
leaderboard's percentiles and the detectability's null rows on the very same random traders
(`random_null.database_random_null`). The job (`arena.engine.analyses`) computes a scope's
analyses inside `one_run()`, where the second and later asks for the same draw get the first
one's result; outside it (a page computing live) every call computes afresh. Nothing outlives
the block: the database changes between runs of the job.
"""

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_DRAWS: ContextVar[dict[Hashable, Any] | None] = ContextVar("one_run_draws", default=None)


@contextmanager
def one_run() -> Iterator[None]:
    """Share each draw asked for inside the block (by its `once` key) until it ends."""
    token = _DRAWS.set({})
    try:
        yield
    finally:
        _DRAWS.reset(token)


def once(key: Hashable, compute: Callable[[], T]) -> T:
    """`compute()`, or inside `one_run()` the result already computed for `key`. Callers never
    mutate what they get (the frames and arrays are shared, as the one draw is)."""
    draws = _DRAWS.get()
    if draws is None:
        return compute()
    if key not in draws:
        draws[key] = compute()
    result: T = draws[key]
    return result
