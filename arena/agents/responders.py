"""Who answers a decision prompt: an LLM endpoint or a baseline strategy, behind one interface.

Both return a `ChatResult` (raw text plus per-attempt usage) so the engine treats every agent
the same way: prompt → raw text → parser → executor.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from arena.agents.baselines import (
    BaselineInput,
    HiddenProbability,
    cash_strategy,
    favorite_strategy,
    oracle_strategy,
    random_strategy,
)
from arena.agents.llm import (
    AttemptRecord,
    ChatClient,
    ChatRequest,
    ChatResult,
    LLMError,
    replicate_user,
)
from arena.config import Settings
from arena.lineup import FamilySpec

Messages = Sequence[Mapping[str, str]]


class Responder(Protocol):
    """Answers one turn of a decision conversation."""

    def respond(self, messages: Messages, context: BaselineInput) -> ChatResult: ...


class LLMResponder:
    """A lineup family served by an OpenAI-compatible endpoint.

    Cost: an attempt's reported `usage.cost` (OpenRouter) is kept; an attempt without one is
    costed from its reported tokens at the family's list prices (`price_in` / `price_out` of the
    lineup, USD per million tokens), so local and simulated servers show a spend too.
    """

    def __init__(self, client: ChatClient, family: FamilySpec) -> None:
        self.client = client
        self.family = family

    @property
    def secrets(self) -> tuple[str, ...]:
        """The key its client sends: the engine redacts it from everything it stores."""
        return self.client.secrets

    def respond(self, messages: Messages, context: BaselineInput) -> ChatResult:
        try:
            user = replicate_user(self.family.id, context.replicate)
            result = self.client.complete(ChatRequest.for_family(self.family, messages, user))
        except LLMError as exc:
            exc.attempts = self._priced(exc.attempts)
            raise
        return replace(result, attempts=self._priced(result.attempts))

    def _priced(self, attempts: list[AttemptRecord]) -> list[AttemptRecord]:
        if self.family.price_in is None and self.family.price_out is None:
            return attempts
        return [
            replace(a, cost_usd=self.family.cost_usd(a.tokens_in, a.tokens_out))
            if a.cost_usd == 0.0 and (a.tokens_in or a.tokens_out)
            else a
            for a in attempts
        ]


class BaselineResponder:
    """A reference strategy; it answers from the structured view of the same prompt."""

    def __init__(
        self, family: FamilySpec, seed: int = 0, probability: HiddenProbability | None = None
    ) -> None:
        if family.strategy == "oracle" and probability is None:
            raise ValueError("the oracle baseline needs the simulated world's probabilities")
        self.family = family
        self.seed = seed
        self.probability = probability

    def respond(self, messages: Messages, context: BaselineInput) -> ChatResult:
        strategy = self.family.strategy
        if strategy == "favorite":
            text = favorite_strategy(context)
        elif strategy == "random":
            text = random_strategy(context, self.seed)
        elif strategy == "oracle":
            assert self.probability is not None
            text = oracle_strategy(context, self.probability)
        else:
            text = cash_strategy(context)
        record = AttemptRecord(
            attempt_no=1,
            status=None,
            outcome="ok",
            latency_ms=0,
            served_model=self.family.model,
            provider="baseline",
        )
        return ChatResult(content=text, finish_reason="stop", attempts=[record])


ResponderFactory = Callable[[FamilySpec], Responder | None]


def default_responders(
    settings: Settings,
    seed: int = 0,
    probability: HiddenProbability | None = None,
    **client_options: Any,
) -> tuple[ResponderFactory, Callable[[], None]]:
    """Responders for a lineup: baselines always; LLM families only with a usable endpoint.

    An LLM family on the configured endpoint needs the API key; one with its own `base_url`
    (a local server) does not. Returns the factory and a `close` for the HTTP clients.
    """
    clients: dict[str, ChatClient] = {}

    def factory(family: FamilySpec) -> Responder | None:
        if family.kind == "baseline":
            if family.strategy == "oracle" and probability is None:
                return None
            return BaselineResponder(family, seed, probability)
        if family.base_url is None and settings.llm_api_key is None:
            return None
        target = family.base_url or settings.llm_base_url
        if target not in clients:
            clients[target] = ChatClient.from_settings(
                settings, base_url=family.base_url, **client_options
            )
        return LLMResponder(clients[target], family)

    def close() -> None:
        for client in clients.values():
            client.close()

    return factory, close
