"""Accounting invariants checked after every fault: nothing duplicated, nothing lost."""

from collections import Counter
from decimal import Decimal as D

from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.storage.db import session_scope
from arena.storage.models import (
    Agent,
    BrierScore,
    Decision,
    JobRun,
    JobRunCount,
    Market,
    MarketHolding,
    PortfolioSnapshot,
    Position,
    Trade,
)


def assert_books_balance(engine: Engine) -> None:
    """Per agent: cash = start − buys + sells/settles/refunds, and the conservation law."""
    with session_scope(engine) as s:
        trades = s.exec(select(Trade)).all()
        positions = s.exec(select(Position)).all()
        for agent in s.exec(select(Agent)):
            mine = [t for t in trades if t.agent_id == agent.id]
            flow = sum((t.amount if t.trade_type != "BUY" else -t.amount for t in mine), D(0))
            assert agent.cash_balance == agent.starting_balance + flow, agent.family_id
            held = [p for p in positions if p.agent_id == agent.id]
            open_cost = sum((p.cost_basis for p in held if p.status == "open"), D(0))
            realized = sum((p.realized_pnl for p in held), D(0))
            assert agent.cash_balance + open_cost - realized == agent.starting_balance
            assert agent.cash_balance >= 0
    assert_leg_tallies_match(engine)
    assert_market_counts_match(engine)
    assert_job_run_counts_match(engine)


def assert_job_run_counts_match(engine: Engine) -> None:
    """The trigger-kept runs per job × status equal the job runs counted afresh."""
    with session_scope(engine) as s:
        fresh = Counter((r.job, r.status) for r in s.exec(select(JobRun)))
        stored = {(c.job, c.status): c.runs for c in s.exec(select(JobRunCount)) if c.runs}
    assert stored == dict(fresh)


def assert_market_counts_match(engine: Engine) -> None:
    """Each market's trigger-kept holding counts equal its positions counted afresh."""
    with session_scope(engine) as s:
        positions = s.exec(select(Position)).all()
        holdings = {h.market_id: h for h in s.exec(select(MarketHolding))}
        for market in s.exec(select(Market)):
            mine = [p for p in positions if p.market_id == market.id]
            held = holdings.get(market.id)
            stored = (
                (held.position_count, held.open_position_count, held.holder_count)
                if held
                else (0, 0, 0)
            )
            assert stored == (
                len(mine),
                sum(1 for p in mine if p.status == "open"),
                len({p.agent_id for p in mine}),
            ), market.id


def assert_leg_tallies_match(engine: Engine) -> None:
    """Each decision's stored leg tallies agree with its legs JSON and with its trades."""
    with session_scope(engine) as s:
        trades = [t for t in s.exec(select(Trade)) if t.decision_id is not None]
        for d in s.exec(select(Decision)):
            mine = [t for t in trades if t.decision_id == d.id]
            buys = [t for t in mine if t.trade_type == "BUY"]
            executed = [leg for leg in d.legs if leg["executed"]]
            stored = (d.bets_executed, d.sells_executed, d.legs_rejected, d.amount_bet)
            assert stored == (
                len(buys),
                sum(1 for t in mine if t.trade_type == "SELL"),
                len(d.legs) - len(executed),
                sum((t.amount for t in buys), D(0)),
            ), d.id
            assert len(executed) == len(mine), d.id
            bet_dollars = sum((D(leg["amount"]) for leg in executed if leg["kind"] == "BET"), D(0))
            assert d.amount_bet == bet_dollars, d.id


def assert_no_duplicates(engine: Engine) -> None:
    """Natural keys hold (the database enforces them; this double-checks the data)."""
    with session_scope(engine) as s:
        decisions = Counter((d.agent_id, d.decision_week) for d in s.exec(select(Decision)))
        legs = Counter(
            (t.decision_id, t.leg_index) for t in s.exec(select(Trade)) if t.decision_id is not None
        )
        settles = Counter(
            t.position_id for t in s.exec(select(Trade)) if t.trade_type in ("SETTLE", "REFUND")
        )
        briers = Counter(b.trade_id for b in s.exec(select(BrierScore)))
        snaps = Counter((p.agent_id, p.slot) for p in s.exec(select(PortfolioSnapshot)))
    for counter in (decisions, legs, settles, briers, snaps):
        assert all(n == 1 for n in counter.values()), counter.most_common(3)
