"""OpenAI-compatible chat client for OpenRouter and local servers (vLLM, Ollama, llama.cpp).

Notes for the README (what this module does, and why):

- **One endpoint.** `POST {base_url}/chat/completions`, non-streaming. The body is always
  `model` (the pinned id), `messages` and `temperature: 0` (methodology §4.1: every family runs
  deterministic); `max_tokens` only when the lineup sets it.
- **OpenRouter only.** When the base URL's host ends in `openrouter.ai` (or `openrouter=True`),
  the body also carries `usage: {include: true}` (so `usage.cost` comes back),
  `provider: {allow_fallbacks: false}` (the pinned model is served as asked, or the call fails)
  and, when the lineup sets `reasoning_budget`, `reasoning: {max_tokens: N}` — a budget of 0
  becomes `reasoning: {enabled: false}`. A `models` fallback list is never sent. Local servers
  get none of these fields (strict servers reject unknown ones).
- **Retries.** Connection errors, timeouts, 408, 429, 5xx (but not 501/505), and a 200 that is
  not usable (not JSON, an `error` object, no choices, any choice with `finish_reason: "error"`)
  are retried with exponential backoff and full jitter; `Retry-After` (seconds or HTTP-date) is
  honoured up to `max_backoff`; a server asking for longer is not waited for (the attempt is
  final). Other statuses (400, 401, 402 no credits, 403, 404, …) fail at once. Every
  attempt, failed or not, is kept as an `AttemptRecord`, and its tokens and cost count in the
  totals (a failed 200 can still be billed).
- **Bounded.** Every answer is read within `ReadLimits` (`arena.markets.bounded_http`): an
  overall deadline per attempt and a cap on the decoded body, so a server that trickles or
  floods costs one attempt, not hours or gigabytes. A body over the cap is a final failure.
- **Circuit breakers** (`arena.markets.breaker`). Each model has one, counting the failed
  attempts that say it cannot be served (transport failures, 429/5xx, refused bodies), not
  an unusable answer: after `max_attempts` of them in a row, or a `Retry-After` beyond the
  cap, its requests fail at once ("not called: …", no attempt sent) until the cooldown ends.
  On OpenRouter one model's provider can be down while the others answer, so that is all one
  model's failures do. The endpoint has one more, which opens when two models' breakers
  opened with no answer from any model between them: the endpoint itself is down, and a
  decision run's other agents fail at once instead of each waiting out its own retries.
- **Content** (read by `arena.agents.chat_response`). `choices[0].message.content` as text;
  a list of content parts is joined; a missing or null content becomes "" so the caller's
  parser reports it as malformed. `reasoning` / `reasoning_content` are kept apart and never
  mixed into the content.
- **Secrets.** The API key is sent only as `Authorization: Bearer …` and is redacted from every
  text this module surfaces (error messages, attempt records, the answer's content, reasoning,
  `model` and `provider`, logs), as are bearer tokens and OpenRouter-style `sk-or-…` keys, in
  any case and in their escaped forms (`arena.agents.secrets`): an endpoint that echoes the key
  back cannot get it stored. `ChatClient.from_settings` sends the configured key only to the
  configured `ARENA_LLM_BASE_URL` host or to OpenRouter, never to another per-family host.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import httpx

from arena.agents.chat_response import (
    Answer,
    ErrorKind,
    Failure,
    Usage,
    error_message,
    json_or_none,
    provider_failure,
    read_answer,
    read_usage,
    transport_failure,
)
from arena.agents.secrets import redact
from arena.core.backoff import backoff_delay, retry_after_seconds
from arena.core.errors import ArenaError
from arena.core.text import storable
from arena.markets.bounded_http import MIB, BodyRefused, ReadLimits, read_bounded
from arena.markets.breaker import CircuitBreaker, CircuitOpen
from arena.markets.http_client import OwnsHttpClient, json_http_client

if TYPE_CHECKING:
    from arena.config import Settings
    from arena.lineup import FamilySpec

logger = logging.getLogger("arena.agents.llm")

CHAT_PATH = "/chat/completions"
OPENROUTER_HOST_SUFFIX = "openrouter.ai"
APP_TITLE = "Forecaster Arena"
ERROR_TEXT_CHARS = 200
# 501 Not Implemented and 505 HTTP Version Not Supported will not change on a second try.
NON_RETRYABLE_5XX = frozenset({501, 505})
# A long answer with its reasoning is well under 2 MB; a reasoning model may think for
# minutes, so the deadline is generous, but finite.
CHAT_LIMITS = ReadLimits(max_bytes=16 * MIB, deadline=300.0)
# Models whose breakers opened, with no answer between, that say the endpoint is down.
ENDPOINT_DOWN_MODELS = 2

AttemptOutcome = Literal["ok", "retry", "error"]

__all__ = [
    "AttemptRecord",
    "ChatClient",
    "ChatRequest",
    "ChatResult",
    "LLMError",
    "is_openrouter",
    "replicate_user",
]


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to ask for; temperature is not a field because it is always 0."""

    TEMPERATURE: ClassVar[int] = 0

    model: str
    messages: Sequence[Mapping[str, str]]
    max_tokens: int | None = None
    reasoning_budget: int | None = None
    # The body's `user`: the agent's sampling stream, only for a replicate (`replicate_user`).
    user: str | None = None

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ValueError("model must be a non-empty model id")
        if not self.messages:
            raise ValueError("messages must not be empty")
        for message in self.messages:
            if not isinstance(message.get("role"), str) or not isinstance(
                message.get("content"), str
            ):
                raise ValueError("every message needs a string 'role' and 'content'")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.reasoning_budget is not None and self.reasoning_budget < 0:
            raise ValueError("reasoning_budget must not be negative")
        # Own a copy, so a caller mutating its list cannot change a request already made.
        object.__setattr__(self, "messages", tuple(dict(message) for message in self.messages))

    @classmethod
    def for_family(
        cls,
        family: FamilySpec,
        messages: Sequence[Mapping[str, str]],
        user: str | None = None,
    ) -> ChatRequest:
        """The request a lineup family makes: its pinned model and its token limits."""
        return cls(
            model=family.model,
            messages=messages,
            max_tokens=family.max_tokens,
            reasoning_budget=family.reasoning_budget,
            user=user,
        )


def replicate_user(family_id: str, replicate: int | None) -> str | None:
    """The `user` a replicate's requests carry (`arena:<family>:r<k>`), None outside a
    replicated cohort: a v1 request body is unchanged. Providers read it as an end-user id;
    the simulated model server as a sampling stream, so replicates answer independently."""
    return None if replicate is None else f"arena:{family_id}:r{replicate}"


@dataclass(frozen=True)
class AttemptRecord:
    """One HTTP attempt as it happened; stored per attempt so costs and failures stay auditable."""

    attempt_no: int
    status: int | None
    outcome: AttemptOutcome
    latency_ms: int
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    served_model: str | None = None
    provider: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class ChatResult:
    """The answer of the successful attempt plus every attempt it took to get there."""

    content: str
    finish_reason: str | None
    attempts: list[AttemptRecord] = field(default_factory=list)
    reasoning: str | None = None

    @property
    def tokens_in(self) -> int:
        """Prompt tokens over all attempts (failed ones can be billed too)."""
        return sum(attempt.tokens_in for attempt in self.attempts)

    @property
    def tokens_out(self) -> int:
        """Completion tokens over all attempts."""
        return sum(attempt.tokens_out for attempt in self.attempts)

    @property
    def cost_usd(self) -> float:
        """Reported cost over all attempts (0.0 where the server reports none)."""
        return sum(attempt.cost_usd for attempt in self.attempts)

    @property
    def latency_ms(self) -> int:
        """Time spent in requests over all attempts (backoff sleeps excluded)."""
        return sum(attempt.latency_ms for attempt in self.attempts)

    @property
    def served_model(self) -> str | None:
        """The model id the server says answered (it can differ from the requested alias)."""
        return self.attempts[-1].served_model if self.attempts else None

    @property
    def provider(self) -> str | None:
        """The upstream provider OpenRouter routed to, when it says."""
        return self.attempts[-1].provider if self.attempts else None


class LLMError(ArenaError):
    """The model could not be reached or would not answer; `attempts` says what was tried."""

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        status: int | None,
        retryable: bool,
        attempts: list[AttemptRecord],
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint)
        self.kind = kind
        self.status = status
        self.retryable = retryable
        self.attempts = attempts


@dataclass(frozen=True)
class _Outcome:
    """What one attempt produced: an answer or a failure, plus whatever usage was reported."""

    status: int | None
    usage: Usage
    answer: Answer | None = None
    failure: Failure | None = None


class ChatClient(OwnsHttpClient):
    """Retrying chat-completions client; one per endpoint, reusable across requests."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        timeout: float = 120.0,
        max_attempts: int = 3,
        backoff_base: float = 1.0,
        max_backoff: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.BaseTransport | None = None,
        openrouter: bool | None = None,
        limits: ReadLimits = CHAT_LIMITS,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.base_url = base_url.rstrip("/")
        self.host = httpx.URL(self.base_url).host
        self.openrouter = is_openrouter(self.base_url) if openrouter is None else openrouter
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.max_backoff = max_backoff
        self._secrets = [api_key] if api_key else []
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock
        headers: dict[str, str] = {}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        if self.openrouter:
            headers["X-Title"] = APP_TITLE
        self._client = json_http_client(timeout=timeout, transport=transport, headers=headers)
        self.limits = limits
        self.breaker = CircuitBreaker(
            f"LLM endpoint {self.host}", logger, threshold=ENDPOINT_DOWN_MODELS, clock=clock
        )
        self._model_breakers: dict[str, CircuitBreaker] = {}
        self._breakers_lock = threading.Lock()

    @classmethod
    def from_settings(
        cls, settings: Settings, *, base_url: str | None = None, **options: Any
    ) -> ChatClient:
        """A client for `base_url` (a family's own endpoint) or the configured one.

        The configured key goes only to the configured endpoint's host or to OpenRouter: a
        per-family local server must not receive the OpenRouter key.
        """
        target = (base_url or settings.llm_base_url).rstrip("/")
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        same_host = httpx.URL(target).host == httpx.URL(settings.llm_base_url).host
        if not (same_host or is_openrouter(target)):
            key = None
        options.setdefault("max_attempts", settings.methodology.transport_attempts)
        return cls(target, key, **options)

    def __repr__(self) -> str:
        return f"ChatClient({self.base_url!r}, openrouter={self.openrouter})"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The key this client sends: what whoever stores its answers must redact too."""
        return tuple(self._secrets)

    # ---- public API ------------------------------------------------------------------------

    def body_for(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for `request` (OpenRouter-only fields only to OpenRouter)."""
        body: dict[str, Any] = {
            "model": request.model,
            "messages": [dict(message) for message in request.messages],
            "temperature": ChatRequest.TEMPERATURE,
        }
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.user is not None:
            body["user"] = request.user
        if self.openrouter:
            body["usage"] = {"include": True}
            body["provider"] = {"allow_fallbacks": False}
            if request.reasoning_budget is not None:
                body["reasoning"] = (
                    {"max_tokens": request.reasoning_budget}
                    if request.reasoning_budget > 0
                    else {"enabled": False}
                )
        return body

    def complete(self, request: ChatRequest) -> ChatResult:
        """Ask once, retrying what is worth retrying; LLMError when no usable answer comes."""
        body = self.body_for(request)
        attempts: list[AttemptRecord] = []
        model_breaker = self._breaker_of(request.model)
        for attempt_no in range(1, self.max_attempts + 1):
            try:
                self.breaker.check()
                model_breaker.check()
            except CircuitOpen as closed:
                unsent = Failure("transport", closed.description, retryable=True)
                raise self._error(request, None, unsent, attempts) from None
            started = self._clock()
            outcome = self._attempt(body)
            latency_ms = max(0, round((self._clock() - started) * 1000))
            failure = outcome.failure
            last = attempt_no == self.max_attempts
            too_long = failure is not None and (failure.wait or 0) > self.max_backoff
            if failure is not None and too_long:
                failure = replace(
                    failure,
                    description=f"{failure.description}; asked to retry after "
                    f"{failure.wait:.0f} s, more than the {self.max_backoff:g} s this client waits",
                    retryable=False,
                )
            self._count(model_breaker, failure, trip=too_long)
            if failure is None:
                state: AttemptOutcome = "ok"
            elif failure.retryable and not last:
                state = "retry"
            else:
                state = "error"
            usage = outcome.usage
            attempts.append(
                AttemptRecord(
                    attempt_no=attempt_no,
                    status=outcome.status,
                    outcome=state,
                    latency_ms=latency_ms,
                    tokens_in=usage.tokens_in,
                    tokens_out=usage.tokens_out,
                    cost_usd=usage.cost_usd,
                    served_model=usage.served_model,
                    provider=usage.provider,
                    error=failure.description if failure else None,
                )
            )
            if failure is None:
                assert outcome.answer is not None
                return ChatResult(
                    content=outcome.answer.content,
                    finish_reason=outcome.answer.finish_reason,
                    attempts=attempts,
                    reasoning=outcome.answer.reasoning,
                )
            if state == "error":
                raise self._error(request, outcome.status, failure, attempts)
            delay = self._delay(attempt_no, failure.wait)
            logger.warning(
                "LLM %s at %s: %s; retry %d/%d in %.2fs",
                request.model,
                self.host,
                failure.description,
                attempt_no,
                self.max_attempts - 1,
                delay,
            )
            self._sleep(delay)
        raise AssertionError("unreachable: the last attempt either returns or raises")

    # ---- one attempt -----------------------------------------------------------------------

    def _attempt(self, body: dict[str, Any]) -> _Outcome:
        """One POST, classified; never raises for anything the server or network does."""
        try:
            response = read_bounded(
                self._client, "POST", self.base_url + CHAT_PATH, self.limits, json_body=body
            )
        except httpx.TimeoutException as exc:
            return _Outcome(None, Usage(), failure=transport_failure(f"timed out ({_name(exc)})"))
        except httpx.TransportError as exc:
            return _Outcome(
                None, Usage(), failure=transport_failure(f"connection failed ({_name(exc)})")
            )
        except BodyRefused as refused:
            failure = Failure("transport", f"refused {refused.description}", retryable=False)
            return _Outcome(None, Usage(), failure=failure)
        status = response.status_code
        payload = json_or_none(response.content)
        usage = self._safe_usage(read_usage(payload))
        if not 200 <= status < 300:
            retryable = status in (408, 429) or (status >= 500 and status not in NON_RETRYABLE_5XX)
            wait = retry_after_seconds(response.headers.get("Retry-After")) if retryable else None
            detail = self._error_text(payload, response.text)
            description = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
            return _Outcome(status, usage, failure=Failure("http", description, retryable, wait))
        if not isinstance(payload, Mapping):
            what = "a body that is not JSON" if payload is None else "a JSON body that is no object"
            snippet = self._clean(response.text)
            return _Outcome(
                status, usage, failure=provider_failure(f"HTTP {status} with {what}: {snippet}")
            )
        if payload.get("error"):
            detail = self._error_text(payload, response.text)
            return _Outcome(status, usage, failure=provider_failure(f"provider error: {detail}"))
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return _Outcome(status, usage, failure=provider_failure("the answer has no choices"))
        if any(isinstance(c, Mapping) and c.get("finish_reason") == "error" for c in choices):
            detail = self._error_text(choices[0], "") or "no detail"
            return _Outcome(
                status, usage, failure=provider_failure(f"finish_reason 'error': {detail}")
            )
        return _Outcome(
            status, self._safe_usage(usage), answer=self._safe_answer(read_answer(choices[0]))
        )

    def _breaker_of(self, model: str) -> CircuitBreaker:
        with self._breakers_lock:
            found = self._model_breakers.get(model)
            if found is None:
                found = self._model_breakers[model] = CircuitBreaker(
                    f"LLM {model} at {self.host}",
                    logger,
                    threshold=self.max_attempts,
                    clock=self._clock,
                )
            return found

    def _count(self, breaker: CircuitBreaker, failure: Failure | None, *, trip: bool) -> None:
        """Tell the breakers whether this attempt says the model cannot be served: a transport
        failure or a 429/5xx does; an answer, even an unusable one or a 4xx, does not."""
        down = failure is not None and (
            failure.kind == "transport" or (failure.kind == "http" and failure.retryable) or trip
        )
        if failure is None or not down:
            breaker.succeeded()
            self.breaker.succeeded()
            return
        was_open = breaker.is_open
        breaker.failed(failure.description, trip=trip)
        if breaker.is_open and not was_open:
            self.breaker.failed(f"{breaker.label}: {failure.description}")

    def _safe(self, text: str | None) -> str | None:
        """Server-controlled text as stored: storable, and never holding the key."""
        return None if text is None else redact(storable(text), self._secrets)

    def _safe_answer(self, answer: Answer) -> Answer:
        return replace(
            answer, content=self._safe(answer.content) or "", reasoning=self._safe(answer.reasoning)
        )

    def _safe_usage(self, usage: Usage) -> Usage:
        return replace(
            usage, served_model=self._safe(usage.served_model), provider=self._safe(usage.provider)
        )

    def _error(
        self,
        request: ChatRequest,
        status: int | None,
        failure: Failure,
        attempts: list[AttemptRecord],
    ) -> LLMError:
        """The LLMError for a final failure: one line, the status and the provider's words."""
        count = len(attempts)
        message = (
            f"LLM {request.model} at {self.host} failed after {count} "
            f"attempt{'s' if count != 1 else ''}: {failure.description}"
        )
        return LLMError(
            message,
            kind=failure.kind,
            status=status,
            retryable=failure.retryable,
            attempts=attempts,
            hint=_hint(failure.kind, status),
        )

    def _delay(self, attempt_no: int, retry_after: float | None) -> float:
        return backoff_delay(
            attempt_no, retry_after, self.backoff_base, self.max_backoff, self._rng
        )

    def _error_text(self, payload: Any, raw: str) -> str:
        """The server's own error message (OpenAI, OpenRouter, vLLM, Ollama shapes), cleaned."""
        return self._clean(error_message(payload) or raw)

    def _clean(self, text: str) -> str:
        """One line, secrets redacted, at most ERROR_TEXT_CHARS characters."""
        # Redacted again once flat: a form split across lines (hex wrapped at a newline) is
        # whole only after the whitespace is collapsed.
        flat = redact(" ".join(redact(text, self._secrets).split()), self._secrets)
        return flat if len(flat) <= ERROR_TEXT_CHARS else flat[:ERROR_TEXT_CHARS] + "…"


def is_openrouter(base_url: str) -> bool:
    """True when `base_url` points at OpenRouter (host `openrouter.ai` or a subdomain)."""
    host = httpx.URL(base_url).host.lower().rstrip(".")
    return host == OPENROUTER_HOST_SUFFIX or host.endswith("." + OPENROUTER_HOST_SUFFIX)


def _name(exc: Exception) -> str:
    return type(exc).__name__


def _hint(kind: ErrorKind, status: int | None) -> str:
    """How to fix it, as far as the failure says."""
    if kind == "transport":
        return "check that the LLM endpoint (ARENA_LLM_BASE_URL or the family's base_url) is up"
    if status == 401:
        return "check OPENROUTER_API_KEY"
    if status == 402:
        return "the account has no credits left: top it up"
    if status == 403:
        return "the key may not use this model or endpoint"
    if status == 404:
        return "check the model id in the lineup and the base URL"
    if status == 400:
        return "the endpoint rejected the request: check the model id and its parameters"
    return "the provider is failing; the decision can be retried later"
