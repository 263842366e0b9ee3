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


def test_a_stored_frame_gets_the_realised_split_beside_it(on_analysed: str) -> None:
    """The hourly job's stored leaderboard lacks the realised columns: the page reads the
    split beside it (`views.realised`) and shows it per family as a person reads it."""
    from arena.analytics.views.realised import realised_by_family
    from arena.dashboard.fmt import realised_split as split_text
    from arena.storage.db import create_db_engine

    at = run_page("leaderboard")
    assert not at.exception, [e.value for e in at.exception]
    assert any("by the hourly" in read(str(c.value)) for c in at.caption)  # stored
    shown = at.dataframe[0].value
    engine = create_db_engine(on_analysed)
    try:
        split = realised_by_family(engine).set_index("family_id")
    finally:
        engine.dispose()
    assert len(shown) == len(split)
    texts = {
        split_text(r, m)
        for r, m in zip(split["resolved_share"], split["marked_share"], strict=True)
    }
    assert set(shown["realised"]) == texts
    assert all(" resolved · " in t or t == "—" for t in shown["realised"])
