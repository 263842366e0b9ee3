"""The weekly decision run against a scripted OpenAI-compatible server (methodology §8–§10)."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal as D
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.responders import default_responders
from arena.config import Methodology, Settings, load_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.market_sync import upsert_markets
from arena.lineup import Lineup, parse_lineup
from arena.markets.types import ParsedMarket
from arena.storage.db import session_scope
from arena.storage.models import Agent, Decision, DecisionAttempt, Market, Position, Trade
from tests.agents.llm_server import Reply
from tests.engine.chat_server import PerModelServer, answer, serve_models
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

MARKETS = [
    ParsedMarket(
        id="100",
        question="Will alpha happen?",
        market_type="binary",
        outcomes=["Yes", "No"],
        prices=[D("0.40"), D("0.60")],
        volume=5000.0,
        end_date=WEEK1 + timedelta(days=30),
    ),
    ParsedMarket(
        id="200",
        question="Will beta happen?",
        market_type="binary",
        outcomes=["No", "Yes"],
        prices=[D("0.75"), D("0.25")],
        volume=4000.0,
        end_date=WEEK1 + timedelta(days=30),
    ),
    ParsedMarket(
        id="300",
        question="Who wins gamma?",
        market_type="named",
        outcomes=["Alice", "Bob", "Carol"],
        prices=[D("0.5"), D("0.3"), D("0.2")],
        volume=3000.0,
        end_date=WEEK1 + timedelta(days=30),
    ),
]
WEEK1_RUN = WEEK1 + timedelta(minutes=5)


@dataclass
class Arena:
    engine: Engine
    server: PerModelServer
    settings: Settings
    lineup: Lineup

    def decide(self, at: datetime) -> Any:
        responders, close = default_responders(self.settings, sleep=lambda _s: None)
        try:
            return run_decisions(
                self.engine, at, self.lineup, self.settings.methodology, responders
            )
        finally:
            close()

    def decisions(self) -> dict[tuple[str, int], Decision]:
        with session_scope(self.engine) as s:
            rows = s.exec(select(Decision, Agent).join(Agent, col(Agent.id) == Decision.agent_id))
            return {(agent.family_id, d.decision_week): d for d, agent in rows}

    def agent(self, family_id: str) -> Agent:
        with session_scope(self.engine) as s:
            return s.exec(select(Agent).where(Agent.family_id == family_id)).one()

    def trades(self, family_id: str) -> list[Trade]:
        agent = self.agent(family_id)
        with session_scope(self.engine) as s:
            query = select(Trade).where(Trade.agent_id == agent.id).order_by(col(Trade.id))
            return list(s.exec(query))

    def set_yes_price(self, market_id: str, yes: str) -> None:
        with session_scope(self.engine) as s:
            market = s.get(Market, market_id)
            assert market is not None
            market.prices = [yes, str(D(1) - D(yes))]
            s.add(market)


@pytest.fixture
def arena(engine: Engine) -> Iterator[Arena]:
    with serve_models() as server:
        settings = load_settings(llm_api_key="sk-test-key", llm_base_url=server.url)
        lineup = parse_lineup(LINEUP)
        with session_scope(engine) as s:
            upsert_markets(s, MARKETS, WEEK1)
        start_cohort(engine, WEEK1, lineup, Methodology())
        yield Arena(engine, server, settings, lineup)


MULTI_LEG = {
    "action": "BET",
    "bets": [
        {"market_id": "100", "side": "YES", "amount": 500},
        {"market_id": "999", "side": "YES", "amount": 100},
        {"market_id": "200", "side": "MAYBE", "amount": 100},
        {"market_id": "300", "side": "Bob", "amount": 40},
        {"market_id": "300", "side": "bob", "amount": 3000},
        {"market_id": "200", "side": "NO", "amount": 1000},
        {"market_id": "300", "side": "Carol", "amount": 200},
    ],
    "reasoning": "several legs",
}
HOLD = {"action": "HOLD", "reasoning": "wait"}


def tallies(decision: Decision) -> tuple[int, int, int, D]:
    """The leg tallies the engine stored with the decision's legs."""
    return (
        decision.bets_executed,
        decision.sells_executed,
        decision.legs_rejected,
        decision.amount_bet,
    )


def test_multi_leg_bet_with_bad_legs_and_malformed_then_valid(arena: Arena) -> None:
    arena.server.script_model("test/a", answer(MULTI_LEG, "test/a"))
    arena.server.script_model(
        "test/b",
        answer("I think the market is efficient.", "test/b"),
        answer('{"action": "BET", "bets": [', "test/b"),
        answer('Here it is:\n```json\n{"action": "HOLD", "reasoning": "wait"}\n```', "test/b"),
    )
    result = arena.decide(WEEK1_RUN)
    assert result.statuses == {"ok": 3}

    a = arena.agent("m-a")
    assert a.cash_balance == D("8300")  # 10000 − 500 − 1000 − 200
    trades = arena.trades("m-a")
    assert [(t.market_id, t.side, t.amount, t.price, t.shares) for t in trades] == [
        ("100", "YES", D("500"), D("0.4"), D("1250")),
        ("200", "NO", D("1000"), D("0.75"), D("1333.333333")),
        ("300", "Carol", D("200"), D("0.2"), D("1000")),
    ]
    assert [t.leg_index for t in trades] == [0, 5, 6]
    assert trades[0].implied_confidence == pytest.approx(0.2)
    assert trades[1].implied_confidence == pytest.approx(1000 / 2375)
    assert trades[2].implied_confidence == pytest.approx(200 / 2125)
    decision = arena.decisions()[("m-a", 1)]
    reasons = [leg.get("reason") for leg in decision.legs]
    assert reasons == [None, "unknown_market", "bad_side", "below_min", "above_max", None, None]
    assert tallies(decision) == (3, 0, 4, D("1700"))
    assert decision.market_snapshot_id == result.snapshot_id

    b = arena.decisions()[("m-b", 1)]
    assert (b.status, b.action, b.attempts) == ("ok", "HOLD", 3)
    assert len(b.validation_errors) == 2
    assert b.cost_usd == pytest.approx(0.003)
    assert b.tokens_in == 3000 and b.served_model == "test/b" and b.provider == "TestProvider"
    with session_scope(arena.engine) as s:
        outcomes = [
            a.outcome
            for a in s.exec(
                select(DecisionAttempt)
                .where(DecisionAttempt.decision_id == b.id)
                .order_by(col(DecisionAttempt.attempt_no))
            )
        ]
    assert outcomes == ["malformed", "malformed", "valid"]
    retry = arena.server.requests_for("test/b")[1].json["messages"]
    assert retry[-1]["role"] == "user" and "could not be used" in retry[-1]["content"]
    assert arena.decisions()[("baseline-cash", 1)].action == "HOLD"


def test_every_model_gets_temperature_zero_and_the_same_market_list(arena: Arena) -> None:
    arena.server.script_model("test/a", answer(HOLD, "test/a"))
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    arena.decide(WEEK1_RUN)
    bodies = [arena.server.requests_for(m)[0].json for m in ("test/a", "test/b")]
    assert all(body["temperature"] == 0 for body in bodies)
    assert [body["model"] for body in bodies] == ["test/a", "test/b"]
    assert bodies[0]["messages"] == bodies[1]["messages"]
    user = bodies[0]["messages"][1]["content"]
    assert "Will alpha happen?" in user and "Who wins gamma?" in user
    with session_scope(arena.engine) as s:
        snapshot_ids = {d.market_snapshot_id for d in s.exec(select(Decision))}
    assert len(snapshot_ids) == 1


def test_sell_40_then_100_and_a_foreign_position_is_rejected(arena: Arena) -> None:
    arena.server.script_model(
        "test/a",
        answer(
            {
                "action": "BET",
                "bets": [{"market_id": "100", "side": "YES", "amount": 500}],
                "reasoning": "r",
            },
            "test/a",
        ),
    )
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    arena.decide(WEEK1_RUN)
    (position_id,) = {t.position_id for t in arena.trades("m-a")}

    arena.set_yes_price("100", "0.5")
    arena.server.script_model(
        "test/a",
        answer(
            {
                "action": "SELL",
                "sells": [{"position_id": position_id, "percentage": 40}],
                "reasoning": "trim",
            },
            "test/a",
        ),
    )
    arena.server.script_model(
        "test/b",
        answer(
            {
                "action": "SELL",
                "sells": [{"position_id": position_id, "percentage": 100}],
                "reasoning": "steal",
            },
            "test/b",
        ),
    )
    week2 = WEEK1_RUN + timedelta(weeks=1)
    arena.decide(week2)
    sold = arena.trades("m-a")[-1]
    assert (sold.trade_type, sold.shares, sold.amount, sold.realized_pnl) == (
        "SELL",
        D("500"),
        D("250"),
        D("50"),
    )
    assert arena.agent("m-a").cash_balance == D("9750")
    foreign = arena.decisions()[("m-b", 2)]
    assert foreign.status == "zero_trade"
    assert foreign.legs[0]["reason"] == "unknown_position"
    assert tallies(foreign) == (0, 0, 1, D(0))
    assert tallies(arena.decisions()[("m-a", 2)]) == (0, 1, 0, D(0))
    assert arena.agent("m-b").cash_balance == D("10000")

    # the zero_trade row is re-claimed by the next run of the same week and updated in place
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    arena.decide(week2 + timedelta(minutes=10))
    again = arena.decisions()[("m-b", 2)]
    assert (again.id, again.status) == (foreign.id, "ok")
    assert tallies(again) == (0, 0, 0, D(0))  # the re-run's legs replace the tallies too

    arena.set_yes_price("100", "0.6")
    arena.server.script_model(
        "test/a",
        answer(
            {
                "action": "SELL",
                "sells": [{"position_id": position_id, "percentage": 100}],
                "reasoning": "exit",
            },
            "test/a",
        ),
    )
    arena.decide(week2 + timedelta(weeks=1))
    last = arena.trades("m-a")[-1]
    assert (last.shares, last.amount, last.realized_pnl) == (D("750"), D("450"), D("150"))
    assert arena.agent("m-a").cash_balance == D("10200")
    with session_scope(arena.engine) as s:
        position = s.get(Position, position_id)
        assert position is not None
        assert (position.status, position.shares, position.realized_pnl) == ("sold", 0, D("200"))


def test_bets_on_a_no_side_and_a_named_outcome(arena: Arena) -> None:
    arena.server.script_model(
        "test/a",
        answer(
            {
                "action": "BET",
                "bets": [
                    {"market_id": "200", "side": "no", "amount": 300},
                    {"market_id": "300", "side": "alice", "amount": 100},
                ],
                "reasoning": "r",
            },
            "test/a",
        ),
    )
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    arena.decide(WEEK1_RUN)
    trades = arena.trades("m-a")
    assert [(t.side, t.price, t.shares) for t in trades] == [
        ("NO", D("0.75"), D("400")),
        ("Alice", D("0.5"), D("200")),
    ]


def test_always_malformed_is_a_fallback_hold(arena: Arena) -> None:
    arena.server.script_model("test/a", answer("no JSON here, sorry", "test/a"))
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    arena.decide(WEEK1_RUN)
    decision = arena.decisions()[("m-a", 1)]
    assert (decision.status, decision.action, decision.attempts) == ("fallback_hold", "HOLD", 3)
    assert decision.parsed_response is None and len(decision.validation_errors) == 3
    assert len(arena.server.requests_for("test/a")) == 3
    arena.decide(WEEK1_RUN + timedelta(minutes=10))  # finished: never redone
    assert len(arena.server.requests_for("test/a")) == 3


def test_429_then_success_and_500_forever_then_a_rerun_succeeds_in_place(arena: Arena) -> None:
    arena.server.script_model(
        "test/a",
        Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"}),
        answer(HOLD, "test/a"),
    )
    arena.server.script_model("test/b", Reply(500, {"error": {"message": "boom"}}))
    result = arena.decide(WEEK1_RUN)
    assert result.statuses == {"ok": 2, "error": 1}
    a = arena.decisions()[("m-a", 1)]
    assert a.status == "ok"
    b = arena.decisions()[("m-b", 1)]
    assert b.status == "error" and "500" in (b.error or "")
    assert len(arena.server.requests_for("test/b")) == 3  # transport attempts
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    arena.decide(WEEK1_RUN + timedelta(minutes=10))
    rerun = arena.decisions()[("m-b", 1)]
    assert (rerun.id, rerun.status, rerun.error) == (b.id, "ok", None)
    with session_scope(arena.engine) as s:
        attempts = s.exec(select(DecisionAttempt).where(DecisionAttempt.decision_id == b.id)).all()
    assert [x.outcome for x in attempts] == [
        "transport_retry",
        "transport_retry",
        "transport_error",
        "valid",
    ]


def test_a_stale_claim_is_taken_over_but_a_fresh_one_is_not(arena: Arena) -> None:
    arena.server.script_model("test/a", answer(HOLD, "test/a"))
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    agent = arena.agent("m-a")
    assert agent.id is not None
    with session_scope(arena.engine) as s:
        s.add(
            Decision(
                agent_id=agent.id,
                cohort_id=agent.cohort_id,
                decision_week=1,
                status="in_progress",
                claim_token="crashed",
                claimed_at=WEEK1_RUN,
            )
        )
    arena.decide(WEEK1_RUN + timedelta(minutes=10))
    assert arena.decisions()[("m-a", 1)].status == "in_progress"
    arena.decide(WEEK1_RUN + timedelta(minutes=61))
    assert arena.decisions()[("m-a", 1)].status == "ok"


def test_cohorts_outside_their_window_do_not_decide(arena: Arena) -> None:
    arena.server.script_model("test/a", answer(HOLD, "test/a"))
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    result = arena.decide(WEEK1 + timedelta(weeks=5, minutes=5))  # week 6 of a 5-week window
    assert result.cohorts == 0 and arena.decisions() == {}


def test_a_broken_responder_is_an_error_row_and_the_run_goes_on(arena: Arena) -> None:
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    responders, close = default_responders(arena.settings, sleep=lambda _s: None)

    class Broken:
        def respond(self, messages: Any, context: Any) -> Any:
            raise RuntimeError("responder bug")

    def factory(family: Any) -> Any:
        return Broken() if family.id == "m-a" else responders(family)

    try:
        result = run_decisions(
            arena.engine, WEEK1_RUN, arena.lineup, arena.settings.methodology, factory
        )
    finally:
        close()
    assert result.statuses == {"error": 1, "ok": 2}
    broken = arena.decisions()[("m-a", 1)]
    assert broken.status == "error" and "RuntimeError: responder bug" in (broken.error or "")


def test_a_market_closing_while_the_model_thinks_rejects_its_leg(arena: Arena) -> None:
    """Tradability is re-read when the trades are written, not taken from the prompt's read."""
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    responders, close = default_responders(arena.settings, sleep=lambda _s: None)

    class ClosesTheMarket:
        def respond(self, messages: Any, context: Any) -> Any:
            with session_scope(arena.engine) as s:
                market = s.get(Market, "100")
                assert market is not None
                market.closed, market.status = True, "closed"
                s.add(market)
            bet = {
                "action": "BET",
                "reasoning": "r",
                "bets": [
                    {"market_id": "100", "side": "YES", "amount": 500},
                    {"market_id": "200", "side": "NO", "amount": 500},
                ],
            }
            return answer_result(bet)

    def factory(family: Any) -> Any:
        return ClosesTheMarket() if family.id == "m-a" else responders(family)

    try:
        run_decisions(arena.engine, WEEK1_RUN, arena.lineup, arena.settings.methodology, factory)
    finally:
        close()
    decision = arena.decisions()[("m-a", 1)]
    assert [leg.get("reason") for leg in decision.legs] == ["market_closed", None]
    assert [t.market_id for t in arena.trades("m-a")] == ["200"]


def answer_result(body: dict[str, Any]) -> Any:
    """What a responder returns: the raw text of one answer, as a ChatResult."""
    import json

    from arena.agents.llm import AttemptRecord, ChatResult

    return ChatResult(json.dumps(body), "stop", [AttemptRecord(1, 200, "ok", 1)])
