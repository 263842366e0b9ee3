"""A simulated, OpenAI-compatible model server: personas that read the real prompt and trade.

What it is: a real HTTP server on a loopback port (`POST /v1/chat/completions`,
`GET /v1/models`) that answers the decision prompts `arena.agents.prompts` builds as one of
several *personas*, chosen by the request's `model` field. The project's own `ChatClient`,
parser and retry code talk to it exactly as they talk to OpenRouter or a local vLLM, so the
offline demo exercises the whole LLM path. Everything it serves is simulated: every answer
says `provider: "simulated"`, and no real model is ever asked.

The personas themselves are `arena.sim.personas` (the table) and `arena.sim.models` (how they
decide, write and fail, as a pure function); this module is only the HTTP server and its
request log.

Use: `with ModelServer(seed=7, world=world) as server:` then point a `ChatClient` at
`server.base_url`; `server.log` holds one `LoggedRequest` per chat request (model, sha256 of the
messages as `messages_sha256` computes it, status, fault, attempt seq). From the shell:
`arena model-server --port P --seed S`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from arena.sim.loopback import LoopbackServer, Reply
from arena.sim.models import SimulatedModels
from arena.sim.personas import PERSONAS
from arena.sim.wire import Fault, Served, messages_sha256

__all__ = ["AT_HEADER", "LoggedRequest", "ModelServer"]

AT_HEADER = "X-Arena-At"


# ---------------------------------------------------------------- the HTTP server


@dataclass(frozen=True)
class LoggedRequest:
    """One chat request as served: to match one-to-one with `decision_attempts`.

    `status` is what the server sent; a `slow` fault is sent as 200 after `slow_seconds`, which a
    client with a shorter timeout records as a timeout (status None).
    """

    seq: int  # position in the log (0-based)
    model: str
    messages_sha256: str
    attempt: int  # earlier identical requests (same model and messages) before this one
    status: int
    fault: Fault | None
    form: str | None


class ModelServer(LoopbackServer):
    """The personas behind a real OpenAI-compatible HTTP server on a loopback port.

    Use as a context manager (`with ModelServer(seed=7, world=world) as server:`) or with
    `start()` / `stop()`. `port=0` lets the OS choose; `base_url` ends in `/v1`.
    """

    server_version = "ArenaSimulatedModels/1"

    def __init__(
        self,
        seed: int = 0,
        world: Any = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        slow_seconds: float = 2.0,
        retry_after: int = 1,
        latency_scale: float = 1.0,
    ) -> None:
        self.models = SimulatedModels(
            seed, world, slow_seconds=slow_seconds, retry_after=retry_after,
            latency_scale=latency_scale,
        )  # fmt: skip
        self.log: list[LoggedRequest] = []
        self._counts: dict[tuple[str, str | None, str], int] = {}
        self._lock = threading.Lock()
        super().__init__(host, port)

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL to give a ChatClient."""
        return f"{self.origin}/v1"

    @property
    def model_ids(self) -> list[str]:
        return [model for persona in PERSONAS for model in persona.models]

    # --- request handling ------------------------------------------------------------------

    def reply(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Reply:
        served = self.handle(method, target, headers, body)
        return Reply(served.status, served.body, served.headers, served.delay)

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Served:
        route = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and route in ("/v1/models", "/models"):
            data = [
                {"id": model, "object": "model", "created": 0, "owned_by": persona.owned_by}
                for persona in PERSONAS
                for model in persona.models
            ]
            return Served(200, {"object": "list", "data": data})
        if method != "POST" or route not in ("/v1/chat/completions", "/chat/completions"):
            return Served(404, {"error": {"message": f"no route {method} {route}", "code": 404}})
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        messages = request.get("messages") if isinstance(request, dict) else None
        model = request.get("model") if isinstance(request, dict) else None
        if not isinstance(model, str) or not isinstance(messages, list) or not messages:
            error = {"message": "the body needs a 'model' and a non-empty 'messages'", "code": 400}
            return Served(400, {"error": error})
        usage = request.get("usage")
        include_cost = isinstance(usage, dict) and usage.get("include") is True
        at = _header_instant(headers)
        digest = messages_sha256(messages)
        user = request.get("user")
        stream = user if isinstance(user, str) and user else None
        with self._lock:
            attempt = self._counts.get((model, stream, digest), 0)
            self._counts[(model, stream, digest)] = attempt + 1
            served = self.models.respond(
                model, messages, attempt, at=at, include_cost=include_cost, stream=stream
            )
            self.log.append(
                LoggedRequest(len(self.log), model, digest, attempt, served.status, served.fault,
                              served.form if served.status == 200 else None)
            )  # fmt: skip
        return served


def _header_instant(headers: Mapping[str, str]) -> datetime | None:
    value = next((v for k, v in headers.items() if k.lower() == AT_HEADER.lower()), None)
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
