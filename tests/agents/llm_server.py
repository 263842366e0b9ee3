"""A real loopback HTTP server that plays scripted chat-completion replies and records requests.

Tests talk to it through a real `httpx.Client` over TCP, so timeouts, status codes, headers and
garbage bodies behave as they would against OpenRouter or a local vLLM/Ollama server. Every
POST, whatever its path, takes the next scripted reply; the last reply repeats. Each request's
path, headers and body (decoded JSON when it is JSON) are recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from arena.sim.wire import chat_completion
from tests.loopback import LoopbackServer, Reply

__all__ = ["LLMServer", "Recorded", "Reply", "completion", "serve"]


@dataclass(frozen=True)
class Recorded:
    """A request as the server saw it; `json` is None when the body was not JSON."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any


def completion(content: Any = "ok", **fields: Any) -> dict[str, Any]:
    """A realistic chat.completion body: the simulated model server's `chat_completion`, with
    a fixed id, creation time and model (`provider=…`, `usage=…` as OpenRouter adds them)."""
    fixed: dict[str, Any] = {"model": "openai/gpt-5.2", "completion_id": "gen-123"}
    return chat_completion(content, **{**fixed, "created": 1_760_000_000, **fields})


class LLMServer(LoopbackServer):
    """Scripted replies on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self) -> None:
        super().__init__()
        self._replies: list[Reply] = [Reply(500, {"error": {"message": "nothing scripted"}})]
        self._served = 0
        self.requests: list[Recorded] = []

    @property
    def url(self) -> str:
        """Base URL to hand to the client (OpenAI-style `/v1` prefix)."""
        return f"{self.origin}/v1"

    def script(self, *replies: Reply) -> None:
        """Answer the coming requests with `replies` in turn, then repeat the last."""
        if not replies:
            raise ValueError("script at least one reply")
        with self._lock:
            self._replies = list(replies)
            self._served = 0

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = None
        return self._dispatch(Recorded(method, target, headers, body, decoded))

    def _dispatch(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            reply = self._replies[min(self._served, len(self._replies) - 1)]
            self._served += 1
            return reply


@contextmanager
def serve() -> Iterator[LLMServer]:
    """A started LLMServer, stopped on exit."""
    server = LLMServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
