"""Overview: what the database holds, table by table (the hourly job's stored counts, or
counted live on request), with the same table as CSV."""

import pandas as pd
import streamlit as st

from arena.analytics.views.cohorts import cohort_numbers
from arena.analytics.views.database import table_label, table_meaning
from arena.dashboard import documents, fmt, notices, reads, tables

LABELS = {
    "label": st.column_config.TextColumn("Table", width="medium"),
    "rows": st.column_config.Column("Rows", width="small"),
    "meaning": st.column_config.TextColumn("One row is", width="large"),
}

st.title("Overview")
st.markdown(
    "Frontier language models paper-trade Polymarket prediction markets in weekly cohorts: "
    "each starts with the same virtual cash, decides once a week from the same frozen market "
    "snapshot, and is scored on profit and on the Brier score of its bets "
    f"([the methodology]({documents.doc_link('methodology')})). "
    "This overview counts what the arena has recorded so far."
)
if not reads.read(cohort_numbers):
    notices.empty(notices.NO_COHORT)  # the table counts below still show

st.subheader("Rows per table")
found = reads.stored_or_offer("overview", "table counts")
if found is None:
    st.stop()
counts: pd.DataFrame = found[0]
shown = pd.DataFrame(
    {
        "label": [table_label(t) for t in counts["table"]],
        "rows": counts["rows"],
        "meaning": [table_meaning(t) for t in counts["table"]],
    }
)
tables.table(shown, key="overview-counts", formats={"rows": fmt.count}, column_config=LABELS)
reads.stored_caption(found[1])
tables.download_csv(counts, "overview")
