"""The Stated probability page (issue 26) in Chromium at 1440×900, on a short demo season
under the protocol extension: its three tables read with intervals and no missing-looking
cell, their key columns in view, the Brier chart drawn, the extended cohorts marked on the
Cohorts page and in the sidebar; on a database without an extended cohort the page says so in
one line. (How "in view" is measured: `test_page_markets`.)"""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from arena.lineup import load_lineup
from tests.e2e.conftest import dashboard_server
from tests.e2e.test_page_markets import assert_readable, headers_in_view, open_page, shoot
from tests.stated_season import demo_season

pytestmark = pytest.mark.browser

TITLE = "Stated probability"
NUMBER = r"[+−]?\d+\.\d{2,3}"
INTERVAL = re.compile(rf"^{NUMBER} \[{NUMBER}, {NUMBER}\]$")
SHARE = re.compile(r"^\d+% \[\d+, \d+\]$")
DASH = "—"


@pytest.fixture(scope="module")
def extended_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard over a 15-day demo season stamped `stated_probability` (analyses stored)."""
    folder = tmp_path_factory.mktemp("e2e-stated")
    url = demo_season(folder, load_lineup(None), "stated_probability", 15)
    with dashboard_server(url, folder) as base_url:
        yield base_url


def intervals_or_dash(cells: list[str], pattern: re.Pattern[str] = INTERVAL) -> bool:
    return all(pattern.match(c) or c == DASH for c in cells) and any(
        pattern.match(c) for c in cells
    )


def test_the_view_reads_with_intervals(
    extended_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, extended_server, "stated", TITLE)
    grids = page.get_by_test_id("stDataFrame")
    expect(grids).to_have_count(3)

    quality = grids.nth(0)
    shown = headers_in_view(quality)
    assert shown[:6] == [
        "Family",
        "Stated p Brier [95%]",
        "Implied (v1) Brier [95%]",
        "Stated − implied [95%]",
        "Market Brier [95%]",
        "Stated − market [95%]",
    ], shown
    cells = assert_readable(quality)
    assert "Oracle (simulation only)" in cells["Family"]
    for column in shown[1:6]:
        assert intervals_or_dash(cells[column]), (column, cells[column])

    conduct = grids.nth(1)
    shown = headers_in_view(conduct)
    assert shown == [
        "Family",
        "Agrees with p [95%]",
        "Mean p − price [95%]",
        "Stake / Kelly [95%]",
        "Log-growth [95%]",
        "Kelly log-growth [95%]",
        "Actual − Kelly [95%]",
    ], shown
    cells = assert_readable(conduct)
    assert all(SHARE.match(c) for c in cells["Agrees with p [95%]"]), cells
    for column in ("Mean p − price [95%]", "Stake / Kelly [95%]"):
        assert all(INTERVAL.match(c) for c in cells[column]), (column, cells[column])
    assert intervals_or_dash(cells["Actual − Kelly [95%]"])

    deviating = grids.nth(2)
    shown = headers_in_view(deviating)
    assert shown == [
        "Family",
        "Resolved bets",
        "Stated p Brier [95%]",
        "Market Brier [95%]",
        "Skill vs market [95%]",
    ], shown
    cells = assert_readable(deviating)
    assert intervals_or_dash(cells["Skill vs market [95%]"])

    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(1)
    expect(page.get_by_text(re.compile(r"Computed .* by the hourly"))).to_be_visible()
    # The baselines that state nothing are named, their bets counted as missing.
    expect(
        page.get_by_text(re.compile(r"Baseline: favourite \(\d+ bets?, none stated\)"))
    ).to_be_visible()
    expect(page.get_by_test_id("stSidebar")).to_contain_text(
        "ran the protocol extension stated_probability"
    )
    shoot(page, screenshots_dir, "stated-probability")


def test_one_cohort_and_its_mark_on_the_cohorts_page(
    extended_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, extended_server, "stated?cohort=1", TITLE)
    expect(page.get_by_role("combobox", name="Cohort")).to_have_value("Cohort 1")
    expect(page.get_by_test_id("stDataFrame")).to_have_count(3)
    open_page(page, extended_server, "cohorts?cohort=1", "Cohorts")
    expect(
        page.get_by_text(re.compile("This cohort ran the protocol extension stated_probability"))
    ).to_be_visible()
    shoot(page, screenshots_dir, "stated-probability-cohort")


def test_without_an_extended_cohort_the_page_says_so_in_one_line(
    streamlit_server: str, page: Page
) -> None:
    open_page(page, streamlit_server, "stated", TITLE)
    note = page.get_by_test_id("stAlert")
    expect(note).to_have_count(1)
    expect(note).to_contain_text("No cohort here ran the stated-probability extension")
    expect(note).to_contain_text("arena demo --extensions stated_probability")
    expect(page.get_by_test_id("stDataFrame")).to_have_count(0)
