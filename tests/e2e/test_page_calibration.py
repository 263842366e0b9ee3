"""The Calibration page in Chromium at 1440×900: Brier per family with one interval column each
and the key columns in view, two or three families compared in the reliability diagram through
the link (bins under the minimum count listed, not drawn), and without stored analyses the page
offers the computation instead of running it. (How "in view" is measured: `test_page_markets`.)
Links naming nothing and an extended cohort left out (script output only) are checked
in-process: tests/dashboard/test_calibration_page.py."""

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.shots import shoot
from tests.e2e.test_page_markets import assert_readable, headers_in_view, open_page

INTERVAL = re.compile(r"^[+−]?\d\.\d{3}( \[[+−]?\d\.\d{3}, [+−]?\d\.\d{3}\])?$")


def test_brier_per_family_reads_with_intervals_in_view(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, streamlit_server, "calibration", "Calibration")

    grid = page.get_by_test_id("stDataFrame").first
    shown = headers_in_view(grid)
    for column in ("Family", "Kind", "Resolved bets", "Brier [95%]", "Edge over market ↑ [95%]"):
        assert column in shown, shown
    cells = assert_readable(grid)
    assert "Oracle (simulation only)" in cells["Family"] and "oracle" not in cells["Family"]
    assert all(INTERVAL.match(c) for c in cells["Brier [95%]"]), cells["Brier [95%]"]
    assert all(INTERVAL.match(c) for c in cells["Edge over market ↑ [95%]"])
    # No family in the link: the LLM families with resolved bets are compared.
    chosen = page.get_by_test_id("stMultiSelect")
    expect(chosen).to_contain_text("Model A")
    expect(page).not_to_have_url(re.compile(r"family="))
    expect(page.get_by_text(re.compile(r"Computed .* by the hourly"))).to_be_visible()
    shoot(page, screenshots_dir, "calibration")


def test_three_families_compared_through_the_link(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(
        page, streamlit_server, "calibration?family=llm-a,oracle,baseline-favorite", "Calibration"
    )

    chosen = page.get_by_test_id("stMultiSelect")
    for name in ("Model A", "Oracle (simulation only)", "Baseline: favorite"):
        expect(chosen).to_contain_text(name)
    # Brier intervals, the reliability diagram (Baseline: favorite has a bin of 8 bets) and
    # Brier over time.
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(3)
    expect(
        page.get_by_text(re.compile(r"Bins with fewer than 5 bets are not drawn"))
    ).to_be_visible()
    sparse = page.get_by_test_id("stDataFrame").nth(1)
    assert headers_in_view(sparse) == ["Forecaster", "Bin", "Bets", "Won", "Win rate [95% Wilson]"]
    cells = assert_readable(sparse)
    assert {"Model A", "Oracle (simulation only)", "Market price (same bets)"} <= set(
        cells["Forecaster"]
    )
    assert all(int(n) < 5 for n in cells["Bets"])
    shoot(page, screenshots_dir, "calibration-compare")

    chosen.locator("input").click()
    page.keyboard.press("Backspace")  # drops the last family picked

    expect(page).to_have_url(re.compile(r"family=llm-a%2Coracle($|&)"))
    page.keyboard.press("Escape")
    expect(chosen).not_to_contain_text("Baseline: favorite")
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_without_stored_analyses_it_offers_the_computation(
    unanalysed_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, unanalysed_server, "calibration", "Calibration")

    expect(page.get_by_text(re.compile(r"No current stored calibration summary"))).to_be_visible()
    expect(page.get_by_test_id("stDataFrame")).to_have_count(0)
    shoot(page, screenshots_dir, "calibration-unanalysed")

    page.get_by_role("button", name="Compute the calibration summary now").click()

    expect(
        page.get_by_text("Computed live on this page load (no current stored result).")
    ).to_be_visible()
    expect(page.get_by_role("heading", name="Reliability diagram")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile(r"^Compute"))).to_have_count(0)
    expect(page.get_by_test_id("stException")).to_have_count(0)
