"""The Stated probability page in Chromium at 1440×900, on a short demo season
under the protocol extension: its three tables read with intervals and no missing-looking
cell, their key columns in view, the Brier chart drawn, the extended cohorts marked in the
sidebar, and a decision's BUY legs show their stated probabilities. (How "in view" is measured:
`test_page_markets`. A cohort link, the Cohorts page's mark and a database without an extended
cohort, through AppTest: tests/dashboard/test_stated_page.py.)"""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from arena.dashboard import fmt
from arena.lineup import load_lineup
from arena.storage.db import create_db_engine
from arena.storage.tables import AGENTS, COHORTS, FAMILIES, TRADES
from tests.e2e.conftest import dashboard_server
from tests.e2e.shots import shoot
from tests.e2e.test_page_markets import assert_readable, headers_in_view, open_page
from tests.stated_season import DemoSeasons

TITLE = "Stated probability"
NUMBER = r"[+−]?\d+\.\d{2,3}"
INTERVAL = re.compile(rf"^{NUMBER} \[{NUMBER}, {NUMBER}\]$")
SHARE = re.compile(r"^\d+% \[\d+, \d+\]$")
DASH = "—"


@pytest.fixture(scope="module")
def extended_url(demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 15-day demo season stamped `stated_probability` (analyses stored)."""
    return demo_seasons.copy(
        tmp_path_factory.mktemp("e2e-stated"), load_lineup(None), "stated_probability", 15
    )


@pytest.fixture(scope="module")
def extended_server(extended_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard over the extended season."""
    with dashboard_server(extended_url, tmp_path_factory.mktemp("e2e-stated-server")) as base_url:
        yield base_url


def intervals_or_dash(cells: list[str], pattern: re.Pattern[str] = INTERVAL) -> bool:
    return all(pattern.match(c) or c == DASH for c in cells) and any(
        pattern.match(c) for c in cells
    )


def test_the_view_reads_with_intervals(
    extended_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, extended_server, "stated", TITLE)
    grids = page.get_by_test_id("stDataFrame")
    expect(grids).to_have_count(3)

    quality = grids.nth(0)
    shown = headers_in_view(quality)
    assert shown[:6] == [
        "Family",
        "Stated p Brier [95%]",
        "Implied (v1) Brier [95%]",
        "Stated − implied [95%]",
        "Market Brier [95%]",
        "Stated − market [95%]",
    ], shown
    cells = assert_readable(quality)
    assert "Oracle (simulation only)" in cells["Family"]
    for column in shown[1:6]:
        assert intervals_or_dash(cells[column]), (column, cells[column])

    conduct = grids.nth(1)
    shown = headers_in_view(conduct)
    assert shown == [
        "Family",
        "Agrees with p [95%]",
        "Mean p − price [95%]",
        "Stake / Kelly [95%]",
        "Log-growth [95%]",
        "Kelly log-growth [95%]",
        "Actual − Kelly [95%]",
    ], shown
    cells = assert_readable(conduct)
    assert all(SHARE.match(c) for c in cells["Agrees with p [95%]"]), cells
    for column in ("Mean p − price [95%]", "Stake / Kelly [95%]"):
        assert all(INTERVAL.match(c) for c in cells[column]), (column, cells[column])
    assert intervals_or_dash(cells["Actual − Kelly [95%]"])

    deviating = grids.nth(2)
    shown = headers_in_view(deviating)
    assert shown == [
        "Family",
        "Resolved bets",
        "Stated p Brier [95%]",
        "Market Brier [95%]",
        "Skill vs market [95%]",
    ], shown
    cells = assert_readable(deviating)
    assert intervals_or_dash(cells["Skill vs market [95%]"])

    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(1)
    expect(page.get_by_text(re.compile(r"Computed .* by the hourly"))).to_be_visible()
    # The baselines that state nothing are named, their bets counted as missing.
    expect(
        page.get_by_text(re.compile(r"Baseline: favourite \(\d+ bets?, none stated\)"))
    ).to_be_visible()
    expect(page.get_by_test_id("stSidebar")).to_contain_text(
        "ran protocol extensions (stated probability): not stock v1"
    )
    shoot(page, screenshots_dir, "stated-probability")


STATED_CELL = re.compile(r"^stated p \d\.\d{2,3} vs price \d\.\d{2,3} \([+−]\d\.\d{2,3}\)$")


def a_decision_with_stated_and_missing(url: str) -> tuple[int, int, str, dict[int, Any]]:
    """(decision id, cohort number, family id, leg index → (p, price)) of an LLM decision
    whose BUYs include a stated probability and, if any decision has one, a missing one."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                select(
                    TRADES.c.decision_id,
                    COHORTS.c.number,
                    AGENTS.c.family_id,
                    TRADES.c.leg_index,
                    TRADES.c.probability,
                    TRADES.c.price,
                )
                .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
                .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
                .join(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
                .where(TRADES.c.trade_type == "BUY", FAMILIES.c.kind == "llm")
                .order_by(TRADES.c.decision_id, TRADES.c.leg_index)
            ).all()
    finally:
        engine.dispose()
    by_decision: dict[int, list[Any]] = {}
    for row in rows:
        by_decision.setdefault(int(row.decision_id), []).append(row)

    def both(found: list[Any]) -> tuple[bool, bool]:
        stated = any(r.probability is not None for r in found)
        return stated and any(r.probability is None for r in found), stated

    decision_id = max(by_decision, key=lambda d: (both(by_decision[d]), -d))
    chosen = by_decision[decision_id]
    assert both(chosen)[1], "no LLM decision stated a probability"
    legs = {int(r.leg_index): (r.probability, float(r.price)) for r in chosen}
    return decision_id, int(chosen[0].number), str(chosen[0].family_id), legs


def test_a_decision_shows_each_buys_stated_probability(
    extended_url: str, extended_server: str, page: Page, screenshots_dir: Path
) -> None:
    """The Decisions page of an extended cohort: each BUY leg reads "stated p … vs price …
    (p − price)", or "not stated" where the model gave none, in view beside the price."""
    decision_id, cohort, family, stated = a_decision_with_stated_and_missing(extended_url)
    open_page(
        page,
        extended_server,
        f"decisions?cohort={cohort}&family={family}&decision={decision_id}",
        "Decisions",
    )
    expect(page.get_by_role("heading", name=f"Decision {decision_id}", exact=True)).to_be_visible()
    legs = page.get_by_test_id("stDataFrame").nth(1)
    in_view = headers_in_view(legs)
    for column in ("Market", "Side", "Result", "Amount", "Price", "Stated probability"):
        assert column in in_view, in_view
    cells = assert_readable(legs)
    shown = dict(zip(map(int, cells["Leg"]), cells["Stated probability"], strict=True))
    for leg, (p, price) in stated.items():
        assert shown[leg] == fmt.stated_probability(p, price), (leg, shown[leg], p, price)
        assert STATED_CELL.match(shown[leg]) or (p is None and shown[leg] == "not stated")
    expect(
        page.get_by_text(re.compile(r"ran the protocol extension stated_probability: its prompt"))
    ).to_be_visible()
    shoot(page, screenshots_dir, "decision-stated-probability")
