"""A real loopback HTTP server that plays scripted Gamma responses and records every request.

Tests talk to it through a real `httpx.Client` over TCP, so timeouts, status codes, headers and
garbage bodies behave exactly as they would against the live API — nothing in httpx is mocked.

Routes are matched in the order they were added: a route matches a request when its path is
equal and every `query` item agrees (a value of None means "the parameter must be absent").
Each route plays its replies in order and then keeps repeating the last one. Unmatched
requests get a 404 with a small JSON body, like Gamma's own unknown paths.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Reply:
    """One scripted response; a non-bytes, non-str body is sent as JSON."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def payload(self) -> bytes:
        """The body as bytes (JSON-encoded unless it is already text or bytes)."""
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


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


class GammaServer:
    """Scripted responses per path/query on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self) -> None:
        self._routes: list[_Route] = []
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL to hand to the client."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def script(
        self, path: str, *replies: Reply, query: dict[str, str | None] | None = None
    ) -> None:
        """Answer requests to `path` (whose query agrees with `query`) with `replies` in turn."""
        if not replies:
            raise ValueError("script at least one reply")
        with self._lock:
            self._routes.append(_Route(path, dict(query or {}), list(replies)))

    def requests_to(self, path: str) -> list[Recorded]:
        """The recorded requests for one path, in arrival order."""
        with self._lock:
            return [request for request in self.requests if request.path == path]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _dispatch(self, method: str, target: str, headers: dict[str, str]) -> Reply:
        parts = urlsplit(target)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        with self._lock:
            self.requests.append(Recorded(method, parts.path, query, headers))
            for route in self._routes:
                if route.matches(parts.path, query):
                    return route.next_reply()
        return Reply(404, {"error": "not found"})


def _handler_for(server: GammaServer) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to one GammaServer."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one small response must not wait 40 ms for an ACK

        def do_GET(self) -> None:
            reply = server._dispatch("GET", self.path, dict(self.headers.items()))
            if reply.delay:
                time.sleep(reply.delay)
            payload = reply.payload()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing to tell it

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

    return Handler


@contextmanager
def serve() -> Iterator[GammaServer]:
    """A started GammaServer, stopped on exit."""
    server = GammaServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
