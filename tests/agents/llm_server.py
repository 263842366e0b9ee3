"""A real loopback HTTP server that plays scripted chat-completion replies and records requests.

Tests talk to it through a real `httpx.Client` over TCP, so timeouts, status codes, headers and
garbage bodies behave as they would against OpenRouter or a local vLLM/Ollama server. Every
POST, whatever its path, takes the next scripted reply; the last reply repeats. Each request's
path, headers and body (decoded JSON when it is JSON) are recorded.
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


@dataclass(frozen=True)
class Reply:
    """One scripted response; a non-bytes, non-str body is sent as JSON."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


@dataclass(frozen=True)
class Recorded:
    """A request as the server saw it; `json` is None when the body was not JSON."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any


def completion(
    content: Any = "ok",
    *,
    finish_reason: str | None = "stop",
    model: str = "openai/gpt-5.2",
    provider: str | None = None,
    usage: dict[str, Any] | None = None,
    **message_extra: Any,
) -> dict[str, Any]:
    """A realistic chat.completion body (OpenRouter adds `provider` and `usage.cost`)."""
    body: dict[str, Any] = {
        "id": "gen-123",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason,
                "message": {"role": "assistant", "content": content, **message_extra},
            }
        ],
    }
    if provider is not None:
        body["provider"] = provider
    if usage is not None:
        body["usage"] = usage
    return body


class LLMServer:
    """Scripted replies on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self) -> None:
        self._replies: list[Reply] = [Reply(500, {"error": {"message": "nothing scripted"}})]
        self._served = 0
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL to hand to the client (OpenAI-style `/v1` prefix)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Answer the coming requests with `replies` in turn, then repeat the last."""
        if not replies:
            raise ValueError("script at least one reply")
        with self._lock:
            self._replies = list(replies)
            self._served = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _dispatch(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            reply = self._replies[min(self._served, len(self._replies) - 1)]
            self._served += 1
            return reply


def _handler_for(server: LLMServer) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to one LLMServer."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one small response must not wait 40 ms for an ACK

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                decoded = json.loads(raw)
            except ValueError:
                decoded = None
            reply = server._dispatch(
                Recorded("POST", self.path, dict(self.headers.items()), raw, decoded)
            )
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
def serve() -> Iterator[LLMServer]:
    """A started LLMServer, stopped on exit."""
    server = LLMServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
