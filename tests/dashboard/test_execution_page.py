"""The Execution page and the leaderboard's flag (AppTest) over the scripted cohort with a
recorded real book (tests/analytics/execution_cohort.py), its hourly analyses stored."""

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from arena.config import BOOK_EXECUTION, Methodology, cohort_stamp
from arena.engine.analyses import store_analyses
from arena.storage.tables import COHORTS
from tests.analytics.execution_cohort import scripted_cohort
from tests.dashboard.apptest import all_text, headings, read, run_page, use_database
from tests.factories import WEEK1


@pytest.fixture
def on_scripted(db_url: str, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    scripted_cohort(engine, 1)
    scripted_cohort(engine, 2, books=False)
    store_analyses(engine, WEEK1 + timedelta(weeks=2))
    yield from use_database(monkeypatch, db_url)


def page(name: str, **params: str) -> AppTest:
    at = run_page(name, **params)
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_execution_page_shows_intervals_ranks_and_the_flag(on_scripted: str) -> None:
    at = page("execution", cohort="1")
    assert "Execution" in headings(at)
    table = at.dataframe[0].value
    assert list(table["family"]) == ["FAM-A", "FAM-B"]
    # A under the display price: +$25 on $10,000 = +0.25%, one cluster: the interval is the point
    assert (
        table.loc[0, "return_display_text"].startswith("+0.2")
        and "[" in table.loc[0, "return_display_text"]
    )
    assert list(table["rank_book_text"]) == ["2", "1"]
    assert list(table["flag"]) == ["rank not robust", "rank not robust"]
    assert "Book walk: 1" in table.loc[1, "refused_text"]
    text = read(all_text(at))
    assert "Book walk 1 of 2" in text and "display price" in text.lower()
    assert at.get("download_button"), "no CSV"


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_cohort_without_books_says_so_and_shows_no_book_figures(on_scripted: str) -> None:
    at = page("execution", cohort="2")
    assert "no stored books: decided before book recording" in read(all_text(at))
    table = at.dataframe[0].value
    assert set(table["return_book_text"]) == {"—"} and set(table["flag"]) == {""}


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_all_cohorts_say_how_many_legs_each_rule_covers(on_scripted: str) -> None:
    text = read(all_text(page("execution")))
    assert "Cohorts 2 of this scope have no stored books" in text
    assert "Book walk 1 of 4" in text and "Display price 4 of 4" in text


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_leaderboard_flags_a_rank_not_robust(on_scripted: str) -> None:
    at = page("leaderboard", cohort="1")
    table = at.dataframe[0].value
    assert list(table["execution_flag"]) == ["rank not robust", "rank not robust"]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_sidebar_names_the_extensions_the_cohorts_ran(
    db_url: str, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cohort stamped `book_execution` is named as such, never as another extension, and the
    sidebar points to the page with its figures."""
    scripted_cohort(engine, 1)
    stamp = cohort_stamp(Methodology(), [BOOK_EXECUTION])
    with engine.begin() as conn:
        conn.execute(update(COHORTS).where(COHORTS.c.number == 1).values(constants=stamp))
    for _ in use_database(monkeypatch, db_url):
        sidebar = read(" ".join(str(c.value) for c in page("execution").sidebar.caption))
        assert "ran protocol extensions (book execution): not stock v1" in sidebar, sidebar
        assert "(see also Execution)" in sidebar and "stated" not in sidebar
