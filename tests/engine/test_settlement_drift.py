"""Settlement that survives drift: re-cased outcomes, ambiguous markets, corrupted sides,
and one market whose settlement raises. Both backends, real Gamma payloads."""

import copy
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal as D
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.parsing import parse_decision
from arena.analytics.views.operations import settlement_failures
from arena.core.accounting import (
    BetLimits,
    Holding,
    TradeRejected,
    ambiguous_outcomes,
    named_outcome,
    side_price,
    side_won,
)
from arena.core.execution import HeldPosition, SnapshotMarket, plan_execution
from arena.engine.market_sync import upsert_markets
from arena.engine.settlement import resolve_markets
from arena.engine.snapshots import value_position
from arena.markets.gamma import parse_market
from arena.markets.types import ParsedMarket
from arena.storage.db import session_scope
from arena.storage.models import Agent, BrierScore, Market, Position, SystemLog, Trade
from tests.engine.sources import ScriptedSource, fixture_markets, reopened
from tests.factories import WEEK1, new_cohort_agents, trade_into

AT = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)
BOUGHT = WEEK1 + timedelta(minutes=5)
NAMED = "3776139"  # BoomBoys vs Team Spirit, resolved: Team Spirit priced 1
BINARY = "842093"  # resolved NO
VOID = "842777"


def recased(raw: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The same payload with its outcome names edited (Gamma's outcomes are free text)."""
    return {**copy.deepcopy(raw), "outcomes": json.dumps(names)}


@pytest.fixture
def raw() -> dict[str, dict[str, Any]]:
    return dict(fixture_markets())


def open_markets(engine: Engine, raw: dict[str, dict[str, Any]], ids: tuple[str, ...]) -> None:
    with session_scope(engine) as s:
        upsert_markets(s, [parse_market(reopened(raw[m])) for m in ids], WEEK1)


def synced(engine: Engine, payloads: dict[str, dict[str, Any]]) -> None:
    """What the sync before each resolve run does: store the markets as Gamma shows them now."""
    with session_scope(engine) as s:
        upsert_markets(s, [parse_market(payload) for payload in payloads.values()], AT)


def cash(engine: Engine, agent_id: int) -> D:
    with session_scope(engine) as s:
        agent = s.get(Agent, agent_id)
        assert agent is not None
        return agent.cash_balance


def position(engine: Engine, position_id: int) -> Position:
    with session_scope(engine) as s:
        found = s.get(Position, position_id)
        assert found is not None
        s.expunge(found)
        return found


def errors(engine: Engine) -> list[SystemLog]:
    with session_scope(engine) as s:
        rows = list(s.exec(select(SystemLog).where(SystemLog.level == "ERROR")))
        for row in rows:
            s.expunge(row)
        return rows


# --------------------------------------------------------------------------------------------
# The one rule, pure


def test_named_outcome_is_one_rule_for_every_path() -> None:
    outcomes = ["BoomBoys", "Team Spirit"]
    assert named_outcome(" team SPIRIT ", "named", outcomes) == "Team Spirit"
    assert named_outcome("yes", "binary", ["Yes", "No"]) == "YES"
    assert named_outcome(" No ", "binary", ["Yes", "No"]) == "NO"
    with pytest.raises(TradeRejected) as bad:
        named_outcome("MAYBE", "binary", ["Yes", "No"])
    assert bad.value.reason == "bad_side"
    with pytest.raises(TradeRejected) as twice:
        named_outcome("spirit", "named", ["Spirit", "spirit "])
    assert twice.value.reason == "ambiguous_side"
    assert ambiguous_outcomes(["Spirit", "spirit ", "Boom"]) == ["Spirit", "spirit "]
    assert ambiguous_outcomes(outcomes) == []
    # settlement, pricing and the BET leg agree on a re-cased name
    assert side_won("Team Spirit", "team spirit ", "named")
    assert not side_won("BoomBoys", "team spirit ", "named")
    assert side_won("YES", "Yes", "binary") and not side_won("NO", "Yes", "binary")
    assert side_price("named", ["boomboys", "TEAM SPIRIT"], ["0.3", "0.7"], "Team Spirit") == D(
        "0.7"
    )


def test_a_binary_side_that_is_neither_yes_nor_no_is_never_priced_as_no() -> None:
    """Before: any side but YES was priced 1 − YES, so a corrupted row was sold and valued as NO."""
    with pytest.raises(TradeRejected) as rejected:
        side_price("binary", ["Yes", "No"], ["0.3", "0.7"], "MAYBE")
    assert rejected.value.reason == "bad_side"
    valued = value_position(
        "binary", ["Yes", "No"], ["0.3", "0.7"], "MAYBE", True, D("0.41"), D("0.5")
    )
    assert (valued.mark, valued.live) == (D("0.41"), False)  # keeps its last mark


def test_sell_of_a_position_whose_side_names_no_outcome_is_rejected_with_a_reason() -> None:
    snapshot = {BINARY: SnapshotMarket(BINARY, "binary", ["Yes", "No"], ["0.3", "0.7"])}
    held = [HeldPosition(7, BINARY, "MAYBE", Holding(D("100"), D("50")))]
    decision = parse_decision('{"action": "SELL", "sells": [{"position_id": 7, "percentage": 50}]}')
    assert decision.ok is not None
    plan = plan_execution(decision.ok, D("1000"), held, snapshot, BetLimits())
    (leg,) = plan.legs
    assert (leg.executed, leg.reason) == (False, "bad_side")
    assert plan.cash_after == D("1000")


def test_the_executor_stores_canonical_sides_only() -> None:
    """BET legs in any case or spacing become YES/NO, or the market's own outcome spelling."""
    snapshot = {
        BINARY: SnapshotMarket(BINARY, "binary", ["Yes", "No"], ["0.3", "0.7"]),
        NAMED: SnapshotMarket(NAMED, "named", ["BoomBoys", "Team Spirit"], ["0.4", "0.6"]),
    }
    answer = {
        "action": "BET",
        "bets": [
            {"market_id": BINARY, "side": " yes ", "amount": 100},
            {"market_id": NAMED, "side": "team spirit", "amount": 100},
            {"market_id": BINARY, "side": "MAYBE", "amount": 100},
        ],
    }
    parsed = parse_decision(json.dumps(answer))
    assert parsed.ok is not None
    plan = plan_execution(parsed.ok, D("10000"), [], snapshot, BetLimits())
    assert [(leg.executed, leg.side or leg.reason) for leg in plan.legs] == [
        (True, "YES"),
        (True, "Team Spirit"),
        (False, "bad_side"),
    ]


# --------------------------------------------------------------------------------------------
# Settlement on both backends


def test_a_winning_outcome_recased_by_gamma_between_bet_and_resolution_still_wins(
    engine: Engine, raw: dict[str, dict[str, Any]]
) -> None:
    open_markets(engine, raw, (NAMED,))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    winner = trade_into(engine, agent, NAMED, "Team Spirit", "250", "0.5", BOUGHT)
    loser = trade_into(engine, agent, NAMED, "BoomBoys", "100", "0.5", BOUGHT)
    edited = recased(raw[NAMED], ["boomboys", " team spirit "])
    result = resolve_markets(engine, ScriptedSource({NAMED: edited}), AT)

    assert result.resolved == [NAMED] and result.failed == []
    assert position(engine, winner).status == "won"
    assert position(engine, loser).status == "lost"
    assert cash(engine, agent) == D("10000") - D("350") + D("500")  # 500 winning shares pay $1
    with session_scope(engine) as s:
        briers = {b.side: b.actual_outcome for b in s.exec(select(BrierScore))}
        assert briers == {"Team Spirit": 1, "BoomBoys": 0}


def test_an_ambiguous_market_is_left_for_a_person(
    engine: Engine, raw: dict[str, dict[str, Any]]
) -> None:
    open_markets(engine, raw, (NAMED, BINARY))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    held = trade_into(engine, agent, NAMED, "Team Spirit", "250", "0.5", BOUGHT)
    other = trade_into(engine, agent, BINARY, "NO", "100", "0.5", BOUGHT)
    edited = recased(raw[NAMED], ["Team Spirit", "team spirit"])
    synced(engine, {NAMED: edited, BINARY: raw[BINARY]})
    result = resolve_markets(engine, ScriptedSource({NAMED: edited, BINARY: raw[BINARY]}), AT)

    assert result.failed == [NAMED] and result.resolved == [BINARY]
    assert position(engine, held).status == "open"
    assert position(engine, other).status == "won"
    with session_scope(engine) as s:
        market = s.get(Market, NAMED)
        assert market is not None and market.status == "closed"
        assert not list(s.exec(select(BrierScore).where(BrierScore.market_id == NAMED)))
    (logged,) = errors(engine)
    assert "equal up to case and spacing" in logged.message
    assert logged.context["market_id"] == NAMED


def test_a_position_whose_side_names_no_outcome_is_refused_and_named(
    engine: Engine, raw: dict[str, dict[str, Any]]
) -> None:
    open_markets(engine, raw, (BINARY,))
    a, b = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    good = trade_into(engine, a, BINARY, "NO", "1000", "0.6", BOUGHT)
    corrupt = trade_into(engine, b, BINARY, "YES", "500", "0.4", BOUGHT)
    with session_scope(engine) as s:  # a manual edit gone wrong
        row = s.get(Position, corrupt)
        assert row is not None
        row.side, row.mark_price = "MAYBE", D("0.42")
        s.add(row)
    b_cash = cash(engine, b)
    source = ScriptedSource({BINARY: raw[BINARY]})
    synced(engine, {BINARY: raw[BINARY]})

    first = resolve_markets(engine, source, AT)
    assert first.failed == [BINARY] and first.refused_positions == [corrupt]
    assert position(engine, good).status == "won"
    refused = position(engine, corrupt)
    assert (refused.status, refused.mark_price, refused.shares) == ("open", D("0.42"), D("1250"))
    assert cash(engine, b) == b_cash  # nothing invented
    (logged,) = errors(engine)
    assert f"position(s) {corrupt} not settled" in logged.message
    assert logged.context["position_ids"] == [corrupt]

    # the market stays due: every run reports it until a person mends the row
    second = resolve_markets(engine, source, AT + timedelta(hours=1))
    assert second.failed == [BINARY] and second.positions_settled == 0
    assert len(errors(engine)) == 2
    with session_scope(engine) as s:
        row = s.get(Position, corrupt)
        assert row is not None
        row.side = "YES"
        s.add(row)
    mended = resolve_markets(engine, source, AT + timedelta(hours=2))
    assert mended.resolved == [BINARY] and mended.positions_settled == 1
    assert position(engine, corrupt).status == "lost"
    with session_scope(engine) as s:
        market = s.get(Market, BINARY)
        assert market is not None and market.status == "resolved"
        assert len(list(s.exec(select(BrierScore)))) == 2  # each BUY scored once
    assert settlement_failures(engine).empty  # settled: off the Operations list


class FailingSource(ScriptedSource):
    """A source whose answer for some markets breaks settlement (an unexpected exception)."""

    def __init__(self, payloads: dict[str, dict[str, Any] | None], broken: set[str]) -> None:
        super().__init__(payloads)
        self.broken = broken

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None:
        if market_id in self.broken:
            self.calls.append(market_id)
            raise RuntimeError(f"unexpected payload shape for {market_id}")
        return super().get_market(market_id, at)


def test_one_failing_market_does_not_stop_the_others(
    engine: Engine, raw: dict[str, dict[str, Any]]
) -> None:
    """The failing market sorts first by id ("3776139" < "842093" < "842777"), so a raise that
    escaped would stop the run before any other market and before the summary is logged."""
    open_markets(engine, raw, (NAMED, BINARY, VOID))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    stuck = trade_into(engine, agent, NAMED, "Team Spirit", "250", "0.5", BOUGHT)
    won = trade_into(engine, agent, BINARY, "NO", "500", "0.5", BOUGHT)
    void = trade_into(engine, agent, VOID, "YES", "100", "0.5", BOUGHT)
    source = FailingSource({m: raw[m] for m in (NAMED, BINARY, VOID)}, broken={NAMED})
    synced(engine, {m: raw[m] for m in (NAMED, BINARY, VOID)})

    result = resolve_markets(engine, source, AT)
    assert result.failed == [NAMED]
    assert result.resolved == [BINARY] and result.cancelled == [VOID]
    assert source.calls == [NAMED, BINARY, VOID]
    assert position(engine, stuck).status == "open"
    assert position(engine, won).status == "won"
    assert position(engine, void).status == "cancelled"
    (logged,) = errors(engine)
    assert logged.context == {
        "market_id": NAMED,
        "error": f"RuntimeError: unexpected payload shape for {NAMED}",
    }
    with session_scope(engine) as s:
        summary = s.exec(
            select(SystemLog).where(col(SystemLog.message).startswith("checked"))
        ).one()
        assert summary.level == "WARNING"
        assert summary.context["failed"] == [NAMED]

    resolve_markets(engine, source, AT + timedelta(hours=1))  # keeps failing
    shown = settlement_failures(engine)
    assert shown["market_id"].tolist() == [NAMED]
    assert shown["failures"].tolist() == [2]
    assert shown["first_failure"].iloc[0] == AT
    assert shown["last_failure"].iloc[0] == AT + timedelta(hours=1)
    assert "unexpected payload shape" in shown["last_error"].iloc[0]
    assert shown["question"].iloc[0]

    fixed = resolve_markets(engine, ScriptedSource({NAMED: raw[NAMED]}), AT + timedelta(hours=2))
    assert fixed.resolved == [NAMED]
    assert position(engine, stuck).status == "won"
    assert settlement_failures(engine).empty


def test_no_trade_is_lost_when_a_market_fails(
    engine: Engine, raw: dict[str, dict[str, Any]]
) -> None:
    """Conservation holds for every agent after a run with a failing market."""
    open_markets(engine, raw, (NAMED, BINARY))
    a, b = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    trade_into(engine, a, NAMED, "Team Spirit", "250", "0.5", BOUGHT)
    trade_into(engine, b, BINARY, "YES", "500", "0.4", BOUGHT)
    synced(engine, {m: raw[m] for m in (NAMED, BINARY)})
    resolve_markets(engine, FailingSource(dict(raw), broken={NAMED}), AT)
    with session_scope(engine) as s:
        for agent in s.exec(select(Agent)):
            positions = s.exec(select(Position).where(Position.agent_id == agent.id)).all()
            open_cost = sum((p.cost_basis for p in positions if p.status == "open"), D(0))
            realized = sum((p.realized_pnl for p in positions), D(0))
            assert agent.cash_balance + open_cost - realized == D("10000")
        assert len(list(s.exec(select(Trade).where(Trade.trade_type == "SETTLE")))) == 1
