"""Overview: what the database holds, table by table, with the same table as CSV."""

import pandas as pd
import streamlit as st

from arena import analytics
from arena.analytics.stored import current_or_live
from arena.dashboard import ui

ui.entry_guard()

NO_COHORT = "No cohort yet: run `arena start-cohort` or `make demo`."

st.title("Overview")
st.markdown(
    "Frontier language models paper-trade Polymarket prediction markets in weekly cohorts: "
    "each starts with the same virtual cash, decides once a week from the same frozen market "
    "snapshot, and is scored on profit and on the Brier score of its bets "
    f"([methodology v1]({ui.doc_link('methodology')})). "
    "This overview counts what the arena has recorded so far."
)

counts: pd.DataFrame
counts, stored = ui.read(current_or_live, "overview")
if analytics.row_count(counts, "cohorts") == 0:
    ui.empty(NO_COHORT)

st.subheader("Rows per table")
st.dataframe(counts, hide_index=True, width="content")
ui.stored_caption(stored)
ui.download_csv(counts, "overview")
