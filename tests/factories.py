"""Small builders of realistic rows for tests (one cohort, one agent, a market, a trade…)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal as D
from typing import Any

from sqlalchemy.engine import Engine

from arena.config import Methodology
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
                ids[f"agent_{number}_{fid}"] = agent.id  # type: ignore[assignment]
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
            ids.append(agent.id)  # type: ignore[arg-type]
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
    """BUY `amount` of a side at `price` through the pure accounting core (and optionally
    SELL a percentage right after at the same price); returns the position id."""
    from arena.core.accounting import BetLimits, Holding, buy, sell
    from arena.core.scoring import implied_confidence

    with session_scope(engine) as s:
        agent = s.get(Agent, agent_id)
        assert agent is not None
        fill = buy(agent.cash_balance, Holding(), D(amount), D(price), BetLimits())
        position = Position(
            agent_id=agent_id,
            market_id=market_id,
            side=side,
            shares=fill.holding.shares,
            cost_basis=fill.holding.cost_basis,
            avg_entry_price=fill.holding.avg_entry_price,
            opened_at=at,
        )
        s.add(position)
        s.flush()
        s.add(
            Trade(
                agent_id=agent_id,
                position_id=position.id,
                market_id=market_id,
                trade_type="BUY",
                side=side,
                amount=fill.amount,
                price=fill.price,
                shares=fill.shares,
                cash_before=agent.cash_balance,
                implied_confidence=implied_confidence(fill.amount, agent.cash_balance, D("0.25")),
                created_at=at,
            )
        )
        agent.cash_balance = fill.cash_after
        if sell_pct is not None:
            sold = sell(agent.cash_balance, fill.holding, D(sell_pct), D(price))
            s.add(
                Trade(
                    agent_id=agent_id,
                    position_id=position.id,
                    market_id=market_id,
                    trade_type="SELL",
                    side=side,
                    amount=sold.amount,
                    price=sold.price,
                    shares=sold.shares,
                    cash_before=agent.cash_balance,
                    realized_pnl=sold.realized_pnl,
                    created_at=at,
                )
            )
            agent.cash_balance = sold.cash_after
            position.shares = sold.holding.shares
            position.cost_basis = sold.holding.cost_basis
            position.realized_pnl = sold.holding.realized_pnl
            if sold.holding.shares == 0:
                position.status = "sold"
                position.closed_at = at
        s.add(agent)
        s.add(position)
        s.flush()
        return position.id  # type: ignore[return-value]
