"""Late entrants on the same cohorts: the leaderboard's late-entry scope and the
Compare pair, on the finished season with shadows written by `copy_shadow`, on each backend.

A late entrant that copies an incumbent's whole history must show exactly the incumbent's
figures (return, Brier, their intervals), and their paired difference must be zero with a
zero-width interval: the pairing by original cohort is then right. A late entrant on one
cohort only is ranked on that cohort's capital alone.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.views.late_entry import entrants, late_comparison, late_entries
from arena.core.errors import InputError
from arena.storage.db import create_db_engine
from tests.analytics.finished_season import finished_copy
from tests.analytics.season import LLM_A, LLM_B
from tests.late_entry_rows import copy_shadow

CHEAP: dict[str, Any] = {"replicates": 40, "seed": 3, "null_seeds": 0}
LATE_A = f"late:{LLM_A}"
LATE_B = f"late:{LLM_B}-late"


@pytest.fixture(params=["sqlite", "postgres"])
def shadows(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """The finished season on each backend with three shadows: llm-a replaying cohorts 1 and 2
    as itself (its family also played them live), and a new family copying llm-b on cohort 1
    alone, stamped contaminated."""
    with finished_copy(request, tmp_path) as url:
        engine = create_db_engine(url)
        copy_shadow(engine, 1, LLM_A, LLM_A)
        copy_shadow(engine, 2, LLM_A, LLM_A)
        copy_shadow(engine, 1, LLM_B, contaminated=True)
        try:
            yield engine
        finally:
            engine.dispose()


def test_a_late_entrant_is_ranked_beside_the_incumbents_of_its_cohorts(shadows: Engine) -> None:
    board = leaderboard(shadows, late_entry=True, **CHEAP).set_index("family_id")
    live = leaderboard(shadows, **CHEAP).set_index("family_id")

    # Every incumbent of cohorts 1-2, and each late entrant as its own row.
    assert set(board.index) == set(live.index) | {LATE_A, LATE_B}
    assert board.loc[LATE_A, "display_name"] == "Model A · late entry"
    assert board.loc[LATE_B, "display_name"] == "Model B (new) · late entry, contaminated"
    # The copy of llm-a's history shows llm-a's figures, intervals and all.
    for column in (
        "cohorts",
        "capital",
        "total_pnl",
        "return_pct",
        "return_ci_low",
        "return_ci_high",
        "brier",
        "brier_ci_low",
        "brier_ci_high",
        "resolved_bets",
        "decisions",
        "max_drawdown_pct",
        "sharpe",
    ):
        assert board.loc[LATE_A, column] == pytest.approx(board.loc[LLM_A, column]), column
    assert board.loc[LLM_A, "return_pct"] == pytest.approx(live.loc[LLM_A, "return_pct"])
    assert board.loc[LLM_A, "brier"] == pytest.approx(live.loc[LLM_A, "brier"])
    # Tied copies split P(rank #1); the probabilities still sum to one.
    assert board.loc[LATE_A, "p_rank_1"] == pytest.approx(board.loc[LLM_A, "p_rank_1"])
    assert board["p_rank_1"].sum() == pytest.approx(1.0)
    # A late entrant on cohort 1 alone: one cohort's capital, llm-b's cohort-1 P/L.
    one = leaderboard(shadows, cohort=1, late_entry=True, **CHEAP).set_index("family_id")
    assert board.loc[LATE_B, "cohorts"] == 1
    assert board.loc[LATE_B, "capital"] == pytest.approx(one.loc[LLM_B, "capital"])
    assert board.loc[LATE_B, "total_pnl"] == pytest.approx(one.loc[LLM_B, "total_pnl"])
    assert LATE_A in one.index and one.loc[LATE_A, "cohorts"] == 1

    # Compare: the copy against its incumbent differs by exactly zero, interval zero wide.
    pair = late_comparison(shadows, LATE_A, LLM_A, replicates=40, seed=3)
    assert pair["markets"].min() > 0
    assert (pair["mean_difference"] == 0).all()
    assert (pair["ci_low"] == 0).all() and (pair["ci_high"] == 0).all()
    with pytest.raises(InputError, match="did not play"):
        late_comparison(shadows, LATE_A, "late:nobody", replicates=40)

    # The table of every late entrant: one row per shadow, raw values, stable ids.
    entries = late_entries(shadows, "v1")
    assert entries[["entrant_id", "cohort_number"]].values.tolist() == [
        [LATE_A, 1],
        [LATE_B, 1],
        [LATE_A, 2],
    ]
    assert entries["status"].tolist() == ["completed"] * 3
    assert entries["contaminated"].tolist() == [False, True, False]
    summary = entrants(entries).set_index("entrant_id")
    assert summary.loc[LATE_A, "cohorts"] == [1, 2]
    assert bool(summary.loc[LATE_B, "contaminated"])
    assert late_entries(shadows, "v2").empty
