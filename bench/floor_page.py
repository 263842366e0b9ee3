"""The floor of bench/browser.py: a bare Streamlit app, a title and a 10-row table per page.

Served by `streamlit run` exactly as the dashboard is (same options, same Chromium, same run),
it measures what Streamlit itself costs to load a page and to change page by the sidebar, so
each dashboard page's time can be read as a multiple of it. Two pages in `st.navigation` (as
the dashboard has), so a sidebar click can be timed too; no database, no read, no chart.
"""

import pandas as pd
import streamlit as st

FLOOR = "Floor"
OTHER = "Other"


def _bare(title: str) -> None:
    st.title(title)
    st.dataframe(pd.DataFrame({"row": range(10), "value": [i * 1.5 for i in range(10)]}))


def floor() -> None:
    """The timed page."""
    _bare(FLOOR)


def other() -> None:
    """The page the in-session visit leaves to and comes back from."""
    _bare(OTHER)


st.navigation(
    [st.Page(floor, title=FLOOR, default=True), st.Page(other, title=OTHER, url_path="other")]
).run()
