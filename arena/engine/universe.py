"""The frozen universe: one market snapshot per decision run, shown identically to every agent.

Each item keeps the prices exactly as the prompt showed them; execution uses these prices,
so any prompt, trade and price can be traced back to the snapshot id.
"""

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import func
from sqlmodel import Session, col, or_, select
from sqlmodel.sql.expression import SelectOfScalar

from arena.engine.provenance import (
    PricedMarket,
    PriceReader,
    quote_json,
    quote_markets,
    quoted_prices,
)
from arena.storage.models import Market, MarketSnapshot, MarketSnapshotItem


def _open_at(at: datetime) -> SelectOfScalar[Market]:
    """Markets open for trading at `at`, by volume (ties by id)."""
    return (
        select(Market)
        .where(Market.status == "open", col(Market.closed).is_(False))
        .where(or_(col(Market.end_date).is_(None), col(Market.end_date) > at))
        .order_by(col(Market.volume).desc().nulls_last(), col(Market.id))
    )


def tradable_markets(
    session: Session, at: datetime, limit: int, exclude_source: str | None = None
) -> list[Market]:
    """Open markets with prices and an end after `at`, by volume (ties by id), top `limit`.

    `exclude_source` leaves out the markets of the other kind (a live run never shows a
    simulated market, whose stale prices it could never settle; `sources.foreign_markets`).
    """
    query = _open_at(at)
    if exclude_source is not None:
        query = query.where(Market.source != exclude_source)
    markets = [m for m in session.exec(query) if m.prices and len(m.prices) == len(m.outcomes)]
    return markets[:limit]


def open_markets_of(session: Session, at: datetime, source: str) -> int:
    """How many markets of `source` are open at `at` (what `exclude_source` leaves out)."""
    of_source = _open_at(at).where(Market.source == source).order_by(None).subquery()
    return session.exec(select(func.count()).select_from(of_source)).one()


def freeze_universe(
    session: Session,
    at: datetime,
    limit: int,
    held_market_ids: Iterable[str] = (),
    exclude_source: str | None = None,
    reader: PriceReader | None = None,
) -> MarketSnapshot:
    """Store the current top markets as one snapshot; returns it with its id assigned.

    Items ranked 1…market_count are the universe every agent is shown. Markets that agents
    hold but that are outside it follow with higher ranks, so the position prices each prompt
    shows (and SELLs execute at) are frozen in the same snapshot.

    With `reader` (methodology v2) every item is priced at its validated CLOB midpoint from one
    batched read, and keeps each outcome's PriceQuote (`quotes`); without it (v1) the items
    hold the synced Gamma prices and no quotes, exactly as before v2.
    """
    universe = tradable_markets(session, at, limit, exclude_source)
    shown = {market.id for market in universe}
    extra_ids = sorted(set(held_market_ids) - shown)
    extra = (
        list(session.exec(select(Market).where(col(Market.id).in_(extra_ids)))) if extra_ids else []
    )
    markets = universe + sorted(extra, key=lambda m: m.id)
    quotes = quote_markets(reader, [_priced(m) for m in markets]) if reader is not None else {}
    snapshot = MarketSnapshot(taken_at=at, purpose="decision", market_count=len(universe))
    session.add(snapshot)
    session.flush()
    assert snapshot.id is not None
    session.add_all(
        MarketSnapshotItem(
            snapshot_id=snapshot.id,
            market_id=market.id,
            rank=rank,
            question=market.question,
            market_type=market.market_type,
            outcomes=list(market.outcomes),
            prices=quoted_prices(quotes[market.id], market.prices)
            if market.id in quotes
            else list(market.prices),
            volume=market.volume,
            end_date=market.end_date,
            quotes=[quote_json(q) for q in quotes[market.id]] if market.id in quotes else None,
        )
        for rank, market in enumerate(markets, start=1)
    )
    session.flush()
    return snapshot


def _priced(market: Market) -> PricedMarket:
    return PricedMarket(
        market.id, market.market_type, list(market.outcomes), market.prices, market.clob_token_ids
    )


def snapshot_items(session: Session, snapshot_id: int) -> list[MarketSnapshotItem]:
    """A stored universe in rank order."""
    query = (
        select(MarketSnapshotItem)
        .where(MarketSnapshotItem.snapshot_id == snapshot_id)
        .order_by(col(MarketSnapshotItem.rank))
    )
    return list(session.exec(query))
