"""Price provenance as people read it (methodology v2): where each price of a frozen
universe and each trade came from.

A v2 frozen-universe item stores each outcome's quote (`market_snapshot_items.quotes`: price,
source, status, Gamma and CLOB prices, disagreement, fallback reason) and a v2 trade the quote
of the outcome it bought or sold (`trades.price_source`, `trades.price_quote`). v1 stores
neither: its prices are Gamma's display price, and say so. The frames keep the raw values (for
CSVs); `provenance_text` is the one place their words for people live.
"""

import json
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.query.frames import FLOAT, INT, NULLABLE_INT, TEXT
from arena.analytics.query.selects import typed_frame
from arena.storage.tables import MARKET_SNAPSHOT_ITEMS as UNIVERSE_ITEMS
from arena.storage.tables import TRADES

V1_PRICE = "Gamma display price (v1)"
SOURCES = {"clob_mid": "Order-book midpoint", "gamma": "Gamma display price"}
STATUSES = {
    "accepted": "accepted",
    "accepted_with_gamma_disagreement": "accepted, Gamma disagrees by more than 0.05",
    "fallback_gamma": "fell back to Gamma",
    "prior_value": "kept its prior value",
    "unpriced": "no price",
}
REASONS = {
    "no_token": "the market names no order-book token",
    "unknown_token": "the order book does not know the token",
    "clob_unavailable": "the order book did not answer",
    "malformed": "the order book's answer was malformed",
    "empty_book": "the book is empty",
    "one_sided_book": "the book is one-sided",
    "crossed_book": "the book is crossed",
    "market_closed": "the market is closed",
}
QUOTE_COLUMNS: dict[str, str] = {
    "price_source": TEXT,
    "price_status": TEXT,
    "gamma_price": FLOAT,
    "clob_price": FLOAT,
    "disagreement": FLOAT,
    "fallback_reason": TEXT,
}


def quote_fields(quote: dict[str, Any] | None) -> dict[str, Any]:
    """A stored quote (JSON) as the `QUOTE_COLUMNS` values; all missing for v1 (None)."""
    quote = quote or {}

    def number(key: str) -> float | None:
        value = quote.get(key)
        try:
            return None if value is None else float(value)
        except (TypeError, ValueError):
            return None

    return {
        "price_source": quote.get("source"),
        "price_status": quote.get("status"),
        "gamma_price": number("gamma_price"),
        "clob_price": number("clob_price"),
        "disagreement": number("disagreement"),
        "fallback_reason": quote.get("fallback_reason"),
    }


def provenance_text(source: Any, status: Any, reason: Any = None) -> str:
    """One price's provenance in words: "Order-book midpoint, accepted", "Gamma display price,
    fell back to Gamma (the book is empty)", or `V1_PRICE` where nothing was recorded."""
    if source is None or pd.isna(source):
        return V1_PRICE
    text = SOURCES.get(str(source), str(source))
    if status is not None and not pd.isna(status):
        text += f", {STATUSES.get(str(status), str(status))}"
    if reason is not None and not pd.isna(reason):
        text += f" ({REASONS.get(str(reason), str(reason))})"
    return text


UNIVERSE_COLUMNS: dict[str, str] = {
    "rank": INT,
    "market_id": TEXT,
    "question": TEXT,
    "outcome": TEXT,
    "price": FLOAT,
    **QUOTE_COLUMNS,
}


def _loaded(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def universe_provenance(engine: Engine, snapshot_id: int) -> pd.DataFrame:
    """Each outcome of frozen universe `snapshot_id`, by rank: the price shown and where it
    came from. Columns `UNIVERSE_COLUMNS` (provenance missing on a v1 universe)."""
    query = (
        select(
            UNIVERSE_ITEMS.c.rank,
            UNIVERSE_ITEMS.c.market_id,
            UNIVERSE_ITEMS.c.question,
            UNIVERSE_ITEMS.c.outcomes,
            UNIVERSE_ITEMS.c.prices,
            UNIVERSE_ITEMS.c.quotes,
        )
        .where(UNIVERSE_ITEMS.c.snapshot_id == snapshot_id)
        .order_by(UNIVERSE_ITEMS.c.rank)
    )
    rows: list[dict[str, Any]] = []
    with engine.connect() as conn:
        for rank, market_id, question, outcomes, prices, quotes in conn.execute(query):
            outcomes, prices, quotes = _loaded(outcomes), _loaded(prices), _loaded(quotes)
            for index, outcome in enumerate(outcomes or []):
                quote = quotes[index] if quotes and index < len(quotes) else None
                price = prices[index] if prices and index < len(prices) else None
                rows.append(
                    {
                        "rank": rank,
                        "market_id": market_id,
                        "question": question,
                        "outcome": outcome,
                        "price": None if price is None else float(price),
                        **quote_fields(quote),
                    }
                )
    return typed_frame(rows, UNIVERSE_COLUMNS)


TRADE_COLUMNS: dict[str, str] = {
    "trade_id": INT,
    "leg_index": NULLABLE_INT,
    "trade_type": TEXT,
    "market_id": TEXT,
    "side": TEXT,
    "price": FLOAT,
    **QUOTE_COLUMNS,
    # v2's original rules: the price the prompt showed, the trade having filled at the re-read
    # one (missing under the other rules, where they are the same)
    "frozen_price": FLOAT,
}


def trade_provenance(engine: Engine, decision_id: int) -> pd.DataFrame:
    """Each trade of decision `decision_id`, by leg: its fill price and where it came from
    (`trades.price_source` and the stored quote; missing on a v1 trade). Columns
    `TRADE_COLUMNS`."""
    query = (
        select(
            TRADES.c.id,
            TRADES.c.leg_index,
            TRADES.c.trade_type,
            TRADES.c.market_id,
            TRADES.c.side,
            TRADES.c.price,
            TRADES.c.price_source,
            TRADES.c.price_quote,
        )
        .where(TRADES.c.decision_id == decision_id)
        .order_by(TRADES.c.leg_index, TRADES.c.id)
    )
    rows: list[dict[str, Any]] = []
    with engine.connect() as conn:
        for trade_id, leg, kind, market_id, side, price, source, quote in conn.execute(query):
            loaded = _loaded(quote)
            fields = quote_fields(loaded)
            fields["price_source"] = source or fields["price_source"]
            shown = loaded.get("frozen_price") if isinstance(loaded, dict) else None
            fields["frozen_price"] = None if shown is None else float(shown)
            rows.append(
                {
                    "trade_id": trade_id,
                    "leg_index": leg,
                    "trade_type": kind,
                    "market_id": market_id,
                    "side": side,
                    "price": None if price is None else float(price),
                    **fields,
                }
            )
    return typed_frame(rows, TRADE_COLUMNS)
