"""The HTTP client lifecycle the Gamma and chat clients share: open one, close it once.

`json_http_client` opens the `httpx.Client` an API client owns: one timeout for connect, read,
write and pool, `Accept: application/json`, our User-Agent, plus the caller's own headers, and
(unless a test passes its own) the transport of `arena.markets.bounded_http`, which holds every
request to an overall deadline.
`OwnsHttpClient` is the base such an API client derives from: it keeps that client as
`_client`, `close()` releases its connection pool and a `with` block closes it on the way out.
Retries, error texts and secret redaction stay with each API client.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Self

import httpx

from arena.markets.bounded_http import bounded_transport

USER_AGENT = "forecaster-arena/0.1 (+https://github.com/setrf/forecasterarena)"
JSON_HEADERS: Mapping[str, str] = {"Accept": "application/json", "User-Agent": USER_AGENT}


def json_http_client(
    *,
    timeout: float,
    transport: httpx.BaseTransport | None = None,
    headers: Mapping[str, str] | None = None,
    base_url: str = "",
    follow_redirects: bool = False,
) -> httpx.Client:
    """An `httpx.Client` asking for JSON as Forecaster Arena; `headers` add to (or override)
    the JSON ones. Redirects are followed only when asked (a bearer key must not travel)."""
    return httpx.Client(
        base_url=base_url,
        timeout=httpx.Timeout(timeout),
        transport=transport or bounded_transport(),
        headers={**JSON_HEADERS, **(headers or {})},
        follow_redirects=follow_redirects,
    )


class OwnsHttpClient:
    """Base of an API client that owns one `httpx.Client` (`_client`) for its whole life."""

    _client: httpx.Client

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()
