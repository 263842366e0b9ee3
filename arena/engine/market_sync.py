"""`arena sync-markets`: the methodology's universe (top 500 by volume) plus every held market.

Markets are upserted by Gamma id. A value the source did not send never overwrites a known
one, and a market the engine has settled (resolved / cancelled) keeps that final status.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arena.db import session_scope
from arena.engine.logs import log_event
from arena.engine.sources import MarketSource
from arena.errors import ArenaError
from arena.markets.types import ParsedMarket
from arena.models import Market, Position

log = logging.getLogger("arena.engine.market_sync")

FINAL_STATUSES = ("resolved", "cancelled")
_OPTIONAL_FIELDS = (
    "slug",
    "description",
    "event_id",
    "event_slug",
    "event_title",
    "group_item_title",
    "category",
    "volume",
    "liquidity",
    "end_date",
    "uma_resolution_status",
)


@dataclass
class SyncResult:
    """What one sync did, for the job log."""

    top: int = 0
    held_refreshed: int = 0
    inserted: int = 0
    updated: int = 0
    missing: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, object]:
        return {
            "top": self.top,
            "held_refreshed": self.held_refreshed,
            "inserted": self.inserted,
            "updated": self.updated,
            "missing": self.missing,
        }


def apply_market(row: Market | None, parsed: ParsedMarket, at: datetime) -> Market:
    """The market row after taking in `parsed`: new fields set, missing ones left alone."""
    if row is None:
        row = Market(
            id=parsed.id,
            question=parsed.question,
            market_type=parsed.market_type,
            outcomes=list(parsed.outcomes),
            source=parsed.source,
            first_seen_at=at,
            updated_at=at,
        )
    row.question = parsed.question or row.question
    row.market_type = parsed.market_type
    row.outcomes = list(parsed.outcomes)
    if parsed.prices is not None:
        row.prices = [str(price) for price in parsed.prices]
    for name in _OPTIONAL_FIELDS:
        value = getattr(parsed, name)
        if value is not None:
            setattr(row, name, value)
    row.active = parsed.active
    row.closed = parsed.closed
    row.neg_risk = parsed.neg_risk
    row.source = parsed.source
    if row.status not in FINAL_STATUSES:
        row.status = "closed" if parsed.closed else "open"
    row.updated_at = at
    return row


def upsert_markets(
    session: Session, markets: Iterable[ParsedMarket], at: datetime
) -> tuple[int, int]:
    """Insert or update each market; returns (inserted, updated)."""
    by_id = {market.id: market for market in markets}
    existing: dict[str, Market] = {}
    ids = list(by_id)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for row in session.exec(select(Market).where(col(Market.id).in_(chunk))):
            existing[row.id] = row
    for market_id, parsed in by_id.items():
        session.add(apply_market(existing.get(market_id), parsed, at))
    return len(by_id) - len(existing), len(existing)


def held_market_ids(session: Session) -> set[str]:
    """Markets in which any agent holds an open position."""
    query = select(Position.market_id).where(Position.status == "open").distinct()
    return set(session.exec(query).all())


def sync_markets(
    engine: Engine, source: MarketSource, at: datetime, universe_size: int
) -> SyncResult:
    """Fetch the top markets and refresh every held one, then upsert all in one transaction.

    The source is read before anything is written, so a source that is down fails the job
    without a half-written sync. A held market the source no longer knows is logged and its
    row (with its last prices) kept, so its positions keep their valuation.
    """
    result = SyncResult()
    top = source.top_markets(at, universe_size)
    result.top = len(top)
    with session_scope(engine) as session:
        held = held_market_ids(session)
    fetched = {market.id: market for market in top}
    for market_id in sorted(held - fetched.keys()):
        try:
            refreshed = source.get_market(market_id, at)
        except ArenaError as exc:
            log.warning("held market %s could not be refreshed: %s", market_id, exc.one_line())
            refreshed = None
        if refreshed is None:
            result.missing.append(market_id)
            continue
        fetched[market_id] = refreshed
        result.held_refreshed += 1
    with session_scope(engine) as session:
        result.inserted, result.updated = upsert_markets(session, fetched.values(), at)
        if result.missing:
            log_event(
                session,
                at,
                "WARNING",
                "sync-markets",
                f"{len(result.missing)} held market(s) not available from {source.name}",
                market_ids=result.missing,
            )
        log_event(
            session,
            at,
            "INFO",
            "sync-markets",
            f"synced {len(fetched)} markets from {source.name}",
            **result.counts(),
        )
    return result
