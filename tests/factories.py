"""Small builders of realistic rows for tests (one cohort, one agent, a market, a trade…)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal as D
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arena.agents.parsing import BetLeg, SellLeg
from arena.agents.parsing import Decision as ParsedDecision
from arena.config import Methodology
from arena.core.accounting import (
    BetLimits,
    Holding,
    TradeRejected,
    named_outcome,
    outcome_key,
)
from arena.core.execution import HeldPosition, LegResult, SnapshotMarket, plan_execution
from arena.engine.cohorts import decision_week
from arena.engine.execution import apply_plan
from arena.engine.rollups import rebuild_rollups
from arena.storage.db import session_scope
from arena.storage.models import (
    Agent,
    BrierScore,
    Cohort,
    Decision,
    Family,
    Market,
    PortfolioSnapshot,
    Position,
    Trade,
)

WEEK1 = datetime(2026, 11, 1, tzinfo=UTC)  # a Sunday


def family(fid: str = "gpt-5.1", kind: str = "llm") -> Family:
    return Family(id=fid, display_name=fid.upper(), provider="Test", model=f"test/{fid}", kind=kind)


def market(mid: str = "842093", **overrides: Any) -> Market:
    values: dict[str, Any] = {
        "id": mid,
        "question": f"Will market {mid} resolve YES?",
        "market_type": "binary",
        "outcomes": ["Yes", "No"],
        "prices": ["0.4", "0.6"],
        "volume": 1000.0,
        "end_date": WEEK1 + timedelta(days=30),
    }
    values.update(overrides)
    return Market(**values)


def seed_basic(engine: Engine) -> dict[str, int]:
    """Two cohorts × two families, one market, one BUY each, snapshots and a Brier row."""
    ids: dict[str, int] = {}
    with session_scope(engine) as s:
        for fam in (family("gpt-5.1"), family("baseline-cash", "baseline")):
            s.merge(fam)
        s.add(market("842093"))
        s.add(
            market(
                "900001",
                question='=HYPERLINK("http://evil")',
                outcomes=["No", "Yes"],
                prices=["0.7", "0.3"],
            )
        )
        s.flush()
        for number in (1, 2):
            cohort = Cohort(
                number=number,
                week_start=WEEK1 + timedelta(weeks=number - 1),
                methodology_version="v1",
                constants=Methodology().stamp(),
            )
            s.add(cohort)
            s.flush()
            assert cohort.id is not None
            for fid in ("gpt-5.1", "baseline-cash"):
                agent = Agent(
                    cohort_id=cohort.id,
                    family_id=fid,
                    model_id=f"test/{fid}",
                    display_name=fid,
                    starting_balance=D("10000"),
                    cash_balance=D("9500"),
                )
                s.add(agent)
                s.flush()
                assert agent.id is not None
                ids[f"agent_{number}_{fid}"] = agent.id
                at = cohort.week_start + timedelta(minutes=5)
                decision = Decision(
                    agent_id=agent.id,
                    cohort_id=cohort.id,
                    decision_week=1,
                    status="ok",
                    action="BET",
                    attempts=1,
                    prompt_system="sys",
                    prompt_user="user",
                    raw_response='{"action": "BET"}',
                    parsed_response={"action": "BET"},
                    created_at=at,
                )
                s.add(decision)
                s.flush()
                side, mid = ("NO", "900001") if fid == "baseline-cash" else ("YES", "842093")
                position = Position(
                    agent_id=agent.id,
                    market_id=mid,
                    side=side,
                    shares=D("1250"),
                    cost_basis=D("500"),
                    avg_entry_price=D("0.4"),
                    opened_at=at,
                )
                s.add(position)
                s.flush()
                assert position.id is not None
                trade = Trade(
                    agent_id=agent.id,
                    decision_id=decision.id,
                    leg_index=0,
                    position_id=position.id,
                    market_id=mid,
                    trade_type="BUY",
                    side=side,
                    amount=D("500"),
                    price=D("0.4"),
                    shares=D("1250"),
                    cash_before=D("10000"),
                    implied_confidence=0.2,
                    created_at=at,
                )
                s.add(trade)
                s.flush()
                assert trade.id is not None
                s.add(
                    BrierScore(
                        trade_id=trade.id,
                        agent_id=agent.id,
                        market_id=mid,
                        side=side,
                        forecast_probability=0.2,
                        actual_outcome=0,
                        brier_score=0.04,
                        created_at=at + timedelta(days=3),
                    )
                )
                for k in range(3):
                    s.add(
                        PortfolioSnapshot(
                            agent_id=agent.id,
                            slot=at + timedelta(minutes=10 * k),
                            snapshot_timestamp=at + timedelta(minutes=10 * k),
                            cash_balance=D("9500"),
                            positions_value=D("437.5"),
                            total_value=D("9937.5"),
                            total_pnl=D("-62.5"),
                            total_pnl_percent=-0.625,
                            brier_score=None,
                            num_resolved_bets=0,
                        )
                    )
    rebuild_rollups(engine)  # snapshots written by hand, not by the job that keeps rollups
    return ids


def new_cohort_agents(engine: Engine, family_ids: tuple[str, ...], number: int = 1) -> list[int]:
    """One cohort with a $10,000 agent per family; returns the agent ids in order."""
    ids: list[int] = []
    with session_scope(engine) as s:
        for fid in family_ids:
            s.merge(family(fid))
        cohort = Cohort(
            number=number,
            week_start=WEEK1 + timedelta(weeks=number - 1),
            methodology_version="v1",
            constants=Methodology().stamp(),
        )
        s.add(cohort)
        s.flush()
        assert cohort.id is not None
        for fid in family_ids:
            agent = Agent(
                cohort_id=cohort.id,
                family_id=fid,
                model_id=f"test/{fid}",
                display_name=fid,
                starting_balance=D("10000"),
                cash_balance=D("10000"),
            )
            s.add(agent)
            s.flush()
            assert agent.id is not None
            ids.append(agent.id)
    return ids


def trade_into(
    engine: Engine,
    agent_id: int,
    market_id: str,
    side: str,
    amount: str,
    price: str,
    at: datetime,
    sell_pct: str | None = None,
) -> int:
    """BUY `amount` of a side at `price` through the engine's executor (and optionally SELL
    `sell_pct` percent of the position right after, at the same price); returns the position id.

    The legs go through `plan_execution` and `apply_plan` exactly as a decision run sends
    them, against a one-market snapshot that shows `price` for the side, with the default
    limits, and the agent's open positions as held (a second BUY of the same side averages
    in). As in the engine, every trade belongs to a finished (`ok`) decision row of the agent,
    one per agent × decision week: BET legs are appended to the BET decision of `at`'s week;
    the SELL, which the engine only writes as a decision of its own, goes to the first later
    week that has none or a SELL one. A decision run for such a week skips the agent (its
    decision is done). A rejected leg raises `TradeRejected` with the executor's reason.
    """
    with session_scope(engine) as s:
        agent = s.get(Agent, agent_id)
        assert agent is not None
        row = s.get(Market, market_id)
        assert row is not None, f"market {market_id} must exist before trading into it"
        snapshot = {market_id: _snapshot_market(row, side, D(price))}
        bet = BetLeg(market_id=market_id, side=side, amount=D(amount))
        legs = _execute(s, agent, ParsedDecision(action="BET", bets=[bet]), snapshot, at)
        position_id = legs[0].position_id
        assert position_id is not None
        if sell_pct is not None:
            sale = SellLeg(position_id=position_id, percentage=D(sell_pct))
            _execute(s, agent, ParsedDecision(action="SELL", sells=[sale]), snapshot, at)
        return position_id


def _snapshot_market(row: Market, side: str, price: D) -> SnapshotMarket:
    """`row` as a frozen snapshot would show it, with `side` priced at `price`: a binary
    market's YES at `price` (or at 1 − `price` for a NO), a named outcome at `price`."""
    outcomes = list(row.outcomes)
    canonical = named_outcome(side, row.market_type, outcomes)
    if row.market_type == "binary":
        yes = price if canonical == "YES" else 1 - price
        prices = [str(yes if outcome_key(o).upper() == "YES" else 1 - yes) for o in outcomes]
    else:
        prices = [str(price) if o == canonical else "0" for o in outcomes]
    return SnapshotMarket(row.id, row.market_type, outcomes, prices)


def _execute(
    s: Session,
    agent: Agent,
    decision: ParsedDecision,
    snapshot: dict[str, SnapshotMarket],
    at: datetime,
) -> list[LegResult]:
    """Plan and apply `decision` for `agent` as `_finish` does, recording it on the agent's
    decision row of the week; returns the legs, which must all have executed."""
    open_positions = s.exec(
        select(Position)
        .where(Position.agent_id == agent.id, Position.status == "open")
        .order_by(col(Position.id))
    )
    held = [
        HeldPosition(p.id, p.market_id, p.side, Holding(p.shares, p.cost_basis, p.realized_pnl))
        for p in open_positions
    ]
    plan = plan_execution(decision, agent.cash_balance, held, snapshot, BetLimits())
    for leg in plan.legs:
        if not leg.executed:
            raise TradeRejected(leg.reason or "rejected", leg.message or "")
    row = _week_decision(s, agent, decision.action, at)
    assert row.id is not None
    # The week's decision may already hold legs (an earlier call): number these after them.
    taken = s.exec(select(func.max(Trade.leg_index)).where(Trade.decision_id == row.id)).one()
    offset = max(len(row.legs), -1 if taken is None else taken + 1)
    for leg in plan.legs:
        leg.index += offset
    apply_plan(s, agent, row.id, plan, at)
    row.legs = [*row.legs, *(leg.record() for leg in plan.legs)]
    for column, value in plan.tallies().items():
        setattr(row, column, getattr(row, column) + value)
    parsed = decision.model_dump(mode="json")
    if row.parsed_response is not None:  # the week's earlier legs come first
        earlier = row.parsed_response
        parsed = {**earlier, **{k: [*earlier.get(k, []), *parsed[k]] for k in ("bets", "sells")}}
    row.parsed_response = parsed
    row.decided_at = row.updated_at = at
    s.add(row)
    s.flush()
    return plan.legs


def _week_decision(s: Session, agent: Agent, action: str, at: datetime) -> Decision:
    """The agent's finished decision with `action` of the first week from `at`'s that has
    none or one of that action (the unique agent × week key allows one decision a week)."""
    cohort = s.get(Cohort, agent.cohort_id)
    assert cohort is not None
    week = max(1, decision_week(cohort.week_start, at))
    while True:
        row = s.exec(
            select(Decision).where(Decision.agent_id == agent.id, Decision.decision_week == week)
        ).first()
        if row is None:
            assert agent.id is not None
            row = Decision(
                agent_id=agent.id,
                cohort_id=agent.cohort_id,
                decision_week=week,
                status="ok",
                action=action,
                attempts=1,
                claimed_at=at,
                created_at=at,
            )
            s.add(row)
            s.flush()
            return row
        if row.status == "ok" and row.action == action:
            return row
        week += 1
