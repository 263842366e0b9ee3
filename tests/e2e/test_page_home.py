"""Home in Chromium at 1440×900: the status strip, the stored leader with its interval and the
links are on screen without scrolling, nothing reads None/nan, and the links open their pages.
(Before the hourly analyses, and with an extended cohort left out, through AppTest:
tests/dashboard/test_home_page.py.)

The test season's last job ran 2026-01-21 00:00 UTC and its two cohorts are still deciding, so
on any later clock the arena is "Stopped" (the rules: `arena.analytics.views.status`); its stored
leaderboard ranks the oracle (a reference row) first and Model B first among the models.
"""

import re
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import settle
from tests.e2e.shots import shoot

WIDTH, HEIGHT = 1440, 900
HEADING = "Forecaster Arena"
BAD_TEXT = re.compile(r"\b(None|nan|NaN|NaT|<NA>)\b|\[\"|\{\"")


def _open(page: Page, url: str) -> None:
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.goto(url)
    expect(page.get_by_role("heading", name=HEADING, exact=True)).to_be_visible()
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def _page_link(page: Page, name: str) -> Locator:
    """One of Home's page links (st.page_link), not a link of the same name in a caption."""
    return (
        page.get_by_test_id("stMain")
        .get_by_test_id("stPageLink-NavLink")
        .filter(has_text=re.compile(rf"{name}$"))
    )


def _main_text(page: Page) -> str:
    return page.get_by_test_id("stMain").inner_text()


def test_home_shows_status_leader_and_links_on_one_screen(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    _open(page, streamlit_server)  # the root is Home

    main = page.get_by_test_id("stMain")
    status = main.get_by_text(re.compile(r"\bStopped$"))
    expect(status).to_be_in_viewport()
    expect(main.get_by_text("2026-01-21 00:00 UTC", exact=True)).to_be_in_viewport()
    expect(
        main.get_by_text(re.compile(r"^No job has run since 2026-01-21 00:00 UTC"))
    ).to_be_visible()
    expect(main.get_by_text("none while stopped", exact=True)).to_be_in_viewport()
    expect(main.get_by_text("2 (2 deciding)", exact=True)).to_be_in_viewport()
    # The leader from the stored frame, with its interval; the reference row above it named.
    expect(main.get_by_text("Model B", exact=True)).to_be_in_viewport()
    expect(main.get_by_text("+0.0% [+0.0, +0.0]", exact=True)).to_be_in_viewport()
    expect(main.get_by_text("2 [2, 3]", exact=True)).to_be_in_viewport()
    expect(
        main.get_by_text(re.compile(r"^Top of the table: Oracle \(simulation only\)"))
    ).to_be_visible()
    expect(main.get_by_text(re.compile(r"by the hourly analyses job"))).to_be_visible()
    expect(main.get_by_role("button", name=re.compile("^Compute"))).to_have_count(0)
    assert not BAD_TEXT.search(_main_text(page)), _main_text(page)
    shoot(page, screenshots_dir, "page-home")

    # The page links carry their selection: the Family link opens the leading model.
    _page_link(page, "Family").click()
    expect(page.get_by_role("heading", name="Family", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"/family\?(.*&)?family=llm-b(&|$)"))
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)

    # Each other link of Home opens its page (back to Home through the sidebar each time: a
    # page change in the same session, as a reader goes, not a new load of the address).
    for name in ("Leaderboard", "Decisions", "Methodology"):
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Home").click()
        expect(page.get_by_role("heading", name=HEADING, exact=True)).to_be_visible()
        settle(page)
        _page_link(page, name).click()
        expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible()
        settle(page)
        expect(page.get_by_test_id("stException")).to_have_count(0)
