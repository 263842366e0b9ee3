"""The retry, backoff and pacing loop the public market-data clients share (Gamma, the CLOB).

One `Retrier` sends a request and decodes its JSON body, repeating what is worth repeating:
timeouts, connection errors, 429, 5xx and a 200 whose body is not JSON, with full-jitter
exponential backoff (`arena.core.backoff`). `Retry-After` (seconds or HTTP-date) is honoured on
429/503 up to `max_backoff`; a server asking for longer is not waited for: the request fails
at once and the client's circuit breaker opens (`arena.markets.breaker`), as it does after a
few failed attempts in a row, so an outage costs a run seconds, not an hour per token. Other
4xx are final at once. Every body is read within `ReadLimits` (`arena.markets.bounded_http`:
an overall deadline and a decoded-size cap); a body over the cap is final too, and counts
against the breaker. Requests are paced at least `min_interval` apart (a public API deserves
politeness). Every failure ends in `RequestFailed`, which names the method, the path and the
last status or error and never echoes more than `BODY_SNIPPET_CHARS` of a body; each client
turns it into its own error type.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from arena.core.backoff import backoff_delay, retry_after_seconds
from arena.markets.bounded_http import MIB, Body, BodyRefused, ReadLimits, read_bounded
from arena.markets.breaker import CircuitBreaker, CircuitOpen

BODY_SNIPPET_CHARS = 200
RETRY_AFTER_STATUSES = frozenset({429, 503})
DEFAULT_LIMITS = ReadLimits(max_bytes=32 * MIB, deadline=60.0)


def snippet(text: str) -> str:
    """At most BODY_SNIPPET_CHARS of a body, on one line, for messages and logs."""
    flat = " ".join(text.split())
    return flat if len(flat) <= BODY_SNIPPET_CHARS else flat[:BODY_SNIPPET_CHARS] + "…"


class Retryable(Exception):
    """One failed attempt that is worth repeating; `wait` is the server's Retry-After, if any."""

    def __init__(self, description: str, status: int | None, wait: float | None = None) -> None:
        super().__init__(description)
        self.description = description
        self.status = status
        self.wait = wait


class RequestFailed(Exception):
    """A request that could not be answered usefully: after the retries, or a final 4xx.

    `body` is the decoded JSON of a final 4xx answer when it had one (the CLOB's
    `{"error": ...}`), so a caller can tell "no order book" from "invalid token id".
    `circuit_open` marks a request never sent because the service's breaker is open.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str,
        status: int | None,
        body: Any = None,
        circuit_open: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.status = status
        self.body = body
        self.circuit_open = circuit_open


@dataclass
class RetryPolicy:
    """How hard to try: attempts, backoff base and cap (seconds), the pacing interval, and
    what one attempt may cost (`limits`)."""

    max_attempts: int = 4
    backoff_base: float = 0.5
    max_backoff: float = 30.0
    min_interval: float = 0.1
    limits: ReadLimits = DEFAULT_LIMITS

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")


class Retrier:
    """Sends requests through one `httpx.Client` with the shared retry, backoff and pacing.

    `label` starts every message and log line ("Gamma", "CLOB"); `sleep`, `rng` and `clock`
    are injectable so tests record waits instead of sleeping.

    Two kinds of circuit breaker: attempts that got no answer at all (timeouts, refused
    connections, refused bodies) count against the whole service (`service`), since every
    endpoint of a host that does not answer is down; answers that are errors (429, 5xx, not
    JSON) count against their endpoint (method and path) alone, so a broken batch endpoint
    still leaves the one-token reads it falls back on. One request's worth of failed attempts
    opens either: the first request to meet an outage gets all its retries, the rest of the
    run none.
    """

    def __init__(
        self,
        client: httpx.Client,
        policy: RetryPolicy,
        *,
        label: str,
        logger: logging.Logger,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.policy = policy
        self.label = label
        self.logger = logger
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock
        self._last_request: float | None = None
        self.service = CircuitBreaker(label, logger, threshold=policy.max_attempts, clock=clock)
        self._breakers: dict[str, CircuitBreaker] = {}
        self._breakers_lock = threading.Lock()

    def request_json(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json_body: Any = None,
    ) -> Any:
        """The decoded JSON body, retrying what is worth retrying; RequestFailed otherwise."""
        policy = self.policy
        endpoint = self.breaker(method, path)
        last: Retryable | None = None
        for attempt in range(1, policy.max_attempts + 1):
            try:
                self.service.check()
                endpoint.check()
            except CircuitOpen as closed:
                raise RequestFailed(
                    closed.description, path=path, status=None, circuit_open=True
                ) from None
            try:
                answer = self._attempt(method, path, params, json_body)
            except Retryable as failure:
                last = failure
            except RequestFailed as final:
                if final.status is None:  # a refused body: the service misbehaves
                    self.service.failed(final.message)
                else:  # a 4xx is an answer
                    self._answered(endpoint)
                raise
            else:
                self._answered(endpoint)
                return answer
            # No answer at all (a timeout, a refused connection) blames the service; an
            # answer that is an error (429, 5xx, not JSON) blames its endpoint.
            blamed = self.service if last.status is None else endpoint
            if last.wait is not None and last.wait > policy.max_backoff:
                description = (
                    f"{last.description} asking to retry after {last.wait:.0f} s, "
                    f"more than the {policy.max_backoff:g} s this client waits"
                )
                blamed.failed(description, trip=True)
                raise RequestFailed(
                    f"{self.label} {method} {path}: {description}", path=path, status=last.status
                )
            blamed.failed(last.description)
            if attempt < policy.max_attempts:
                delay = self.delay(attempt, last.wait)
                self.logger.warning(
                    "%s %s %s: %s; retry %d/%d in %.2fs",
                    self.label,
                    method,
                    path,
                    last.description,
                    attempt,
                    policy.max_attempts - 1,
                    delay,
                )
                self._sleep(delay)
        assert last is not None
        raise RequestFailed(
            f"{self.label} {method} {path} failed after {policy.max_attempts} attempt(s); "
            f"last: {last.description}",
            path=path,
            status=last.status,
        )

    def _attempt(
        self, method: str, path: str, params: Mapping[str, str] | None, json_body: Any
    ) -> Any:
        """One request: the decoded body, Retryable, or RequestFailed for a final 4xx."""
        self.pace()
        try:
            response = read_bounded(
                self.client,
                method,
                path,
                self.policy.limits,
                params=params,
                json_body=json_body,
            )
        except httpx.TimeoutException as exc:
            raise Retryable(f"timed out ({type(exc).__name__})", None) from exc
        except httpx.TransportError as exc:
            raise Retryable(f"connection failed ({type(exc).__name__})", None) from exc
        except BodyRefused as refused:
            raise RequestFailed(
                f"{self.label} {method} {path}: refused {refused.description}",
                path=path,
                status=None,
            ) from None
        status = response.status_code
        if status == 429 or status >= 500:
            wait = None
            if status in RETRY_AFTER_STATUSES:
                wait = retry_after_seconds(response.headers.get("Retry-After"))
            raise Retryable(f"HTTP {status}", status, wait)
        if status >= 400:
            raise RequestFailed(
                f"{self.label} {method} {path} answered HTTP {status}: {snippet(response.text)}",
                path=path,
                status=status,
                body=_json_or_none(response),
            )
        try:
            return response.json()
        except ValueError:
            raise Retryable(
                f"HTTP {status} with a body that is not JSON: {snippet(response.text)!r}", status
            ) from None

    def _answered(self, endpoint: CircuitBreaker) -> None:
        endpoint.succeeded()
        self.service.succeeded()

    def breaker(self, method: str, path: str) -> CircuitBreaker:
        """The circuit breaker of one endpoint, made on first use."""
        key = f"{method} {path}"
        with self._breakers_lock:
            found = self._breakers.get(key)
            if found is None:
                found = self._breakers[key] = CircuitBreaker(
                    f"{self.label} {key}",
                    self.logger,
                    threshold=self.policy.max_attempts,
                    clock=self._clock,
                )
            return found

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """The wait before retry number `attempt` (Retry-After wins, capped)."""
        policy = self.policy
        return backoff_delay(
            attempt, retry_after, policy.backoff_base, policy.max_backoff, self._rng
        )

    def pace(self) -> None:
        """Keep at least `min_interval` seconds between requests."""
        now = self._clock()
        if self._last_request is not None:
            wait = self.policy.min_interval - (now - self._last_request)
            if wait > 0:
                self._sleep(wait)
                now = self._clock()
        self._last_request = now


def _json_or_none(response: Body) -> Any:
    """The decoded body of an error answer, or None when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        return None
