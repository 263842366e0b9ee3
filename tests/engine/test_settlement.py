"""`arena resolve` on real Gamma payloads: settle, refund, leave unresolved, score, never twice."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal as D
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.engine.market_sync import sync_markets, upsert_markets
from arena.engine.settlement import ResolveResult, SettleOutcome, resolve_markets, settle_market
from arena.markets.gamma import parse_market
from arena.markets.resolution import resolution_verdict
from arena.storage.db import session_scope
from arena.storage.models import Agent, BrierScore, Market, Position, Trade
from tests.engine.sources import ScriptedSource, fixture_markets, reopened
from tests.factories import WEEK1, new_cohort_agents, trade_into

AT = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)
USED = ("842093", "3776139", "842777", "40", "253591")


@pytest.fixture
def world(engine: Engine) -> dict[str, int]:
    """Two agents with positions in resolved, voided, unresolved and already-sold markets."""
    raw = fixture_markets()
    with session_scope(engine) as s:
        upsert_markets(s, [parse_market(reopened(raw[m])) for m in USED], WEEK1)
    a, b = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    t = WEEK1 + timedelta(minutes=5)
    return {
        "a": a,
        "b": b,
        "a_yes_842093": trade_into(engine, a, "842093", "YES", "500", "0.4", t),
        "a_spirit": trade_into(engine, a, "3776139", "Team Spirit", "250", "0.5", t),
        "a_yes_40": trade_into(engine, a, "40", "YES", "50", "0.5", t),
        "b_no_842093": trade_into(engine, b, "842093", "NO", "1000", "0.6", t),
        "b_void": trade_into(engine, b, "842777", "YES", "100", "0.5", t),
        "b_sold": trade_into(engine, b, "253591", "YES", "200", "0.5", t, sell_pct="100"),
    }


def sync_then_resolve(engine: Engine, source: ScriptedSource, at: datetime) -> ResolveResult:
    """The scheduler's order: a sync refreshes held markets (learning they closed), then resolve."""
    sync_markets(engine, source, at, 500)
    return resolve_markets(engine, source, at)


def cash(engine: Engine, agent_id: int) -> D:
    with session_scope(engine) as s:
        agent = s.get(Agent, agent_id)
        assert agent is not None
        return agent.cash_balance


def test_resolution_settles_refunds_and_scores_by_hand(
    engine: Engine, world: dict[str, int]
) -> None:
    assert cash(engine, world["a"]) == D("9200")
    assert cash(engine, world["b"]) == D("8900")
    source = ScriptedSource(dict(fixture_markets()))
    result = sync_then_resolve(engine, source, AT)

    assert sorted(result.resolved) == ["253591", "3776139", "842093"]
    assert result.cancelled == ["842777"]
    assert result.unresolved == 1  # market 40: closed with leftover prices, not resolved
    assert cash(engine, world["a"]) == D("9700")  # lost 842093 YES, won 500 Team Spirit shares
    assert cash(engine, world["b"]) == D("10666.666666")  # 1666.666666 NO shares + $100 refund

    with session_scope(engine) as s:
        status = {p.id: p.status for p in s.exec(select(Position))}
        assert status[world["a_yes_842093"]] == "lost"
        assert status[world["b_no_842093"]] == "won"
        assert status[world["a_spirit"]] == "won"
        assert status[world["b_void"]] == "cancelled"
        assert status[world["a_yes_40"]] == "open"
        markets = {m.id: m for m in s.exec(select(Market))}
        assert (markets["842093"].status, markets["842093"].resolution_outcome) == (
            "resolved",
            "No",
        )
        assert markets["842777"].status == "cancelled"
        assert markets["40"].status == "closed"
        assert markets["3776139"].resolution_outcome == "Team Spirit"
        briers = {(b.market_id, b.side): b for b in s.exec(select(BrierScore))}
        assert set(briers) == {
            ("842093", "YES"),
            ("842093", "NO"),
            ("3776139", "Team Spirit"),
            ("253591", "YES"),
        }
        assert briers["842093", "YES"].brier_score == pytest.approx(0.04)
        assert briers["842093", "NO"].brier_score == pytest.approx(0.36)
        assert briers["3776139", "Team Spirit"].brier_score == pytest.approx((1 - 250 / 2375) ** 2)
        assert briers["253591", "YES"].brier_score == pytest.approx((1 - 200 / 2225) ** 2)
        assert briers["842093", "NO"].market_price == pytest.approx(0.6)
        kinds = sorted(
            t.trade_type
            for t in s.exec(select(Trade).where(col(Trade.trade_type).in_(["SETTLE", "REFUND"])))
        )
        assert kinds == ["REFUND", "SETTLE", "SETTLE", "SETTLE"]


def test_conservation_after_settlement(engine: Engine, world: dict[str, int]) -> None:
    sync_then_resolve(engine, ScriptedSource(dict(fixture_markets())), AT)
    with session_scope(engine) as s:
        for agent in s.exec(select(Agent)):
            positions = s.exec(select(Position).where(Position.agent_id == agent.id)).all()
            open_cost = sum((p.cost_basis for p in positions if p.status == "open"), D(0))
            realized = sum((p.realized_pnl for p in positions), D(0))
            assert agent.cash_balance + open_cost - realized == D("10000")


def test_settling_twice_is_impossible(engine: Engine, world: dict[str, int]) -> None:
    source = ScriptedSource(dict(fixture_markets()))
    sync_then_resolve(engine, source, AT)
    before = (cash(engine, world["a"]), cash(engine, world["b"]))
    again = sync_then_resolve(engine, source, AT + timedelta(hours=1))
    assert again.resolved == [] and again.cancelled == []
    verdict = resolution_verdict(parse_market(fixture_markets()["842093"]))
    assert settle_market(engine, "842093", verdict, AT) == SettleOutcome()
    assert (cash(engine, world["a"]), cash(engine, world["b"])) == before
    with session_scope(engine) as s:
        assert len(s.exec(select(BrierScore)).all()) == 4
        assert len(s.exec(select(Trade).where(Trade.trade_type == "SETTLE")).all()) == 3


def test_a_vanished_market_keeps_its_positions_open(engine: Engine, world: dict[str, int]) -> None:
    """Gamma no longer knows a held market: logged, its row and last prices kept, nothing lost."""
    payloads: dict[str, dict[str, Any] | None] = dict(fixture_markets())
    payloads["842093"] = None
    synced = sync_markets(engine, ScriptedSource(payloads), AT, 500)
    assert synced.missing == ["842093"]
    resolve_markets(engine, ScriptedSource(payloads), AT)
    with session_scope(engine) as s:
        position = s.get(Position, world["b_no_842093"])
        assert position is not None and position.status == "open"
        market = s.get(Market, "842093")
        assert market is not None and market.prices == ["0.5", "0.5"]  # last known, kept


def test_open_markets_before_their_end_are_not_checked(
    engine: Engine, world: dict[str, int]
) -> None:
    source = ScriptedSource({m: reopened(raw) for m, raw in fixture_markets().items()})
    early = WEEK1 + timedelta(days=1)
    result = resolve_markets(engine, source, early)
    assert result.resolved == [] and result.cancelled == []
    assert "842093" not in source.calls  # ends 2027: not due
