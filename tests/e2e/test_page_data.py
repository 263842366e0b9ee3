"""Overview, Operations, Exports and Methodology in Chromium at 1440×900: each renders without
an exception, its tables' headers read in words (never a snake_case column name), their key
columns are on screen without scrolling, no cell shows None/nan/raw JSON, deep links open the
named selection, and each page is screenshotted. A bad Exports link (script output only) is
checked in-process: tests/dashboard/test_data_page.py.

How "on screen" is checked: Streamlit's grid (glide-data-grid) paints on a canvas but keeps an
accessible table of exactly the columns in its visible region (a column counts when any part
of it shows). So a table's key columns are in view without scrolling when the grid lies inside
the viewport (after scrolling the page to it: the page may scroll, the grid may not) and its
accessible header row starts with those columns.
"""

import re
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import ADMIN_PASSWORD, settle
from tests.e2e.shots import shoot

WIDTH, HEIGHT = 1440, 900
BAD_CELL = re.compile(r"^(None|nan|NaN|NaT|<NA>|null)$|^\[\"|^\{\"|\{\"")
SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")


def _open(page: Page, url: str, heading: str) -> None:
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.goto(url)
    expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def _grid(page: Page, index: int = 0) -> Locator:
    grid = page.get_by_test_id("stDataFrame").nth(index)
    grid.scroll_into_view_if_needed()
    expect(grid).to_be_visible()
    expect(grid.locator("th[role=columnheader]").first).to_be_attached()
    return grid


def _headers(grid: Locator) -> list[str]:
    return [h.strip() for h in grid.locator("th[role=columnheader]").all_text_contents()]


def _cells(grid: Locator) -> list[str]:
    return [c.strip() for c in grid.locator("td[role=gridcell]").all_text_contents()]


def _key_columns_on_screen(grid: Locator, key: list[str]) -> list[str]:
    """Assert the grid lies within the viewport's width and height and its visible columns
    start with `key`; no header is a raw column name and no cell None/nan/JSON. The cells."""
    box = grid.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, box
    assert box["y"] >= 0 and box["y"] + min(box["height"], HEIGHT) <= HEIGHT + 1, box
    headers = _headers(grid)
    assert headers[: len(key)] == key, headers
    assert not [h for h in headers if SNAKE.match(h)], headers
    cells = _cells(grid)
    assert cells and not [c for c in cells if BAD_CELL.search(c)], cells
    return cells


# --------------------------------------------------------------------------------------------
# Overview


def test_overview_reads_the_stored_counts_in_words(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    _open(page, f"{streamlit_server}/overview", "Overview")

    expect(page.get_by_text(re.compile(r"by the hourly analyses job"))).to_be_visible()
    cells = _key_columns_on_screen(_grid(page), ["Table", "Rows", "One row is"])
    assert "Portfolio snapshots" in cells and "portfolio_snapshots" not in cells
    assert "Decisions" in cells and "18" in cells
    shoot(page, screenshots_dir, from_top=True, name="page-overview")

    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV", exact=True).click()
    lines = Path(info.value.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == "table,rows" and "decisions,18" in lines  # the CSV keeps table names


def test_overview_before_the_hourly_job_counts_only_when_asked(
    unanalysed_server: str, page: Page, screenshots_dir: Path
) -> None:
    _open(page, f"{unanalysed_server}/overview", "Overview")
    expect(page.get_by_test_id("stDataFrame")).to_have_count(0)
    expect(page.get_by_text(re.compile(r"No current stored table counts"))).to_be_visible()

    page.get_by_role("button", name="Compute the table counts now").click()

    expect(
        page.get_by_text("Computed live on this page load (no current stored result).")
    ).to_be_visible()
    settle(page)
    _key_columns_on_screen(_grid(page), ["Table", "Rows", "One row is"])
    shoot(page, screenshots_dir, from_top=True, name="page-overview-unanalysed")


# --------------------------------------------------------------------------------------------
# Operations


def test_operations_tables_read_in_words_without_json(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    _open(page, f"{streamlit_server}/operations", "Operations")
    box = page.get_by_label("Admin password (press Enter)")
    box.fill(ADMIN_PASSWORD)
    box.press("Enter")
    expect(page.get_by_role("heading", name="Jobs")).to_be_visible()
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)

    health = _key_columns_on_screen(
        _grid(page, 0),
        ["Job", "Last status", "Last run", "Last success", "Last failure", "Runs", "OK", "Failed"],
    )
    assert "sync-markets" in health and "—" in health  # a job that never failed: no failure
    # The season's one failed run (a simulated Gamma outage) is listed with its error.
    failures = _key_columns_on_screen(_grid(page, 1), ["Run", "Job", "Slot", "Status"])
    assert "failed" in failures
    runs = _key_columns_on_screen(
        _grid(page, 2), ["Run", "Job", "Slot", "Status", "Started", "Took", "Error"]
    )
    assert any(c.startswith("slot: 2026-01-") for c in runs)  # counts in words, not JSON
    _key_columns_on_screen(_grid(page, 3), ["At", "Level", "Source", "Message", "Context"])
    spend = _key_columns_on_screen(
        _grid(page, 4),
        ["Family", "Kind", "Decisions", "Model answers", "Tokens in", "Tokens out", "Cost"],
    )
    assert "Model A" in spend and "llm-a" not in spend
    shoot(page, screenshots_dir, from_top=True, name="page-operations")


# --------------------------------------------------------------------------------------------
# Exports


def test_exports_names_its_selection_in_words(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    _open(page, f"{streamlit_server}/exports?cohort=1&family=llm-a", "Exports")

    expect(page.get_by_role("combobox", name="Cohort")).to_have_value("Cohort 1")
    expect(page.get_by_role("combobox", name="Family")).to_have_value("Model A")
    expect(page.get_by_text(re.compile(r"^Cohort 1; family Model A; at most"))).to_be_visible()
    cells = _key_columns_on_screen(_grid(page), ["File", "One row is", "Columns"])
    assert "cohorts.csv" in cells
    assert "§" not in page.get_by_test_id("stMain").inner_text()
    shoot(page, screenshots_dir, from_top=True, name="page-exports")


# --------------------------------------------------------------------------------------------
# Methodology


def test_methodology_shows_the_protocol_in_force_and_its_versions(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    _open(page, f"{streamlit_server}/methodology", "Methodology")
    main = page.get_by_test_id("stMain")

    table = main.locator("table").first
    expect(table).to_contain_text("Starting capital")
    expect(table).to_contain_text("$10,000")
    expect(table).to_contain_text("25% of cash")
    expect(table).to_contain_text("weekly, Sundays 00:05 UTC")
    expect(main.get_by_text(re.compile(r"^As stamped on cohort 2, the newest"))).to_be_visible()
    cells = _key_columns_on_screen(
        _grid(page), ["Version", "Title", "Constants", "Cohorts", "Count", "First week"]
    )
    assert "1–2" in cells and "v1 as specified" in cells
    shoot(page, screenshots_dir, from_top=True, name="page-methodology")

    # Each name opens its section of the document below, on the same page.
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    table.get_by_role("link", name="Brier score").click()
    # The document is drawn a section at a time: the link reopens the page on its section.
    expect(page).to_have_url(re.compile(r"/methodology\?section=11#11-1-brier-score$"))
    expect(page.locator("[id='11-1-brier-score']")).to_be_in_viewport()


def test_a_methodology_section_link_still_lands_on_its_heading(
    streamlit_server: str, page: Page
) -> None:
    """The protocol tables sit above the document: a link into it still scrolls there."""
    _open(page, f"{streamlit_server}/methodology#12-snapshot-methodology", "Methodology")

    expect(page.locator("[id='12-snapshot-methodology']")).to_be_in_viewport()


def test_the_contract_has_no_protocol_tables(streamlit_server: str, page: Page) -> None:
    _open(page, f"{streamlit_server}/methodology?doc=contract", "The outside contract")

    expect(page.get_by_role("heading", name="The protocol in force")).to_have_count(0)
    expect(page.locator("[id='6-export-columns']")).to_be_attached()
