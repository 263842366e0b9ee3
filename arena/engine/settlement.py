"""`arena resolve`: settle markets Polymarket has resolved, refund voided ones, score Brier.

Order matters (methodology §13.2): positions settle first and the market is marked resolved
last, in the same transaction, so a crash can never strand open positions in a market that
later jobs would skip. Settling twice is impossible: a final market is skipped, a position
settles at most once (unique index on SETTLE/REFUND trades) and a trade has one Brier row.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, exists, or_, select

from arena.accounting import Holding, refund, settle
from arena.db import session_scope
from arena.engine.logs import log_event
from arena.engine.market_sync import FINAL_STATUSES, upsert_markets
from arena.engine.sources import MarketSource
from arena.errors import ArenaError
from arena.markets.resolution import Verdict, resolution_verdict
from arena.models import Agent, BrierScore, Market, Position, Trade
from arena.scoring import brier

log = logging.getLogger("arena.engine.settlement")

CANCELLED = "CANCELLED"


@dataclass
class ResolveResult:
    checked: int = 0
    resolved: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    unresolved: int = 0
    unavailable: list[str] = field(default_factory=list)
    positions_settled: int = 0
    brier_rows: int = 0

    def counts(self) -> dict[str, object]:
        return dict(vars(self))


def side_won(side: str, winner: str, market_type: str) -> bool:
    """Whether a position's side is the winning outcome (YES/NO sides on binary markets)."""
    if market_type == "binary":
        return side.upper() == winner.strip().upper()
    return side == winner


def markets_due(session: Session, at: datetime) -> list[Market]:
    """Unsettled markets, closed or past their end, in which some BUY is still unscored.

    That covers every market with an open position, and also markets whose positions were
    all sold before resolution: their BUY trades still get a Brier row (contract §5).
    """
    unscored_buy = exists().where(
        Trade.market_id == Market.id,
        Trade.trade_type == "BUY",
        ~exists().where(BrierScore.trade_id == Trade.id),
    )
    query = (
        select(Market)
        .where(col(Market.status).not_in(FINAL_STATUSES))
        .where(or_(col(Market.closed).is_(True), col(Market.end_date) <= at))
        .where(unscored_buy)
        .order_by(col(Market.id))
    )
    return list(session.exec(query))


def resolve_markets(engine: Engine, source: MarketSource, at: datetime) -> ResolveResult:
    """Check every due market against the source and settle the decided ones."""
    result = ResolveResult()
    with session_scope(engine) as session:
        due = [market.id for market in markets_due(session, at)]
    for market_id in due:
        result.checked += 1
        try:
            fresh = source.get_market(market_id, at)
        except ArenaError as exc:
            log.warning("market %s could not be checked: %s", market_id, exc.one_line())
            fresh = None
        if fresh is None:
            result.unavailable.append(market_id)
            continue
        with session_scope(engine) as session:
            upsert_markets(session, [fresh], at)
        verdict = resolution_verdict(fresh)
        if verdict.state == "unresolved":
            result.unresolved += 1
            continue
        settled, scored = settle_market(engine, market_id, verdict, at)
        (result.cancelled if verdict.state == "cancelled" else result.resolved).append(market_id)
        result.positions_settled += settled
        result.brier_rows += scored
    with session_scope(engine) as session:
        if result.unavailable:
            log_event(
                session,
                at,
                "WARNING",
                "resolve",
                f"{len(result.unavailable)} market(s) could not be checked",
                market_ids=result.unavailable,
            )
        log_event(
            session,
            at,
            "INFO",
            "resolve",
            f"checked {result.checked}, resolved {len(result.resolved)}, "
            f"cancelled {len(result.cancelled)}",
            **result.counts(),
        )
    return result


def settle_market(
    engine: Engine, market_id: str, verdict: Verdict, at: datetime
) -> tuple[int, int]:
    """Settle (or refund) every open position of one market, score its BUYs, mark it final.

    One transaction; returns (positions settled, Brier rows written). A market already
    final is left alone, so a second call does nothing.
    """
    with session_scope(engine) as session:
        market = session.exec(select(Market).where(Market.id == market_id).with_for_update()).one()
        if market.status in FINAL_STATUSES:
            return 0, 0
        positions = list(
            session.exec(
                select(Position)
                .where(Position.market_id == market_id, Position.status == "open")
                .order_by(col(Position.id))
                .with_for_update()
            )
        )
        for position in positions:
            _settle_position(session, position, market, verdict, at)
        scored = 0 if verdict.state == "cancelled" else _score_buys(session, market, verdict, at)
        market.status = "cancelled" if verdict.state == "cancelled" else "resolved"
        market.resolution_outcome = verdict.winner if verdict.winner else CANCELLED
        market.resolved_at = at
        market.updated_at = at
        session.add(market)
        log_event(
            session,
            at,
            "INFO",
            "resolve",
            f"market {market_id} {market.status}: {market.resolution_outcome}",
            positions=len(positions),
            brier_rows=scored,
            reason=verdict.reason,
        )
        return len(positions), scored


def _settle_position(
    session: Session, position: Position, market: Market, verdict: Verdict, at: datetime
) -> None:
    agent = session.exec(select(Agent).where(Agent.id == position.agent_id).with_for_update()).one()
    holding = Holding(position.shares, position.cost_basis, position.realized_pnl)
    if verdict.state == "cancelled" or verdict.winner is None:
        fill, trade_type, status = refund(agent.cash_balance, holding), "REFUND", "cancelled"
        final_mark = holding.avg_entry_price
    else:
        won = side_won(position.side, verdict.winner, market.market_type)
        fill, trade_type = settle(agent.cash_balance, holding, won), "SETTLE"
        status, final_mark = ("won", Decimal(1)) if won else ("lost", Decimal(0))
    assert position.id is not None
    session.add(
        Trade(
            agent_id=agent.id,
            position_id=position.id,
            market_id=market.id,
            trade_type=trade_type,
            side=position.side,
            amount=fill.amount,
            price=fill.price,
            shares=fill.shares,
            cash_before=agent.cash_balance,
            realized_pnl=fill.realized_pnl,
            created_at=at,
        )
    )
    agent.cash_balance = fill.cash_after
    position.shares = fill.holding.shares
    position.cost_basis = fill.holding.cost_basis
    position.realized_pnl = fill.holding.realized_pnl
    position.status = status
    position.mark_price = final_mark
    position.marked_at = at
    position.closed_at = at
    session.add(agent)
    session.add(position)
    session.flush()


def _score_buys(session: Session, market: Market, verdict: Verdict, at: datetime) -> int:
    """One Brier row per unscored BUY in this market: implied confidence vs the outcome."""
    assert verdict.winner is not None
    buys = session.exec(
        select(Trade)
        .where(Trade.market_id == market.id, Trade.trade_type == "BUY")
        .where(~exists().where(BrierScore.trade_id == Trade.id))
        .order_by(col(Trade.id))
    ).all()
    for trade in buys:
        assert trade.id is not None
        won = side_won(trade.side, verdict.winner, market.market_type)
        forecast = trade.implied_confidence if trade.implied_confidence is not None else 1.0
        session.add(
            BrierScore(
                trade_id=trade.id,
                agent_id=trade.agent_id,
                market_id=market.id,
                side=trade.side,
                forecast_probability=forecast,
                actual_outcome=int(won),
                brier_score=brier(forecast, won),
                market_price=float(trade.price) if trade.price is not None else None,
                created_at=at,
            )
        )
    return len(buys)
