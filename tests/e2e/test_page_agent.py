"""The Agent page in Chromium at 1440×900: it shows its place in the cohort, its tables read on
screen, its chart answers a hover with every value, and it links to its decisions and its Family
page. What the script writes without a browser (the default agent and the address bar, the
ranges offered, links naming nothing) is checked in-process: tests/dashboard/test_agent_page.py.

Also home of the helpers the other page files import (`open_page`, `visible_headers`, …).
"""

import re
from pathlib import Path

from playwright.sync_api import Locator, Page, ViewportSize, expect

from tests.e2e.conftest import settle
from tests.e2e.shots import shoot

VIEWPORT: ViewportSize = {"width": 1440, "height": 900}
ROW_HEIGHT = 35  # Streamlit's dataframe rows (and header) in pixels
# What a cell must never read as (its accessible text is the cell's raw value).
BAD_CELL = re.compile(r"^(None|none|nan|NaN|NaT|<NA>|null)$|^\[\s*\"")


def open_page(page: Page, base: str, path: str, heading: str) -> None:
    """Open `path` at 1440×900 and wait for the run to end, without an exception."""
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{base}/{path}")
    expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def visible_headers(page: Page, index: int) -> list[str]:
    """The headers of the `index`-th dataframe's columns that are drawn without scrolling it
    sideways, at 1440 px.

    How: Streamlit's grid (Glide) paints cells on a canvas and keeps, inside it, an accessible
    table of exactly the cells it paints — the columns inside the grid's visible width, not
    the ones scrolled off to the right (checked: a wide table lists only its first columns).
    So these headers are what a reader sees; the grid itself must lie inside the viewport.
    """
    grid = page.get_by_test_id("stDataFrame").nth(index)
    grid.scroll_into_view_if_needed()
    headers = grid.locator("th[role=columnheader]")
    expect(headers.first).to_be_attached()
    box = grid.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"]
    return [text.strip() for text in headers.all_inner_texts()]


def assert_clean_cells(page: Page, index: int) -> None:
    """No drawn cell of the `index`-th dataframe reads None, nan or raw JSON, and no header
    is a snake_case id."""
    grid = page.get_by_test_id("stDataFrame").nth(index)
    grid.scroll_into_view_if_needed()
    expect(grid.locator("th[role=columnheader]").first).to_be_attached()
    cells = [text.strip() for text in grid.locator("td[role=gridcell]").all_inner_texts()]
    assert cells, "no cell drawn"
    assert not [cell for cell in cells if BAD_CELL.search(cell)], cells
    headers = visible_headers(page, index)
    assert not [h for h in headers if re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", h)], headers


def select_row(page: Page, index: int, row: int) -> None:
    """Tick row `row` of the `index`-th dataframe (its row marker sits in the first column)."""
    grid = page.get_by_test_id("stDataFrame").nth(index)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 16, box["y"] + ROW_HEIGHT * (row + 1) + ROW_HEIGHT / 2)
    settle(page)


def metric(page: Page, label: str) -> Locator:
    """The metric labelled exactly `label`."""
    label_box = page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    return page.get_by_test_id("stMetric").filter(has=label_box)


def hover_tooltip(page: Page, chart_index: int = 0, at: float = 0.6) -> str:
    """Hover the `chart_index`-th chart at `at` of its width (upper part of the plot) and
    return the tooltip's text."""
    chart = page.get_by_test_id("stVegaLiteChart").nth(chart_index)
    chart.scroll_into_view_if_needed()
    expect(chart.locator("canvas, svg").first).to_be_attached()
    page.wait_for_timeout(300)
    box = chart.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * at, box["y"] + 80)
    page.mouse.move(box["x"] + box["width"] * at + 3, box["y"] + 90)
    tooltip = page.locator("#vg-tooltip-element")
    expect(tooltip).to_be_visible()
    return tooltip.inner_text()


def test_agent_page_place_in_cohort_tables_chart_and_links(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, streamlit_server, "agent?cohort=1&family=llm-a", "Agent")

    expect(page.get_by_text("Model A — cohort 1 — model test/llm-a (llm)")).to_be_visible()
    expect(page.get_by_text("Opened on")).to_have_count(0)  # the link chose it, not a default
    expect(metric(page, "Rank in cohort")).to_contain_text("5 of 6")
    expect(metric(page, "vs cohort average")).to_contain_text("−16.9 pp")
    expect(metric(page, "vs cohort best")).to_contain_text("−88.0 pp")
    expect(metric(page, "vs cohort worst")).to_contain_text("+8.1 pp")
    expect(
        page.get_by_text(re.compile(r"best \+80\.7% \(Oracle \(simulation only\)\)"))
    ).to_be_visible()
    expect(metric(page, "P/L")).to_contain_text("−$730.62")

    positions, trades, decisions = (visible_headers(page, i) for i in range(3))
    assert positions[:8] == [
        "Position",
        "Question",
        "Side",
        "Outcome",
        "Stake",
        "Open cost",
        "Value",
        "Unrealized P/L",
    ]
    assert trades[:6] == ["Time (UTC)", "Type", "Question", "Side", "Amount", "Price"]
    assert decisions[:8] == [
        "Decision",
        "Week",
        "Decided (UTC)",
        "Action",
        "Status",
        "Bets",
        "Sells",
        "Rejected legs",
    ]
    for index in range(3):
        assert_clean_cells(page, index)

    # The chart: every family's value at the hovered time in one tooltip, money written.
    text = hover_tooltip(page)
    assert re.search(r"Time \(UTC\)\s+2026-01-\d\d \d\d:\d\d", text), text
    assert re.search(r"Model A\s+\$\d{1,2},\d{3}\.\d\d", text), text
    caption = page.get_by_text(re.compile(r"^ALL: .* one point per 4 hours"))
    expect(caption).to_contain_text("dashed line: break-even ($10,000 starting capital)")
    expect(caption).to_contain_text("grey ticks: the 2 decision runs shown")
    shoot(page, screenshots_dir, "agent-llm-a-cohort-1")

    # Its links: its decisions in the cohort, then its Family page.
    page.get_by_role("link", name="Audit its decisions in cohort 1").click()
    expect(page.get_by_role("heading", name="Decisions", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"/decisions\?(?=.*cohort=1)(?=.*family=llm-a)"))

    open_page(page, streamlit_server, "agent?cohort=1&family=llm-a", "Agent")
    page.get_by_role("link", name="Model A across its cohorts").click()
    expect(page.get_by_role("heading", name="Family", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"/family\?family=llm-a$"))
    settle(page)
    expect(page.get_by_role("combobox", name="Family")).to_have_value("Model A (llm-a)")
