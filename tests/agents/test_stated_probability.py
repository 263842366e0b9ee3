"""Stated probability (a protocol extension): the prompt asks for it, the parser reads
and validates it only when the cohort runs the extension, the planner carries it beside the
leg, and the simulated personas answer it. Without the extension everything is v1's, byte for
byte."""

import hashlib
import json
from decimal import Decimal as D
from typing import Any

import pytest

from arena.agents import prompts as prompts_module
from arena.agents.baselines import BaselineInput, oracle_strategy
from arena.agents.parsing import (
    Decision,
    StatedBetLeg,
    StatedDecision,
    decision_model,
    parse_decision,
    retry_feedback,
)
from arena.agents.prompts import (
    STATED_PROBABILITY_HEADING,
    PortfolioView,
    PromptMarket,
    system_prompt,
    user_prompt,
)
from arena.config import (
    STATED_PROBABILITY,
    Methodology,
    cohort_stamp,
    load_settings,
    parse_extensions,
    stamped_extensions,
)
from arena.core.accounting import BetLimits
from arena.core.errors import ConfigError
from arena.core.execution import SnapshotMarket, plan_execution
from arena.sim.models import SimulatedModels
from arena.sim.prompt_view import asks_probability, parse_prompt
from tests.factories import WEEK1

V1 = (D(50), D("0.25"), D(10000))


def bet(**leg: Any) -> str:
    return json.dumps(
        {"action": "BET", "bets": [{"market_id": "7", "side": "YES", "amount": 100, **leg}]}
    )


# --------------------------------------------------------------------------------------------
# Settings and the cohort stamp


def test_the_v1_stamp_is_unchanged_and_an_extended_one_is_not_default() -> None:
    stock = Methodology()
    assert cohort_stamp(stock) == stock.stamp()
    assert "extensions" not in cohort_stamp(stock) and cohort_stamp(stock)["is_default"] is True
    stamp = cohort_stamp(stock, [STATED_PROBABILITY, STATED_PROBABILITY])
    assert stamp["extensions"] == ["stated_probability"] and stamp["is_default"] is False
    assert list(stamp)[-1] == "is_default"  # the stamp's shape: every constant, then the flag
    assert stamped_extensions(stamp) == ("stated_probability",)
    assert stamped_extensions(stock.stamp()) == () == stamped_extensions(None)


def test_arena_extensions_is_read_and_a_typo_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().extensions == ()
    monkeypatch.setenv("ARENA_EXTENSIONS", " stated_probability ,")
    assert load_settings().extensions == ("stated_probability",)
    monkeypatch.setenv("ARENA_EXTENSIONS", "stated_probabilty")
    with pytest.raises(ConfigError, match="unknown protocol extension 'stated_probabilty'"):
        load_settings()
    assert parse_extensions("") == () and parse_extensions(None) == ()


# --------------------------------------------------------------------------------------------
# The prompt


def test_the_v1_system_prompt_is_unchanged_and_the_extension_only_adds() -> None:
    v1 = system_prompt(*V1)
    assert system_prompt(*V1, stated_probability=False) == v1
    # The v1 text as it was before the extension existed (sha256 of the earlier code's output):
    # a change here is a change to what every v1 model reads.
    assert hashlib.sha256(v1.encode()).hexdigest() == V1_SYSTEM_PROMPT_SHA256
    assert '"probability"' not in v1 and STATED_PROBABILITY_HEADING not in v1
    extended = system_prompt(*V1, stated_probability=True)
    assert STATED_PROBABILITY_HEADING in extended and "not a percentage" in extended
    example = '{ "market_id": "842093", "side": "YES", "amount": 500, "probability": 0.62 }'
    assert example in extended
    removed = (
        extended.replace(prompts_module._STATED_PROBABILITY_RULES, "")
        .replace(', "probability": 0.62', "")
        .replace(prompts_module._STATED_PROBABILITY_FORMAT, "")
    )
    assert removed == v1


V1_SYSTEM_PROMPT_SHA256 = "6212f77ff6a3752b1da004310d0682374f3d42122bc7f309911667fb70285554"


# --------------------------------------------------------------------------------------------
# Parsing


@pytest.mark.parametrize(
    ("written", "read"),
    [
        (0.62, D("0.62")),
        ("0.62", D("0.62")),
        (0, D(0)),
        (1, D(1)),
        ("1.0", D("1.0")),
        (" 0.5 ", D("0.5")),
        ("6.2e-1", D("0.62")),
    ],
)
def test_a_stated_probability_is_read_exactly(written: Any, read: D) -> None:
    result = parse_decision(bet(probability=written), stated_probability=True)
    assert result.ok is not None, result.error
    leg = result.ok.bets[0]
    assert isinstance(result.ok, StatedDecision) and isinstance(leg, StatedBetLeg)
    assert leg.probability == read


@pytest.mark.parametrize("leg", [{}, {"probability": None}])
def test_a_missing_probability_is_recorded_missing_never_invented(leg: dict[str, Any]) -> None:
    result = parse_decision(bet(**leg), stated_probability=True)
    assert result.ok is not None, result.error
    assert result.ok.bets[0].probability is None  # type: ignore[attr-defined]
    assert result.ok.model_dump(mode="json")["bets"][0]["probability"] is None


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("62%", "not a percentage, got '62%'"),
        (62, "got 62 (62% is written 0.62)"),
        (1.5, "got 1.5"),
        (-0.1, "got -0.1"),
        ("likely", "got 'likely'"),
        ("", "got ''"),
        (True, "a plain number from 0 to 1"),
        ([0.6], "such as 0.62, got a list"),
        ({"p": 0.6}, "such as 0.62, got an object"),
        ("$0.5", "without $, % or thousands separators"),
    ],
)
def test_a_malformed_probability_fails_with_a_message_fit_to_feed_back(
    written: Any, message: str
) -> None:
    result = parse_decision(bet(probability=written), stated_probability=True)
    assert result.ok is None and result.error is not None
    assert result.error.startswith("bets[0].probability: must be your probability that this side")
    assert message in result.error, result.error
    assert message in retry_feedback(result.error)


def test_nan_is_refused_before_validation() -> None:
    raw = '{"action": "BET", "bets": [{"market_id": "7", "side": "YES", "amount": 100, '
    result = parse_decision(raw + '"probability": NaN}]}', stated_probability=True)
    assert result.error is not None and "NaN is not a valid JSON number" in result.error


def test_without_the_extension_the_field_is_ignored_as_in_v1() -> None:
    for written in (0.62, "62%", "likely", None):
        result = parse_decision(bet(probability=written))
        assert result.ok is not None, result.error
        assert type(result.ok) is Decision and type(result.ok.bets[0]).__name__ == "BetLeg"
        assert "probability" not in result.ok.model_dump(mode="json")["bets"][0]
    assert decision_model(False) is Decision and decision_model(True) is StatedDecision


def test_sells_and_holds_are_untouched_by_the_extension() -> None:
    sell = '{"action": "SELL", "sells": [{"position_id": 3, "percentage": 100}]}'
    hold = '{"action": "HOLD", "bets": [{"probability": "junk"}]}'
    for raw in (sell, hold):
        extended = parse_decision(raw, stated_probability=True)
        assert extended.ok is not None
        assert extended.ok.model_dump() == parse_decision(raw).ok.model_dump()  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------
# Execution planning


MARKET = {"7": SnapshotMarket("7", "binary", ["Yes", "No"], ["0.4", "0.6"])}
LIMITS = BetLimits(min_bet=D(50), max_bet_fraction=D("0.25"))


def test_the_plan_carries_the_probability_beside_the_leg_and_changes_nothing_else() -> None:
    raw = json.dumps(
        {
            "action": "BET",
            "bets": [
                {"market_id": "7", "side": "YES", "amount": 500, "probability": 0.55},
                {"market_id": "7", "side": "NO", "amount": 300},
                {"market_id": "8", "side": "NO", "amount": 300, "probability": 0.9},
            ],
        }
    )
    stated = parse_decision(raw, stated_probability=True).ok
    v1 = parse_decision(raw).ok
    assert stated is not None and v1 is not None
    plan = plan_execution(stated, D(10000), [], MARKET, LIMITS)
    plain = plan_execution(v1, D(10000), [], MARKET, LIMITS)
    assert [leg.probability for leg in plan.legs] == [D("0.55"), None, D("0.9")]
    assert [leg.record()["request"].get("probability", "absent") for leg in plan.legs] == [
        "0.55",
        None,
        "0.9",
    ]
    assert plan.legs[2].reason == "unknown_market"  # rejected legs keep what was stated
    # The same numbers as v1, leg by leg; v1's records have no probability key at all.
    for extended, stock in zip(plan.legs, plain.legs, strict=True):
        record = extended.record()
        request = dict(record.pop("request"))
        request.pop("probability")
        assert {**record, "request": request} == stock.record()
        assert "probability" not in stock.record()["request"] and stock.probability is None
    assert plan.cash_after == plain.cash_after and plan.tallies() == plain.tallies()


# --------------------------------------------------------------------------------------------
# The simulated personas and the oracle


def prompts(stated: bool) -> list[dict[str, str]]:
    markets = [
        PromptMarket(
            str(900000 + i), f"Question {i}?", None, None, "binary", ["Yes", "No"],
            [D(p), 1 - D(p)], 1e5, None,
        )
        for i, p in enumerate(("0.2", "0.35", "0.5", "0.65", "0.8", "0.1", "0.9", "0.45"))
    ]  # fmt: skip
    portfolio = PortfolioView(cash=D(10000), max_bet=D(2500), min_bet=D(50), positions=[])
    return [
        {"role": "system", "content": system_prompt(*V1, stated_probability=stated)},
        {"role": "user", "content": user_prompt(WEEK1, 1, portfolio, markets)},
    ]


def answers(models: SimulatedModels, stated: bool, tries: int = 40) -> list[dict[str, Any]]:
    """The personas' decoded answers over many attempt seqs (malformed ones as text)."""
    out = []
    for model in ("openai/gpt-5.2", "x-ai/grok-4.1-fast", "qwen/qwen3-235b-a22b-2507"):
        for attempt in range(tries):
            served = models.respond(model, prompts(stated), attempt)
            if served.status != 200:  # a simulated transport fault
                continue
            content = served.body["choices"][0]["message"]["content"]
            out.append({"form": served.form, "content": content, "model": model})
    return out


class World:
    """A hidden probability that differs from the prices, so the personas bet."""

    def hidden_probability(self, market_id: str, outcome: str, at: Any) -> float:
        yes = 0.15 + (int(market_id) % 7) * 0.12
        return yes if outcome == "Yes" else 1 - yes


def test_personas_state_their_probability_only_when_asked() -> None:
    models = SimulatedModels(seed=3, world=World())
    assert asks_probability(prompts(True)) and not asks_probability(prompts(False))
    v1 = answers(models, stated=False)
    assert all("probability" not in a["content"] for a in v1)
    assert all(a["form"] != "bad_probability" for a in v1)
    extended = answers(models, stated=True)
    stated, missing, forms = 0, 0, {a["form"] for a in extended}
    for answer in extended:
        parsed = parse_decision(answer["content"], stated_probability=True)
        if answer["form"] == "bad_probability":
            assert parsed.error is not None and "probability" in parsed.error
            continue
        if parsed.ok is None or parsed.ok.action != "BET":
            continue
        view = parse_prompt(prompts(True)[1]["content"])
        prices = {(m.market_id, s): p for m in view.markets for s, p in m.sides}
        for leg in parsed.ok.bets:
            p = leg.probability  # type: ignore[attr-defined]
            if p is None:
                missing += 1
                continue
            stated += 1
            assert 0 <= p <= 1 and p == p.quantize(D("0.01"))
            assert (leg.market_id, leg.side) in prices
    assert stated > 20 and missing > 0
    assert "bad_probability" in forms


def test_a_v1_prompt_gets_the_answers_it_always_got() -> None:
    """No draw is spent on probabilities unless the prompt asks, so the personas' v1 answers
    (and `make demo`) are unchanged: these requests hash to what the server before the
    extension answered them (status, body, form and fault of each)."""
    models = SimulatedModels(seed=3, world=World())
    digest = hashlib.sha256()
    for model in (
        "openai/gpt-5.2",
        "x-ai/grok-4.1-fast",
        "deepseek/deepseek-v3.2",
        "qwen/qwen3-235b-a22b-2507",
    ):
        for attempt in range(25):
            served = models.respond(model, prompts(False), attempt)
            digest.update(
                json.dumps(
                    [served.status, served.body, served.form, served.fault], sort_keys=True
                ).encode()
            )
    assert digest.hexdigest() == V1_ANSWERS_SHA256


V1_ANSWERS_SHA256 = "d0c827f571231abf66d84875a53742d9ba3b9c2ba9c95ffac129b3324225da31"


def test_the_oracle_states_the_hidden_probability_only_when_asked() -> None:
    portfolio = PortfolioView(cash=D(10000), max_bet=D(2500), min_bet=D(50), positions=[])
    markets = [
        PromptMarket(
            "7", "Q?", None, None, "binary", ["Yes", "No"], [D("0.3"), D("0.7")], 1.0, None
        )
    ]
    world = World()
    v1 = json.loads(
        oracle_strategy(BaselineInput(WEEK1, 1, 1, portfolio, markets), world.hidden_probability)
    )
    extended = json.loads(
        oracle_strategy(
            BaselineInput(WEEK1, 1, 1, portfolio, markets, stated_probability=True),
            world.hidden_probability,
        )
    )
    leg = v1["bets"][0]
    hidden = world.hidden_probability("7", {"YES": "Yes", "NO": "No"}[leg["side"]], WEEK1)
    assert "probability" not in leg
    assert extended["bets"][0] == {**v1["bets"][0], "probability": round(hidden, 4)}
