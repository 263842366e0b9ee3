"""The Replicates page through AppTest, on a short demo season with three agents
per family: a cohort link opens one cohort, and the Agent page offers a family's replicates and
shows the one linked; on a database without replicates the page says how to start them in one
line. (The figures, tables, chart and agents CSV in Chromium: tests/e2e/test_page_replicates.py.)"""

import re
from collections.abc import Iterator

import pytest

from arena.lineup import load_lineup
from tests.dashboard.apptest import all_text, read, run_page, use_database, widget
from tests.dashboard.test_stated_page import alerts, ok, shown_value
from tests.stated_season import DemoSeasons

TITLE = "Replicates"


@pytest.fixture(scope="module")
def replicated_url(demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 9-day demo season with `--replicates 3` (analyses stored)."""
    folder = tmp_path_factory.mktemp("apptest-replicates")
    return demo_seasons.copy(folder, load_lineup(None), "", 9, replicates=3)


@pytest.fixture
def on_replicated(replicated_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The dashboard over the replicated demo season."""
    yield from use_database(monkeypatch, replicated_url)


def test_a_cohort_link_opens_one_cohort(on_replicated: str) -> None:
    at = ok(run_page("replicates", cohort=1))

    assert TITLE in [read(t.value) for t in at.title]
    assert shown_value(widget(at, "selectbox", "Cohort")) == "Cohort 1"
    assert len(at.dataframe) == 2
    assert re.search(r"Over cohort 1: 33 agents of 11 families", read(all_text(at)))


def test_the_agent_page_picks_one_replicate(on_replicated: str) -> None:
    """A replicated cohort's Agent page offers the family's replicates and shows the one
    linked (the Leaderboard's pooled rows: tests/e2e/test_page_replicates.py)."""
    at = ok(run_page("agent", cohort=1, family="gpt-5.1", replicate=2))

    assert shown_value(widget(at, "selectbox", "Replicate")) == "Replicate 2 of 3"
    text = read(all_text(at))
    assert "GPT-5.2 · r2 — cohort 1" in text, text
    assert re.search(r"Cohort 1's 33 agents", text), text


def test_without_replicates_the_page_says_how_to_start_them(on_analysed: str) -> None:
    at = ok(run_page("replicates"))

    (note,) = alerts(at)
    assert "No cohort here has replicates" in note
    assert "ARENA_REPLICATES=3" in note
    assert "arena demo --replicates 3" in note
    assert not at.dataframe
