"""The dashboard in a real browser: it renders, shows the table and downloads it as CSV."""

import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from arena.analytics import OVERVIEW_TABLES

pytestmark = pytest.mark.browser
TABLES = len(OVERVIEW_TABLES)


def test_server_answers_health(streamlit_server: str) -> None:
    with urllib.request.urlopen(f"{streamlit_server}/_stcore/health", timeout=5) as response:
        assert response.status == 200
        assert response.read().decode().strip() == "ok"


def test_overview_shows_counts_and_downloads_them_as_csv(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    page.goto(streamlit_server)

    expect(page.get_by_role("heading", name="Forecaster Arena")).to_be_visible()
    table = page.get_by_test_id("stDataFrame")
    expect(table).to_be_visible()
    # The grid paints on a canvas; its accessible twin holds the cells as text.
    cells = table.locator("[role=gridcell]")
    expect(cells).to_have_count(2 * TABLES)
    texts = [text.strip() for text in cells.all_text_contents()]
    shown = dict(zip(texts[0::2], texts[1::2], strict=True))
    assert shown["families"] == "10"
    assert shown["cohorts"] == "1"
    assert shown["portfolio_snapshots"] == "0"
    expect(page.get_by_test_id("stException")).to_have_count(0)
    # The seeded database has a cohort, so the "no cohort" empty state must not show.
    expect(page.get_by_text("No cohort yet")).to_have_count(0)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Database: sqlite")

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download CSV").click()
    download = download_info.value
    assert download.suggested_filename == "forecaster-arena-overview.csv"
    lines = Path(download.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == "table,rows"
    assert "cohorts,1" in lines
    assert "agents,3" in lines
    assert "markets,1" in lines

    page.screenshot(path=str(screenshots_dir / "overview.png"), full_page=True)
