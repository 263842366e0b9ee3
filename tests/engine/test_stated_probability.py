"""Stated probability, through the real engine on SQLite and PostgreSQL: a cohort
stamped with the extension asks for the probability, a malformed one is retried with the error
fed back, a missing one is stored as missing and its leg still trades, every probability lands
on its leg record and BUY trade, and after real settlements the figures are the hand-computed
ones. A v1 cohort reads the same answer as v1 always did."""

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal as D
from typing import Any

import pandas as pd
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.prompts import STATED_PROBABILITY_HEADING, system_prompt
from arena.agents.responders import default_responders
from arena.analytics.stats.stated import extended_cohorts, stated_probability
from arena.analytics.views.decisions import LEG_COLUMNS, STATED_LEG_COLUMNS, decision_detail
from arena.config import Methodology, load_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.market_sync import sync_markets, upsert_markets
from arena.engine.settlement import resolve_markets
from arena.lineup import Lineup, parse_lineup
from arena.markets.gamma import parse_market
from arena.storage.db import session_scope
from arena.storage.models import Agent, Cohort, Decision, Trade
from tests.engine.chat_server import PerModelServer, answer, serve_models
from tests.engine.sources import ScriptedSource, fixture_markets, reopened
from tests.factories import WEEK1

LINEUP = """
[[family]]
id = "m-a"
display_name = "Model A"
provider = "Test"
model = "test/a"

[[family]]
id = "m-b"
display_name = "Model B"
provider = "Test"
model = "test/b"

[[family]]
id = "baseline-cash"
display_name = "Cash"
provider = "Arena"
model = "baseline/cash"
kind = "baseline"
strategy = "cash"
"""
# Two markets Gamma resolved: the fixture 842093 (No won), and a twin of it where Yes won;
# traded while open at YES 0.4 and 0.5.
NO_WON, YES_WON = "842093", "842094"
RUN = WEEK1 + timedelta(minutes=5)
SETTLED = WEEK1 + timedelta(days=2)


def bets(*legs: dict[str, Any]) -> dict[str, Any]:
    return {"action": "BET", "bets": list(legs), "reasoning": "edge"}


A_MALFORMED = bets({"market_id": NO_WON, "side": "YES", "amount": 500, "probability": "62%"})
A_VALID = bets(
    {"market_id": NO_WON, "side": "YES", "amount": 500, "probability": 0.55},
    {"market_id": YES_WON, "side": "YES", "amount": 1000},  # no probability: missing
)
B_VALID = bets(
    {"market_id": NO_WON, "side": "NO", "amount": 400, "probability": "0.7"},
    {"market_id": YES_WON, "side": "YES", "amount": 200, "probability": 0.45},
)


def resolved_payloads() -> dict[str, dict[str, Any]]:
    """Gamma's payloads once both markets resolved (the fixture and its Yes-won twin)."""
    raw = fixture_markets()
    twin = {
        **raw[NO_WON],
        "id": YES_WON,
        "question": "Will SpaceX IPO by December 31, 2027?",
        "outcomePrices": '["1", "0"]',
    }
    return {NO_WON: raw[NO_WON], YES_WON: twin}


def open_markets(engine: Engine) -> None:
    raw = resolved_payloads()
    with session_scope(engine) as s:
        upsert_markets(
            s,
            [parse_market(reopened(raw[NO_WON], "0.4")), parse_market(reopened(raw[YES_WON]))],
            WEEK1,
        )


def decide(engine: Engine, server: PerModelServer, lineup: Lineup) -> None:
    settings = load_settings(llm_api_key="sk-test-key", llm_base_url=server.url)
    responders, close = default_responders(settings, sleep=lambda _s: None)
    try:
        run_decisions(engine, RUN, lineup, Methodology(), responders)
    finally:
        close()


def by_family(engine: Engine) -> dict[str, tuple[Decision, list[Trade]]]:
    with session_scope(engine) as s:
        out = {}
        for agent in s.exec(select(Agent)):
            decision = s.exec(select(Decision).where(Decision.agent_id == agent.id)).one()
            trades = s.exec(
                select(Trade).where(Trade.agent_id == agent.id).order_by(col(Trade.id))
            ).all()
            out[agent.family_id] = (decision, list(trades))
        return out


@pytest.fixture
def extended(engine: Engine) -> Iterator[tuple[Engine, PerModelServer]]:
    lineup = parse_lineup(LINEUP)
    open_markets(engine)
    start_cohort(engine, WEEK1, lineup, Methodology(), ["stated_probability"])
    with serve_models() as server:
        server.script_model("test/a", answer(A_MALFORMED, "test/a"), answer(A_VALID, "test/a"))
        server.script_model("test/b", answer(B_VALID, "test/b"))
        decide(engine, server, lineup)
        yield engine, server


def test_the_cohort_is_stamped_and_asks_for_the_probability(
    extended: tuple[Engine, PerModelServer],
) -> None:
    engine, server = extended
    with session_scope(engine) as s:
        cohort = s.exec(select(Cohort)).one()
        assert cohort.constants["extensions"] == ["stated_probability"]
        assert cohort.constants["is_default"] is False
    assert extended_cohorts(engine) == [1]
    decisions = by_family(engine)
    stock = Methodology()
    expected = system_prompt(
        stock.min_bet, stock.max_bet_fraction, stock.starting_balance, stated_probability=True
    )
    assert decisions["m-a"][0].prompt_system == expected
    assert STATED_PROBABILITY_HEADING in expected
    # The malformed probability was fed back, then the corrected answer was used.
    retried = server.requests_for("test/a")[1].json["messages"]
    assert retried[-1]["role"] == "user"
    assert "bets[0].probability: must be your probability" in retried[-1]["content"]
    assert "not a percentage, got '62%'" in retried[-1]["content"]
    decision = decisions["m-a"][0]
    assert (decision.status, decision.attempts) == ("ok", 2)
    assert decision.validation_errors and "62%" in decision.validation_errors[0]


def test_probabilities_are_stored_per_leg_and_missing_stays_missing(
    extended: tuple[Engine, PerModelServer],
) -> None:
    engine, _ = extended
    decisions = by_family(engine)
    decision, trades = decisions["m-a"]
    assert [leg["request"]["probability"] for leg in decision.legs] == ["0.55", None]
    assert [leg["executed"] for leg in decision.legs] == [True, True]  # missing still trades
    assert [(t.market_id, t.probability) for t in trades] == [(NO_WON, 0.55), (YES_WON, None)]
    assert decision.parsed_response is not None
    assert decision.parsed_response["bets"][1]["probability"] is None
    decision, trades = decisions["m-b"]
    assert [t.probability for t in trades] == [0.7, 0.45]
    assert [t.amount for t in trades] == [D(400), D(200)]
    assert decisions["baseline-cash"][1] == []


def test_the_decision_detail_shows_each_buys_stated_probability(
    extended: tuple[Engine, PerModelServer],
) -> None:
    """The Decisions page's read model: in the extended cohort each BUY leg has the
    probability stored on its trade (missing stays NaN) beside the price it paid."""
    engine, _ = extended
    details = {
        family: decision_detail(engine, int(decision.id or 0))
        for family, (decision, _trades) in by_family(engine).items()
    }
    a, b, cash = details["m-a"], details["m-b"], details["baseline-cash"]
    assert a is not None and b is not None and cash is not None
    assert a.asks_probability and b.asks_probability and cash.asks_probability
    assert list(a.legs.columns) == list(STATED_LEG_COLUMNS)
    assert a.legs["probability"].tolist()[0] == 0.55 and pd.isna(a.legs["probability"].iloc[1])
    assert a.legs["price"].tolist() == [0.4, 0.5]
    assert b.legs["probability"].tolist() == [0.7, 0.45]
    assert b.legs["price"].tolist() == [0.6, 0.5]
    assert cash.legs.empty and "probability" in cash.legs


def test_the_figures_after_real_settlements_are_the_hand_computed_ones(
    extended: tuple[Engine, PerModelServer],
) -> None:
    engine, _ = extended
    source = ScriptedSource(dict(resolved_payloads()))
    sync_markets(engine, source, SETTLED, 500)
    result = resolve_markets(engine, source, SETTLED)
    assert sorted(result.resolved) == sorted([NO_WON, YES_WON])

    figures = stated_probability(engine, replicates=200).set_index("family_id")
    assert sorted(figures.index) == ["m-a", "m-b"]  # the cash baseline never bet
    a = figures.loc["m-a"]
    # One stated bet: YES at 0.4 with p 0.55, lost; $500 of $10,000 (implied 500/2500).
    assert (a["bets"], a["stated_bets"], a["missing_bets"], a["resolved_bets"]) == (2, 1, 1, 1)
    assert a["stated_brier"] == pytest.approx(0.55**2)
    assert a["implied_brier"] == pytest.approx(0.2**2)
    assert a["market_brier"] == pytest.approx(0.4**2)
    assert (a["consistent_share"], a["mean_edge"]) == pytest.approx((1.0, 0.15))
    assert a["stake_efficiency"] == pytest.approx(500 / 2500)  # f* = 0.15/0.6 = 0.25
    assert a["log_growth"] == pytest.approx(-0.0512932943875505)  # ln(0.95)
    assert a["kelly_log_growth"] == pytest.approx(-0.2876820724517809)  # ln(0.75)
    assert a["deviating_skill"] == pytest.approx(0.55**2 - 0.4**2)
    b = figures.loc["m-b"]
    # NO at 0.6 with p 0.7 (won; $400 of $10,000); YES at 0.5 with p 0.45 (won; $200 of $9,600).
    assert b["stated_brier"] == pytest.approx((0.3**2 + 0.55**2) / 2)
    assert b["implied_brier"] == pytest.approx(((1 - 400 / 2500) ** 2 + (1 - 200 / 2400) ** 2) / 2)
    assert b["market_brier"] == pytest.approx((0.4**2 + 0.5**2) / 2)
    assert (b["consistent_share"], b["mean_edge"]) == pytest.approx((0.5, 0.025))
    assert b["stake_efficiency"] == pytest.approx(400 / 2500)  # only the bet with p > q
    assert b["deviating_bets"] == 0  # |0.7 − 0.6| and |0.45 − 0.5| are not above 0.1


def test_a_v1_cohort_reads_the_same_answer_as_v1_always_did(engine: Engine) -> None:
    lineup = parse_lineup(LINEUP)
    open_markets(engine)
    start_cohort(engine, WEEK1, lineup, Methodology())
    with serve_models() as server:
        server.script_model("test/a", answer(A_MALFORMED, "test/a"))
        server.script_model("test/b", answer(B_VALID, "test/b"))
        decide(engine, server, lineup)
        assert len(server.requests_for("test/a")) == 1  # "62%" is nobody's business in v1
    with session_scope(engine) as s:
        assert "extensions" not in s.exec(select(Cohort)).one().constants
    decisions = by_family(engine)
    stock = Methodology()
    v1 = system_prompt(stock.min_bet, stock.max_bet_fraction, stock.starting_balance)
    for family in ("m-a", "m-b"):
        decision, trades = decisions[family]
        assert decision.prompt_system == v1 and decision.status == "ok"
        assert all("probability" not in leg["request"] for leg in decision.legs)
        assert decision.parsed_response is not None
        assert "probability" not in decision.parsed_response["bets"][0]
        assert trades and all(t.probability is None for t in trades)
    assert extended_cohorts(engine) == []
    assert stated_probability(engine, replicates=50).empty
    detail = decision_detail(engine, int(decisions["m-a"][0].id or 0))
    assert detail is not None and not detail.asks_probability
    assert list(detail.legs.columns) == list(LEG_COLUMNS)  # no empty column in v1
