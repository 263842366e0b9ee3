"""The Stated probability page through AppTest: a cohort link opens one cohort's
three tables and the Cohorts page marks the extended cohort, on a short demo season under the
protocol extension; on a database without an extended cohort the page says so in one line.
(The tables read with their columns in view, and a decision's stated probabilities, in
Chromium: tests/e2e/test_page_stated.py.)"""

from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import ok, read, run_page, widget

TITLE = "Stated probability"


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
