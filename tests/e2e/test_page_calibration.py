"""The Calibration page in Chromium at 1440×900: Brier per family with one interval column each
and the key columns in view, two or three families compared in the reliability diagram through
the link (bins under the minimum count listed, not drawn), links naming nothing warn, and
without stored analyses the page offers the computation instead of running it. (How "in view"
is measured: `test_page_markets`.)"""

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.test_page_markets import assert_readable, headers_in_view, open_page, shoot

INTERVAL = re.compile(r"^[+−]?\d\.\d{3}( \[[+−]?\d\.\d{3}, [+−]?\d\.\d{3}\])?$")


def test_brier_per_family_reads_with_intervals_in_view(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, streamlit_server, "calibration", "Calibration")

    grid = page.get_by_test_id("stDataFrame").first
    shown = headers_in_view(grid)
    for column in ("Family", "Kind", "Resolved bets", "Brier [95%]", "Skill vs market [95%]"):
        assert column in shown, shown
    cells = assert_readable(grid)
    assert "Oracle (simulation only)" in cells["Family"] and "oracle" not in cells["Family"]
    assert all(INTERVAL.match(c) for c in cells["Brier [95%]"]), cells["Brier [95%]"]
    assert all(INTERVAL.match(c) for c in cells["Skill vs market [95%]"])
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


def test_links_naming_nothing_warn(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    for link, named in (
        ("family=gpt-9", "family='gpt-9'"),
        ("family=llm-a,gpt-9", "family='gpt-9'"),
    ):
        open_page(page, streamlit_server, f"calibration?{link}", "Calibration")
        expect(page.get_by_text(f"This link's {named} names no family")).to_be_visible()
        expect(page.get_by_test_id("stDataFrame")).to_have_count(0)
    shoot(page, screenshots_dir, "calibration-bad-link")

    open_page(page, streamlit_server, "calibration?cohort=99", "Calibration")

    expect(page.get_by_text("This link's cohort='99' names no cohort")).to_be_visible()


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


LEFT_OUT = (
    "1 extended cohort (#2) is left out of these v1 figures; choose it in the cohort filter "
    "to see it."
)


def test_all_cohorts_leave_an_extended_cohort_out_and_say_so(
    mixed_server: str, streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    """Cohort 2 re-stamped as extended: the all-cohort table is cohort 1's (the same cells as
    cohort 1 chosen on the v1 database) under a note naming cohort 2; cohort 2 chosen by
    number reads as on the v1 database, without the note."""

    def summary_cells(base: str, path: str) -> dict[str, list[str]]:
        open_page(page, base, path, "Calibration")
        return assert_readable(page.get_by_test_id("stDataFrame").first)

    v1_cohort_1 = summary_cells(streamlit_server, "calibration?cohort=1")
    v1_cohort_2 = summary_cells(streamlit_server, "calibration?cohort=2")
    v1_all = summary_cells(streamlit_server, "calibration")
    expect(page.get_by_text(re.compile("extended cohort"))).to_have_count(0)

    mixed_all = summary_cells(mixed_server, "calibration")
    expect(page.get_by_text(LEFT_OUT)).to_be_visible()
    assert mixed_all == v1_cohort_1 != v1_all
    shoot(page, screenshots_dir, "calibration-extended-left-out")

    assert summary_cells(mixed_server, "calibration?cohort=2") == v1_cohort_2
    expect(page.get_by_text(re.compile("extended cohort"))).to_have_count(0)
