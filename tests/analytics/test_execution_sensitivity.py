"""Execution sensitivity on a scripted cohort with a recorded real book, on both backends.

The counterfactuals are written out by hand. Family A: YES $1,000; family B: NO $500; display
YES 0.60 / NO 0.40; the recorded book's YES best bid 0.61, best ask 0.62 (46,579.05 shares:
$1,000 fills at that one level), so its mid is 0.615; the NO token has no stored book. Marks
as the cohort recorded them: YES 0.615, NO 0.385. Six decimal places, v1's rounding.
"""

from decimal import Decimal as D

import numpy as np
import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats import leaderboard as lb
from arena.analytics.stats.bootstrap import family_bootstrap
from arena.analytics.stats.execution import NO_BOOKS, RULES, cluster_draw, re_execute, rule_units
from arena.analytics.stats.execution_inputs import (
    book_coverage,
    execution_sensitivity,
    load_execution_inputs,
)
from tests.analytics import season_fixture
from tests.analytics.execution_cohort import scripted_cohort

CAPITAL = D(10000)
# A, display: shares(1000 / 0.6) = 1666.666666; × 0.615 = 1024.99999959 → 1025.000000
A_DISPLAY = D("1025.000000") - D(1000)
# A, mid: shares(1000 / 0.615) = 1626.016260; × 0.615 = 999.9999999 → 1000.000000
A_MID = D("1000.000000") - D(1000)
# A, book: the whole stake at the best ask 0.62 (no fee: fees off): shares(1000 / 0.62) =
# 1612.903225; × 0.615 = 991.935483375 → 991.935483
A_BOOK = D("991.935483") - D(1000)
# B, display: 500 / 0.4 = 1250 shares; × 0.385 = 481.25
B_DISPLAY = D("481.25") - D(500)
# B, mid and book: the NO token has no book (`unknown_token`): the leg stays cash
B_MID = B_BOOK = D(0)


def pct(pnl: D) -> float:
    return float(pnl / CAPITAL * 100)


def test_hand_computed_counterfactuals(engine: Engine) -> None:
    scripted_cohort(engine)
    frame = execution_sensitivity(engine, cohort=1, replicates=200).set_index("family_id")
    expected = {
        ("fam-a", "display"): A_DISPLAY,
        ("fam-a", "mid"): A_MID,
        ("fam-a", "book"): A_BOOK,
        ("fam-b", "display"): B_DISPLAY,
        ("fam-b", "mid"): B_MID,
        ("fam-b", "book"): B_BOOK,
    }
    for (family, rule), pnl in expected.items():
        row = frame.loc[family]
        assert row[f"return_{rule}"] == pytest.approx(pct(pnl), abs=1e-9), (family, rule)
        # one market, one cluster: every replicate draws it, so the interval is the point
        assert row[f"return_{rule}_ci_low"] == pytest.approx(pct(pnl), abs=1e-9)
        assert row[f"return_{rule}_ci_high"] == pytest.approx(pct(pnl), abs=1e-9)
    # display: A 1st, B 2nd; mid: a tie at 0 (both 1st); book: B (cash) 1st, A 2nd
    assert frame.loc["fam-a", ["rank_display", "rank_mid", "rank_book"]].tolist() == [1, 1, 2]
    assert frame.loc["fam-b", ["rank_display", "rank_mid", "rank_book"]].tolist() == [2, 1, 1]
    assert frame.loc["fam-a", "p_rank_1_display"] == 1.0
    assert frame.loc["fam-b", "p_rank_1_book"] == 1.0
    assert frame.loc["fam-a", "p_rank_1_mid"] == 0.5  # a tie in every replicate splits
    assert frame["own_rule"].eq("display").all()
    assert frame["not_robust"].tolist() == [True, True]
    assert frame.loc["fam-b", "refused_book"] == 1
    assert frame.loc["fam-b", "refused_book_reasons"] == "unknown_token: 1"
    assert frame.loc["fam-b", "refused_mid_reasons"] == "unknown_token: 1"
    assert frame.loc["fam-a", "refused_book"] == 0
    assert frame.loc["fam-a", "legs"] == 1
    assert frame.index.tolist() == ["fam-a", "fam-b"]  # best first under the own rule


def test_cohort_without_books_says_so(engine: Engine) -> None:
    scripted_cohort(engine, books=False)
    frame = execution_sensitivity(engine, cohort=1, replicates=50).set_index("family_id")
    assert frame["return_book"].isna().all() and frame["rank_book"].isna().all()
    assert frame["return_mid"].isna().all()  # v1's mid comes from the stored book
    assert frame.loc["fam-a", "refused_book_reasons"] == f"{NO_BOOKS}: 1"
    assert frame.loc["fam-a", "return_display"] == pytest.approx(pct(A_DISPLAY), abs=1e-9)
    assert not frame["not_robust"].any()  # nothing to compare with: no guess
    assert [c["books"] for c in book_coverage(engine, cohort=1)] == [False]


def test_v1_and_v2_never_pooled(engine: Engine) -> None:
    scripted_cohort(engine, 1)
    scripted_cohort(engine, 2, version="v2", books=False)
    v1 = execution_sensitivity(engine, replicates=50).set_index("family_id")
    v2 = execution_sensitivity(engine, methodology="v2", replicates=50).set_index("family_id")
    assert v1["legs"].tolist() == [1, 1] and v2["legs"].tolist() == [1, 1]
    assert v1["capital"].tolist() == [10000.0, 10000.0]  # one cohort each, not two
    assert v1.loc["fam-a", "return_book"] == pytest.approx(pct(A_BOOK), abs=1e-9)
    # v2 executes at its quote's mid: its own rule; its mid comes from the stored quote
    assert v2["own_rule"].eq("mid").all()
    assert v2.loc["fam-a", "return_mid"] == pytest.approx(pct(A_MID), abs=1e-9)
    # B, mid (NO at 0.385, marked 0.385): shares(500 / 0.385) = 1298.701298; × 0.385 =
    # 499.99999973 → 500.000000: P/L 0
    assert v2.loc["fam-b", "return_mid"] == pytest.approx(0.0, abs=1e-9)
    assert np.isnan(v2.loc["fam-a", "return_book"])
    assert [c["number"] for c in book_coverage(engine, methodology="v2")] == [2]


def test_the_draw_is_the_leaderboards_own(engine: Engine) -> None:
    """The same clusters, strata and seed: the bootstrap weights equal the leaderboard's."""
    scripted_cohort(engine, 1)
    scripted_cohort(engine, 2, books=False)
    data = load_execution_inputs(engine)
    units = pd.concat(
        [rule_units(re_execute(data.legs, data.ends, r), data.agents, data.clusters) for r in RULES]
    ).drop_duplicates(["cohort_id", "cluster"])
    _, boot = cluster_draw(units, 50, 0)
    board = family_bootstrap(engine, replicates=50)
    np.testing.assert_array_equal(boot.stratum_of, board.boot.stratum_of)
    np.testing.assert_array_equal(boot.weights, board.boot.weights)


season = season_fixture()  # the shared analytics season (no new season played)


def test_v1s_own_rule_reproduces_the_leaderboard(season: Engine) -> None:
    """Re-executed at the display price a v1 scope IS the leaderboard: each family's return,
    interval and P(rank #1) equal it (same fills, same marks, same draw). The season was
    decided before book recording: no book figures, nothing flagged."""
    board = lb.leaderboard(season, replicates=200, null_seeds=0).set_index("family_id")
    frame = execution_sensitivity(season, replicates=200).set_index("family_id")
    frame = frame.reindex(board.index)
    for mine, theirs in (
        ("return_display", "return_pct"),
        ("return_display_ci_low", "return_ci_low"),
        ("return_display_ci_high", "return_ci_high"),
        ("p_rank_1_display", "p_rank_1"),
    ):
        np.testing.assert_allclose(frame[mine], board[theirs], rtol=0, atol=1e-9)
    assert frame["return_book"].isna().all() and not frame["not_robust"].any()
