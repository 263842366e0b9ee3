"""The circuit breaker: opens at its threshold, refuses with the reason, tries again after its
cooldown, and counts within one job run (`breaker_run`), never across runs or threads."""

import logging
import threading

import pytest

from arena.markets.breaker import CircuitBreaker, CircuitOpen, breaker_run

LOG = logging.getLogger("tests.breaker")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_it_opens_at_the_threshold_says_why_and_tries_again_after_the_cooldown() -> None:
    clock = Clock()
    breaker = CircuitBreaker("CLOB", LOG, threshold=2, cooldown=60, clock=clock)
    breaker.failed("timed out")
    breaker.check()  # one failure: still closed
    breaker.failed("timed out")
    with pytest.raises(CircuitOpen, match=r"CLOB not called: 2 failure\(s\) in a row"):
        breaker.check()
    clock.now = 61
    breaker.check()  # the cooldown passed: one call may try
    breaker.failed("timed out")  # it failed: open for another cooldown
    with pytest.raises(CircuitOpen, match="next try in 60 s"):
        breaker.check()
    clock.now = 122
    breaker.succeeded()
    assert not breaker.is_open


def test_a_trip_opens_it_at_once() -> None:
    breaker = CircuitBreaker("Gamma", LOG, threshold=4, clock=Clock())
    breaker.failed("HTTP 429 asking to retry after 99999 s", trip=True)
    assert breaker.is_open


def test_a_run_meets_the_service_afresh() -> None:
    breaker = CircuitBreaker("CLOB", LOG, threshold=1, clock=Clock())
    with breaker_run():
        breaker.failed("timed out")
        assert breaker.is_open
    with breaker_run():  # the next run, however soon (the demo's simulated clock)
        assert not breaker.is_open
        breaker.check()
    assert not breaker.is_open  # outside any run: its own count


def test_two_runs_on_two_threads_count_apart() -> None:
    breaker = CircuitBreaker("CLOB", LOG, threshold=1, clock=Clock())
    opened = threading.Event()
    seen: list[bool] = []

    def decide() -> None:
        with breaker_run():
            breaker.failed("timed out")
            opened.set()

    def snapshot() -> None:
        opened.wait(5)
        with breaker_run():
            seen.append(breaker.is_open)

    threads = [threading.Thread(target=decide), threading.Thread(target=snapshot)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert seen == [False]
