"""The snapshot pass's v2 marks: one CLOB read for the open positions of v2 cohorts, and the
mark of each such position with its provenance.

Kept apart from `arena.engine.snapshots` because v1's valuation there is memoised on raw column
values and must not change by a byte; v2's marks depend on a read the pass makes at its
instant, so they are computed afresh every pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.config import METHODOLOGY_V2
from arena.core.accounting import mark_value, outcome_index
from arena.core.errors import ArenaError
from arena.core.money import price
from arena.engine.provenance import (
    PricedMarket,
    PriceReader,
    mark_quote,
    quote_markets,
)
from arena.markets.price_source import PRIOR_VALUE, PriceQuote
from arena.storage.dbtypes import from_units
from arena.storage.tables import AGENTS, COHORTS, MARKETS, POSITIONS

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
    .where(COHORTS.c.methodology_version == METHODOLOGY_V2, COHORTS.c.status != "completed")
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
        outcomes = _json_list(outcomes_json)
        index = outcome_index(market_type, outcomes, side) if outcomes else None
        quotes = self._quotes.get(market_id)
        quote = None
        if quotes is not None and index is not None and index < len(quotes):
            quote = quotes[index]
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
