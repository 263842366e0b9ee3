"""The Leaderboard's "Late entrants on the same cohorts" section and a Compare pair with a
late entrant, with Streamlit's AppTest on the finished season plus shadows."""

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats.leaderboard import leaderboard, ranked
from arena.analytics.views.decisions import decisions
from arena.analytics.views.late_entry import late_comparison
from arena.dashboard import fmt
from arena.engine.bundles import build_bundles
from arena.storage.db import create_db_engine
from tests.analytics.finished_season import FINISHED_AT, finished_season
from tests.analytics.season import LLM_A, writable_copy
from tests.dashboard.apptest import all_text, read, run_page, use_database
from tests.late_entry_rows import copy_shadow

LATE_A = f"late:{LLM_A}"
LATE_B = f"late:{LLM_A}-late"
TAINTED = "Model A (new) · late entry, contaminated"


@pytest.fixture(scope="module")
def late_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The finished season with llm-a replaying cohorts 1-2 and a contaminated copy of
    llm-a on cohort 1 as a new family (SQLite: the read model is tested on both backends
    in tests/analytics/test_late_entry_board.py)."""
    base = tmp_path_factory.getbasetemp()
    url = writable_copy(finished_season(base), Path(base) / "late-pages.db")
    engine = create_db_engine(url)
    copy_shadow(engine, 1, LLM_A, LLM_A)
    copy_shadow(engine, 2, LLM_A, LLM_A)
    copy_shadow(engine, 1, LLM_A, contaminated=True)
    build_bundles(engine, FINISHED_AT + timedelta(days=1))  # the shadows' bundles, kept
    engine.dispose()
    return url


@pytest.fixture
def reader(late_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    for _ in use_database(monkeypatch, late_db):
        engine = create_db_engine(late_db, role="reader")
        try:
            yield engine
        finally:
            engine.dispose()


def _ok(at: object) -> None:
    assert not at.exception, [e.value for e in at.exception]  # type: ignore[attr-defined]
    assert not at.error, [e.value for e in at.error]  # type: ignore[attr-defined]


def test_the_leaderboard_shows_late_entrants_beside_their_incumbents(reader: Engine) -> None:
    at = run_page("leaderboard")
    _ok(at)
    text = all_text(at)
    assert "Late entrants on the same cohorts" in text
    assert (
        f"Late entrants replayed cohorts 1, 2; {TAINTED}: contaminated: its cohorts started on "
        "or before its knowledge cutoff." in text
    )
    expected = ranked(leaderboard(reader, methodology="v1", late_entry=True, null_seeds=0), "v1")
    shown = at.dataframe[0].value  # the live board waits for its button; this is the section's
    assert shown["family"].tolist() == expected["display_name"].tolist()
    assert (
        TAINTED in shown["family"].tolist() and "Model A · late entry" in shown["family"].tolist()
    )
    returns = zip(
        expected["return_pct"], expected["return_ci_low"], expected["return_ci_high"], strict=True
    )
    assert shown["return"].tolist() == [fmt.pct_interval(*r) for r in returns]
    # P(rank #1) among the model families, late entrants included; baselines are references
    assert shown["first"].tolist() == [
        fmt.share(p, 1) if kind == "llm" else "reference"
        for kind, p in zip(expected["kind"], expected["p_rank_1_contenders"], strict=True)
    ]
    assert expected.loc[expected["kind"] == "llm", "p_rank_1_contenders"].sum() == pytest.approx(1)


def test_compare_pairs_a_contaminated_late_entrant_with_an_incumbent(reader: Engine) -> None:
    at = run_page("compare", family=LATE_B, versus=LLM_A)
    _ok(at)
    warned = [read(str(w.value)) for w in at.warning]
    assert any(TAINTED in w and "Contaminated" in w for w in warned), warned
    assert "compared on its own cohorts (1)" in all_text(at)
    expected = late_comparison(reader, LATE_B, LLM_A)
    table = at.dataframe[0].value
    assert table["markets"].tolist() == expected["markets"].tolist()
    assert expected["mean_difference"].tolist() == [0.0, 0.0]  # a copy of llm-a's cohort 1
    assert "$0.00" in table["difference"].tolist()[0]
    assert at.query_params["family"] == LATE_B


def test_exports_offers_late_entrants_bundles_and_names_a_contaminated_one(reader: Engine) -> None:
    at = run_page("exports")
    _ok(at)
    (picker,) = [box for box in at.selectbox if box.label == "Late entrant's bundle"]
    labels = list(picker.options)  # as the page formats them
    assert f"Cohort 1 · {TAINTED}" in labels and "Cohort 2 · Model A · late entry" in labels
    picker.select_index(labels.index(f"Cohort 1 · {TAINTED}")).run()
    _ok(at)
    assert "Contaminated: cohort 1 started on or before" in " ".join(
        str(w.value) for w in at.warning
    )


def test_decisions_lists_a_late_entrants_decisions_apart_and_says_what_they_are(
    reader: Engine,
) -> None:
    live = decisions(reader, limit=10**6)
    late = decisions(reader, late_entry=f"{LLM_A}-late", limit=10**6)
    again = decisions(reader, cohort=1, late_entry=LLM_A, limit=10**6)
    assert len(late) and set(late["display_name"]) == {TAINTED}
    assert not set(late["decision_id"]) & set(live["decision_id"])  # never listed as live
    assert set(again["cohort_number"]) == {1} and set(again["display_name"]) == {
        "Model A · late entry"
    }
    picked = int(late["decision_id"].iloc[0])
    at = run_page("decisions", late=f"{LLM_A}-late", decision=picked)
    _ok(at)
    text = all_text(at)
    assert "as a late entrant" in text and "the Family filter does not apply" in text
    warned = " ".join(str(w.value) for w in at.warning)
    assert "A late entrant's decision" in warned and "Contaminated" in warned
