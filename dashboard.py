"""Dashboard entry (`streamlit run dashboard.py`, `arena serve`): navigation and sidebar only.

It opens the configured database READ-ONLY and checks it has a schema before any page runs,
so every page can assume a migrated database and a fresh checkout shows a clear next step
instead of a traceback. Pages live in app_pages/ (not pages/, which would start Streamlit's legacy
multipage mode) and read through `arena.analytics` (cached a few
seconds by `arena.dashboard.reads.read`); deep-link query parameters are restored before each page
runs.
"""

import streamlit as st
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from arena.analytics.query.scope import extended_cohorts, extension_names
from arena.analytics.views.database import backend_name, schema_revision, sqlite_file_missing
from arena.analytics.views.lineup_order import family_lineup
from arena.analytics.views.protocol import number_ranges
from arena.config import METHODOLOGY_VERSION, get_settings
from arena.core.errors import ArenaError
from arena.dashboard import entry, fmt, links, palette, reads
from arena.storage.db import get_engine

TITLE = "Forecaster Arena"
NO_DATABASE = "No database yet: run `arena init-db` or `make demo`."
# The page that shows each protocol extension's own figures (the sidebar points to it).
EXTENSION_PAGES = {
    "stated_probability": "Stated probability",
    "replicates": "Replicates",
    "book_execution": "Execution",
}

PAGES = {
    "": [st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True)],
    "Results": [
        st.Page("app_pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:"),
        st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page("app_pages/family.py", title="Family", icon=":material/groups:"),
        st.Page("app_pages/agent.py", title="Agent", icon=":material/smart_toy:"),
        st.Page("app_pages/cohorts.py", title="Cohorts", icon=":material/date_range:"),
        st.Page("app_pages/calibration.py", title="Calibration", icon=":material/target:"),
        st.Page("app_pages/stated.py", title="Stated probability", icon=":material/percent:"),
        st.Page("app_pages/replicates.py", title="Replicates", icon=":material/stacks:"),
        st.Page("app_pages/execution.py", title="Execution", icon=":material/swap_horiz:"),
        st.Page(
            "app_pages/detectability.py", title="When will we know?", icon=":material/hourglass:"
        ),
    ],
    "Evidence": [
        st.Page("app_pages/decisions.py", title="Decisions", icon=":material/receipt_long:"),
        st.Page("app_pages/markets.py", title="Markets", icon=":material/show_chart:"),
    ],
    "Data": [
        st.Page("app_pages/exports.py", title="Exports", icon=":material/download:"),
        st.Page("app_pages/overview.py", title="Overview", icon=":material/storage:"),
        st.Page("app_pages/operations.py", title="Operations", icon=":material/lock:"),
    ],
    "About": [
        st.Page("app_pages/methodology.py", title="Methodology", icon=":material/menu_book:"),
    ],
}


@st.cache_resource(show_spinner=False)
def reader_engine(database_url: str) -> Engine:
    """One read-only engine per database for the whole server, shared by all sessions."""
    return get_engine(database_url, role="reader")


def _stop_with(message: str, *, error: bool = False) -> None:
    """Show the title and one message in place of the page, then end this run."""
    st.title(TITLE)
    (st.error if error else st.info)(message)
    st.stop()


def main() -> None:
    """Configure the page, gate on a usable database, then run the selected page."""
    st.set_page_config(page_title=TITLE, layout="wide")
    page = st.navigation(PAGES, expanded=True)  # every page listed, none under "View more"

    try:
        settings = get_settings()
    except ArenaError as exc:
        _stop_with(f"Configuration problem: {fmt.escaped(exc.one_line())}", error=True)
        return
    url = settings.database_url

    st.sidebar.markdown(f"**{TITLE}**")
    # The backend only: the URL itself may carry a password.
    st.sidebar.caption(f"Database: {backend_name(url)}")
    # The version this deployment stamps on new cohorts (the selector picks what is shown).
    st.sidebar.caption(
        f"New cohorts: methodology {settings.methodology.version or METHODOLOGY_VERSION}"
    )

    if sqlite_file_missing(url):
        _stop_with(NO_DATABASE)
        return
    try:
        revision = schema_revision(reader_engine(url))
    except ArenaError as exc:
        _stop_with(f"Cannot open the database: {fmt.escaped(exc.one_line())}", error=True)
        return
    except SQLAlchemyError as exc:
        _stop_with(
            f"Cannot read the database ({fmt.escaped(entry.first_line(exc))}) — check "
            "ARENA_DATABASE_URL and that the database is reachable.",
            error=True,
        )
        return
    if revision is None:
        _stop_with(NO_DATABASE)
        return
    st.sidebar.caption(f"Schema revision {revision}")
    extended = reads.read(extended_cohorts)  # a v2 cohort is not extended: never named so
    if extended:  # never mixed into the v1 views silently (methodology §18)
        names = reads.read(extension_names)
        pages = [EXTENSION_PAGES[name] for name in names if name in EXTENSION_PAGES]
        st.sidebar.caption(
            f"Cohort{'s' if len(extended) > 1 else ''} {number_ranges(extended)} ran "
            f"protocol extensions ({', '.join(n.replace('_', ' ') for n in names)}): not stock "
            "v1, so left out of the plain v1 all-cohort figures; each protocol group's own "
            "pooled figures: the Methodology selector below"
            + (f" (see also {', '.join(pages)})." if pages else ".")
        )
    st.sidebar.caption(
        f"Read-only view, refreshed every {reads.CACHE_TTL_S} s. The address bar holds the "
        "current selection: copy it to share this view."
    )

    palette.use_lineup(reads.read(family_lineup))  # one colour per family on every chart
    entry.land_at_top(page.url_path)
    links.restore_links(page.url_path)
    entry.run_page(page.run)  # an unexpected error: one line here, the traceback in the log


main()
