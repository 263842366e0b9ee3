"""Methodology v2 in Chromium: the sidebar's methodology selector, a v2 leaderboard (portfolio
value first, Brier a diagnostic) and a decision's price provenance, over a short v2 demo
season (prices from the simulated CLOB through the real client), with screenshots."""

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from arena.app.demo import DEMO_START, run_demo
from arena.config import Methodology, load_settings
from arena.engine.analyses import store_analyses
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db
from arena.storage.tables import DECISIONS, TRADES
from tests.e2e.conftest import dashboard_server, settle
from tests.e2e.test_page_markets import headers_in_view, open_page, shoot
from tests.test_v2_demo import SMALL

END = DEMO_START + timedelta(days=9)


@pytest.fixture(scope="module")
def v2_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A dashboard over a short v2 demo season with its analyses stored; (base URL, the id of
    a decision that traded)."""
    folder = tmp_path_factory.mktemp("e2e-v2")
    url = f"sqlite:///{folder / 'v2.db'}"
    engine = create_db_engine(url)
    try:
        init_db(engine)
        settings = load_settings(
            database_url=url, llm_api_key=None, methodology=Methodology(version="v2")
        )
        run_demo(engine, settings, SMALL, weeks=2, seed=3, stop_at=END)
        store_analyses(engine, END)
        with engine.connect() as conn:
            decision = conn.execute(
                select(DECISIONS.c.id)
                .join(TRADES, TRADES.c.decision_id == DECISIONS.c.id)
                .order_by(DECISIONS.c.id)
                .limit(1)
            ).scalar_one()
    finally:
        engine.dispose()
    with dashboard_server(url, folder) as base_url:
        yield base_url, int(decision)


def test_selector_v2_leaderboard_and_price_provenance(
    v2_server: tuple[str, int], page: Page, screenshots_dir: Path
) -> None:
    base, decision = v2_server
    open_page(page, base, "leaderboard", "Leaderboard")
    sidebar = page.get_by_test_id("stSidebar")
    selector = sidebar.get_by_test_id("stSelectbox").filter(has_text="Methodology")
    expect(selector).to_have_count(1)
    combo = selector.get_by_role("combobox")  # a react-aria combobox: type, then pick
    combo.click()
    combo.fill("v2")
    option = page.get_by_role("option", name="v2: order-book prices")
    expect(option).to_be_visible()
    option.click()
    settle(page)
    page.wait_for_timeout(400)
    assert "methodology=v2" in page.url
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("Methodology v2", exact=False).first).to_be_visible()
    grid = main.get_by_test_id("stDataFrame").first
    shown = headers_in_view(grid)
    assert shown[:4] == ["Family", "Portfolio value", "Return [95% CI]", "Brier (diagnostic)"], (
        shown
    )
    shoot(page, screenshots_dir, "v2-leaderboard")

    open_page(page, base, f"decisions?decision={decision}", "Decisions")
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
