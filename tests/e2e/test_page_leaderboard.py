"""The Leaderboard in Chromium at 1440×900 with the sidebar open: its key statistics are on
screen without scrolling, the family stays pinned, no cell shows None/nan/raw JSON, the CSV keeps
raw numbers and ids, a cohort's deep link works, and without stored analyses it asks before
computing; below the table, the Cost section (chart, table, CSV) reads as cleanly. A bad cohort
link (script output only) is checked in-process: tests/dashboard/test_leaderboard_page.py.

How "on screen" is checked: Streamlit's grid (glide-data-grid) paints on a canvas, but inside
the canvas it keeps an accessible table of exactly the columns in its visible region (a column
counts when any part of it shows). So the key columns are in view without scrolling when the
grid itself lies inside the viewport, its header row starts with the seven key columns and a
further column is listed after them: that one begins inside the grid, so the seven end within it.
"""

import re
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from arena.analytics.stats.cost import COST_COLUMNS
from tests.e2e.conftest import settle
from tests.e2e.shots import shoot

WIDTH, HEIGHT = 1440, 900
KEY_COLUMNS = [
    "Family",
    "Return [95% CI]",
    "Brier [95% CI]",
    "Rank [95% CI]",
    "P(rank #1)",
    "Edge over market ↑",
    "Random null",
]
# The CSV's header: the earlier columns in their order, then skill vs market and the null.
CSV_HEADER = (
    "rank,display_name,family_id,kind,cohorts,total_pnl,return_pct,return_ci_low,"
    "return_ci_high,p_rank_1,rank_low,rank_high,brier,brier_ci_low,brier_ci_high,"
    "resolved_bets,win_rate,decisions,fallback_holds,api_cost_usd,too_early,"
    "skill_vs_market,skill_vs_market_ci_low,skill_vs_market_ci_high,random_null_percentile,"
    "agent_replicates,replicate_return_low,replicate_return_high,execution_not_robust,"
    # how much of the return is realised, last
    "stakes,resolved_stakes,marked_stakes,resolved_share,marked_share,positions,"
    "resolved_positions,marked_positions,"
    # P(rank #1) among the model families, and the edge over the market (−skill), last
    "p_rank_1_contenders,edge_over_market,edge_over_market_ci_low,edge_over_market_ci_high"
)
COST_HEADERS = [
    "Family",
    "API spend",
    "Cost / decision",
    "Cost / resolved bet",
    "Return per $ [95% CI]",
    "Edge per $ ↑ [95% CI]",
    "Pareto front",
]
BAD_CELL = re.compile(r"^(None|nan|NaN|NaT|<NA>|null)$|^\[\"|^\{\"")


def _open(page: Page, url: str) -> None:
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.goto(url)
    # A fresh server's first visit imports the page's modules: seconds on a busy machine.
    expect(page.get_by_role("heading", name="Leaderboard", exact=True)).to_be_visible(
        timeout=30_000
    )
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def _shoot_section(page: Page, section: Locator, path: Path) -> None:
    """A screenshot of one section at 1440 px wide, the viewport grown to the whole page so
    that no part of it sits under Streamlit's fixed header."""
    height = page.evaluate(
        "() => document.querySelector('[data-testid=stMain]')?.scrollHeight ?? 900"
    )
    page.set_viewport_size({"width": WIDTH, "height": max(HEIGHT, min(int(height) + 40, 6000))})
    page.wait_for_timeout(500)
    section.screenshot(path=str(path))
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})


def _grid(page: Page) -> Locator:
    grid = page.get_by_test_id("stDataFrame").first
    expect(grid).to_be_visible()
    expect(grid.locator("th[role=columnheader]").first).to_be_attached()
    return grid


def _headers(grid: Locator) -> list[str]:
    return [h.strip() for h in grid.locator("th[role=columnheader]").all_text_contents()]


def _cells(grid: Locator) -> list[str]:
    return [c.strip() for c in grid.locator("td[role=gridcell]").all_text_contents()]


def _number(cell: str) -> float | None:
    """A cell's raw number, or None for text."""
    try:
        return float(cell)
    except ValueError:
        return None


def test_key_columns_on_screen_family_pinned_the_csv_and_the_cost_section(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    _open(page, f"{streamlit_server}/leaderboard")
    expect(page.get_by_test_id("stSidebar")).to_be_visible()
    # The stored frame of the hourly job is shown: no bootstrap ran on this page load.
    expect(page.get_by_text(re.compile(r"by the hourly analyses job"))).to_be_visible()
    grid = _grid(page)

    headers = _headers(grid)
    box, sidebar = grid.bounding_box(), page.get_by_test_id("stSidebar").bounding_box()
    assert box is not None and sidebar is not None
    assert headers[: len(KEY_COLUMNS)] == KEY_COLUMNS, headers
    assert len(headers) > len(KEY_COLUMNS), headers  # the next column starts on screen
    assert sidebar["x"] + sidebar["width"] <= box["x"]  # the sidebar is open beside it
    assert box["x"] + box["width"] <= WIDTH and box["y"] + box["height"] <= HEIGHT
    cells = _cells(grid)
    assert "Model A" in cells and "Oracle (simulation only)" in cells
    assert "+43.3% [+1.0, +95.1]" in cells  # the oracle's return with its interval
    assert "—" in cells  # a family without resolved bets has no Brier
    assert not [c for c in cells if BAD_CELL.search(c)], cells
    shoot(page, screenshots_dir, "page-leaderboard")

    # The CSV keeps raw numbers and ids.
    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV", exact=True).click()

    download = info.value
    assert download.suggested_filename == "forecaster-arena-leaderboard-all.csv"
    lines = Path(download.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == CSV_HEADER
    rows = [dict(zip(lines[0].split(","), line.split(","), strict=True)) for line in lines[1:]]
    assert len(rows) == 6  # one row per family, baselines included
    oracle = next(row for row in rows if row["family_id"] == "oracle")
    assert float(oracle["return_pct"]) == pytest.approx(43.3, abs=0.05)  # a raw number
    assert 0 <= float(oracle["random_null_percentile"]) <= 100
    cash = next(row for row in rows if row["family_id"] == "baseline-cash")
    assert cash["brier"] == "" and cash["skill_vs_market"] == ""  # missing: an empty cell

    grid_box = grid.bounding_box()
    assert grid_box is not None
    page.mouse.move(grid_box["x"] + grid_box["width"] / 2, grid_box["y"] + 80)
    page.mouse.wheel(3000, 0)

    expect(grid.locator("th[role=columnheader]", has_text="Cohorts")).to_be_attached()
    headers = _headers(grid)
    assert headers[0] == "Family" and "Return [95% CI]" not in headers, headers
    assert {"Fallback HOLDs", "API cost", "Note"} <= set(headers), headers
    assert not [c for c in _cells(grid) if BAD_CELL.search(c)]

    # Below the table: the Pareto chart and the cost table from the same stored frame, every
    # column on screen, no cell None/nan, the baselines $0 references, a CSV of raw numbers.
    section = page.locator(".st-key-cost")
    section.scroll_into_view_if_needed()
    expect(section.get_by_role("heading", name="Cost", exact=True)).to_be_visible()
    chart = section.get_by_test_id("stVegaLiteChart")
    expect(chart).to_have_count(1)
    expect(chart.locator("canvas, svg").first).to_be_attached()
    grid = section.get_by_test_id("stDataFrame")
    expect(grid).to_be_visible()
    expect(grid.locator("th[role=columnheader]").first).to_be_attached()
    page.wait_for_timeout(500)  # the grid paints its cells after the script run ends

    assert _headers(grid) == COST_HEADERS  # the whole table fits beside the open sidebar
    cells = _cells(grid)
    assert not [c for c in cells if BAD_CELL.search(c)], cells
    assert "Model A" in cells and "Baseline: cash" in cells
    # Model A's calls: 0 (the HTTP 500) + 0.001 + 0.0042, then 0.0042 in each later week. The
    # grid keeps a complete column's number (sortable; the canvas paints it "$0.0136"), and
    # writes a column with gaps as text: Model B has no resolved bet to divide by.
    assert any(_number(c) == pytest.approx(0.0136) for c in cells)
    assert "$0.0045" in cells  # Model A per resolved bet: 0.0136 / 3
    assert {"on the front", "no skill yet", "reference ($0)"} <= set(cells)
    assert "—" in cells  # a baseline's per-dollar figures
    expect(page.get_by_test_id("stException")).to_have_count(0)
    _shoot_section(page, section, screenshots_dir / "page-leaderboard-cost.png")

    with page.expect_download() as info:
        section.get_by_role("button", name="Download cost CSV", exact=True).click()

    download = info.value
    assert download.suggested_filename == "forecaster-arena-leaderboard-cost-all.csv"
    lines = Path(download.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == ",".join(COST_COLUMNS)
    rows = [dict(zip(lines[0].split(","), line.split(","), strict=True)) for line in lines[1:]]
    assert [row["family_id"] for row in rows][:2] == ["llm-a", "llm-b"]  # paying first
    model_a = rows[0]
    assert float(model_a["api_cost_usd"]) == pytest.approx(0.0136)  # a raw number
    assert model_a["pareto"] == "true" and model_a["paid"] == "true"
    cash = next(row for row in rows if row["family_id"] == "baseline-cash")
    assert float(cash["api_cost_usd"]) == 0.0 and cash["pareto"] == "false"
    assert cash["return_per_dollar"] == "" and cash["skill_per_dollar"] == ""  # undefined


def test_a_cohort_deep_link(streamlit_server: str, page: Page) -> None:
    _open(page, f"{streamlit_server}/leaderboard?cohort=2")
    expect(page.get_by_role("combobox", name="Cohort")).to_have_value("Cohort 2")
    expect(page.get_by_text(re.compile(r"by the hourly analyses job"))).to_be_visible()
    assert _headers(_grid(page))[: len(KEY_COLUMNS)] == KEY_COLUMNS

    page.get_by_role("link", name="Compare two families").click()

    expect(page.get_by_role("heading", name="Compare", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"/compare\?(.*&)?cohort=2(&|$)"))
    settle(page)
    expect(page.get_by_role("combobox", name="Cohort")).to_have_value("Cohort 2")


def test_without_stored_analyses_it_asks_before_computing(
    unanalysed_server: str, page: Page, screenshots_dir: Path
) -> None:
    _open(page, f"{unanalysed_server}/leaderboard")
    expect(page.get_by_text(re.compile(r"^No current stored leaderboard"))).to_be_visible()
    expect(page.get_by_test_id("stDataFrame")).to_have_count(0)
    shoot(page, screenshots_dir, "page-leaderboard-not-stored")

    page.get_by_role("button", name="Compute the leaderboard now").click()

    grid = _grid(page)
    settle(page)
    expect(page.get_by_text("Computed live on this page load")).to_be_visible()
    assert _headers(grid)[: len(KEY_COLUMNS)] == KEY_COLUMNS
    assert not [c for c in _cells(grid) if BAD_CELL.search(c)]
    shoot(page, screenshots_dir, "page-leaderboard-live")
