"""The dashboard in a real browser over a simulated season: ranges switch, a decision can be
selected and audited, deep links work and survive navigation, and downloads carry the right
headers. (That every page renders in Chromium is the hostile sweep,
tests/e2e/test_hostile.py, over the same season with its free text made hostile; each page's
own journey in tests/e2e/test_page_*.py screenshots it for a human to look at.)"""

import io
import re
import urllib.request
import zipfile
from pathlib import Path

from playwright.sync_api import Page, ViewportSize, expect

from arena.analytics.export.tables import EXPORTS
from tests.e2e.conftest import ROOT, navigate, settle
from tests.e2e.test_page_leaderboard import CSV_HEADER  # the page CSV's header, pinned once

ROW_HEIGHT = 35  # Streamlit's dataframe rows (and header) in pixels
# The README's picture of the Leaderboard, retaken by every run of the browser tests.
README_SCREENSHOT = ROOT / "docs" / "img" / "leaderboard.png"
README_VIEWPORT: ViewportSize = {"width": 1440, "height": 900}


def _open(page: Page, base: str, path: str, heading: str) -> None:
    page.goto(f"{base}/{path}")
    expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def _select_row(page: Page, table_index: int, row: int) -> None:
    """Tick a row of a selectable dataframe (its row marker sits in the first column)."""
    grid = page.get_by_test_id("stDataFrame").nth(table_index)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 16, box["y"] + ROW_HEIGHT * (row + 1) + ROW_HEIGHT / 2)


def test_server_answers_health(streamlit_server: str) -> None:
    with urllib.request.urlopen(f"{streamlit_server}/_stcore/health", timeout=5) as response:
        assert response.status == 200
        assert response.read().decode().strip() == "ok"


def test_the_readme_screenshot_of_the_leaderboard(streamlit_server: str, page: Page) -> None:
    """What a visitor sees first, at 1440×900, written to docs/img/leaderboard.png (only when
    it changed), so the README's picture is the dashboard as it is now."""
    page.set_viewport_size(README_VIEWPORT)
    _open(page, streamlit_server, "leaderboard", "Leaderboard")
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    expect(page.get_by_test_id("stVegaLiteChart").locator("canvas, svg").first).to_be_attached()
    page.wait_for_timeout(500)  # the grid paints its cells after the script run ends

    shot = page.screenshot()

    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and 20_000 < len(shot) < 600_000, len(shot)
    if not README_SCREENSHOT.is_file() or README_SCREENSHOT.read_bytes() != shot:
        README_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        staged = README_SCREENSHOT.with_suffix(".png.part")  # whole or not at all: test_docs
        staged.write_bytes(shot)  # may read it from the other pytest worker meanwhile
        staged.replace(README_SCREENSHOT)


def test_a_caption_link_opens_its_section_of_the_methodology(
    streamlit_server: str, page: Page
) -> None:
    """The Agent page cites the methodology's snapshot section: the link opens the Methodology
    page (in a new tab) scrolled to that section, and the page switches to the contract by its
    link."""
    _open(page, streamlit_server, "agent?cohort=1&family=llm-a", "Agent")
    link = page.get_by_role("link", name="methodology: snapshots")
    expect(link).to_have_attribute("href", "methodology#12-snapshot-methodology")
    with page.context.expect_page() as opened:
        link.click()
    methodology = opened.value
    expect(methodology.get_by_role("heading", name="Methodology", exact=True)).to_be_visible()
    settle(methodology)
    section = methodology.locator("[id='12-snapshot-methodology']")
    expect(section).to_be_in_viewport()
    expect(methodology.get_by_test_id("stException")).to_have_count(0)

    methodology.get_by_role("radio", name="Contract", exact=True).click()

    expect(methodology).to_have_url(re.compile(r"doc=contract"))
    expect(methodology.locator("[id='6-export-columns']")).to_be_attached()


def test_leaderboard_range_switch_and_csv_of_the_table(streamlit_server: str, page: Page) -> None:
    _open(page, streamlit_server, "leaderboard", "Leaderboard")
    expect(page.get_by_text(re.compile(r"^ALL: .* one point per 4 hours"))).to_be_visible()
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(2)  # cost, then the curves

    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV", exact=True).click()
    download = info.value
    assert download.suggested_filename == "forecaster-arena-leaderboard-all.csv"
    lines = Path(download.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == CSV_HEADER
    assert len(lines) == 1 + 6  # one row per family, baselines included
    assert any(line.split(",")[2] == "oracle" for line in lines[1:])

    page.get_by_role("radio", name="1D", exact=True).click()

    expect(page).to_have_url(re.compile(r"range=1D"))
    expect(page.get_by_text(re.compile(r"^1D: .* one point per 10 minutes"))).to_be_visible()
    page.get_by_role("radio", name="%", exact=True).click()
    expect(page).to_have_url(re.compile(r"unit=%25"))
    settle(page)
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(2)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_selecting_a_decision_shows_its_raw_responses(streamlit_server: str, page: Page) -> None:
    # Cohort 1's Model A decisions, newest first: week 2 (decision 7), then week 1 (decision 1).
    _open(page, streamlit_server, "decisions?cohort=1&family=llm-a", "Decisions")
    expect(page.get_by_role("heading", name=re.compile(r"^Decision \d+$"))).to_have_count(0)

    _select_row(page, 0, 1)

    expect(page.get_by_role("heading", name="Decision 1", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"decision=1(&|$)"))
    main = page.get_by_test_id("stMain")
    page.get_by_role("tab", name="Attempts").click()
    main.get_by_text("Attempt 2 — malformed").click()  # its raw answer, collapsed until asked
    expect(main.get_by_text("I would buy YES on the first market, it looks cheap.")).to_be_visible()
    # The valid answer carries markup in its reasoning: shown as text, never rendered.
    expect(main.get_by_text("<b>second</b>").first).to_be_visible()
    expect(main.locator("b", has_text="second")).to_have_count(0)
    expect(main.get_by_text("(no response body)")).to_be_visible()  # the HTTP 500

    page.get_by_role("tab", name="Legs").click()
    expect(main.get_by_text("Legs executed")).to_be_visible()
    page.get_by_role("link", name=re.compile(r"Market snapshot #1 it saw")).click()
    expect(page.get_by_role("heading", name="Market snapshot #1")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/markets\?.*snapshot=1"))


def test_deep_link_opens_the_view_and_each_page_keeps_its_own_selection(
    streamlit_server: str, page: Page
) -> None:
    _open(page, streamlit_server, "agent?cohort=1&family=llm-a", "Agent")
    expect(page.get_by_text("Model A — cohort 1 — model test/llm-a (llm)")).to_be_visible()

    # Another page from the sidebar (`navigate` waits for the address first: the Agent page
    # has a "Decisions" section too): the Agent page's cohort and family do not follow it.
    navigate(page, "decisions", "Decisions")
    assert "cohort=" not in page.url and "family=llm-a" not in page.url, page.url

    # Back to the Agent page: its own selection is as it was left.
    navigate(page, "agent", "Agent")
    expect(page.get_by_text("Model A — cohort 1 — model test/llm-a (llm)")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/agent\?.*family=llm-a"))


def test_a_fresh_servers_first_visit_by_deep_link_runs_through_the_entry(
    fresh_server: str, page: Page
) -> None:
    # No pages/ folder, so no legacy multipage mode: even a fresh server's first deep link runs
    # app_pages/agent.py through dashboard.py (database gate, sidebar, deep-link restore).
    _open(page, fresh_server, "agent?cohort=1&family=llm-a", "Agent")

    expect(page.get_by_test_id("stSidebar")).to_contain_text("Database: sqlite")
    expect(
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Leaderboard")
    ).to_be_visible()
    expect(page.get_by_text("Model A — cohort 1 — model test/llm-a (llm)")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/agent\?.*family=llm-a"))


def test_exports_zip_holds_contract_csvs_and_readme(streamlit_server: str, page: Page) -> None:
    _open(page, streamlit_server, "exports?cohort=1", "Exports")

    with page.expect_download() as info:
        page.get_by_role("button", name="Download zip").click()

    download = info.value
    assert download.suggested_filename == "forecaster-arena-export-cohort1.zip"
    with zipfile.ZipFile(io.BytesIO(Path(download.path()).read_bytes())) as archive:
        names = archive.namelist()
        assert names == [f"{table}.csv" for table in EXPORTS] + [
            "README.txt",
            "DATA_DICTIONARY.csv",
        ]
        for table, spec in EXPORTS.items():
            header = archive.read(f"{table}.csv").decode().splitlines()[0]
            assert header == ",".join(spec.columns)
        readme = archive.read("README.txt").decode()
    assert "Methodology version: v1" in readme and "Filters: cohort=1" in readme


def test_selecting_a_market_row_opens_that_market(streamlit_server: str, page: Page) -> None:
    """The row picked opens its market in the same run (the detail follows the new link)."""
    _open(page, streamlit_server, "markets", "Markets")
    expect(page.get_by_role("heading", name=re.compile(r"^Market \d+$"))).to_have_count(0)

    _select_row(page, 0, 0)

    expect(page.get_by_role("heading", name=re.compile(r"^Market \d+$"))).to_be_visible()
    expect(page).to_have_url(re.compile(r"market=\d+"))
