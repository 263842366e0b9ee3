"""`arena resolve`: settle markets Polymarket has resolved, refund voided ones, score Brier.

Order matters (methodology §13.2): positions settle first and the market is marked resolved
last, in the same transaction, so a crash can never strand open positions in a market that
later jobs would skip. Settling twice is impossible: a final market is skipped, a position
settles at most once (unique index on SETTLE/REFUND trades) and a trade has one Brier row.

Each market is settled on its own: one that raises is logged (ERROR, with its id) and the run
goes on, so a market that fails every time cannot starve the markets after it. A market whose
outcomes are equal up to case and spacing, or a position whose side names no outcome of its
market (`accounting.named_outcome`), is never settled by guesswork: it stays open and is
logged as an ERROR for a person, every run, until mended (the Operations page lists it).

A due market of the other kind (simulated, for a live source; live, for the simulated world)
is never asked about nor settled: it is counted in `skipped` and its positions stay open
(`arena.engine.sources.foreign_markets`, methodology §18).
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, exists, or_, select

from arena.core.accounting import (
    Holding,
    TradeRejected,
    ambiguous_outcomes,
    named_outcome,
    refund,
    settle,
    side_won,
)
from arena.core.errors import ArenaError, error_line
from arena.core.scoring import brier
from arena.engine.logs import log_event
from arena.engine.market_sync import upsert_markets
from arena.engine.sources import MarketSource, foreign_markets, skipped_line
from arena.markets.resolution import Verdict, resolution_verdict
from arena.storage.db import session_scope
from arena.storage.models import (
    FINAL_STATUSES,
    Agent,
    BrierScore,
    Cohort,
    Market,
    Position,
    Trade,
)

log = logging.getLogger("arena.engine.settlement")

CANCELLED = "CANCELLED"
SOURCE = "resolve"


@dataclass
class ResolveResult:
    checked: int = 0
    resolved: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    unresolved: int = 0
    unavailable: list[str] = field(default_factory=list)
    positions_settled: int = 0
    brier_rows: int = 0
    # Markets left for a person: settlement raised, outcomes ambiguous, or a position refused.
    failed: list[str] = field(default_factory=list)
    refused_positions: list[int] = field(default_factory=list)
    # Due markets of the other kind: not asked about, not settled.
    skipped: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, object]:
        return dict(vars(self))


@dataclass(frozen=True)
class SettleOutcome:
    """What `settle_market` did to one market.

    `final` is False when the market was left unsettled (ambiguous outcomes) or when some
    positions were refused; `refused` names those positions.
    """

    settled: int = 0
    scored: int = 0
    final: bool = True
    refused: tuple[int, ...] = ()
    problem: str | None = None


def markets_due(session: Session, at: datetime) -> list[Market]:
    """Unsettled markets, closed or past their end, with an open position or an unscored BUY.

    Markets whose positions were all sold before resolution still get a Brier row for their
    BUY trades (contract §5); a market with a refused position stays due until it is mended.
    Only live agents' positions and BUYs make a market due: a market only a late entrant holds
    is never asked about here (its asked resolution is the late entry's own, methodology §20.3).
    """
    live_agents = select(Agent.id).join(Cohort, col(Cohort.id) == col(Agent.cohort_id))
    live_agents = live_agents.where(col(Cohort.late_entry_of).is_(None))
    unscored_buy = exists().where(
        col(Trade.market_id) == col(Market.id),
        col(Trade.trade_type) == "BUY",
        ~exists().where(col(BrierScore.trade_id) == col(Trade.id)),
        col(Trade.agent_id).in_(live_agents),
    )
    open_position = exists().where(
        col(Position.market_id) == col(Market.id),
        col(Position.status) == "open",
        col(Position.agent_id).in_(live_agents),
    )
    query = (
        select(Market)
        .where(col(Market.status).not_in(FINAL_STATUSES))
        .where(or_(col(Market.closed).is_(True), col(Market.end_date) <= at))
        .where(or_(unscored_buy, open_position))
        .order_by(col(Market.id))
    )
    return list(session.exec(query))


def resolve_markets(engine: Engine, source: MarketSource, at: datetime) -> ResolveResult:
    """Check every due market against the source and settle the decided ones, one by one.

    Due markets of the other kind are skipped before the source is asked about any of them.
    """
    result = ResolveResult()
    foreign = foreign_markets(source.name)
    with session_scope(engine) as session:
        due = [(market.id, market.source) for market in markets_due(session, at)]
    result.skipped = [market_id for market_id, kind in due if kind == foreign]
    for market_id in [market_id for market_id, kind in due if kind != foreign]:
        result.checked += 1
        try:
            _resolve_one(engine, source, market_id, at, result)
        except Exception as exc:  # one market must never stop the others
            log.exception("settling market %s failed", market_id)
            result.failed.append(market_id)
            with session_scope(engine) as session:
                log_event(
                    session,
                    at,
                    "ERROR",
                    SOURCE,
                    f"market {market_id} could not be settled: {error_line(exc)}",
                    market_id=market_id,
                    error=error_line(exc),
                )
    with session_scope(engine) as session:
        if result.unavailable:
            log_event(
                session,
                at,
                "WARNING",
                SOURCE,
                f"{len(result.unavailable)} market(s) could not be checked",
                market_ids=result.unavailable,
            )
        if result.skipped:
            log_event(
                session,
                at,
                "WARNING",
                SOURCE,
                skipped_line(len(result.skipped), source.name),
                market_ids=result.skipped,
            )
        failed = f", failed {len(result.failed)}" if result.failed else ""
        log_event(
            session,
            at,
            "WARNING" if result.failed else "INFO",
            SOURCE,
            f"checked {result.checked}, resolved {len(result.resolved)}, "
            f"cancelled {len(result.cancelled)}{failed}",
            **result.counts(),
        )
    return result


def _resolve_one(
    engine: Engine, source: MarketSource, market_id: str, at: datetime, result: ResolveResult
) -> None:
    """Ask the source about one due market and settle it if it is decided."""
    try:
        fresh = source.get_market(market_id, at)
    except ArenaError as exc:
        log.warning("market %s could not be checked: %s", market_id, exc.one_line())
        fresh = None
    if fresh is None:
        result.unavailable.append(market_id)
        return
    with session_scope(engine) as session:
        upsert_markets(session, [fresh], at)
    verdict = resolution_verdict(fresh)
    if verdict.state == "unresolved":
        result.unresolved += 1
        return
    outcome = settle_market(engine, market_id, verdict, at)
    result.positions_settled += outcome.settled
    result.brier_rows += outcome.scored
    result.refused_positions.extend(outcome.refused)
    if not outcome.final:
        result.failed.append(market_id)
    elif verdict.state == "cancelled":
        result.cancelled.append(market_id)
    else:
        result.resolved.append(market_id)


def settle_market(engine: Engine, market_id: str, verdict: Verdict, at: datetime) -> SettleOutcome:
    """Settle (or refund) every open position of one market, score its BUYs, mark it final.

    One transaction. A market already final is left alone, so a second call does nothing.
    A resolved market listing two outcomes equal up to case and spacing is not touched; a
    position whose side names no outcome is refused (left open at its last mark) and the
    market stays unsettled, so the next run tries again. Both are logged as ERROR.
    """
    with session_scope(engine) as session:
        market = session.exec(select(Market).where(Market.id == market_id).with_for_update()).one()
        if market.status in FINAL_STATUSES:
            return SettleOutcome()
        alike = ambiguous_outcomes(market.outcomes or []) if verdict.state == "resolved" else []
        if alike:
            problem = (
                f"market {market_id} not settled: outcomes "
                f"{alike!r} are equal up to case and "
                "spacing, so the winner cannot be matched to positions; a person must decide"
            )
            log_event(session, at, "ERROR", SOURCE, problem, market_id=market_id)
            return SettleOutcome(final=False, problem=problem)
        positions = list(
            session.exec(
                select(Position)
                .where(Position.market_id == market_id, Position.status == "open")
                .order_by(col(Position.id))
                .with_for_update()
            )
        )
        refused: list[int] = []
        for position in positions:
            assert position.id is not None
            if _names_no_outcome(position.side, market):
                refused.append(position.id)
                continue
            _settle_position(session, position, market, verdict, at)
        scored = 0 if verdict.state == "cancelled" else _score_buys(session, market, verdict, at)
        settled = len(positions) - len(refused)
        if refused:
            problem = (
                f"market {market_id}: position(s) {', '.join(map(str, refused))} not settled: "
                f"their side names no outcome of the market ({market.outcomes!r}); "
                "left open at their last mark for a person to mend"
            )
            log_event(
                session,
                at,
                "ERROR",
                SOURCE,
                problem,
                market_id=market_id,
                position_ids=refused,
                positions=settled,
                brier_rows=scored,
            )
            return SettleOutcome(settled, scored, False, tuple(refused), problem)
        market.status = "cancelled" if verdict.state == "cancelled" else "resolved"
        market.resolution_outcome = verdict.winner if verdict.winner else CANCELLED
        market.resolved_at = at
        market.updated_at = at
        session.add(market)
        log_event(
            session,
            at,
            "INFO",
            SOURCE,
            f"market {market_id} {market.status}: {market.resolution_outcome}",
            positions=settled,
            brier_rows=scored,
            reason=verdict.reason,
        )
        return SettleOutcome(settled, scored)


def settle_positions(
    session: Session, market: Market, verdict: Verdict, at: datetime, agent_id: int
) -> tuple[int, int]:
    """Settle one agent's open positions in a market already settled (or decided), by the
    rules of `settle_market`, and score that agent's unscored BUYs there; (settled, scored).

    For a late entrant (methodology §20), whose positions settle at the market's recorded
    resolution: the market row is not touched. A position whose side names no outcome is
    left open, as `settle_market` leaves it."""
    positions = list(
        session.exec(
            select(Position)
            .where(
                Position.market_id == market.id,
                Position.agent_id == agent_id,
                Position.status == "open",
            )
            .order_by(col(Position.id))
            .with_for_update()
        )
    )
    settled = 0
    for position in positions:
        if not _names_no_outcome(position.side, market):
            _settle_position(session, position, market, verdict, at)
            settled += 1
    scored = (
        0 if verdict.state == "cancelled" else _score_buys(session, market, verdict, at, agent_id)
    )
    return settled, scored


def _names_no_outcome(side: str, market: Market) -> bool:
    """Whether a stored side names no outcome of the market (the executor's rule)."""
    try:
        named_outcome(side, market.market_type, market.outcomes or [])
    except TradeRejected:
        return True
    return False


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
    assert position.id is not None and agent.id is not None
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


def _score_buys(
    session: Session, market: Market, verdict: Verdict, at: datetime, agent_id: int | None = None
) -> int:
    """One Brier row per unscored BUY in this market (of `agent_id` alone when given):
    implied confidence vs the outcome."""
    assert verdict.winner is not None
    query = (
        select(Trade)
        .where(col(Trade.market_id) == market.id, col(Trade.trade_type) == "BUY")
        .where(~exists().where(col(BrierScore.trade_id) == col(Trade.id)))
        .order_by(col(Trade.id))
    )
    if agent_id is not None:
        query = query.where(Trade.agent_id == agent_id)
    buys = session.exec(query).all()
    scored = 0
    for trade in buys:
        assert trade.id is not None
        if _names_no_outcome(trade.side, market):
            continue  # left unscored, so the market stays due and is reported
        scored += 1
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
    return scored
