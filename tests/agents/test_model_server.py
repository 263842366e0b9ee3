"""The simulated model server: a real OpenAI-compatible server the project's own client reads."""

import dataclasses
import json
import math
import os
import signal
import statistics
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest

from arena.agents.llm import ChatClient, ChatRequest
from arena.agents.parsing import parse_decision
from arena.agents.prompts import (
    PortfolioView,
    PromptMarket,
    PromptPosition,
    system_prompt,
    user_prompt,
)
from arena.core import stats
from arena.sim import models as model_server
from arena.sim.model_server import ModelServer
from arena.sim.models import SimulatedModels
from arena.sim.personas import PERSONAS, persona_for
from arena.sim.prompt_view import parse_prompt
from arena.sim.wire import messages_sha256
from arena.sim.world import DEMO_START, SimulatedWorld

SEED = 11
AT = DEMO_START.replace(hour=12)
CAREFUL = "anthropic/claude-opus-4.5"  # noise 0.20
NOISY = "qwen/qwen3-235b-a22b-2507"  # noise 1.20


@pytest.fixture(scope="module")
def world() -> SimulatedWorld:
    return SimulatedWorld(SEED, DEMO_START, n_initial=120, new_per_day=0, days=30)


def messages_for(world: SimulatedWorld, *, week: int = 1, limit: int = 100) -> list[dict[str, str]]:
    markets = [PromptMarket.from_parsed(m) for m in world.top_markets(AT, limit)]
    held = markets[0]
    positions = [
        PromptPosition(
            7, held.market_id, held.question, "YES", Decimal(100), Decimal("0.5"),
            Decimal("0.99"), Decimal(99), Decimal(49),
        )
    ]  # fmt: skip
    portfolio = PortfolioView(Decimal(9000), Decimal(2250), Decimal(50), positions)
    system = system_prompt(Decimal(50), Decimal("0.25"), Decimal(10000))
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user_prompt(AT, week, portfolio, markets)},
    ]


def logit(p: float) -> float:
    return math.log(p / (1 - p))


def client(server: ModelServer, **options: Any) -> ChatClient:
    options.setdefault("sleep", lambda _s: None)
    return ChatClient(server.base_url, "EMPTY", **options)


def test_prompt_is_read_back(world: SimulatedWorld) -> None:
    view = parse_prompt(messages_for(world)[1]["content"])
    assert view.at == AT
    assert (view.cash, view.min_bet, view.max_bet) == (Decimal(9000), Decimal(50), Decimal(2250))
    assert [p.position_id for p in view.positions] == [7]
    shown = world.top_markets(AT, 100)
    assert [m.market_id for m in view.markets] == [m.id for m in shown]
    for market, parsed in zip(view.markets, shown, strict=True):
        assert len(market.sides) == (2 if parsed.market_type == "binary" else len(parsed.outcomes))


def test_real_client_and_parser_read_the_answer(world: SimulatedWorld) -> None:
    messages = messages_for(world)
    with ModelServer(seed=SEED, world=world, latency_scale=0) as server:
        with client(server) as chat:
            result = chat.complete(ChatRequest(model="openai/gpt-5.2", messages=messages))
        models = httpx.get(server.base_url + "/models").json()
    assert result.finish_reason == "stop" and result.provider == "simulated"
    assert result.served_model == "openai/gpt-5.2"
    assert result.tokens_in > 1000 and result.tokens_out > 0
    assert result.cost_usd == 0.0  # not asked for: a local server sends no cost
    parsed = parse_decision(result.content)
    # the analyst's one request is clean for this seed; a malformed one would say why
    assert parsed.ok is not None, (parsed.error, result.content)
    assert parsed.ok.reasoning
    ids = {m["id"] for m in models["data"]}
    assert ids == {model for p in PERSONAS for model in p.models}
    assert len(ids) == 7 and models["object"] == "list"
    assert [(e.model, e.messages_sha256, e.status) for e in server.log] == [
        ("openai/gpt-5.2", messages_sha256(messages), 200)
    ]


def test_cost_only_when_asked(world: SimulatedWorld) -> None:
    messages = messages_for(world)
    with ModelServer(seed=SEED, world=world, latency_scale=0) as server:
        asked = client(server, openrouter=True)  # sends usage: {include: true}
        with asked:
            result = asked.complete(ChatRequest(model=CAREFUL, messages=messages))
        plain = httpx.post(
            server.base_url + "/chat/completions", json={"model": CAREFUL, "messages": messages}
        ).json()
    assert result.cost_usd > 0
    persona = persona_for(CAREFUL)
    expected = (result.tokens_in * persona.price_in + result.tokens_out * persona.price_out) / 1e6
    assert result.cost_usd == pytest.approx(expected, rel=1e-4)
    assert "cost" not in plain["usage"]
    usage = plain["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert {"id", "object", "created", "model", "choices"} <= set(plain)


def test_same_requests_same_bodies(world: SimulatedWorld) -> None:
    bodies = []
    for _ in range(2):
        with ModelServer(seed=SEED, world=world, latency_scale=0) as server:
            run = []
            for week in (1, 2, 1):  # the third repeats the first: attempt 1 of that request
                body = {"model": NOISY, "messages": messages_for(world, week=week)}
                response = httpx.post(server.base_url + "/chat/completions", json=body)
                run.append((response.status_code, response.content))
            bodies.append((run, [(e.attempt, e.fault, e.form) for e in server.log]))
    assert bodies[0] == bodies[1]
    assert [attempt for attempt, _, _ in bodies[0][1]] == [0, 0, 1]
    models = SimulatedModels(SEED, world)
    messages = messages_for(world)
    assert models.respond(NOISY, messages, 3) == models.respond(NOISY, messages, 3)


def test_every_fault_kind_appears_and_the_client_retries(world: SimulatedWorld) -> None:
    models = SimulatedModels(SEED, world, latency_scale=0)
    messages = messages_for(world, limit=20)
    faults: list[str | None] = [
        models.respond("x-ai/grok-4.1-fast", messages, n).fault for n in range(400)
    ]
    counts = {kind: faults.count(kind) for kind in ("429", "500", "slow")}
    assert all(counts.values()), counts
    assert 0.01 < sum(counts.values()) / len(faults) < 0.1  # the persona's rate is 0.04
    first = {kind: faults.index(kind) for kind in counts}
    with ModelServer(seed=SEED, world=world, slow_seconds=0.6, latency_scale=0) as server:
        # as if the earlier attempts of this request had been made: the next one is the fault
        for kind, index in first.items():
            server._counts[("x-ai/grok-4.1-fast", None, messages_sha256(messages))] = index
            with client(server, timeout=0.3, max_attempts=3) as chat:
                result = chat.complete(ChatRequest(model="x-ai/grok-4.1-fast", messages=messages))
            first_try, *rest = result.attempts
            assert first_try.outcome == "retry", kind
            expected_status = None if kind == "slow" else int(kind)
            assert first_try.status == expected_status, kind
            assert rest and rest[-1].outcome == "ok"
    retry_after = [e for e in server.log if e.fault == "429"]
    assert retry_after


def test_429_sends_retry_after(world: SimulatedWorld) -> None:
    models = SimulatedModels(SEED, world, retry_after=3)
    messages = messages_for(world, limit=10)
    served = next(
        s
        for n in range(500)
        if (s := models.respond("x-ai/grok-4.1-fast", messages, n)).fault == "429"
    )
    assert served.status == 429 and served.headers == {"Retry-After": "3"}


def test_malformed_answers_at_roughly_the_configured_rate(world: SimulatedWorld) -> None:
    models = SimulatedModels(SEED, world, latency_scale=0)
    messages = messages_for(world, limit=30)
    model = "moonshotai/kimi-k2-thinking"
    persona = persona_for(model)
    rejected = forms = 0
    n = 600
    seen = set()
    for attempt in range(n):
        served = models.respond(model, messages, attempt)
        if served.status != 200:
            continue
        forms += 1
        seen.add(served.form)
        content = served.body["choices"][0]["message"]["content"]
        bad = parse_decision(content).ok is None
        assert bad == (served.form in ("wrong_field", "invalid_json")), (served.form, content)
        rejected += bad
    rate = rejected / forms
    assert abs(rate - persona.malformed) < 0.05, rate
    assert seen == {"clean", "fenced", "prose", "wrong_field", "invalid_json"}


def test_stubborn_on_format_retry(world: SimulatedWorld) -> None:
    models = SimulatedModels(SEED, world, latency_scale=0)
    base = messages_for(world, limit=30)
    model = "moonshotai/kimi-k2-thinking"
    retry = [*base, {"role": "assistant", "content": "{"}, {"role": "user", "content": "fix it"}]
    bad = sum(
        models.respond(model, retry, n).form in ("wrong_field", "invalid_json") for n in range(400)
    )
    assert abs(bad / 400 - persona_for(model).stubborn) < 0.1


def test_low_noise_persona_is_closer_to_the_truth(world: SimulatedWorld) -> None:
    models = SimulatedModels(SEED, world)
    view = parse_prompt(messages_for(world, limit=120)[1]["content"])

    def error(model: str) -> float:
        beliefs = models.beliefs(model, view, view.markets)
        errors = []
        for market in view.markets:
            if market.market_type != "binary":
                continue
            hidden = world.hidden_probability(market.market_id, "Yes", AT)
            errors.append(abs(beliefs[(market.market_id, "YES")] - hidden))
        return statistics.mean(errors)

    assert error(CAREFUL) < error(NOISY) / 2


@pytest.mark.parametrize("insight", [0.0, 0.5, 1.0])
def test_insight_is_the_share_of_the_way_from_price_to_truth(
    world: SimulatedWorld, insight: float
) -> None:
    """With no noise, bias or overconfidence a belief sits `insight` of the way, on the logit
    scale, from the market's price to the hidden probability (1: the oracle's view)."""
    exact = dataclasses.replace(
        persona_for(CAREFUL), insight=insight, noise=0.0, bias=0.0, overconf=1.0
    )
    models = SimulatedModels(SEED, world)
    view = parse_prompt(messages_for(world, limit=40)[1]["content"])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model_server, "persona_for", lambda _model: exact)
        beliefs = models.beliefs(CAREFUL, view, view.markets)
    checked = 0
    for market in view.markets:
        if market.market_type != "binary":
            continue
        price = float(market.sides[0][1])
        if not 0.01 < price < 0.99:
            continue
        hidden = min(0.99, max(0.01, world.hidden_probability(market.market_id, "Yes", AT)))
        expected = logit(price) + insight * (logit(hidden) - logit(price))
        assert logit(beliefs[(market.market_id, "YES")]) == pytest.approx(expected, abs=1e-9)
        checked += 1
    assert checked >= 10


def test_personas_are_distinguishable_by_brier() -> None:
    """Against the realized outcomes, the low-noise persona's Brier beats the high-noise one's,
    with the market-clustered paired bootstrap interval of the difference excluding zero."""
    world = SimulatedWorld(SEED, DEMO_START, n_initial=600, new_per_day=0, days=30)
    models = SimulatedModels(SEED, world)
    differences: list[float] = []
    clusters: list[str] = []
    for day in range(0, 28, 4):
        at = AT + timedelta(days=day)
        markets = [PromptMarket.from_parsed(m) for m in world.top_markets(at, 1000)]
        view = parse_prompt(
            user_prompt(
                at, 1 + day // 7, PortfolioView(Decimal(10000), Decimal(0), Decimal(0), []), markets
            )
        )
        careful = models.beliefs(CAREFUL, view, view.markets)
        noisy = models.beliefs(NOISY, view, view.markets)
        for market in view.markets:
            if market.market_type != "binary" or world.is_voided(market.market_id):
                continue
            won = float(world.true_outcome(market.market_id) == "Yes")
            key = (market.market_id, "YES")
            differences.append((careful[key] - won) ** 2 - (noisy[key] - won) ** 2)
            clusters.append(market.market_id)
    result = stats.paired_test(differences, clusters, replicates=2000, seed=SEED)
    assert result.clusters >= 50
    assert result.mean_difference < 0
    assert result.ci_high < 0, result


def test_unknown_model_gets_the_default_persona(world: SimulatedWorld) -> None:
    assert persona_for("someone/else").name == "generalist"
    assert persona_for("openai/gpt-9").name == "analyst"
    with ModelServer(seed=SEED, world=world, latency_scale=0) as server:
        bad = httpx.post(server.base_url + "/chat/completions", content=b"not json")
        assert bad.status_code == 400
        ok = httpx.post(
            server.base_url + "/chat/completions",
            json={"model": "someone/else", "messages": messages_for(world, limit=5)},
        )
        assert ok.status_code in (200, 429, 500)


def test_instant_from_header_when_the_prompt_has_none(world: SimulatedWorld) -> None:
    user = messages_for(world, limit=30)[1]["content"].split("\n", 1)[1]  # drop the Date line
    messages = [{"role": "user", "content": user}]
    models = SimulatedModels(SEED, world)
    assert parse_prompt(user).at is None
    with_at = models.respond(CAREFUL, messages, 0, at=AT)
    assert with_at.body["created"] == int(AT.timestamp())
    with ModelServer(seed=SEED, world=world, latency_scale=0) as server:
        response = httpx.post(
            server.base_url + "/chat/completions",
            json={"model": CAREFUL, "messages": messages},
            headers={"X-Arena-At": AT.isoformat()},
        )
    assert response.json() == with_at.body


def test_cli_help() -> None:
    from typer.testing import CliRunner

    from arena.app.cli import app

    result = CliRunner().invoke(app, ["model-server", "--help"])
    assert result.exit_code == 0 and "--port" in result.stdout and "--seed" in result.stdout


def test_cli_serves_until_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "model-server", "--port", "0", "--seed", "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = line.strip().split()[-1]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1"), line
        models = httpx.get(url + "/models", timeout=5).json()
        assert len(models["data"]) == 7
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert json.dumps(models)  # the JSON came back whole
