"""A real loopback HTTP server that plays scripted Gamma responses and records every request.

Tests talk to it through a real `httpx.Client` over TCP, so timeouts, status codes, headers and
garbage bodies behave exactly as they would against the live API — nothing in httpx is mocked.

Routes are matched in the order they were added: a route matches a request when its path is
equal and every `query` item agrees (a value of None means "the parameter must be absent").
Each route plays its replies in order and then keeps repeating the last one. Unmatched
requests get a 404 with a small JSON body, like Gamma's own unknown paths.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

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

    def next_reply(self) -> Reply:
        reply = self.replies[min(self.served, len(self.replies) - 1)]
        self.served += 1
        return reply


class GammaServer(LoopbackServer):
    """Scripted responses per path/query on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self) -> None:
        super().__init__()
        self._routes: list[_Route] = []
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
                    return route.next_reply()
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
