"""The OpenAI chat-completions wire shape the simulated model server speaks.

Why apart: the personas (`arena.sim.models`) build their bodies with it, the HTTP server
(`arena.sim.model_server`) sends them, and other test fakes that must answer in the same shape
reuse `chat_completion`; `messages_sha256` is the key both the personas' draws and the
request log use.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["PROVIDER", "Fault", "Served", "chat_completion", "messages_sha256"]

PROVIDER = "simulated"

Fault = Literal["429", "500", "slow"]


def messages_sha256(messages: Sequence[Mapping[str, Any]]) -> str:
    """The hash the request log keys on: sha256 of the messages as compact, sorted JSON."""
    canonical = json.dumps(
        [dict(m) for m in messages], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def chat_completion(
    content: Any,
    *,
    model: str,
    completion_id: str = "gen-0",
    created: int = 0,
    provider: str | None = None,
    system_fingerprint: str | None = None,
    usage: Mapping[str, Any] | None = None,
    finish_reason: str | None = "stop",
    **message_extra: Any,
) -> dict[str, Any]:
    """A `chat.completion` body with one assistant choice, as this server sends it.

    `provider` and `usage` (with `cost`) are OpenRouter's additions; None leaves a field out.
    `message_extra` goes into the message beside `content` (e.g. `reasoning`).
    """
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
    }
    if provider is not None:
        body["provider"] = provider
    if system_fingerprint is not None:
        body["system_fingerprint"] = system_fingerprint
    message = {"role": "assistant", "content": content, **message_extra}
    body["choices"] = [{"index": 0, "finish_reason": finish_reason, "message": message}]
    if usage is not None:
        body["usage"] = dict(usage)
    return body


@dataclass(frozen=True)
class Served:
    """One simulated HTTP response: status, JSON body, headers, delay before sending it."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    fault: Fault | None = None
    form: str = "clean"  # clean, fenced, prose, wrong_field, invalid_json, bad_probability
