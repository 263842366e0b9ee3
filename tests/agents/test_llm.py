"""The chat client against a real loopback HTTP server playing OpenRouter-like replies."""

from __future__ import annotations

import logging
import random
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from arena.agents.llm import (
    ERROR_TEXT_CHARS,
    ChatClient,
    ChatRequest,
    ChatResult,
    LLMError,
    is_openrouter,
)
from arena.agents.secrets import redact
from arena.config import load_settings
from arena.core.errors import ArenaError
from arena.lineup import FamilySpec

from .llm_server import LLMServer, Reply, completion, serve

KEY = "sk-or-v1-" + "0f1e2d3c4b5a6978" * 4
LOGGER = "arena.agents.llm"
MESSAGES = [
    {"role": "system", "content": "You are a forecaster."},
    {"role": "user", "content": "Decide."},
]
OR_USAGE = {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280, "cost": 0.0042}

ClientFactory = Callable[..., ChatClient]


class Ticks:
    """A monotonic clock that moves 0.25 s on every reading: each attempt takes 250 ms."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 0.25
        return self.now


def request(**overrides: Any) -> ChatRequest:
    values: dict[str, Any] = {"model": "openai/gpt-5.2", "messages": MESSAGES}
    values.update(overrides)
    return ChatRequest(**values)


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with serve() as running:
        yield running


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_client(server: LLMServer, sleeps: list[float]) -> Iterator[ClientFactory]:
    """Clients aimed at the loopback server; sleep is recorded, never real."""
    clients: list[ChatClient] = []

    def factory(**overrides: Any) -> ChatClient:
        options: dict[str, Any] = {
            "base_url": server.url,
            "api_key": KEY,
            "timeout": 5.0,
            "sleep": sleeps.append,
            "rng": random.Random(7),
            "clock": Ticks(),
        }
        options.update(overrides)
        client = ChatClient(**options)
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.close()


def call(client: ChatClient, **overrides: Any) -> ChatResult:
    return client.complete(request(**overrides))


def fail(client: ChatClient, **overrides: Any) -> LLMError:
    with pytest.raises(LLMError) as caught:
        call(client, **overrides)
    return caught.value


# ---- success and request shape --------------------------------------------------------------


def test_success_records_usage_cost_model_and_provider(
    server: LLMServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script(
        Reply(
            body=completion(
                '{"action": "HOLD", "reasoning": "fine"}',
                model="openai/gpt-5.2-20251211",
                provider="OpenAI",
                usage=OR_USAGE,
            )
        )
    )
    result = call(make_client(openrouter=True))
    assert result.content == '{"action": "HOLD", "reasoning": "fine"}'
    assert result.finish_reason == "stop"
    [attempt] = result.attempts
    assert attempt.attempt_no == 1
    assert attempt.status == 200
    assert attempt.outcome == "ok"
    assert attempt.error is None
    assert (attempt.tokens_in, attempt.tokens_out, attempt.cost_usd) == (1200, 80, 0.0042)
    assert attempt.latency_ms == 250
    assert result.served_model == "openai/gpt-5.2-20251211"
    assert result.provider == "OpenAI"
    assert (result.tokens_in, result.tokens_out, result.cost_usd, result.latency_ms) == (
        1200,
        80,
        0.0042,
        250,
    )
    assert sleeps == []


def test_local_body_is_minimal_with_temperature_zero_and_the_pinned_model(
    server: LLMServer, make_client: ClientFactory
) -> None:
    server.script(Reply(body=completion("hi", usage={"prompt_tokens": 5, "completion_tokens": 1})))
    client = make_client(base_url=server.url, api_key=KEY)
    assert client.openrouter is False
    result = call(client, max_tokens=500, reasoning_budget=4000)
    [sent] = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.json == {
        "model": "openai/gpt-5.2",
        "messages": MESSAGES,
        "temperature": 0,
        "max_tokens": 500,
    }
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert "X-Title" not in sent.headers
    assert result.cost_usd == 0.0  # a local server reports no cost
    assert result.provider is None


def test_max_tokens_left_out_when_unset(server: LLMServer, make_client: ClientFactory) -> None:
    server.script(Reply(body=completion("hi")))
    call(make_client(openrouter=True))
    body = server.requests[0].json
    assert "max_tokens" not in body
    assert "reasoning" not in body
    assert body["temperature"] == 0


def test_openrouter_gets_its_own_fields_and_no_fallback_list(
    server: LLMServer, make_client: ClientFactory
) -> None:
    server.script(Reply(body=completion("hi", provider="Anthropic", usage=OR_USAGE)))
    call(make_client(openrouter=True), model="anthropic/claude-opus-4.5", reasoning_budget=2000)
    [sent] = server.requests
    assert sent.json["model"] == "anthropic/claude-opus-4.5"
    assert sent.json["temperature"] == 0
    assert sent.json["usage"] == {"include": True}
    assert sent.json["provider"] == {"allow_fallbacks": False}
    assert sent.json["reasoning"] == {"max_tokens": 2000}
    assert "models" not in sent.json
    assert "route" not in sent.json
    assert sent.headers["X-Title"] == "Forecaster Arena"


def test_a_zero_reasoning_budget_turns_reasoning_off_on_openrouter(
    server: LLMServer, make_client: ClientFactory
) -> None:
    server.script(Reply(body=completion("hi")))
    call(make_client(openrouter=True), reasoning_budget=0)
    assert server.requests[0].json["reasoning"] == {"enabled": False}


def test_no_key_means_no_authorization_header(
    server: LLMServer, make_client: ClientFactory
) -> None:
    server.script(Reply(body=completion("hi")))
    call(make_client(api_key=None))
    call(make_client(api_key=""))
    assert all("Authorization" not in sent.headers for sent in server.requests)


def test_the_client_asks_for_json_as_forecaster_arena(
    server: LLMServer, make_client: ClientFactory
) -> None:
    server.script(Reply(body=completion("hi")))
    call(make_client())
    [sent] = server.requests
    assert sent.headers["Accept"] == "application/json"
    assert sent.headers["User-Agent"].startswith("forecaster-arena/")


def test_a_redirect_is_not_followed_so_the_key_goes_nowhere_else(
    server: LLMServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script(Reply(307, "", headers={"Location": "http://127.0.0.1:9/v1/chat/completions"}))
    error = fail(make_client())
    assert error.status == 307 and not error.retryable
    assert len(server.requests) == 1 and sleeps == []


def test_leaving_a_with_block_closes_the_connection_pool(server: LLMServer) -> None:
    with ChatClient(server.url, KEY) as client:
        pool = client._client
        assert not pool.is_closed
    assert pool.is_closed


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://openrouter.ai/api/v1", True),
        ("https://eu.openrouter.ai/api/v1", True),
        ("https://OpenRouter.AI/api/v1", True),
        ("https://notopenrouter.ai/v1", False),
        ("https://openrouter.ai.example.com/v1", False),
        ("http://localhost:11434/v1", False),
        ("http://127.0.0.1:8000/v1", False),
    ],
)
def test_openrouter_is_detected_by_host(url: str, expected: bool) -> None:
    assert is_openrouter(url) is expected
    with ChatClient(url, None) as client:
        assert client.openrouter is expected
    with ChatClient(url, None, openrouter=not expected) as client:
        assert client.openrouter is (not expected)


# ---- content shapes ---------------------------------------------------------------------------


@pytest.mark.parametrize("content", [None, "", "missing"])
def test_empty_or_missing_content_becomes_empty_text(
    server: LLMServer, make_client: ClientFactory, content: Any
) -> None:
    body = completion(content, finish_reason="length")
    if content == "missing":
        del body["choices"][0]["message"]["content"]
    server.script(Reply(body=body))
    result = call(make_client())
    assert result.content == ""
    assert result.finish_reason == "length"
    assert len(server.requests) == 1  # malformed content is the parser's business, not a retry


def test_content_as_a_list_of_parts_is_joined(
    server: LLMServer, make_client: ClientFactory
) -> None:
    parts = [
        {"type": "text", "text": '{"action": '},
        {"type": "image_url", "image_url": {"url": "data:..."}},
        {"type": "text", "text": '"HOLD", "reasoning": "x"}'},
    ]
    server.script(Reply(body=completion(parts)))
    assert call(make_client()).content == '{"action": "HOLD", "reasoning": "x"}'


@pytest.mark.parametrize("field_name", ["reasoning", "reasoning_content"])
def test_reasoning_is_kept_apart_from_the_content(
    server: LLMServer, make_client: ClientFactory, field_name: str
) -> None:
    extra: dict[str, Any] = {field_name: "let me think"}
    server.script(Reply(body=completion("answer", **extra)))
    result = call(make_client())
    assert result.content == "answer"
    assert result.reasoning == "let me think"


# ---- retries ------------------------------------------------------------------------------------


def test_429_honours_retry_after_then_succeeds(
    server: LLMServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script(
        Reply(
            429, {"error": {"message": "Rate limit exceeded", "code": 429}}, {"Retry-After": "7"}
        ),
        Reply(body=completion("ok", provider="OpenAI", usage=OR_USAGE)),
    )
    result = call(make_client(openrouter=True))
    assert sleeps == [7.0]
    assert len(server.requests) == 2
    assert [(a.attempt_no, a.status, a.outcome) for a in result.attempts] == [
        (1, 429, "retry"),
        (2, 200, "ok"),
    ]
    assert "Rate limit exceeded" in (result.attempts[0].error or "")
    assert result.cost_usd == 0.0042
    assert result.latency_ms == 500
    assert server.requests[0].json == server.requests[1].json  # the same request, repeated


def test_retry_after_as_an_http_date_within_the_cap_is_waited_for(
    server: LLMServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    server.script(Reply(429, b"slow down", {"Retry-After": later}), Reply(body=completion("ok")))
    call(make_client(max_backoff=30.0))
    assert len(sleeps) == 1 and 15.0 <= sleeps[0] <= 20.0


def test_a_retry_after_beyond_the_cap_is_final_and_opens_the_breakers(
    server: LLMServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    server.script(Reply(429, b"slow down", {"Retry-After": later}))
    client = make_client(max_backoff=30.0)
    error = fail(client)
    assert "more than the 30 s this client waits" in str(error) and sleeps == []
    assert len(server.requests) == 1
    again = fail(client)  # the model's breaker is open: nothing is sent
    assert "not called" in str(again) and again.attempts == []
    assert len(server.requests) == 1


def test_500_forever_fails_after_max_attempts(
    server: LLMServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script(Reply(500, {"error": {"message": "Internal Server Error", "code": 500}}))
    error = fail(make_client(max_attempts=3, backoff_base=2.0))
    assert isinstance(error, ArenaError)
    assert (error.kind, error.status, error.retryable) == ("http", 500, True)
    assert len(server.requests) == 3
    assert [(a.status, a.outcome) for a in error.attempts] == [
        (500, "retry"),
        (500, "retry"),
        (500, "error"),
    ]
    assert len(sleeps) == 2  # no sleep after the last attempt
    assert 0 <= sleeps[0] <= 2.0 and 0 <= sleeps[1] <= 4.0  # full jitter under the ceiling
    text = str(error)
    assert "\n" not in text
    assert "HTTP 500" in text and "Internal Server Error" in text
    assert "openai/gpt-5.2" in text and "3 attempts" in text


def test_backoff_is_seeded_and_capped(server: LLMServer, make_client: ClientFactory) -> None:
    server.script(Reply(503, b"busy"))
    first: list[float] = []
    second: list[float] = []
    fail(make_client(sleep=first.append, rng=random.Random(3), max_attempts=6, max_backoff=5.0))
    fail(make_client(sleep=second.append, rng=random.Random(3), max_attempts=6, max_backoff=5.0))
    assert first == second
    assert all(0 <= delay <= 5.0 for delay in first)


@pytest.mark.parametrize("status", [408, 502, 503, 504])
def test_transient_statuses_are_retried(
    server: LLMServer, make_client: ClientFactory, sleeps: list[float], status: int
) -> None:
    server.script(Reply(status, b"<html>upstream trouble</html>"), Reply(body=completion("ok")))
    result = call(make_client())
    assert result.content == "ok"
    assert [a.status for a in result.attempts] == [status, 200]
    assert len(sleeps) == 1


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "openai/gpt-5.2 is not a valid model ID"),
        (401, "No auth credentials found"),
        (402, "Insufficient credits. Add more using https://openrouter.ai/credits"),
        (403, "Key is not allowed to use this model"),
        (404, "No endpoints found matching your data policy"),
    ],
)
def test_client_errors_are_not_retried(
    server: LLMServer,
    make_client: ClientFactory,
    sleeps: list[float],
    status: int,
    message: str,
) -> None:
    server.script(Reply(status, {"error": {"message": message, "code": status}}))
    error = fail(make_client(openrouter=True))
    assert len(server.requests) == 1
    assert sleeps == []
    assert (error.kind, error.status, error.retryable) == ("http", status, False)
    assert [(a.status, a.outcome) for a in error.attempts] == [(status, "error")]
    assert f"HTTP {status}" in str(error) and message in str(error)
    assert error.hint and error.hint in error.one_line()


def test_200_with_an_error_object_is_retried_and_its_cost_counted(
    server: LLMServer, make_client: ClientFactory
) -> None:
    server.script(
        Reply(
            body={
                "error": {"message": "Provider returned error", "code": 502},
                "usage": {"prompt_tokens": 1200, "completion_tokens": 0, "cost": 0.001},
            }
        ),
        Reply(body=completion("ok", provider="OpenAI", usage=OR_USAGE)),
    )
    result = call(make_client(openrouter=True))
    assert result.content == "ok"
    assert [(a.status, a.outcome) for a in result.attempts] == [(200, "retry"), (200, "ok")]
    assert "Provider returned error" in (result.attempts[0].error or "")
    assert result.cost_usd == pytest.approx(0.0052)
    assert result.tokens_in == 2400


def test_200_with_finish_reason_error_is_retried(
    server: LLMServer, make_client: ClientFactory
) -> None:
    server.script(
        Reply(body=completion("half an ans", finish_reason="error")),
        Reply(body=completion("full answer")),
    )
    result = call(make_client())
    assert result.content == "full answer"
    assert result.attempts[0].outcome == "retry"
    assert "finish_reason 'error'" in (result.attempts[0].error or "")


@pytest.mark.parametrize(
    "body",
    [b"<html>502 Bad Gateway</html>", b"", b'{"choices": [', b"[1, 2]", b'{"choices": []}'],
)
def test_unusable_200_bodies_are_retried_then_reported(
    server: LLMServer, make_client: ClientFactory, body: bytes
) -> None:
    server.script(Reply(body=body), Reply(body=completion("ok")))
    assert call(make_client()).content == "ok"
    server.script(Reply(body=body))
    error = fail(make_client(max_attempts=2))
    assert (error.kind, error.status, error.retryable) == ("provider", 200, True)
    assert len(error.attempts) == 2


def test_a_timeout_is_retried_then_reported(
    server: LLMServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script(Reply(body=completion("too late"), delay=0.5))
    error = fail(make_client(timeout=0.2, max_attempts=2))
    assert (error.kind, error.status, error.retryable) == ("transport", None, True)
    assert len(server.requests) == 2
    assert len(sleeps) == 1
    assert [a.outcome for a in error.attempts] == ["retry", "error"]
    assert all(a.status is None and "timed out" in (a.error or "") for a in error.attempts)
    assert "timed out" in str(error)


def test_a_timeout_then_success_keeps_the_failed_attempt(
    server: LLMServer, make_client: ClientFactory
) -> None:
    server.script(Reply(body=completion("late"), delay=0.5), Reply(body=completion("ok")))
    result = call(make_client(timeout=0.2))
    assert result.content == "ok"
    assert [(a.status, a.outcome) for a in result.attempts] == [(None, "retry"), (200, "ok")]


def test_connection_refused_is_a_transport_error(make_client: ClientFactory) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    error = fail(make_client(base_url=f"http://127.0.0.1:{port}/v1", max_attempts=2))
    assert (error.kind, error.status, error.retryable) == ("transport", None, True)
    assert len(error.attempts) == 2
    assert "connection failed" in str(error)
    assert "ARENA_LLM_BASE_URL" in error.one_line()


# ---- secrets and messages ------------------------------------------------------------------


def test_the_api_key_never_appears_in_errors_or_logs(
    server: LLMServer, make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    echo = {"X-Echo-Authorization": f"Bearer {KEY}", "X-Key": KEY}
    leaky = {
        "error": {
            "message": f"Insufficient credits for key {KEY} (Authorization: Bearer {KEY})",
            "code": 402,
        }
    }
    # Our own logs at every level, httpx's request line. (httpcore's DEBUG trace prints raw
    # response headers, so a server that echoes the key in a header would show there.)
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    caplog.set_level(logging.INFO, logger="httpx")
    server.script(
        Reply(500, {"error": {"message": f"upstream saw key {KEY}"}}, echo),
        Reply(200, f"not json, but the key: {KEY}", echo),
        Reply(402, leaky, echo),
    )
    error = fail(make_client(openrouter=True, max_attempts=3))
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"  # it was sent
    assert error.status == 402 and error.kind == "http"
    surfaced = [
        str(error),
        repr(error),
        error.one_line(),
        *(str(attempt) for attempt in error.attempts),
        caplog.text,
    ]
    for text in surfaced:
        assert KEY not in text
        assert KEY[9:30] not in text  # not even a fragment of the key
    assert "[redacted]" in str(error)
    assert "Insufficient credits" in str(error)
    assert "[redacted]" in caplog.text  # the retried attempts were logged, redacted
    assert KEY not in repr(make_client())


def test_a_long_multiline_provider_message_is_one_line_and_truncated(
    server: LLMServer, make_client: ClientFactory
) -> None:
    message = "bad request\n" + "x" * 1000
    server.script(Reply(400, {"error": {"message": message}}))
    text = str(fail(make_client()))
    assert "\n" not in text
    assert "x" * ERROR_TEXT_CHARS not in text
    assert "…" in text


def test_redact_covers_keys_and_bearer_tokens() -> None:
    assert redact(f"a {KEY} b", [KEY]) == "a [redacted] b"
    assert redact("Authorization: Bearer abc.def") == "Authorization: Bearer [redacted]"
    assert redact("key sk-or-v1-deadbeefcafe0123") == "key [redacted]"
    assert redact("nothing secret") == "nothing secret"
    assert redact("see sk-or-v1-deadbeefcafe0123", ["k"]) == "see [redacted]"


# ---- requests and settings --------------------------------------------------------------------


def test_request_validation_and_family_mapping() -> None:
    with pytest.raises(ValueError):
        ChatRequest(model=" ", messages=MESSAGES)
    with pytest.raises(ValueError):
        ChatRequest(model="m", messages=[])
    with pytest.raises(ValueError):
        ChatRequest(model="m", messages=[{"role": "user"}])
    with pytest.raises(ValueError):
        ChatRequest(model="m", messages=MESSAGES, max_tokens=0)
    family = FamilySpec(
        id="claude-opus-4.5",
        display_name="Claude Opus 4.5",
        provider="Anthropic",
        model="anthropic/claude-opus-4.5",
        max_tokens=4000,
        reasoning_budget=1024,
    )
    messages = [dict(message) for message in MESSAGES]
    built = ChatRequest.for_family(family, messages)
    messages[1]["content"] = "changed afterwards"
    assert (built.model, built.max_tokens, built.reasoning_budget) == (
        "anthropic/claude-opus-4.5",
        4000,
        1024,
    )
    assert built.messages[1]["content"] == "Decide."


def test_from_settings_sends_the_key_only_where_it_belongs(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENROUTER_API_KEY", "ARENA_LLM_API_KEY", "ARENA_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(
        _env_file=None,
        llm_base_url=server.url,
        llm_api_key=KEY,
        methodology={"transport_attempts": 5},
    )
    server.script(Reply(body=completion("ok")))
    with ChatClient.from_settings(settings, sleep=lambda _: None) as client:
        assert client.max_attempts == 5
        assert client.openrouter is False
        client.complete(request())
    other_host = server.url.replace("127.0.0.1", "localhost")
    with ChatClient.from_settings(settings, base_url=other_host) as client:
        client.complete(request())
    assert server.requests[0].headers.get("Authorization") == f"Bearer {KEY}"
    assert "Authorization" not in server.requests[1].headers
