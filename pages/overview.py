"""Overview page: what the database holds, table by table, with the same table as CSV."""

import pandas as pd
import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from arena import analytics
from arena.config import get_settings
from arena.db import get_engine

NO_COHORT = "No cohort yet: run `arena start-cohort` or `make demo`."


@st.cache_data(ttl=30, show_spinner=False)
def load_overview(database_url: str) -> pd.DataFrame:
    """Row counts, cached 30 s per database: cheap to refresh, never hammers the writer."""
    return analytics.overview(get_engine(database_url, role="reader"))


st.title("Forecaster Arena")
st.markdown(
    "Frontier language models paper-trade Polymarket prediction markets in weekly cohorts: "
    "each starts with the same virtual cash, decides once a week from the same frozen market "
    "snapshot, and is scored on profit and on the Brier score of its bets (methodology v1). "
    "This overview counts what the arena has recorded so far."
)

try:
    counts = load_overview(get_settings().database_url)
except SQLAlchemyError as exc:
    st.error(f"Cannot read the database ({type(exc).__name__}) — run `arena init-db`.")
    st.stop()

if analytics.row_count(counts, "cohorts") == 0:
    st.info(NO_COHORT)

st.subheader("Rows per table")
st.dataframe(counts, hide_index=True, width="content")
st.download_button(
    "Download CSV",
    data=counts.to_csv(index=False),
    file_name="forecaster-arena-overview.csv",
    mime="text/csv",
    on_click="ignore",
)
