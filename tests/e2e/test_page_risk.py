"""The Risk section in Chromium at 1440×900: the Agent page's (its own curve) reads "Max
drawdown −x.x%" and "Sharpe a ± b" with the number of daily returns; screenshots of the section
for a person to look at. (The Family page's, of its combined book, is checked on the journey
that opens the same Family link: tests/e2e/test_page_family.py.)"""

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.shots import shoot
from tests.e2e.test_page_agent import metric, open_page

DRAWDOWN = re.compile(r"^Max drawdown\s*(−\d+\.\d%|0\.0%)")
SHARPE = re.compile(r"^Sharpe \(annualised\)\s*−?\d+\.\d\d ± \d+\.\d\d\s*daily, n = \d+$")


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
