"""The frozen universe: one market snapshot per decision run, shown identically to every agent.

Each item keeps the prices exactly as the prompt showed them (v1: Gamma's, as synced; v2: the
validated CLOB midpoints, with each quote); while books are recorded, the snapshot's tokens'
books are stored beside it (`arena.engine.books`). A leg executes at these prices, walks these
books under `book_execution`, or, in a v2 cohort under the original's rule set, executes at
midpoints re-read after the answer with these prices recorded beside (`arena.engine.requote`),
so any prompt, trade and price can be traced back to the snapshot id.
"""

import logging
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from sqlalchemy import func
from sqlmodel import Session, col, or_, select
from sqlmodel.sql.expression import SelectOfScalar

from arena.engine.books import store_books, universe_tokens
from arena.engine.provenance import (
    PricedMarket,
    PriceReader,
    quote_json,
    quote_markets,
    quoted_prices,
)
from arena.markets.clob_wire import ClobQuote
from arena.markets.price_source import PriceQuote
from arena.storage.models import Market, MarketSnapshot, MarketSnapshotItem

log = logging.getLogger("arena.engine.universe")


def _open_at(at: datetime) -> SelectOfScalar[Market]:
    """Markets open for trading at `at`, by volume (ties by id)."""
    return (
        select(Market)
        .where(Market.status == "open", col(Market.closed).is_(False))
        .where(or_(col(Market.end_date).is_(None), col(Market.end_date) > at))
        .order_by(col(Market.volume).desc().nulls_last(), col(Market.id))
    )


def tradable_markets(
    session: Session,
    at: datetime,
    limit: int,
    exclude_source: str | None = None,
    horizon: timedelta | None = None,
) -> list[Market]:
    """Open markets with prices and an end after `at`, by volume (ties by id), top `limit`.

    `exclude_source` leaves out the markets of the other kind (a live run never shows a
    simulated market, whose stale prices it could never settle; `sources.foreign_markets`).
    `horizon` (extension `horizon`) keeps only markets whose end date is set and at most
    `at + horizon` (`at < end_date <= at + horizon`); without it the query is v1's, unchanged.
    """
    query = _open_at(at)
    if horizon is not None:
        query = query.where(col(Market.end_date).is_not(None), col(Market.end_date) <= at + horizon)
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
    books: PriceReader | None = None,
    horizon: timedelta | None = None,
) -> MarketSnapshot:
    """Store the current top markets as one snapshot; returns it with its id assigned.

    Items ranked 1…market_count are the universe every agent is shown. Markets that agents
    hold but that are outside it follow with higher ranks, so the position prices each prompt
    shows (and SELLs execute at) are frozen in the same snapshot.

    With `reader` (methodology v2) every item is priced at its validated CLOB midpoint from one
    batched read, and keeps each outcome's PriceQuote (`quotes`); without it (v1) the items
    hold the synced Gamma prices and no quotes, exactly as before v2.

    With `books` (book recording, any version) every token's book is stored too
    (`arena.engine.books`): in v2 from the same one read, widened to every token; in v1 from
    one read made only to store them. A v1 read that fails leaves the run without books.

    With `horizon` (extension `horizon`) the universe is the top `limit` among markets ending
    within it (`tradable_markets`); held markets are added as always, wherever they end.
    """
    universe = tradable_markets(session, at, limit, exclude_source, horizon)
    shown = {market.id for market in universe}
    extra_ids = sorted(set(held_market_ids) - shown)
    extra = (
        list(session.exec(select(Market).where(col(Market.id).in_(extra_ids)))) if extra_ids else []
    )
    markets = universe + sorted(extra, key=lambda m: m.id)
    tokens = universe_tokens((m.id, m.outcomes, m.clob_token_ids) for m in markets)
    owners = {t.token_id: t.market_id for t in tokens} if books is not None else {}
    quotes: dict[str, list[PriceQuote]] = {}
    clob: dict[str, ClobQuote] | None = None
    if reader is not None:  # v2: one read, widened to every token when books are recorded
        widened = _Widened(reader, owners)
        quotes = quote_markets(widened, [priced_market(m) for m in markets])
        clob = widened.read if owners and _answered(widened.read, len(owners)) else None
    elif books is not None and owners:
        clob = _record_only(books, owners)
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
    if books is not None and clob is not None:
        store_books(session, snapshot.id, tokens, clob)
    return snapshot


class _Widened:
    """A v2 reader whose one read also covers every token whose book the run stores (the
    pricing ignores the extra tokens: a binary market is priced by its YES book alone)."""

    def __init__(self, reader: PriceReader, extra: Mapping[str, str]) -> None:
        self._reader = reader
        self._extra = extra
        self.read: dict[str, ClobQuote] = {}

    def books(
        self, token_ids: Iterable[str], market_ids: Mapping[str, str] | None = None
    ) -> dict[str, ClobQuote]:
        wanted = {**dict(market_ids or {}), **self._extra}
        wanted.update({token: wanted.get(token, "") for token in token_ids})
        self.read = self._reader.books(list(wanted), wanted)
        return self.read


def _record_only(books: PriceReader, owners: Mapping[str, str]) -> dict[str, ClobQuote] | None:
    """A v1 run's read, only to store the books; None (one WARNING) when it fails or the CLOB
    answers nothing: recording never blocks a run. The first token is read alone first, so a
    CLOB that is down costs one token's retries, not every token's."""
    tokens = list(owners)
    try:
        clob = books.books(tokens[:1], owners)
        if _answered(clob, len(tokens)):
            clob.update(books.books(tokens[1:], owners) if tokens[1:] else {})
        else:
            return None
    except Exception as exc:
        log.warning("decision books not recorded: the CLOB read failed (%s)", exc)
        return None
    return clob if _answered(clob, len(tokens)) else None


def _answered(clob: Mapping[str, ClobQuote], wanted: int) -> bool:
    """Whether the CLOB answered anything at all (one WARNING when it did not)."""
    if any(q.reason != "clob_unavailable" for q in clob.values()):
        return True
    log.warning("decision books not recorded: the CLOB answered none of %d tokens", wanted)
    return False


def priced_market(market: Market) -> PricedMarket:
    """A stored market as v2 prices it (its Gamma prices and CLOB tokens)."""
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
