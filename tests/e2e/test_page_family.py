"""The Family page in Chromium at 1440×900: its headline numbers carry their 95% intervals
from the stored leaderboard, its per-cohort table fits the screen, downloads as CSV and opens
each agent, its Risk section reads drawdown and Sharpe, and before any stored analysis it shows
its point numbers and offers the rest. (The page it opens on, a bad link and an extended cohort
left out, through AppTest: tests/dashboard/test_family_page.py.)"""

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.conftest import settle
from tests.e2e.shots import shoot
from tests.e2e.test_page_agent import (
    assert_clean_cells,
    hover_tooltip,
    metric,
    open_page,
    select_row,
    visible_headers,
)
from tests.e2e.test_page_risk import DRAWDOWN, SHARPE

COHORT_HEADERS = [
    "Cohort",
    "Status",
    "Week start",
    "Rank",
    "Return",
    "vs average",
    "vs best",
    "vs worst",
    "Brier",
    "Resolved bets",
    "Decisions",
    "API cost",
]
COHORTS_CSV_HEADER = (
    "cohort_number,week_start,status,family_id,display_name,kind,model_id,rank,agents,"
    "return_pct,cohort_mean_return,cohort_best_return,cohort_best,cohort_worst_return,"
    "cohort_worst,vs_mean,vs_best,vs_worst,total_value,total_pnl,brier,resolved_bets,win_rate,"
    "decisions,fallback_holds,api_cost_usd,last_snapshot"
)


def test_family_headline_table_and_curve(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, streamlit_server, "family?family=llm-a", "Family")

    expect(page.get_by_role("combobox", name="Family")).to_have_value("Model A (llm-a)")
    expect(page.get_by_text("Opened on")).to_have_count(0)
    expect(metric(page, "Return")).to_contain_text(
        re.compile(r"−4\.7%\s*95% interval \[[−+]\d+\.\d%, [−+]\d+\.\d%\]")
    )
    expect(metric(page, "Brier")).to_contain_text(
        re.compile(r"0\.\d{3}\s*95% interval \[0\.\d{3}, 0\.\d{3}\]")
    )
    expect(metric(page, "P/L (summed)")).to_contain_text(
        re.compile(r"−\$938\.52\s*95% interval \[−\$[\d,]+\.\d\d, [−+]\$[\d,]+\.\d\d\]")
    )
    expect(
        page.get_by_text(re.compile(r"^Over 2 cohorts: 3 decisions \(0 fallback HOLDs\)"))
    ).to_be_visible()
    expect(metric(page, "Random-null percentile")).to_contain_text(re.compile(r"\d+(st|nd|rd|th)"))

    assert visible_headers(page, 0) == COHORT_HEADERS  # every column, no sideways scroll
    assert_clean_cells(page, 0)

    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV", exact=True).click()
    download = info.value
    assert download.suggested_filename == "forecaster-arena-family-llm-a-cohorts.csv"
    lines = Path(download.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == COHORTS_CSV_HEADER and len(lines) == 3  # raw, stable ids
    assert lines[1].startswith("2,2026-01-11T00:00:00+00:00,deciding,llm-a,Model A,llm,")

    text = hover_tooltip(page)  # the family's P/L summed over its cohorts
    assert re.search(r"Model A\s+[−-]?\$[\d,]+\.\d\d", text), text
    caption = page.get_by_text(re.compile(r"^ALL: "))
    expect(caption).to_contain_text("dashed line: break-even (0)")
    expect(caption).to_contain_text("grey ticks: the 2 decision runs shown")
    shoot(page, screenshots_dir, "family-llm-a")

    # The Risk section: of its combined book, from the stored leaderboard.
    page.get_by_role("heading", name="Risk", exact=True).scroll_into_view_if_needed()
    expect(metric(page, "Max drawdown")).to_have_text(DRAWDOWN)
    expect(metric(page, "Sharpe (annualised)")).to_have_text(SHARPE)
    expect(
        page.get_by_text(re.compile(r"^Of its combined book across its cohorts"))
    ).to_be_visible()
    page.screenshot(path=str(screenshots_dir / "family-risk-viewport.png"))
    shoot(page, screenshots_dir, "family-risk")

    # A row of the per-cohort table opens that agent.
    select_row(page, 0, 1)  # cohort 1 (newest first)

    link = page.get_by_role("link", name="Open Model A in cohort 1")
    expect(link).to_be_visible()
    link.click()
    expect(page.get_by_role("heading", name="Agent", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"/agent\?(?=.*cohort=1)(?=.*family=llm-a)"))
    settle(page)
    expect(page.get_by_text("Model A — cohort 1 — model test/llm-a (llm)")).to_be_visible()


def test_before_any_stored_analysis_it_shows_points_and_offers_the_rest(
    unanalysed_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, unanalysed_server, "family?family=llm-a", "Family")

    expect(page.get_by_text("No current stored leaderboard for this scope")).to_be_visible()
    expect(metric(page, "Return")).to_contain_text("−4.7%")
    expect(metric(page, "P(rank #1)")).to_contain_text("needs the leaderboard")
    assert visible_headers(page, 0) == COHORT_HEADERS  # the table needs no bootstrap
    shoot(page, screenshots_dir, "family-unanalysed")

    page.get_by_role("button", name="Compute the leaderboard now").click()
    settle(page)
    expect(metric(page, "Return")).to_contain_text("95% interval")
    expect(page.get_by_text("Computed live on this page load")).to_be_visible()
