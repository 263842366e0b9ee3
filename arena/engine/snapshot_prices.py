"""The snapshot pass's v2 marks: one CLOB read for the open positions of v2 cohorts, and the
mark of each such position with its provenance; and the bid marks of the extension
`book_execution` (`BookMarks`: one read of the books of the markets such cohorts hold). The
pass asks for both at once (`pass_marks`), from one read of the live cohorts' stamps.

Kept apart from `arena.engine.snapshots` because v1's valuation there is memoised on raw column
values and must not change by a byte; v2's marks depend on a read the pass makes at its
instant, so they are computed afresh every pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.config import METHODOLOGY_V2, executes_on_books
from arena.core.accounting import mark_value, side_item
from arena.core.book_legs import bid_mark
from arena.core.errors import ArenaError
from arena.core.fees import FeeSchedule
from arena.core.money import price
from arena.core.order_book import Book
from arena.engine.provenance import (
    PricedMarket,
    PriceReader,
    mark_quote,
    quote_markets,
)
from arena.markets.clob_wire import ClobQuote
from arena.markets.price_source import PRIOR_VALUE, PriceQuote
from arena.storage.dbtypes import from_units
from arena.storage.tables import AGENTS, COHORTS, MARKETS, POSITIONS, live_cohort

_HELD_BY_V2 = (
    select(
        MARKETS.c.id,
        MARKETS.c.market_type,
        MARKETS.c.outcomes,
        MARKETS.c.prices,
        MARKETS.c.clob_token_ids,
    )
    .where(
        MARKETS.c.id.in_(
            select(POSITIONS.c.market_id)
            .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
            .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
            .where(
                POSITIONS.c.status == "open",
                COHORTS.c.methodology_version == METHODOLOGY_V2,
                COHORTS.c.status != "completed",
                live_cohort(),
            )
        ),
        MARKETS.c.status == "open",
        ~MARKETS.c.closed,
    )
    .order_by(MARKETS.c.id)
)


# Whether any v2 cohort is live: one row of the (small) cohorts table at most. A v1-only
# deployment's pass stops here instead of joining its open positions (bench/RESULTS.md).
_V2_LIVE = (
    select(COHORTS.c.id)
    .where(
        COHORTS.c.methodology_version == METHODOLOGY_V2,
        COHORTS.c.status != "completed",
        live_cohort(),
    )
    .limit(1)
)


def v2_quotes(
    engine: Engine, at: datetime, prices: Callable[[], PriceReader] | None
) -> dict[str, list[PriceQuote]]:
    """Each open market a v2 cohort holds, priced by one batched CLOB read; {} (and no read,
    no reader built) when no v2 cohort holds an open position in an open market, and without
    reading the holdings at all when no v2 cohort is live."""
    with engine.connect() as conn:
        if conn.execute(_V2_LIVE).first() is None:
            return {}
        rows = conn.execute(_HELD_BY_V2).all()
    return _quote_v2(rows, prices)


def _quote_v2(
    rows: Sequence[Any], prices: Callable[[], PriceReader] | None
) -> dict[str, list[PriceQuote]]:
    """The held v2 markets `rows` (`_HELD_BY_V2`) priced by one batched CLOB read."""
    if not rows:
        return {}
    if prices is None:
        raise ArenaError(
            f"{len(rows)} market(s) held by v2 cohorts need CLOB prices, but the snapshot "
            "pass has no CLOB reader",
            "run it through the scheduler or `arena snapshot` (ARENA_CLOB_URL)",
        )
    markets = [
        PricedMarket(row.id, row.market_type, list(row.outcomes), row.prices, row.clob_token_ids)
        for row in rows
    ]
    return quote_markets(prices(), markets)


def pass_marks(
    engine: Engine, at: datetime, prices: Callable[[], PriceReader] | None
) -> tuple[dict[str, list[PriceQuote]], BookMarks | None]:
    """The pass's reads before its transaction: v2's quotes (`v2_quotes`) and the
    `book_execution` cohorts' books (`BookMarks`), from ONE read of the live cohorts' stamps
    (a v1-only pass costs the one statement it cost before the extension)."""
    del at  # the reads are the pass's instant; kept for the jobs' `at` convention
    with engine.connect() as conn:
        live = conn.execute(_LIVE_STAMPS).all()
        v2 = any(version == METHODOLOGY_V2 for _, version, _ in live)
        v2_rows = conn.execute(_HELD_BY_V2).all() if v2 else []
        cohorts = {int(cid) for cid, _, stamp in live if executes_on_books(stamp)}
        bid_rows = conn.execute(_held_by(sorted(cohorts))).all() if cohorts else []
    quotes = _quote_v2(v2_rows, prices)
    return quotes, (_book_marks(cohorts, bid_rows, prices) if cohorts else None)


class V2Marks:
    """One pass's v2 marks: `value` of each raw position row of a v2 cohort, with its
    provenance. Positions of one market side share its quote and its CLOB mark record, so
    each side is looked up once per pass (a year's v2 pass marks thousands of positions in a
    few hundred markets); only a position kept at its prior value gets a record of its own.
    """

    def __init__(self, quotes: Mapping[str, list[PriceQuote]] | None) -> None:
        self._quotes = quotes or {}
        self._sides: dict[tuple[str, str, str | None, str, bool], _Side] = {}

    def value(
        self,
        market_id: str,
        market_type: str,
        outcomes_json: str | None,
        prices_json: str | None,
        side: str,
        market_open: bool | int | None,
        last_mark: int | None,
        avg_entry: int,
        share_count: int,
    ) -> tuple[Decimal, Decimal, bool, dict[str, Any]]:
        """(mark, position value, whether the mark is a new CLOB price, provenance): the
        side's CLOB midpoint, else the prior value. Gamma's price (`prices_json`) is never
        used for a v2 mark: no CLOB price keeps the prior value."""
        del prices_json
        trading = bool(market_open)
        key = (market_id, market_type, outcomes_json, side, trading)
        found = self._sides.get(key)
        if found is None:
            found = self._sides[key] = self._side(
                market_id, market_type, outcomes_json, side, trading
            )
        previous = from_units(last_mark) if last_mark is not None else None
        if found.record is not None:  # a CLOB midpoint
            mark, record = found.live, found.record
            assert mark is not None
            changed = mark != previous
        else:
            prior = previous if previous is not None else from_units(avg_entry)
            mark, record = mark_quote(found.quote, trading, found.live, prior)
            changed = False
        return mark, mark_value(from_units(share_count), mark), changed, record

    def _side(
        self, market_id: str, market_type: str, outcomes_json: str | None, side: str, trading: bool
    ) -> _Side:
        quote = side_item(self._quotes.get(market_id), market_type, _json_list(outcomes_json), side)
        live = price(quote.price) if quote is not None and quote.price is not None else None
        _mark, record = mark_quote(quote, trading, live, Decimal(0))
        clob = record["status"] != PRIOR_VALUE
        return _Side(quote, live, record if clob else None)


@dataclass(frozen=True)
class _Side:
    """A market side's quote this pass, its price, and its CLOB mark record (None: none)."""

    quote: PriceQuote | None
    live: Decimal | None
    record: dict[str, Any] | None


def _json_list(text: str | None) -> list[str]:
    if text is None:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [str(item) for item in value] if isinstance(value, list) else []


# The live cohorts' stamps: a book_execution cohort is told apart by its stamp (JSON, read in
# Python: the cohorts table is small, and JSON operators differ between the two backends).
_LIVE_STAMPS = select(COHORTS.c.id, COHORTS.c.methodology_version, COHORTS.c.constants).where(
    COHORTS.c.status != "completed", live_cohort()
)


def _held_by(cohort_ids: list[int]) -> Any:
    """The open markets the open positions of `cohort_ids` hold, with their tokens and fees."""
    held = (
        select(POSITIONS.c.market_id)
        .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
        .where(POSITIONS.c.status == "open", AGENTS.c.cohort_id.in_(cohort_ids))
    )
    return (
        select(MARKETS.c.id, MARKETS.c.clob_token_ids, MARKETS.c.fee_schedule)
        .where(MARKETS.c.id.in_(held), MARKETS.c.status == "open", ~MARKETS.c.closed)
        .order_by(MARKETS.c.id)
    )


@dataclass(frozen=True)
class _TokenBook:
    book: Book | None
    reason: str | None
    mid: Decimal | None


class BookMarks:
    """One pass's marks of the `book_execution` cohorts' positions: each at what its shares
    would fetch from the bids of its token's book as the pass read it (`bid_mark`), the CLOB
    midpoint beside it in the provenance record; the prior mark with the reason without one."""

    def __init__(
        self,
        cohorts: set[int],
        books: Mapping[str, list[_TokenBook]],
        fees: Mapping[str, FeeSchedule | None],
    ) -> None:
        self.cohorts = cohorts
        self._books = books
        self._fees = fees

    def value(
        self,
        market_id: str,
        market_type: str,
        outcomes_json: str | None,
        prices_json: str | None,
        side: str,
        market_open: bool | int | None,
        last_mark: int | None,
        avg_entry: int,
        share_count: int,
    ) -> tuple[Decimal, Decimal, bool, dict[str, Any]]:
        """(mark, position value, whether the mark is a new live one, provenance)."""
        del prices_json
        token = side_item(self._books.get(market_id), market_type, _json_list(outcomes_json), side)
        previous = from_units(last_mark) if last_mark is not None else None
        prior = previous if previous is not None else from_units(avg_entry)
        mark, value, record, live = bid_mark(
            token.book if token else None,
            token.reason if token else "not_read",
            from_units(share_count),
            self._fees.get(market_id),
            token.mid if token else None,
            prior,
            bool(market_open),
        )
        return mark, value, live and mark != previous, record


def _book_marks(
    cohorts: set[int], rows: Sequence[Any], prices: Callable[[], PriceReader] | None
) -> BookMarks:
    """The books of every open market (`rows`, `_held_by`) the live `book_execution` cohorts
    hold, from ONE batched CLOB read of every token of each; no read when they hold none."""
    fees = {
        row.id: FeeSchedule.from_json(row.fee_schedule) if row.fee_schedule else None
        for row in rows
    }
    owners = {t: row.id for row in rows for t in (row.clob_token_ids or ())}
    if not owners:
        return BookMarks(cohorts, {}, fees)
    if prices is None:
        raise ArenaError(
            f"{len(rows)} market(s) held by book_execution cohorts are marked at the bid, but "
            "the snapshot pass has no CLOB reader",
            "run it through the scheduler or `arena snapshot` (ARENA_CLOB_URL)",
        )
    clob = prices().books(list(owners), owners)
    books = {row.id: [_token_book(clob.get(t)) for t in (row.clob_token_ids or ())] for row in rows}
    return BookMarks(cohorts, books, fees)


def _token_book(quote: ClobQuote | None) -> _TokenBook:
    if quote is None:
        return _TokenBook(None, "clob_unavailable", None)
    return _TokenBook(quote.book, quote.reason, quote.mid)
