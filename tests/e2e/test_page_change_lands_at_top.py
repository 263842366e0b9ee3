"""A page chosen in the sidebar opens at its top, whatever the last page was scrolled to
(Streamlit keeps the main section's scroll between pages; the entry's `land_at_top` resets it),
and every page is listed in the sidebar, none folded under "View more" (Methodology and
Exports were). One short browser test: only a browser scrolls."""

import re

from playwright.sync_api import Page, expect

from tests.e2e.conftest import settle

SCROLL_TOP = "() => document.querySelector('[data-testid=stMain]').scrollTop"


def test_a_sidebar_click_opens_the_page_at_its_top(streamlit_server: str, page: Page) -> None:
    page.goto(f"{streamlit_server}/exports")
    expect(page.get_by_role("heading", name="Exports", exact=True).first).to_be_visible()
    settle(page)
    page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 5000)")
    assert page.evaluate(SCROLL_TOP) > 300  # read down to the end

    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("button", name=re.compile("View"))).to_have_count(0)
    nav.get_by_role("link", name="Methodology", exact=True).click()  # listed, not folded
    expect(page).to_have_url(re.compile(r"/methodology(\?|$)"))
    expect(page.get_by_role("heading", name="Methodology", exact=True).first).to_be_visible()
    settle(page)  # a long page: had the scroll been kept, it would still be down there
    page.wait_for_function(f"() => ({SCROLL_TOP})() === 0 && window.scrollY === 0", timeout=5_000)
