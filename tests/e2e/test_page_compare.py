"""The Compare page in Chromium at 1440×900 with the sidebar open: a deep link opens the pair
it names, the whole table is on screen, too few shared events are said in words instead of an
interval, no cell shows None/nan/raw JSON, and the CSV keeps raw numbers and ids. What the
script writes without a browser (links naming no family, no pair yet, an extended cohort left
out) is checked in-process: tests/dashboard/test_compare_page.py.

"On screen" (see tests/e2e/test_page_leaderboard.py for the grid's accessible table): every
column is listed in the grid's visible region, the grid lies inside the viewport and its
scroller has nothing to scroll horizontally.
"""

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from arena.analytics.stats.paired import COMPARISON_COLUMNS
from tests.e2e.conftest import settle
from tests.e2e.shots import shoot

WIDTH, HEIGHT = 1440, 900
COLUMNS = [
    "Measure",
    "A − B [95% CI]",
    "p-value",
    "Shared markets",
    "Events",
    "Bets (A / B)",
    "Reading",
]
BAD_CELL = re.compile(r"^(None|nan|NaN|NaT|<NA>|null)$|^\[\"|^\{\"")
SCROLL = """g => { const s = g.querySelector('.dvn-scroller');
    return s ? s.scrollWidth - s.clientWidth : null }"""


def _open(page: Page, url: str) -> None:
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.goto(url)
    expect(page.get_by_role("heading", name="Compare", exact=True)).to_be_visible()
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_a_deep_link_opens_the_pair_and_says_what_it_rests_on(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    _open(page, f"{streamlit_server}/compare?family=baseline-favorite&versus=llm-a")

    expect(page.get_by_role("combobox", name="Family")).to_have_value("Baseline: favorite")
    expect(page.get_by_role("combobox", name="Versus")).to_have_value("Model A")
    expect(page.get_by_role("heading", name="Baseline: favorite − Model A")).to_be_visible()
    grid = page.get_by_test_id("stDataFrame").first
    expect(grid.locator("th[role=columnheader]").first).to_be_attached()
    headers = [h.strip() for h in grid.locator("th[role=columnheader]").all_text_contents()]
    assert headers == COLUMNS
    box = grid.bounding_box()
    assert box is not None and box["x"] + box["width"] <= WIDTH
    assert box["y"] + box["height"] <= HEIGHT
    assert grid.evaluate(SCROLL) == 0  # nothing hidden to the right
    cells = [c.strip() for c in grid.locator("td[role=gridcell]").all_text_contents()]
    # they share 4 markets in 4 events (P/L) and 2 with resolved bets: a point, no interval
    assert cells[:7] == [
        "Return (P/L per shared market)",
        "+$235.91",
        "—",
        "4",
        "4",
        "4 / 6",
        "too few events (4; needs 6)",
    ]
    assert cells[7:] == [
        "Brier (per shared market)",
        "+0.909",
        "—",
        "2",
        "2",
        "2 / 3",
        "too few events (2; needs 6)",
    ]
    assert not [c for c in cells if BAD_CELL.search(c)]
    expect(page.get_by_text(re.compile(r"^They share at most 4 events"))).to_be_visible()
    shoot(page, screenshots_dir, "page-compare")

    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV", exact=True).click()

    lines = Path(info.value.path()).read_text(encoding="utf-8").splitlines()
    assert (
        info.value.suggested_filename == "forecaster-arena-compare-baseline-favorite-llm-a-all.csv"
    )
    assert lines[0] == ",".join(COMPARISON_COLUMNS)
    pnl = dict(zip(lines[0].split(","), lines[1].split(","), strict=True))
    assert (pnl["family_a"], pnl["family_b"], pnl["metric"]) == (
        "baseline-favorite",
        "llm-a",
        "pnl",
    )
    assert float(pnl["mean_difference"]) == pytest.approx(235.908, abs=1e-3)
    assert pnl["enough"] == "false" and pnl["better"] == ""
