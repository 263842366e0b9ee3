"""Methodology v2 in Chromium, one journey: the sidebar's methodology selector, a v2
leaderboard (portfolio value first, Brier a diagnostic), the selection carried to other pages
by the sidebar's navigation, and a decision's price provenance, over the suite's v2 demo
season (prices from the simulated CLOB through the real client; `tests.stated_season.V2_LINEUP`,
shared with the bundle and export tests), with screenshots.

Nine days rank nobody: a family is "too early to rank" (greyed) below 30 resolved bets, which
the small lineup's model reaches after about seven weeks played to the end (two minutes of
CPU). The journey checks the same things on greyed rows; a ranked v2 leaderboard was
screenshotted from that longer season once (docs/methodology-v2.md, "On the dashboard")."""

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from arena.analytics.stored import stored_result
from arena.dashboard import fmt
from arena.storage.db import create_db_engine
from tests.e2e.conftest import dashboard_server, settle
from tests.e2e.shots import shoot
from tests.e2e.test_page_markets import headers_in_view, open_page
from tests.stated_season import DemoSeasons
from tests.test_dashboard_v2 import traded_decision


@pytest.fixture(scope="module")
def v2_server(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int, pd.DataFrame]]:
    """A dashboard over a copy of the v2 demo season (its final analyses run stored the
    leaderboards); (base URL, the id of a decision that traded, the stored v2 leaderboard)."""
    folder = tmp_path_factory.mktemp("e2e-v2")
    url = demo_seasons.v2(folder)
    engine = create_db_engine(url)
    try:
        stored = stored_result(engine, "leaderboard", methodology="v2")
        assert stored is not None and not stored.frame.empty
    finally:
        engine.dispose()
    decision, _ = traded_decision(url)
    with dashboard_server(url, folder) as base_url:
        yield base_url, decision, stored.frame


def test_selector_v2_pages_and_price_provenance(
    v2_server: tuple[str, int, pd.DataFrame], page: Page, screenshots_dir: Path
) -> None:
    """v2 picked in the sidebar on the Leaderboard; the picked version follows the sidebar's
    navigation to Family and Compare; a decision's prices say where they came from."""
    base, decision, board = v2_server
    open_page(page, base, "leaderboard", "Leaderboard")
    sidebar = page.get_by_test_id("stSidebar")
    selector = sidebar.get_by_test_id("stSelectbox").filter(has_text="Methodology")
    expect(selector).to_have_count(1)
    # Only v2 ran here: the selector offers v2 alone and opens on it (never an empty v1 board).
    combo = selector.get_by_role("combobox")  # a react-aria combobox
    expect(combo).to_have_value("v2: order-book prices")
    # The sidebar lists every page, so the selector sits below its fold: scrolled to first, as
    # a reader does (a list opened while the sidebar still scrolls closes at once).
    combo.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    combo.click()
    expect(page.get_by_role("option")).to_have_count(1)
    option = page.get_by_role("option", name="v2: order-book prices")
    expect(option).to_be_visible()
    page.wait_for_timeout(300)
    page.screenshot(path=str(screenshots_dir / "v2-selector.png"))  # the list open, in view
    option.click()
    settle(page)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("Methodology v2", exact=False).first).to_be_visible()
    grid = main.get_by_test_id("stDataFrame").first
    shown = headers_in_view(grid)
    # the original's rule set: ranked by dollar P/L, its return and portfolio value beside
    assert shown[:4] == ["Family", "P/L [95% CI]", "Return [95% CI]", "Portfolio value"], shown
    # v2's summed curves are drawn (never v1's): the chart, not the "not drawn yet" note
    expect(main.get_by_text("not drawn yet", exact=False)).to_have_count(0)
    expect(main.get_by_role("button", name="Download curve CSV")).to_be_visible()
    shoot(page, screenshots_dir, "v2-leaderboard")

    # The sidebar's navigation clears the query string: the session keeps the version.
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Family").click()
    expect(page.get_by_role("heading", name="Family", exact=True)).to_be_visible()
    settle(page)
    page.wait_for_timeout(400)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("Methodology v2", exact=False).first).to_be_visible()
    row = board[board["kind"] == "llm"].iloc[0]  # the family it opens on: the only model
    metrics = main.get_by_test_id("stMetric")
    expect(metrics.filter(has_text="P/L (summed)")).to_contain_text(
        fmt.signed_money(row["total_pnl"])
    )
    expect(metrics.filter(has_text="Brier (diagnostic)")).to_have_count(1)
    expect(main.get_by_role("heading", name="P/L over time, all its cohorts")).to_be_visible()
    expect(main.get_by_role("button", name="Download curve CSV")).to_be_visible()
    shoot(page, screenshots_dir, "v2-family")

    # And on to a third page: the version stays picked (a new load of the address is a new
    # session, which starts from the link's own keys).
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()
    expect(page.get_by_role("heading", name="Compare", exact=True)).to_be_visible()
    settle(page)
    expect(page.get_by_test_id("stMain").get_by_text("Methodology v2").first).to_be_visible()

    open_page(page, base, f"decisions?decision={decision}", "Decisions")
    main = page.get_by_test_id("stMain")
    page.get_by_role("tab", name="Prices").click()
    page.wait_for_timeout(600)
    panel = page.get_by_role("tabpanel", name="Prices")
    prices = panel.get_by_test_id("stDataFrame")
    expect(prices).to_have_count(2)  # the trades, then the frozen universe
    prices.first.scroll_into_view_if_needed()
    headers = headers_in_view(prices.first)
    assert "Where the price came from" in headers, headers
    expect(main.get_by_text("The frozen universe it saw", exact=False)).to_be_visible()
    shoot(page, screenshots_dir, "v2-decision-prices")
