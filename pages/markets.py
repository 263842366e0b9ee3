"""Markets: search and filter the markets we synced, open a frozen market snapshot, and follow
one market — its price path as we recorded it, every agent's position and trade, its
resolution and Brier rows. Questions are untrusted text: shown as text, never rendered."""

import pandas as pd
import streamlit as st

from arena.analytics.decisions import snapshot_info, snapshot_markets
from arena.analytics.markets import (
    DEFAULT_LIMIT,
    categories,
    market_brier,
    market_detail,
    market_positions,
    market_trades,
    markets,
    price_path,
)
from arena.dashboard import charts, ui
from arena.storage.models import MARKET_STATUSES, MARKET_TYPES

ui.entry_guard()

NO_MARKETS = (
    "No market yet: run `arena sync-markets` (the scheduler does every 5 minutes) or `make demo`."
)


st.title("Markets")

snapshot_id = ui.link_int("snapshot")
if snapshot_id is not None:
    info = ui.read(snapshot_info, snapshot_id)
    if info is None:
        ui.empty(f"There is no market snapshot {snapshot_id}.")
    else:
        st.subheader(f"Market snapshot #{snapshot_id}")
        st.caption(
            f"The frozen universe a decision run showed every agent, taken "
            f"{info['taken_at']:%Y-%m-%d %H:%M} UTC ({info['market_count']} markets ranked by "
            "volume, then held markets outside it). Prices are exactly as shown and executed. "
            "Select a row to open the market."
        )
        shown = ui.read(snapshot_markets, snapshot_id)
        ui.pick_link(shown, key=f"snapshot-table:{snapshot_id}", link="market", column="market_id")
        ui.download_csv(shown, f"market-snapshot-{snapshot_id}")
    if st.button("Back to all markets", key="clear-snapshot"):
        ui.set_link("snapshot", None)
        st.rerun()
    st.divider()

st.subheader("Find a market")
top = st.columns([2, 1, 1, 1, 1])
search = ui.text_link("Search question, event or id", "search", container=top[0])
status = ui.select_link("Status", "mstatus", list(MARKET_STATUSES), container=top[1])
category = ui.select_link("Category", "category", ui.read(categories), container=top[2])
market_type = ui.select_link("Type", "mtype", list(MARKET_TYPES), container=top[3])
held_choice = ui.select_link("Held by an agent", "held", ["yes", "no"], container=top[4])
held = None if held_choice is None else held_choice == "yes"

found: pd.DataFrame = ui.read(
    markets,
    search=search or None,
    status=status,
    category=category,
    market_type=market_type,
    held=held,
)
if found.empty:
    ui.empty(
        NO_MARKETS
        if not (search or status or category or market_type or held_choice)
        else "No market matches: clear the search or set a filter back to All."
    )
else:
    st.caption(
        ui.listed(len(found), DEFAULT_LIMIT, "market(s)", "held ones first, then by volume")
        + " Select a row to open one."
    )
    ui.pick_link(
        found,
        key=f"market-table:{search}:{status}:{category}:{market_type}:{held_choice}",
        link="market",
        column="market_id",
        column_config={"volume": st.column_config.NumberColumn("volume", format="dollar")},
    )
    ui.download_csv(found, "markets")

market_id = ui.get_link("market")
if market_id is None:
    st.stop()

detail: pd.DataFrame = ui.read(market_detail, market_id)
if detail.empty:
    # The id came from the URL: not echoed into Markdown.
    ui.empty("No market in this database has the id in the link: pick one from the list.")
    st.stop()
market = detail.iloc[0]
st.divider()
st.header(f"Market {market['market_id']}")
with st.container(border=True):
    st.text(str(market["question"]))
    if not pd.isna(market["event_title"]):
        st.text(f"Event: {market['event_title']}")
cols = st.columns(5)
cols[0].metric("Status", str(market["status"]))
cols[1].metric("Type", str(market["market_type"]))
cols[2].metric("Category", "—" if pd.isna(market["category"]) else str(market["category"]))
cols[3].metric("Agents that held it", int(market["agents"]))
cols[4].metric(
    "Resolution",
    "—" if pd.isna(market["resolution_outcome"]) else str(market["resolution_outcome"]),
)
st.text(
    f"Outcomes {market['outcomes']}  prices {market['prices']}  (last sync "
    f"{market['updated_at']:%Y-%m-%d %H:%M} UTC)   UMA status: "
    f"{'—' if pd.isna(market['uma_resolution_status']) else market['uma_resolution_status']}"
    f"   source: {market['source']}"
)
ui.download_csv(detail, f"market-{market_id}", label="Download market CSV")

st.subheader("Price path (our records)")
path: pd.DataFrame = ui.read(price_path, market_id)
if path.empty:
    ui.empty("No recorded price: the market was never in a decision snapshot.")
else:
    ui.chart(charts.price_path(path))
    st.caption(
        "Points are the frozen snapshots shown to agents at each decision run, plus the latest "
        "synced price; finer price history is not stored."
    )
    ui.download_csv(path, f"market-{market_id}-prices", label="Download prices CSV")

st.subheader("Positions")
held_rows: pd.DataFrame = ui.read(market_positions, market_id)
if held_rows.empty:
    st.text("No agent has held this market.")
else:
    held_rows = held_rows.drop(columns=["question", "market_id"])
    ui.table(held_rows, key="market-positions")
    ui.download_csv(held_rows, f"market-{market_id}-positions", label="Download positions CSV")

st.subheader("Trades")
market_ledger: pd.DataFrame = ui.read(market_trades, market_id)
if market_ledger.empty:
    st.text("No trade in this market.")
else:
    market_ledger = market_ledger.drop(columns=["question", "market_id"])
    ui.table(market_ledger, key="market-trades")
    ui.download_csv(market_ledger, f"market-{market_id}-trades", label="Download trades CSV")

st.subheader("Resolution and Brier rows")
if not pd.isna(market["resolved_at"]):
    st.text(f"Resolved {market['resolved_at']:%Y-%m-%d %H:%M} UTC: {market['resolution_outcome']}")
scores: pd.DataFrame = ui.read(market_brier, market_id)
if scores.empty:
    st.text("No Brier row: the market has not resolved with a winner, or nobody bought in it.")
else:
    ui.table(scores, key="market-brier")
    ui.download_csv(scores, f"market-{market_id}-brier", label="Download Brier CSV")
