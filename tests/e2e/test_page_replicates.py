"""The Replicates page in Chromium at 1440×900, on a short demo season with three
agents per family: the summary figures read with their interval, the chart draws, both tables
read as text (returns, points, shares; no missing-looking cell) with their key columns in
view, the agents CSV carries raw numbers and stable ids, and the Leaderboard pools a family's
replicates in one row. (How "in view" is measured: `test_page_markets`. A cohort link, the
Agent page's replicate and a database without replicates, through AppTest:
tests/dashboard/test_replicates_page.py.)"""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from arena.analytics.stats.replicates import AGENT_COLUMNS
from arena.lineup import load_lineup
from tests.e2e.conftest import dashboard_server
from tests.e2e.shots import shoot
from tests.e2e.test_page_markets import assert_readable, headers_in_view, open_page
from tests.stated_season import DemoSeasons

TITLE = "Replicates"
DASH = "—"
SHARE_INTERVAL = re.compile(r"^\d+% \[\d+, \d+\]$")
SHARE = re.compile(r"^\d+%$")
RETURN = re.compile(r"^[+−]\d[\d,]*\.\d%$")
POINTS = re.compile(r"^\d[\d,]*\.\d pp$")
BRIER = re.compile(r"^\d\.\d{3}$")
RANK_OF = re.compile(r"^\d+ of 11$")
RANKS = re.compile(r"^\d+(–\d+)?$")


@pytest.fixture(scope="module")
def replicated_server(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A dashboard over a 9-day demo season with `--replicates 3` (analyses stored)."""
    folder = tmp_path_factory.mktemp("e2e-replicates")
    url = demo_seasons.copy(folder, load_lineup(None), "", 9, replicates=3)
    with dashboard_server(url, folder) as base_url:
        yield base_url


def matches(cells: list[str], pattern: re.Pattern[str], *, dash: bool = False) -> bool:
    return all(pattern.match(c) or (dash and c == DASH) for c in cells) and any(
        pattern.match(c) for c in cells
    )


def metric(page: Page, label: str) -> str:
    box = page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    )
    return box.get_by_test_id("stMetricValue").inner_text().strip()


def test_the_view_reads_and_the_csv_has_ids(
    replicated_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, replicated_server, "replicates", TITLE)
    expect(page.get_by_role("combobox", name="Cohort")).to_have_value("All replicated cohorts")
    assert SHARE_INTERVAL.match(metric(page, "Noise share [95%]"))
    assert SHARE_INTERVAL.match(metric(page, "Among LLM families [95%]"))
    assert SHARE.match(metric(page, "Ranking unchanged"))
    assert SHARE.match(metric(page, "Pairs in pooled order"))
    expect(
        page.get_by_text(re.compile(r"20,000 seeded random ways, of 3\.1 × 10¹⁰"))
    ).to_be_visible()
    expect(page.get_by_text(re.compile(r"Computed .* by the hourly"))).to_be_visible()
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(1)

    grids = page.get_by_test_id("stDataFrame")
    expect(grids).to_have_count(2)
    spread = grids.nth(0)
    shown = headers_in_view(spread)
    assert shown == [
        "Family",
        "Replicates",
        "Pooled return",
        "Return SD",
        "Return range",
        "Gap to next",
        "Pooled Brier",
        "Brier SD",
        "Brier gap",
        "Resolved bets",
    ], shown
    cells = assert_readable(spread)
    assert len(cells["Family"]) == 11 and "Oracle (simulation only)" in cells["Family"]
    assert not any("·" in name for name in cells["Family"])  # families, not agents
    assert set(cells["Replicates"]) == {"3"}
    assert matches(cells["Pooled return"], RETURN)
    for column in ("Return SD", "Return range"):
        assert matches(cells[column], POINTS), (column, cells[column])
    assert matches(cells["Gap to next"], POINTS, dash=True)
    assert cells["Gap to next"][-1] == DASH  # the last family has no next one
    for column in ("Pooled Brier", "Brier SD", "Brier gap"):
        assert matches(cells[column], BRIER, dash=True), (column, cells[column])
    # Deterministic baselines: identical replicates, zero spread (shown, not hidden).
    oracle = cells["Family"].index("Oracle (simulation only)")
    assert cells["Return SD"][oracle] == "0.0 pp"

    ranks = grids.nth(1)
    shown = headers_in_view(ranks)
    assert shown == [
        "Family",
        "Pooled rank",
        "Keeps its rank",
        "Ranks over picks",
        "Return SD",
        "Gap to next",
    ], shown
    cells = assert_readable(ranks)
    assert matches(cells["Pooled rank"], RANK_OF)
    assert matches(cells["Keeps its rank"], SHARE)
    assert matches(cells["Ranks over picks"], RANKS)
    expect(page.get_by_text(re.compile(r"\d+ of 11 families have a return spread"))).to_be_visible()

    with page.expect_download() as info:
        page.get_by_role("button", name="Download agents CSV", exact=True).click()
    download = info.value
    assert download.suggested_filename == "forecaster-arena-replicate-agents-all.csv"
    lines = Path(download.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == ",".join(AGENT_COLUMNS)
    assert len(lines) == 1 + 2 * 11 * 3  # two cohorts × eleven families × three replicates
    first = dict(zip(AGENT_COLUMNS, lines[1].split(","), strict=True))
    assert first["replicate"] in {"1", "2", "3"} and re.match(r"^-?\d+(\.\d+)?$", first["pnl"])
    shoot(page, screenshots_dir, "replicates")


REPLICATE_RANGE = re.compile(r"^3 × [+−]\d[\d,]*\.\d% … [+−]\d[\d,]*\.\d%$")


def test_the_leaderboard_pools_them(
    replicated_server: str, page: Page, screenshots_dir: Path
) -> None:
    """A replicated cohort's Leaderboard has one row per family with its Replicates column
    beside Return. (The Agent page's pick of one replicate, through AppTest:
    tests/dashboard/test_replicates_page.py.)"""
    open_page(page, replicated_server, "leaderboard?cohort=1", "Leaderboard")
    board = page.get_by_test_id("stDataFrame").first
    assert headers_in_view(board)[:3] == ["Family", "Return [95% CI]", "Replicates"]
    cells = assert_readable(board)
    assert len(cells["Family"]) == 11 and not any(" · r" in name for name in cells["Family"])
    assert matches(cells["Replicates"], REPLICATE_RANGE)
    shoot(page, screenshots_dir, "replicates-leaderboard")
