"""A late entry never plays a week the model was not asked (methodology §20.1): the endpoint
is probed before the first week, and a decision lost to the endpoint is told apart from a
played one.

Why apart from `arena.engine.late_entry` (the command's loop): this is the HTTP side of it,
the probe, and the wrapper that keeps the client's last endpoint failure (`LLMError.kind` and
status, read by the pure rule `arena.core.late_entry.is_outage`). What was played and what is
to be replayed stays in the database (the decision rows and their claims): a week lost to the
endpoint keeps its re-claimable `error` row and no later week is played over it.
"""

import httpx

from arena.agents.baselines import BaselineInput
from arena.agents.llm import ChatResult, LLMError
from arena.agents.responders import LLMResponder, Messages, Responder
from arena.core.late_entry import is_outage
from arena.markets.bounded_http import request_deadline
from arena.markets.http_client import json_http_client

PROBE_TIMEOUT = 15.0  # seconds: a blackholed host is named this soon, not after a chat timeout
MODELS_PATH = "/models"


def endpoint_of(responder: Responder) -> str | None:
    """The base URL a responder asks (None: a baseline, answered in process)."""
    if isinstance(responder, LLMResponder):
        return shown_url(responder.client.base_url)
    return None


def shown_url(url: str) -> str:
    """The URL as a message names it: without any user:password part."""
    parsed = httpx.URL(url)
    return str(parsed.copy_with(username=None, password=None)) if parsed.userinfo else url


def probe_endpoint(base_url: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None when `GET {base_url}/models` gets any HTTP answer below 500 (the server is up; a
    404 from a server without the route, or a 401, still says so); else why not, in a few
    words. Tokenless and keyless: no key is sent, no model is asked; only the status line and
    headers are read, never the body (a models list can be large, a hostile one endless)."""
    target = base_url.rstrip("/") + MODELS_PATH
    try:
        with (
            request_deadline(timeout),  # a server trickling its headers is cut off too
            json_http_client(timeout=timeout) as client,
            client.stream("GET", target) as answer,
        ):
            status = answer.status_code
    except httpx.TimeoutException:
        return f"no answer to GET {MODELS_PATH} within {timeout:g} s"
    except httpx.TransportError as exc:
        return f"connection failed ({type(exc).__name__})"
    if status >= 500:
        return f"GET {MODELS_PATH} answered HTTP {status}"
    return None


class WatchedResponder:
    """A responder whose last endpoint failure (`is_outage`) is kept until `take`n: after a
    decision ends `error`, it says whether the endpoint failed (the week is not played) or the
    model did (the week's played outcome)."""

    def __init__(self, inner: Responder) -> None:
        self.inner = inner
        self._failure: LLMError | None = None

    @property
    def secrets(self) -> tuple[str, ...]:
        """The inner responder's key, which the engine redacts from what it stores."""
        return tuple(getattr(self.inner, "secrets", ()))

    def respond(self, messages: Messages, context: BaselineInput) -> ChatResult:
        try:
            return self.inner.respond(messages, context)
        except LLMError as exc:
            self._failure = exc if is_outage(exc.kind, exc.status) else None
            raise

    def take(self) -> LLMError | None:
        """The endpoint failure since the last `take`, if any (cleared)."""
        failure, self._failure = self._failure, None
        return failure
