"""The retry, backoff and pacing loop the public market-data clients share (Gamma, the CLOB).

One `Retrier` sends a request and decodes its JSON body, repeating what is worth repeating:
timeouts, connection errors, 429, 5xx and a 200 whose body is not JSON, with full-jitter
exponential backoff (`arena.core.backoff`); `Retry-After` (seconds or HTTP-date) is honoured on
429/503, capped at `max_backoff`. Other 4xx are final at once. Requests are paced at least
`min_interval` apart (a public API deserves politeness). Every failure ends in `RequestFailed`,
which names the method, the path and the last status or error and never echoes more than
`BODY_SNIPPET_CHARS` of a body; each client turns it into its own error type.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from arena.core.backoff import backoff_delay, retry_after_seconds

BODY_SNIPPET_CHARS = 200
RETRY_AFTER_STATUSES = frozenset({429, 503})


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
    """

    def __init__(self, message: str, *, path: str, status: int | None, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.status = status
        self.body = body


@dataclass
class RetryPolicy:
    """How hard to try: attempts, backoff base and cap (seconds), and the pacing interval."""

    max_attempts: int = 4
    backoff_base: float = 0.5
    max_backoff: float = 30.0
    min_interval: float = 0.1

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")


class Retrier:
    """Sends requests through one `httpx.Client` with the shared retry, backoff and pacing.

    `label` starts every message and log line ("Gamma", "CLOB"); `sleep`, `rng` and `clock`
    are injectable so tests record waits instead of sleeping.
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
        last: Retryable | None = None
        for attempt in range(1, policy.max_attempts + 1):
            try:
                return self._attempt(method, path, params, json_body)
            except Retryable as failure:
                last = failure
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
            if method == "GET":
                response = self.client.get(path, params=dict(params or {}))
            else:
                response = self.client.request(
                    method, path, params=dict(params or {}), json=json_body
                )
        except httpx.TimeoutException as exc:
            raise Retryable(f"timed out ({type(exc).__name__})", None) from exc
        except httpx.TransportError as exc:
            raise Retryable(f"connection failed ({type(exc).__name__})", None) from exc
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


def _json_or_none(response: httpx.Response) -> Any:
    """The decoded body of an error answer, or None when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        return None
