"""Methodology v2 under the original's rule set: each decision's prices re-read at execution.

Why: the original executes a BET or SELL at the CLOB midpoints it reads and validates after
the model has answered (`prepareExecutionPriceOverrides`), not at the prices frozen when the
prompt was built, and never at Gamma's price. A decision of a `source-7c78b0c` cohort does the
same: one batched CLOB read for the markets its legs touch, validated against the markets'
Gamma prices as synced at that moment (`arena.markets.price_source.price_market`). The quotes
go into each leg's record and onto each trade, so a replay bundle carries them and `arena
verify` recomputes every fill from them.

A late entrant replays the past, where no book can be read again: its legs execute at the run's
frozen quotes under the same rules (`frozen_quotes`).
"""

from collections.abc import Callable, Iterable, Mapping

from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.core.execution import ExecutionQuotes, SnapshotMarket
from arena.engine.provenance import PriceReader, quote_json, quote_markets
from arena.engine.universe import priced_market
from arena.storage.db import session_scope
from arena.storage.models import Market

# What a decision re-reads its legs' markets through: market ids → each market's quotes (JSON,
# in outcome order); a market it could not price at all is left out (its legs are refused).
Requote = Callable[[Iterable[str]], ExecutionQuotes]


def clob_requote(engine: Engine, reader: Callable[[], PriceReader]) -> Requote:
    """A re-read through the run's CLOB reader (the process's one, built on first use by the
    factory) against the markets' Gamma prices as stored now."""

    def requote(market_ids: Iterable[str]) -> ExecutionQuotes:
        ids = sorted(set(market_ids))
        if not ids:
            return {}
        with session_scope(engine) as session:
            rows = session.exec(select(Market).where(col(Market.id).in_(ids))).all()
            markets = [priced_market(m) for m in rows]
        quotes = quote_markets(reader(), markets)
        return {mid: [quote_json(q) for q in found] for mid, found in quotes.items()}

    return requote


def frozen_quotes(snapshot: Mapping[str, SnapshotMarket]) -> Requote:
    """The run's frozen quotes as the execution quotes (a replayed past run)."""

    def requote(market_ids: Iterable[str]) -> ExecutionQuotes:
        found = {mid: snapshot[mid].quotes for mid in market_ids if mid in snapshot}
        return {mid: quotes for mid, quotes in found.items() if quotes}

    return requote
