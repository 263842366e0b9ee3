"""The Leaderboard page's script output, in-process (AppTest): a cohort link naming nothing
warns and shows no table. Moved from tests/e2e/test_page_leaderboard.py, which keeps what needs
a browser (the key columns on screen, the CSV downloads, the link to Compare, the computation
asked for)."""

from tests.dashboard.apptest import headings, read, run_page


def test_a_bad_cohort_link_warns_and_shows_no_table(on_analysed: str) -> None:
    at = run_page("leaderboard", cohort="99")
    assert not at.exception, [e.value for e in at.exception]
    assert "Leaderboard" in headings(at)

    warnings = [read(str(w.value)) for w in at.warning]
    assert any("This link's cohort='99' names no cohort" in w for w in warnings), warnings
    assert len(at.dataframe) == 0
