"""Reading an OpenAI-compatible chat-completions body: the answer, the usage and the error text.

Pure functions of the decoded body, apart from the HTTP client (`arena.agents.llm.ChatClient`)
so that every server shape (OpenAI, OpenRouter, vLLM, Ollama, llama.cpp) is read the same way
and a malformed field never raises: a missing count is 0, a missing content is "" (which the
parser then reports as malformed), a reasoning field is kept apart from the content.
"""

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

ErrorKind = Literal["transport", "http", "provider"]


@dataclass(frozen=True)
class Usage:
    """What a body reports of tokens, cost and who served it (zeros and None when silent)."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    served_model: str | None = None
    provider: str | None = None


@dataclass(frozen=True)
class Answer:
    """The first choice's text, finish reason and reasoning (kept apart from the text)."""

    content: str
    finish_reason: str | None
    reasoning: str | None


@dataclass(frozen=True)
class Failure:
    """Why an attempt gave no usable answer, and whether (and after how long) to retry."""

    kind: ErrorKind
    description: str
    retryable: bool
    wait: float | None = None


def json_or_none(content: bytes) -> Any:
    """The decoded JSON body, or None when it is not JSON."""
    try:
        return json.loads(content)
    except ValueError:
        return None


def read_usage(payload: Any) -> Usage:
    """Tokens, cost, served model and provider, from whatever the body reports."""
    if not isinstance(payload, Mapping):
        return Usage()
    usage = payload.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    return Usage(
        tokens_in=_count(usage.get("prompt_tokens")),
        tokens_out=_count(usage.get("completion_tokens")),
        cost_usd=_cost(usage.get("cost")),
        served_model=_text_or_none(payload.get("model")),
        provider=_text_or_none(payload.get("provider")),
    )


def read_answer(choice: Mapping[str, Any]) -> Answer:
    """Content (text or joined text parts, "" when missing), finish reason and reasoning."""
    message = choice.get("message")
    message = message if isinstance(message, Mapping) else {}
    reasoning = message.get("reasoning")
    if not isinstance(reasoning, str):
        reasoning = message.get("reasoning_content")
    return Answer(
        content=_content_text(message.get("content")),
        finish_reason=_text_or_none(choice.get("finish_reason")),
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
    )


def _content_text(content: Any) -> str:
    """A message content as text: a string as is, a list of parts joined by their text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif (
                isinstance(part, Mapping)
                and part.get("type", "text") == "text"
                and isinstance(part.get("text"), str)
            ):
                parts.append(part["text"])
        return "".join(parts)
    return ""


def error_message(payload: Any) -> str | None:
    """The error text from `{"error": {"message"}}`, `{"error": "..."}`, `message` or `detail`."""
    if not isinstance(payload, Mapping):
        return None
    error = payload.get("error")
    if isinstance(error, Mapping):
        message = error.get("message")
        if isinstance(message, str) and message.strip():
            code = error.get("code")
            return f"{message} (code {code})" if isinstance(code, int | str) and code else message
        return json.dumps(error)
    if isinstance(error, str) and error.strip():
        return error
    for key in ("message", "detail"):
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _count(value: Any) -> int:
    """A token count; anything that is not a non-negative integer counts as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(0, int(value)) if math.isfinite(value) else 0


def _cost(value: Any) -> float:
    """A reported cost in USD; missing, malformed or negative means 0.0."""
    if isinstance(value, bool):
        return 0.0
    try:
        cost = float(value)
    except (TypeError, ValueError):
        return 0.0
    return cost if math.isfinite(cost) and cost > 0 else 0.0


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def transport_failure(description: str) -> Failure:
    return Failure("transport", description, retryable=True)


def provider_failure(description: str) -> Failure:
    return Failure("provider", description, retryable=True)
