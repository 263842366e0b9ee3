"""Live: one real chat completion through the project's own `ChatClient` (`pytest -m live`).

Uses the configured endpoint (`ARENA_LLM_BASE_URL`, OpenRouter by default) and key
(`OPENROUTER_API_KEY` or `ARENA_LLM_API_KEY`, from the environment or `.env`), and one family
of the configured lineup: `ARENA_LIVE_FAMILY` names it, else the first enabled LLM family. It
asks for a HOLD decision in the arena's JSON and reads the answer with the arena's parser.
Skipped when no key is configured; one call, a few hundred tokens.
"""

import os

import pytest

from arena.agents.llm import ChatClient, ChatRequest
from arena.agents.parsing import parse_decision
from arena.config import load_settings
from arena.lineup import FamilySpec, load_lineup
from tests.live.network import require_network

pytestmark = pytest.mark.live

PROMPT = (
    "This is a connectivity check of a forecasting benchmark. Reply with exactly this JSON "
    'object and nothing else: {"action": "HOLD", "reasoning": "connectivity check"}'
)


def _family() -> FamilySpec:
    settings = load_settings()
    llms = [f for f in load_lineup(settings.lineup).enabled() if f.kind == "llm"]
    wanted = os.environ.get("ARENA_LIVE_FAMILY")
    chosen = [f for f in llms if f.id == wanted] if wanted else llms[:1]
    if not chosen:
        pytest.fail(f"no enabled LLM family {wanted or ''} in the lineup", pytrace=False)
    return chosen[0]


def test_one_real_chat_completion() -> None:
    settings = load_settings()
    family = _family()
    if family.base_url is None and settings.llm_api_key is None:
        pytest.skip("no LLM key: set OPENROUTER_API_KEY (or ARENA_LLM_API_KEY) to run this check")
    client = ChatClient.from_settings(settings, base_url=family.base_url, max_attempts=2)
    require_network(client.base_url)
    request = ChatRequest.for_family(family, [{"role": "user", "content": PROMPT}])
    with client:
        result = client.complete(request)

    assert result.content.strip(), f"{family.model} answered nothing ({result.finish_reason})"
    assert result.attempts[-1].outcome == "ok" and result.attempts[-1].status == 200
    assert result.tokens_in > 0 and result.tokens_out > 0, "no usage reported"
    if client.openrouter:
        assert result.served_model, "OpenRouter did not say which model answered"
    decision = parse_decision(result.content)
    assert decision.ok is not None, f"unparseable: {decision.error}: {result.content[:200]!r}"
    assert decision.ok.action == "HOLD"
