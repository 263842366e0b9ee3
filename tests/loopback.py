"""The suite's loopback HTTP servers (Gamma-shaped, OpenAI-compatible, CLOB-shaped) on the
product's own loopback server (`arena.sim.loopback`), which the simulated services use.

A real `ThreadingHTTPServer` on 127.0.0.1 with an OS-chosen port, in a daemon thread; tests
talk to it through real httpx clients over TCP, so timeouts, status codes, headers and garbage
bodies behave as they would against the live services. Subclasses decide which reply a
request gets (`answer`, under `_lock` for their scripts and logs).
"""

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arena.sim import loopback


@dataclass(frozen=True)
class Reply(loopback.Reply):
    """One scripted response (200 and an empty body unless said); a non-bytes, non-str body is
    sent as JSON."""

    status: int = 200
    body: Any = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0


class LoopbackServer(loopback.LoopbackServer):
    """Start/stop and URL of a threaded server on 127.0.0.1 whose replies come from `answer`."""

    server_version = "ArenaTestLoopback/1"
    poll_interval = 0.01  # a test stops many servers: each stop waits at most this

    def __init__(self) -> None:
        self._lock = threading.Lock()
        super().__init__("127.0.0.1", 0)

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        raise NotImplementedError

    def reply(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> loopback.Reply:
        return self.answer(method, target, dict(headers), body)
