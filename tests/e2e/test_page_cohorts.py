"""The Cohorts page in Chromium at 1440×900: human column names and formatted numbers (no
snake_case id as a header, no None), the key columns on screen without scrolling, and a
standings row opens its agent. A bad cohort link (script output only) is checked in-process:
tests/dashboard/test_cohorts_page.py."""

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.conftest import settle
from tests.e2e.shots import shoot
from tests.e2e.test_page_agent import (
    assert_clean_cells,
    open_page,
    select_row,
    visible_headers,
)

LISTING_CSV_HEADER = (
    "cohort_number,week_start,status,methodology_version,is_default,extensions,agents,"
    "decision_weeks,"
    "decisions,open_positions,total_value,total_pnl,return_pct,last_snapshot,completed_at"
)


def test_cohorts_page_reads_in_a_persons_terms_and_a_row_opens_its_agent(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, streamlit_server, "cohorts?cohort=1", "Cohorts")

    listing, standings, weeks = (visible_headers(page, i) for i in range(3))
    assert listing[:9] == [
        "Cohort",
        "Week start",
        "Status",
        "Return",
        "P/L",
        "Value (all agents)",
        "Agents",
        "Decision weeks",
        "Decisions",
    ]
    assert standings[:7] == [
        "Rank",
        "Family",
        "Return",
        "P/L",
        "Realised",
        "Brier",
        "Resolved bets",
    ]
    assert weeks == ["Family", "Week 1", "Week 2"]
    for index in range(3):
        assert_clean_cells(page, index)
    expect(page.get_by_text("methodology §")).to_have_count(0)

    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV", exact=True).first.click()
    download = info.value
    assert download.suggested_filename == "forecaster-arena-cohorts.csv"
    lines = Path(download.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == LISTING_CSV_HEADER  # the CSV keeps the stable ids
    # The standings' CSV: raw numbers, how much of each return is realised last.
    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV", exact=True).nth(1).click()
    standings_csv = Path(info.value.path()).read_text(encoding="utf-8").splitlines()
    assert standings_csv[0].endswith(
        ",last_snapshot,stakes,resolved_stakes,marked_stakes,resolved_share,marked_share,"
        "positions,resolved_positions,marked_positions"
    ), standings_csv[0]
    assert not any("resolved ·" in line for line in standings_csv)  # no display text
    shoot(page, screenshots_dir, "cohorts-cohort-1")

    # A standings row opens its agent.
    select_row(page, 1, 4)  # cohort 1's standings: the oracle, cash, Model B, favourite, Model A

    link = page.get_by_role("link", name="Open Model A in cohort 1")
    expect(link).to_be_visible()
    link.click()
    expect(page.get_by_role("heading", name="Agent", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"/agent\?(?=.*cohort=1)(?=.*family=llm-a)"))
    settle(page)
    expect(page.get_by_text("Model A — cohort 1 — model test/llm-a (llm)")).to_be_visible()
