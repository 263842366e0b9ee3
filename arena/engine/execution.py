"""Executing a planned decision (methodology §10, contract §5): the DB writes.

The plan itself is pure and lives in `arena.core.execution` (`plan_execution`); `apply_plan`
writes its executed legs as trades and positions inside the caller's transaction.
"""

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal

from sqlmodel import Session

from arena.core.book_legs import PRICE_SOURCE as BOOK_WALK
from arena.core.execution import ExecutionPlan, SnapshotMarket, trade_quote
from arena.storage.models import Agent, Position, Trade


def apply_plan(
    session: Session,
    agent: Agent,
    decision_id: int,
    plan: ExecutionPlan,
    at: datetime,
    snapshot: Mapping[str, SnapshotMarket] | None = None,
) -> None:
    """Write the executed legs: positions (opened, averaged, reduced, sold) and trades.

    `snapshot`: the markets the plan priced; a v2 market carries its quotes, and each trade then
    records the quote of the outcome it bought or sold (`price_source`, `price_quote`). A v1
    trade gets neither (NULL). A leg filled by walking a stored book (extension
    `book_execution`) stores the walk (`book_fill`) with `price_source` `book_walk`; the v2
    quote, when there is one, stays beside it in `price_quote`. A leg of v2's original rule
    set executed at its re-read quote (`leg.quotes`): `price_quote` is that quote, with the
    frozen price the prompt showed beside it (`frozen_price`)."""
    positions: dict[tuple[str, str], Position] = {}
    assert agent.id is not None
    for leg in plan.legs:
        if not leg.executed:
            continue
        assert leg.market_id and leg.side and leg.holding_after is not None
        assert leg.amount is not None and leg.shares is not None and leg.cash_before is not None
        key = (leg.market_id, leg.side)
        position = positions.get(key)
        if position is None and leg.position_id is not None:
            position = session.get(Position, leg.position_id)
        if position is None:
            position = Position(
                agent_id=agent.id,
                market_id=leg.market_id,
                side=leg.side,
                shares=Decimal(0),
                cost_basis=Decimal(0),
                avg_entry_price=Decimal(0),
                opened_at=at,
            )
        holding = leg.holding_after
        position.shares = holding.shares
        position.cost_basis = holding.cost_basis
        position.realized_pnl = holding.realized_pnl
        if holding.shares > 0:
            position.avg_entry_price = holding.avg_entry_price
            position.mark_price = leg.price
            position.marked_at = at
        else:
            position.status = "sold"
            position.closed_at = at
        session.add(position)
        session.flush()
        positions[key] = position
        assert position.id is not None
        leg.position_id = position.id
        market = snapshot.get(leg.market_id) if snapshot is not None else None
        quote = trade_quote(market, leg.side, leg.quotes)
        session.add(
            Trade(
                agent_id=agent.id,
                decision_id=decision_id,
                leg_index=leg.index,
                position_id=position.id,
                market_id=leg.market_id,
                trade_type="BUY" if leg.kind == "BET" else "SELL",
                side=leg.side,
                amount=leg.amount,
                price=leg.price,
                shares=leg.shares,
                cash_before=leg.cash_before,
                implied_confidence=leg.implied_confidence,
                realized_pnl=leg.realized_pnl,
                created_at=at,
                probability=None if leg.probability is None else float(leg.probability),
                price_source=BOOK_WALK if leg.fill else (quote["source"] if quote else None),
                price_quote=quote,
                book_fill=leg.fill,
            )
        )
    agent.cash_balance = plan.cash_after
    session.add(agent)
    session.flush()
