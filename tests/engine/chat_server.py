"""An OpenAI-compatible loopback server that answers per requested model, in script order.

For exact answers and status sequences. A test that only needs a model answering the real
decision prompt sensibly uses the simulated model server (`arena.sim.model_server`).
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.agents.llm_server import LLMServer, Recorded, Reply, completion


def answer(content: Any, model: str, cost: float = 0.001) -> Reply:
    """A 200 chat completion with usage and cost, as OpenRouter sends it."""
    text = content if isinstance(content, str) else json.dumps(content)
    usage = {"prompt_tokens": 1000, "completion_tokens": 50, "cost": cost}
    return Reply(200, completion(text, model=model, provider="TestProvider", usage=usage))


class PerModelServer(LLMServer):
    """Each model has its own reply queue (the last reply repeats)."""

    def __init__(self) -> None:
        super().__init__()
        self.per_model: dict[str, list[Reply]] = {}
        self.served: dict[str, int] = {}

    def script_model(self, model: str, *replies: Reply) -> None:
        with self._lock:
            self.per_model[model] = list(replies)
            self.served[model] = 0

    def requests_for(self, model: str) -> list[Recorded]:
        return [
            r for r in self.requests if isinstance(r.json, dict) and r.json.get("model") == model
        ]

    def _dispatch(self, recorded: Recorded) -> Reply:
        model = recorded.json.get("model") if isinstance(recorded.json, dict) else None
        with self._lock:
            self.requests.append(recorded)
            replies = self.per_model.get(str(model))
            if not replies:
                return Reply(404, {"error": {"message": f"model {model} not scripted"}})
            index = min(self.served[str(model)], len(replies) - 1)
            self.served[str(model)] += 1
            return replies[index]


@contextmanager
def serve_models() -> Iterator[PerModelServer]:
    server = PerModelServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
