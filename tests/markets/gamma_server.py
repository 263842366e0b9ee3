"""A real loopback HTTP server that plays scripted Gamma responses and records every request.

Tests talk to it through a real `httpx.Client` over TCP, so timeouts, status codes, headers and
garbage bodies behave exactly as they would against the live API — nothing in httpx is mocked.

Routes are matched in the order they were added: a route matches a request when its path is
equal and every `query` item agrees (a value of None means "the parameter must be absent").
Each route plays its replies in order and then keeps repeating the last one. Unmatched
requests get a 404 with a small JSON body, like Gamma's own unknown paths.

`catalogue` serves a list of market payloads as Gamma's list endpoints do: `/markets/keyset`
pages by `after_cursor` and `/markets` by `offset`, `limit` clamped to 100, and both honour the
end-date filters. Note: Gamma's `end_date_min` / `end_date_max` keep the markets whose
`endDate` falls within them, both ends included, and drop those without one (the assumption
`arena.markets.gamma` documents); the catalogue filters exactly so, so a window test sees the
server, not the client, choose the markets.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from arena.markets.gamma import KEYSET_PATH, LEGACY_PATH, parse_timestamp
from tests.loopback import LoopbackServer, Reply

__all__ = ["GammaServer", "Recorded", "Reply", "serve"]


@dataclass(frozen=True)
class Recorded:
    """A request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


@dataclass
class _Route:
    path: str
    query: dict[str, str | None]
    replies: list[Reply]
    served: int = 0

    def matches(self, path: str, query: dict[str, str]) -> bool:
        if path != self.path:
            return False
        return all(query.get(key) == value for key, value in self.query.items())

    def next_reply(self, query: dict[str, str]) -> Reply:
        reply = self.replies[min(self.served, len(self.replies) - 1)]
        self.served += 1
        return reply


def _bound(query: dict[str, str], key: str) -> datetime | None:
    value = query.get(key)
    return parse_timestamp(value) if value is not None else None


@dataclass
class _Catalogue:
    """Gamma's list endpoints over a fixed, ranked list of market payloads."""

    markets: list[dict[str, Any]]

    def matches(self, path: str, query: dict[str, str]) -> bool:
        return path in (KEYSET_PATH, LEGACY_PATH)

    def listed(self, query: dict[str, str]) -> list[dict[str, Any]]:
        """The markets the query's end-date filters keep (both ends included, as Gamma's)."""
        earliest, latest = _bound(query, "end_date_min"), _bound(query, "end_date_max")
        if earliest is None and latest is None:
            return self.markets
        kept = []
        for market in self.markets:
            end = parse_timestamp(market.get("endDate"))
            if end is None or (earliest and end < earliest) or (latest and end > latest):
                continue
            kept.append(market)
        return kept

    def next_reply(self, query: dict[str, str]) -> Reply:
        listed = self.listed(query)
        limit = min(int(query.get("limit", "100")), 100)
        if "offset" in query:
            start = int(query["offset"])
            return Reply(body=listed[start : start + limit])
        start = int(query.get("after_cursor", "0"))
        body: dict[str, Any] = {"markets": listed[start : start + limit]}
        if start + limit < len(listed):
            body["next_cursor"] = str(start + limit)
        return Reply(body=body)


class GammaServer(LoopbackServer):
    """Scripted responses per path/query on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self) -> None:
        super().__init__()
        self._routes: list[_Route | _Catalogue] = []
        self.requests: list[Recorded] = []

    @property
    def url(self) -> str:
        """Base URL to hand to the client."""
        return self.origin

    def script(
        self, path: str, *replies: Reply, query: dict[str, str | None] | None = None
    ) -> None:
        """Answer requests to `path` (whose query agrees with `query`) with `replies` in turn."""
        if not replies:
            raise ValueError("script at least one reply")
        with self._lock:
            self._routes.append(_Route(path, dict(query or {}), list(replies)))

    def catalogue(self, markets: list[dict[str, Any]]) -> None:
        """Serve `markets` (ranked as given) from both list endpoints, paged and filtered by
        end date as Gamma does (see the module's note)."""
        with self._lock:
            self._routes.append(_Catalogue(list(markets)))

    def reset(self) -> None:
        """Forget every scripted route (the service "changes" mid-test)."""
        with self._lock:
            self._routes.clear()

    def requests_to(self, path: str) -> list[Recorded]:
        """The recorded requests for one path, in arrival order."""
        with self._lock:
            return [request for request in self.requests if request.path == path]

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        parts = urlsplit(target)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        with self._lock:
            self.requests.append(Recorded(method, parts.path, query, headers))
            for route in self._routes:
                if route.matches(parts.path, query):
                    return route.next_reply(query)
        return Reply(404, {"error": "not found"})


@contextmanager
def serve() -> Iterator[GammaServer]:
    """A started GammaServer, stopped on exit."""
    server = GammaServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
