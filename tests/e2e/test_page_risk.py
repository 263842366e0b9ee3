"""The Risk section in Chromium at 1440×900: the Family page's (its combined book, from the stored
leaderboard) and the Agent page's (its own curve) read "Max drawdown −x.x%" and "Sharpe a ± b"
with the number of daily returns; screenshots of both sections for a person to look at."""

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.test_page_agent import metric, open_page, shoot

DRAWDOWN = re.compile(r"^Max drawdown\s*(−\d+\.\d%|0\.0%)")
SHARPE = re.compile(r"^Sharpe \(annualised\)\s*−?\d+\.\d\d ± \d+\.\d\d\s*daily, n = \d+$")


def test_family_risk_section(streamlit_server: str, page: Page, screenshots_dir: Path) -> None:
    open_page(page, streamlit_server, "family?family=llm-a", "Family")
    heading = page.get_by_role("heading", name="Risk", exact=True)
    heading.scroll_into_view_if_needed()
    expect(metric(page, "Max drawdown")).to_have_text(DRAWDOWN)
    expect(metric(page, "Sharpe (annualised)")).to_have_text(SHARPE)
    expect(
        page.get_by_text(re.compile(r"^Of its combined book across its cohorts"))
    ).to_be_visible()
    page.screenshot(path=str(screenshots_dir / "family-risk-viewport.png"))
    shoot(page, screenshots_dir, "family-risk")


def test_agent_risk_section(streamlit_server: str, page: Page, screenshots_dir: Path) -> None:
    open_page(page, streamlit_server, "agent?cohort=1&family=llm-a", "Agent")
    page.get_by_role("heading", name="Risk", exact=True).scroll_into_view_if_needed()
    expect(metric(page, "Max drawdown")).to_have_text(DRAWDOWN)
    expect(metric(page, "Sharpe (annualised)")).to_have_text(SHARPE)
    expect(
        page.get_by_text(re.compile(r"^Its own book: drawdown on every 10-minute"))
    ).to_be_visible()
    page.screenshot(path=str(screenshots_dir / "agent-risk-viewport.png"))
    shoot(page, screenshots_dir, "agent-risk")
