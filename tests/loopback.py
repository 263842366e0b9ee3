"""The machinery shared by the suite's loopback HTTP servers (Gamma-shaped, OpenAI-compatible).

A real `ThreadingHTTPServer` on 127.0.0.1 with an OS-chosen port, in a daemon thread; tests
talk to it through real httpx clients over TCP, so timeouts, status codes, headers and garbage
bodies behave as they would against the live services. Subclasses decide which reply a
request gets (`answer`).
"""

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


class LoopbackServer:
    """Start/stop and URL of a threaded HTTP server whose replies come from `answer`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def origin(self) -> str:
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address is text
        return f"http://{host}:{port}"

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        raise NotImplementedError

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler_for(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to one server."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one small response must not wait 40 ms for an ACK

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            reply = server.answer(method, self.path, dict(self.headers.items()), body)
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

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

    return Handler
