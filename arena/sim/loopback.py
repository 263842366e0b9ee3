"""The loopback HTTP server the simulated services share (the model server, the CLOB).

A real `ThreadingHTTPServer` on a loopback port, served from a daemon thread (`start`/`stop`,
or a `with` block) or from the calling thread (`serve_forever`, what the `arena` commands do).
A subclass says what each request gets (`reply`); this module only moves bytes, so each
simulated service is its wire format and nothing else.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Reply:
    """One answer: a status, a body (JSON unless already bytes or text: a test's garbage body
    goes out as written), extra headers, and how long to hold it back."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def payload(self, separators: tuple[str, str] | None = None) -> bytes:
        """The body as bytes (JSON with `separators` unless it is already bytes or text)."""
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body, separators=separators).encode()


class LoopbackServer:
    """A threaded HTTP server on `host:port` (0: the OS chooses) answering with `reply`."""

    server_version = "ArenaSimulated/1"
    # How the JSON body is written (the CLOB writes compact JSON, as the real one does).
    json_separators: tuple[str, str] | None = None
    # How often the background thread looks for `stop` (seconds): what a stop waits at most.
    poll_interval = 0.05

    def __init__(self, host: str, port: int) -> None:
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": self.poll_interval},
            daemon=True,
        )

    def reply(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Reply:
        """The answer to one request (`target`: the path with its query)."""
        raise NotImplementedError

    @property
    def origin(self) -> str:
        """`http://host:port`, no trailing slash."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        """Serve in the calling thread until `shutdown()` from another thread."""
        self._httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        self._httpd.shutdown()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        server_version = server.server_version

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            answer = server.reply(method, self.path, dict(self.headers.items()), body)
            if answer.delay > 0:
                time.sleep(answer.delay)
            payload = answer.payload(server.json_separators)
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (it timed out on a slow answer)

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: each server keeps its own request log."""

    return Handler
