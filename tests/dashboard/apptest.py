"""Running the dashboard in-process with Streamlit's AppTest, for tests that check what a
page's script writes (headings, widget values, warnings, tables) without a browser.

Why not Chromium for these: an AppTest run costs ~0.3-0.6 CPU-s, a Chromium page load ~2.3
CPU-s on two cores. What only a browser can show (rendering, links opened, scrolling,
downloads) stays in tests/e2e, one real-browser journey per page at least.
"""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from arena.dashboard import fmt
from tests.dashboard_caches import clear_dashboard_caches

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboard.py"


def ok(at: AppTest) -> AppTest:
    """The run raised nothing."""
    assert not at.exception, [e.value for e in at.exception]
    return at


def run_page(page: str | None = None, **params: Any) -> AppTest:
    """Run the dashboard (optionally switched to app_pages/`page`.py) with deep-link `params`."""
    at = AppTest.from_file(str(DASHBOARD), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = str(value)
    if page:
        # Before the first run AppTest finds the page by file name: the pages keep theirs.
        at.switch_page(f"app_pages/{page}.py")
    return at.run()


def read(markdown: str) -> str:
    """Markdown as a person reads it: `fmt.escaped`'s backslashes and word joiners gone."""
    return re.sub(r"\\(.)", r"\1", markdown).replace(fmt.WORD_JOINER, "")


def all_text(at: AppTest) -> str:
    """Every text-bearing element of the page (to prove what is NOT shown)."""
    parts: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "text", "code", "info"):
        parts += [str(getattr(element, "value", "")) for element in at.get(kind)]
    parts += [str(element.value) for element in at.sidebar.caption]
    return "\n".join(parts)


def widget(at: AppTest, kind: str, label: str) -> Any:
    """The first widget of `kind` (e.g. "selectbox") labelled `label`."""
    matches = [w for w in at.get(kind) if getattr(w, "label", None) == label]
    assert matches, f"no {kind} labelled {label!r}"
    return matches[0]


def element_kinds(at: AppTest) -> set[str]:
    """The element types on the page (e.g. "vega_lite_chart", which AppTest has no list of)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        for child in getattr(node, "children", {}).values():
            found.add(str(getattr(child, "type", "")))
            walk(child)

    walk(at._tree)
    return found


def headings(at: AppTest) -> list[str]:
    """The page's titles, headers and subheaders, in order, as read."""
    kinds = ("title", "header", "subheader")
    return [read(str(getattr(h, "value", ""))) for kind in kinds for h in at.get(kind)]


def use_database(monkeypatch: pytest.MonkeyPatch, url: str) -> Iterator[str]:
    """Point the in-process dashboard at `url` (no admin password) with no cache of another
    database; a generator for a fixture to yield from."""
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD", raising=False)
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    clear_dashboard_caches()
    yield url
    clear_dashboard_caches()
