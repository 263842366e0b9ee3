"""The Stated probability page through AppTest: a cohort link opens one cohort's
three tables and the Cohorts page marks the extended cohort, on a short demo season under the
protocol extension; on a database without an extended cohort the page says so in one line.
(The tables read with their columns in view, and a decision's stated probabilities, in
Chromium: tests/e2e/test_page_stated.py.)"""

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from arena.lineup import load_lineup
from tests.dashboard.apptest import read, run_page, use_database, widget
from tests.stated_season import DemoSeasons

TITLE = "Stated probability"


@pytest.fixture(scope="module")
def extended_url(demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 15-day demo season stamped `stated_probability` (analyses stored)."""
    return demo_seasons.copy(
        tmp_path_factory.mktemp("apptest-stated"), load_lineup(None), "stated_probability", 15
    )


@pytest.fixture
def on_extended(extended_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The dashboard over the extended demo season."""
    yield from use_database(monkeypatch, extended_url)


def ok(at: AppTest) -> AppTest:
    """The run raised nothing."""
    assert not at.exception, [e.value for e in at.exception]
    return at


def alerts(at: AppTest) -> list[str]:
    """Every alert box of the page (info, warning, error, success), as read."""
    kinds = ("info", "warning", "error", "success")
    return [read(str(getattr(a, "value", ""))) for kind in kinds for a in at.get(kind)]


def shown_value(box: object) -> str:
    """A select box's choice as shown (its format_func applied)."""
    options, index = box.options, box.index  # type: ignore[attr-defined]
    assert index is not None
    return str(options[index])


def test_one_cohort_and_its_mark_on_the_cohorts_page(on_extended: str) -> None:
    at = ok(run_page("stated", cohort=1))
    assert TITLE in [read(t.value) for t in at.title]
    assert shown_value(widget(at, "selectbox", "Cohort")) == "Cohort 1"
    assert len(at.dataframe) == 3

    at = ok(run_page("cohorts", cohort=1))
    assert any("This cohort ran the protocol extension stated_probability" in a for a in alerts(at))


def test_without_an_extended_cohort_the_page_says_so_in_one_line(on_analysed: str) -> None:
    at = ok(run_page("stated"))

    (note,) = alerts(at)
    assert "No cohort here ran the stated-probability extension" in note
    assert "arena demo --extensions stated_probability" in note
    assert not at.dataframe
