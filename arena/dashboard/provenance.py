"""Price provenance on screen (methodology v2): where each price of a decision's trades and of
a frozen universe came from, in words for people, with the raw values in the CSVs.

Read by the decision drill-down (app_pages/decisions.py) and the Markets page's snapshot
(app_pages/markets.py) from `arena.analytics.views.provenance`; a v1 price (nothing recorded)
reads "Gamma display price (v1)"."""

import pandas as pd
import streamlit as st

from arena.analytics.views.provenance import (
    provenance_text,
    trade_provenance,
    universe_provenance,
)
from arena.dashboard import fmt, tables
from arena.dashboard.reads import read

PRICES = {"price": fmt.price, "gamma_price": fmt.price, "clob_price": fmt.price}
COLUMNS = {
    "provenance": tables.column(
        "Where the price came from",
        340,
        "Order-book midpoint (validated against Gamma's price), Gamma's price with the "
        "reason it fell back, or Gamma's display price under v1.",
    ),
    "price": tables.column("Price", 70),
    "gamma_price": tables.column("Gamma", 70, "Gamma's display price at the time."),
    "clob_price": tables.column("CLOB mid", 80, "The order book's midpoint; — when none."),
    "disagreement": tables.column("|Gamma − CLOB|", 100),
}


TRADE_SHOWN = (
    "leg_index",
    "trade_type",
    "side",
    "market_id",
    "price",
    "frozen_price",
    "provenance",
    "gamma_price",
    "clob_price",
    "disagreement",
)
UNIVERSE_SHOWN = (
    "rank",
    "question",
    "outcome",
    "price",
    "provenance",
    "gamma_price",
    "clob_price",
    "disagreement",
    "market_id",
)


def _readable(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with the provenance in words (the raw source, status and reason dropped)."""
    words = [
        provenance_text(source, status, reason)
        for source, status, reason in zip(
            frame["price_source"], frame["price_status"], frame["fallback_reason"], strict=True
        )
    ]
    return frame.assign(provenance=words).drop(
        columns=["price_source", "price_status", "fallback_reason"]
    )


def trade_prices(decision_id: int) -> None:
    """The decision's trades: each fill price and its provenance, and the raw CSV."""
    trades: pd.DataFrame = read(trade_provenance, decision_id)
    if trades.empty:
        st.text("No trade: nothing was bought or sold at a price.")
        return
    shown = _readable(trades)[list(TRADE_SHOWN)]
    tables.table(
        shown,
        key=f"decision-trade-prices:{decision_id}",
        formats={**PRICES, "disagreement": fmt.price, "frozen_price": fmt.price},
        column_config={
            "leg_index": tables.column("Leg", 50),
            "frozen_price": tables.column(
                "Shown",
                70,
                "The price the prompt showed (the frozen universe). Under v2's original rules "
                "the trade filled at the midpoint re-read after the answer; — under other rules, "
                "where the two are the same.",
            ),
            "trade_type": tables.column("Trade", 60),
            "side": tables.column("Side", tables.fitted(trades["side"])),
            "market_id": tables.column("Market", 110),
            **COLUMNS,
        },
    )
    tables.download_csv(trades, f"decision-{decision_id}-trade-prices", label="Download CSV")


def universe_prices(snapshot_id: int, key: str) -> None:
    """Each outcome of frozen universe `snapshot_id`: its price as shown and where it came
    from, a count per provenance above it, and the raw CSV."""
    items: pd.DataFrame = read(universe_provenance, snapshot_id)
    if items.empty:
        st.text("This market snapshot holds no market.")
        return
    readable = _readable(items)
    counts = readable["provenance"].value_counts()
    st.caption(
        " · ".join(f"{fmt.escaped(text)}: {count:,}" for text, count in counts.items())
        + " (outcome prices)"
    )
    shown = readable[list(UNIVERSE_SHOWN)]
    tables.table(
        shown,
        key=f"{key}:{snapshot_id}",
        formats={**PRICES, "disagreement": fmt.price},
        column_config={
            "rank": tables.column("Rank", 55),
            "question": tables.column("Market", 300),
            "outcome": tables.column("Outcome", 90),
            "market_id": tables.column("Market id", 110),
            **COLUMNS,
        },
    )
    tables.download_csv(items, f"market-snapshot-{snapshot_id}-prices", label="Download CSV")
