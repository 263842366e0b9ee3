"""The Execution page in Chromium over the scripted cohort with a recorded real book
(tests/analytics/execution_cohort.py), its hourly analyses stored: the intervals and the flag
on screen, no exception, a screenshot for a person to look at. Script output (notes, cells,
the leaderboard's column) is checked in-process: tests/dashboard/test_execution_page.py."""

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from arena.engine.analyses import store_analyses
from arena.storage.db import dispose_engines, get_engine
from tests.analytics.execution_cohort import scripted_cohort
from tests.e2e.conftest import dashboard_server, settle
from tests.factories import WEEK1
from tests.migrated import migrated_sqlite

WIDTH, HEIGHT = 1440, 900


@pytest.fixture(scope="module")
def execution_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("e2e-execution")
    url = migrated_sqlite(folder / "arena.db")
    engine = get_engine(url)
    try:
        scripted_cohort(engine, 1)
        scripted_cohort(engine, 2, books=False)
        store_analyses(engine, WEEK1 + timedelta(weeks=2))
    finally:
        engine.dispose()
        dispose_engines()
    with dashboard_server(url, folder) as base_url:
        yield base_url


def test_the_page_shows_intervals_and_the_flag(
    execution_server: str, page: Page, screenshots_dir: Path
) -> None:
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.goto(f"{execution_server}/execution?cohort=1")
    expect(page.get_by_role("heading", name="Execution", exact=True)).to_be_visible(timeout=30_000)
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    grid = page.get_by_test_id("stDataFrame").first
    expect(grid).to_contain_text("Display price return [95% CI]")
    expect(grid).to_contain_text("+0.2")  # family A at the display price: +0.25% [+0.25, +0.25]
    expect(grid).to_contain_text("[")
    expect(grid).to_contain_text("rank not robust")
    expect(page.get_by_text("This scope executed by")).to_be_visible()
    page.screenshot(path=str(screenshots_dir / "page-execution.png"), full_page=True)
