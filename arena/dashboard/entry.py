"""Running a page: `run_page` runs each page for the dashboard entry; an unexpected exception
shows one line to the visitor and goes, with its traceback, to the server log
(`client.showErrorDetails` is "none" in .streamlit/config.toml for anything that escapes it).
`land_at_top` opens each newly chosen page at its top."""

import json
import logging
import re
from collections.abc import Callable
from typing import Any

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException, StopException

from arena.dashboard import fmt
from arena.dashboard.links import drop_unused_links, page_name

PAGE_FAILED = (
    "This page hit an unexpected error and could not be shown; it has been logged for the "
    "operator. Reload it, or open another page."
)


log = logging.getLogger(__name__)

# Streamlit keeps the main section's scroll when the sidebar switches pages, so a page would open
# as far down as the last one was read. This script scrolls it to the top; its text names the
# page, so it is mounted afresh (and runs) only when the page changes, never on a rerun of the
# same page (a widget click keeps the reader's place). A link to a heading (``#anchor``) keeps
# its place too. Inline (`st.html`), not in a frame: the page holds no iframe.
TOP_SCRIPT = """<script>
(() => {
  const page = %s;
  if (window.location.hash) return;
  for (const el of document.querySelectorAll(
    '[data-testid="stMain"], [data-testid="stAppViewContainer"]'
  )) el.scrollTop = 0;
  window.scrollTo(0, 0);
})();
</script>"""


def land_at_top(page: str) -> None:
    """Open page `page` (its url path) at its top when the reader came from another page."""
    key = json.dumps(re.sub(r"[^A-Za-z0-9_-]", "", page))
    st.sidebar.html(TOP_SCRIPT % key, unsafe_allow_javascript=True)


def first_line(exc: SQLAlchemyError) -> str:
    """The driver's first message line (no SQL, no parameters), or the exception's type."""
    lines = str(getattr(exc, "orig", None) or "").strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def run_page(run: Callable[[], Any]) -> None:
    """Run one page (`run`, the page's `run` method) the way the entry does for every page.

    Streamlit's control flow (`st.stop`, `st.rerun`, `st.switch_page`) passes through; a page
    that ran to its end or stopped early drops the link keys it did not read. Any other
    exception is the page's bug: the visitor sees one line (`PAGE_FAILED`), never a traceback
    with the server's file paths, and the traceback goes to the server log. A database error
    keeps its own one line (the database may be migrating).
    """
    try:
        run()
    except StopException:
        drop_unused_links()  # a page that stopped early (an empty state, a bad link)
        raise
    except ScriptControlException:
        raise  # st.rerun / st.switch_page: that run had not read every key yet
    except SQLAlchemyError as exc:
        log.exception("dashboard page %s could not read the database", _page_name())
        st.error(
            f"Cannot read the database ({fmt.escaped(first_line(exc))}) — it may be migrating; "
            "retry in a moment, or run `arena init-db`."
        )
    except Exception:
        log.exception("dashboard page %s failed", _page_name())
        st.error(PAGE_FAILED, icon=":material/error:")
    else:
        drop_unused_links()


def _page_name() -> str:
    return page_name() or "(home)"
