"""Markets: search, filter and sort the markets we synced, open a frozen market snapshot, and
follow one market — its price path as we recorded it, every agent's position and trade, its
resolution and Brier rows. Questions are untrusted text: shown as text, never rendered."""

from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.stats.calibration import family_names
from arena.analytics.views.decisions import snapshot_info, snapshot_markets
from arena.analytics.views.markets import (
    DEFAULT_LIMIT,
    ORDERS,
    categories,
    market_brier,
    market_detail,
    market_positions,
    market_trades,
    markets,
    price_path,
)
from arena.dashboard import fmt, links, notices, provenance, reads, tables
from arena.dashboard.charts import markets as market_charts
from arena.storage.models import MARKET_STATUSES, MARKET_TYPES

NO_MARKETS = (
    "No market yet: run `arena sync-markets` (the scheduler does every 5 minutes) or `make demo`."
)
TIME = "YYYY-MM-DD HH:mm"


# The list's columns as a person reads them: question first and prices right after it, so
# both are in view at 1440 px; the id (the link's stable key) last.
LIST_COLUMNS = {
    "question": tables.column("Market", 380),
    "price_text": tables.column("Prices (last sync)", 200),
    "status": tables.column("Status", 75),
    "end_date": tables.column("Closes", 95, help="End date (UTC)"),
    "volume": tables.column("Volume", 115, alignment="right"),
    "agents": tables.column("Agents", 60, help="Agents that held it", alignment="right"),
    "event": tables.column("Event (when not the question)", 260),
    "category": tables.column("Category", 90),
    "market_type": tables.column("Type", 65),
    "resolution_outcome": tables.column("Resolved as", 120),
    "polymarket_url": st.column_config.LinkColumn(
        "Polymarket",
        width=95,
        display_text="Open ↗",
        help="The market's event page on polymarket.com (none for a simulated market)",
    ),
    "market_id": tables.column("Id", 80),
}
ORDER_CAPTIONS = {
    "held": "most held first, then by volume",
    "volume": "by volume, largest first",
    "closing": "by close date, soonest first",
    "closing-last": "by close date, latest first",
    "newest": "newest first (by when we first synced them)",
}
LIST_FORMATS: dict[str, Any] = {"volume": fmt.money, "end_date": fmt.day}


def shown_markets(found: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The list as shown, and the formats left for the table: prices as text, the event title
    only where it says more than the question, gaps as "—" (the link column keeps its gaps:
    no link). The CSV keeps the read model's raw columns."""
    event = found["event_title"].astype("object")
    same = event.isna() | (event.str.strip() == found["question"].str.strip())
    shown = pd.DataFrame(
        {
            "question": found["question"].astype("object"),
            "price_text": [
                fmt.outcome_prices(o, p)
                for o, p in zip(found["outcomes"], found["prices"], strict=True)
            ],
            "status": found["status"].astype("object"),
            "end_date": found["end_date"],
            "volume": found["volume"],
            "agents": found["agents"],
            "event": event.where(~same, fmt.DASH),
            "category": found["category"],
            "market_type": found["market_type"].astype("object"),
            "resolution_outcome": found["resolution_outcome"],
        }
    )
    shown, formats = fmt.readable(shown, LIST_FORMATS)
    links = found["polymarket_url"].astype("object")
    return shown.assign(
        polymarket_url=links.where(links.notna(), ""),
        market_id=found["market_id"].astype("object"),
    ), formats


def shown_snapshot(frozen: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A frozen universe as shown: its prices as the agents saw them, as text."""
    shown = pd.DataFrame(
        {
            "rank": frozen["rank"],
            "question": frozen["question"].astype("object"),
            "price_text": [
                fmt.outcome_prices(o, p)
                for o, p in zip(frozen["outcomes"], frozen["prices"], strict=True)
            ],
            "market_type": frozen["market_type"].astype("object"),
            "volume": frozen["volume"],
            "end_date": frozen["end_date"],
            "market_id": frozen["market_id"].astype("object"),
        }
    )
    return fmt.readable(shown, LIST_FORMATS)


st.title("Markets")
# A market link is checked first, so a link naming nothing warns at the top of the page.
market_id = links.get_link("market")
detail: pd.DataFrame = reads.read(market_detail, market_id) if market_id else pd.DataFrame()
if market_id is not None and detail.empty:
    links.names_nothing("market", "market", market_id)

snapshot_id = links.link_int("snapshot")
if snapshot_id is None and links.get_link("snapshot") is not None:
    links.names_nothing("market snapshot", "snapshot", str(links.get_link("snapshot")))
if snapshot_id is not None:
    info = reads.read(snapshot_info, snapshot_id)
    if info is None:
        links.names_nothing("market snapshot", "snapshot", str(snapshot_id))
    else:
        st.subheader(f"Market snapshot #{snapshot_id}")
        st.caption(
            f"The frozen universe a decision run showed every agent, taken "
            f"{info['taken_at']:%Y-%m-%d %H:%M} UTC ({info['market_count']} markets ranked by "
            "volume, then held markets outside it). Prices are exactly as shown and executed. "
            "Select a row to open the market."
        )
        frozen = reads.read(snapshot_markets, snapshot_id)
        shown, formats = shown_snapshot(frozen)
        tables.pick_link(
            shown,
            key=f"snapshot-table:{snapshot_id}",
            link="market",
            column="market_id",
            formats=formats,
            column_config={
                "rank": tables.column("Rank", 55),
                **{k: LIST_COLUMNS[k] for k in ("question", "market_type", "end_date", "volume")},
                "price_text": tables.column("Prices as shown", 200),
                "market_id": LIST_COLUMNS["market_id"],
            },
        )
        tables.download_csv(frozen, f"market-snapshot-{snapshot_id}")
        with st.expander("Where each price came from", expanded=False):
            provenance.universe_prices(snapshot_id, key="snapshot-prices")
    if st.button("Back to all markets", key="clear-snapshot"):
        links.set_link("snapshot", None)
        st.rerun()
    st.divider()

st.subheader("Find a market")
top = st.columns([2, 1, 1, 1, 1])
search = links.text_link("Search question, event or id", "search", container=top[0])
status = links.select_link("Status", "mstatus", list(MARKET_STATUSES), container=top[1])
category = links.select_link("Category", "category", reads.read(categories), container=top[2])
market_type = links.select_link("Type", "mtype", list(MARKET_TYPES), container=top[3])
held_choice = links.select_link("Held by an agent", "held", ["yes", "no"], container=top[4])
held = None if held_choice is None else held_choice == "yes"
order = links.choice_link(
    "Sort by", "sort", list(ORDERS), default="held", format_func=lambda o: ORDERS.get(o, o)
)

found: pd.DataFrame = reads.read(
    markets,
    search=search or None,
    status=status,
    category=category,
    market_type=market_type,
    held=held,
    order=order,
)
if found.empty:
    notices.empty(
        NO_MARKETS
        if not (search or status or category or market_type or held_choice)
        else "No market matches: clear the search or set a filter back to All."
    )
else:
    st.caption(
        notices.listed(len(found), DEFAULT_LIMIT, "market(s)", ORDER_CAPTIONS[order])
        + " Select a row to open one."
    )
    shown, formats = shown_markets(found)
    linked = bool(found["polymarket_url"].notna().any())
    tables.pick_link(
        shown,
        key=f"market-table:{search}:{status}:{category}:{market_type}:{held_choice}:{order}",
        link="market",
        column="market_id",
        formats=formats,
        # Simulated markets have no Polymarket page: no column of empty links for them.
        column_config=LIST_COLUMNS if linked else {**LIST_COLUMNS, "polymarket_url": None},
    )
    if not linked:
        st.caption(
            "These markets are simulated (`arena demo`): none has a Polymarket page."
            if (found["source"] == "simulated").all()
            else "No Polymarket link: none of these markets has a slug stored."
        )
    tables.download_csv(found, "markets")

# A row picked (or cleared) in this run has just rewritten the link: follow it now.
picked = links.get_link("market")
if picked != market_id:
    market_id = picked
    detail = reads.read(market_detail, market_id) if market_id else pd.DataFrame()


# The market's own tables: number formats and (label, width) of each column, in order.
POSITION_FORMATS: dict[str, Any] = {
    "shares": "{:,.2f}",
    "avg_entry_price": fmt.price,
    "stake": fmt.money,
    "cost_basis": fmt.money,
    "mark_price": fmt.price,
    "current_value": fmt.money,
    "unrealized_pnl": fmt.signed_money,
    "realized_pnl": fmt.signed_money,
}
POSITION_LABELS = {
    "family": ("Family", 170),
    "position_id": ("Position", 75),
    "cohort_number": ("Cohort", 60),
    "outcome": ("Outcome", 80),
    "status": ("Status", 70),
    "shares": ("Shares", 100),
    "avg_entry_price": ("Entry price", 85),
    "stake": ("Stake", 95),
    "cost_basis": ("Open cost", 95),
    "mark_price": ("Mark price", 85),
    "current_value": ("Value", 95),
    "unrealized_pnl": ("Unrealized P/L", 110),
    "realized_pnl": ("Realized P/L", 100),
    "opened_at": ("Opened (UTC)", 125),
    "closed_at": ("Closed (UTC)", 125),
}
TRADE_FORMATS: dict[str, Any] = {
    "amount": fmt.money,
    "price": fmt.price,
    "shares": "{:,.2f}",
    "implied_confidence": fmt.prob,
    "realized_pnl": fmt.signed_money,
    "cash_before": fmt.money,
}
TRADE_LABELS = {
    "family": ("Family", 170),
    "trade_id": ("Trade", 60),
    "created_at": ("At (UTC)", 125),
    "cohort_number": ("Cohort", 60),
    "trade_type": ("Type", 65),
    "amount": ("Amount", 95),
    "price": ("Price", 60),
    "shares": ("Shares", 100),
    "implied_confidence": ("Implied confidence", 130),
    "realized_pnl": ("Realized P/L", 100),
    "cash_before": ("Cash before", 100),
    "decision_id": ("Decision", 75),
    "position_id": ("Position", 75),
}
BRIER_FORMATS: dict[str, Any] = {
    "forecast_probability": fmt.prob,
    "market_price": fmt.price,
    "brier_score": fmt.prob,
    "market_brier": fmt.prob,
}
BRIER_LABELS = {
    "family": ("Family", 170),
    "trade_id": ("Trade", 60),
    "cohort_number": ("Cohort", 60),
    "forecast_probability": ("Implied confidence", 130),
    "market_price": ("Price paid", 80),
    "actual_outcome": ("Won (1) / lost (0)", 130),
    "brier_score": ("Brier", 70),
    "market_brier": ("Market's Brier", 110),
    "created_at": ("Scored (UTC)", 125),
}


def show_market(market_id: str, detail: pd.DataFrame) -> None:
    """One market: its question and prices, price path, positions, trades and Brier rows."""
    market = detail.iloc[0]
    names: dict[str, str] = reads.read(family_names)
    st.divider()
    st.header(f"Market {fmt.escaped(market['market_id'])}")
    show_facts(market)
    tables.download_csv(detail, f"market-{market_id}", label="Download market CSV")
    show_price_path(market_id)
    show_positions(market_id, names)
    show_trades(market_id, names)
    show_brier(market_id, market, names)


def show_facts(market: pd.Series) -> None:
    """The question, its prices and link, then status, type, category and dates."""
    with st.container(border=True):
        st.text(str(market["question"]))
        if not pd.isna(market["event_title"]) and market["event_title"] != market["question"]:
            st.caption("Event")
            st.text(str(market["event_title"]))
        st.text(f"Prices: {fmt.outcome_prices(market['outcomes'], market['prices'], most=20)}")
        if not pd.isna(market["polymarket_url"]):
            st.link_button(
                "Open on Polymarket", str(market["polymarket_url"]), icon=":material/open_in_new:"
            )
    cols = st.columns(5)
    # Gamma's words, shown in elements that render Markdown: escaped.
    cols[0].metric("Status", fmt.escaped(market["status"]))
    cols[1].metric("Type", fmt.escaped(market["market_type"]))
    cols[2].metric("Category", fmt.escaped(market["category"]))
    cols[3].metric("Agents that held it", fmt.count(market["agents"]))
    cols[4].metric("Resolved as", fmt.escaped(market["resolution_outcome"]))
    closes = "—" if pd.isna(market["end_date"]) else f"{market['end_date']:%Y-%m-%d %H:%M} UTC"
    st.caption(
        f"Closes {closes} · volume {fmt.money(market['volume'])} · last sync "
        f"{market['updated_at']:%Y-%m-%d %H:%M} UTC · UMA status "
        f"{fmt.escaped(market['uma_resolution_status'])} · source {fmt.escaped(market['source'])}"
    )


def show_price_path(market_id: str) -> None:
    """The prices agents saw at each decision run, plus the latest sync."""
    st.subheader("Price path (our records)")
    path: pd.DataFrame = reads.read(price_path, market_id)
    if path.empty:
        notices.empty("No recorded price: the market was never in a decision snapshot.")
        return
    tables.chart(market_charts.price_path, path)
    st.caption(
        "Points are the frozen snapshots shown to agents at each decision run, plus the latest "
        "synced price; finer price history is not stored."
    )
    tables.download_csv(path, f"market-{market_id}-prices", label="Download prices CSV")


def detail_table(
    frame: pd.DataFrame,
    key: str,
    names: dict[str, str],
    formats: dict[str, Any],
    labels: dict[str, tuple[str, int]],
) -> None:
    """One of the market's own tables: the family's display name first (in place of its id),
    formatted, gaps as "—"."""
    rest = [c for c in frame.columns if c not in ("family_id", "question", "market_id")]
    named = frame.assign(family=[names.get(f, f) for f in frame["family_id"]])[["family", *rest]]
    shown, styled = fmt.readable(named, formats)
    config = {
        name: tables.column(*spec, alignment="right" if name in formats else None)
        for name, spec in labels.items()
    }
    if "side" in shown.columns:
        config["side"] = tables.column("Side", tables.fitted(shown["side"]))
    tables.table(shown, key=key, formats=styled, column_config=config)


def show_positions(market_id: str, names: dict[str, str]) -> None:
    """Every position any agent held in the market, and their CSV."""
    st.subheader("Positions")
    held_rows: pd.DataFrame = reads.read(market_positions, market_id)
    if held_rows.empty:
        st.text("No agent has held this market.")
        return
    detail_table(held_rows, "market-positions", names, POSITION_FORMATS, POSITION_LABELS)
    tables.download_csv(held_rows, f"market-{market_id}-positions", label="Download positions CSV")


def show_trades(market_id: str, names: dict[str, str]) -> None:
    """Every trade in the market, and their CSV."""
    st.subheader("Trades")
    market_ledger: pd.DataFrame = reads.read(market_trades, market_id)
    if market_ledger.empty:
        st.text("No trade in this market.")
        return
    detail_table(market_ledger, "market-trades", names, TRADE_FORMATS, TRADE_LABELS)
    tables.download_csv(market_ledger, f"market-{market_id}-trades", label="Download trades CSV")


def show_brier(market_id: str, market: pd.Series, names: dict[str, str]) -> None:
    """How the market resolved and the Brier row of every BUY in it, and their CSV."""
    st.subheader("Resolution and Brier rows")
    if not pd.isna(market["resolved_at"]):
        st.text(
            f"Resolved {market['resolved_at']:%Y-%m-%d %H:%M} UTC: "
            f"{fmt.text(market['resolution_outcome'])}"
        )
    scores: pd.DataFrame = reads.read(market_brier, market_id)
    if scores.empty:
        st.text("No Brier row: the market has not resolved with a winner, or nobody bought in it.")
        return
    detail_table(scores, "market-brier", names, BRIER_FORMATS, BRIER_LABELS)
    tables.download_csv(scores, f"market-{market_id}-brier", label="Download Brier CSV")


if market_id is not None:
    show_market(market_id, detail)
