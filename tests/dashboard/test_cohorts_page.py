"""The Cohorts page's script output, in-process (AppTest): a bad cohort link warns and shows
nothing in its place. Moved from tests/e2e/test_page_cohorts.py, which keeps what needs a
browser (the tables on screen, the CSV download, a standings row opening its agent)."""

from tests.dashboard.apptest import element_kinds, headings, read, run_page


def test_a_bad_cohort_link_warns_and_shows_nothing_else(on_analysed: str) -> None:
    at = run_page("cohorts", cohort="99")
    assert not at.exception, [e.value for e in at.exception]
    assert "Cohorts" in headings(at)

    warnings = [read(str(w.value)) for w in at.warning]
    assert any("This link's cohort='99' names no cohort" in w for w in warnings), warnings
    assert not [h for h in headings(at) if "cohort 1" in h.lower()], headings(at)
    assert "vega_lite_chart" not in element_kinds(at)
