"""The stated-probability figures on a few bets computed by hand: Brier beside the
implied confidence and the market, consistency, Kelly efficiency and log-growth, skill when
deviating, and intervals from the leaderboard's cluster bootstrap."""

import math

import numpy as np
import pandas as pd
import pytest

from arena.analytics.stats.stated import BET_COLUMNS, STATED_COLUMNS, bet_terms, stated_figures
from arena.core import stats
from arena.core.kelly import kelly_fraction, log_growth

NAN = float("nan")


def test_kelly_fraction_by_hand() -> None:
    assert kelly_fraction(0.55, 0.4) == pytest.approx(0.25)  # (0.55 − 0.4) / 0.6
    assert kelly_fraction(0.95, 0.6) == pytest.approx(0.875)
    assert kelly_fraction(0.4, 0.4) == 0.0  # no edge, no bet
    assert kelly_fraction(0.3, 0.4) == 0.0
    assert kelly_fraction(1.0, 0.5) == pytest.approx(1.0)
    assert np.isnan(kelly_fraction(NAN, 0.4))
    assert kelly_fraction([0.55, 0.3], [0.4, 0.4]).tolist() == pytest.approx([0.25, 0.0])


def test_log_growth_by_hand() -> None:
    assert log_growth(0.25, 0.4, 1) == pytest.approx(math.log(1 + 0.25 * 1.5))
    assert log_growth(0.25, 0.4, 0) == pytest.approx(math.log(0.75))
    assert log_growth(0.0, 0.4, 0) == 0.0
    assert log_growth(1.0, 0.4, 0) == -math.inf  # the whole bankroll lost


def bets() -> pd.DataFrame:
    """Family A: a consistent losing bet, a bet with no stated p, an inconsistent winning bet
    and an unresolved one; family B: one consistent winning bet. One cohort, three events."""
    rows = [
        # family, cluster, stake, price, cash before, p, outcome, v1 implied-confidence Brier
        ("A", "event:1", 500, 0.4, 10000, 0.55, 0, 0.04),
        ("A", "event:2", 1000, 0.5, 9500, NAN, 1, (1 - 1000 / 2375) ** 2),
        ("A", "event:3", 250, 0.8, 8500, 0.75, 1, (1 - 250 / 2125) ** 2),
        ("A", "event:3", 200, 0.2, 8250, 0.9, NAN, NAN),
        ("B", "event:1", 400, 0.6, 10000, 0.95, 1, (1 - 400 / 2500) ** 2),
    ]
    frame = pd.DataFrame(
        rows,
        columns=[
            "family_id",
            "cluster",
            "amount",
            "price",
            "cash_before",
            "probability",
            "outcome",
            "implied_brier",
        ],
    )
    frame["trade_id"] = range(1, len(rows) + 1)
    frame["cohort_id"] = 1
    frame["cap"] = 0.25
    for column in ("amount", "price", "cash_before"):
        frame[column] = frame[column].astype(float)
    return frame[list(BET_COLUMNS)]


NAMES = {"A": ("Model A", "llm"), "B": ("Model B", "llm")}


@pytest.fixture(scope="module")
def figures() -> pd.DataFrame:
    return stated_figures(bets(), NAMES, replicates=400, seed=5).set_index("family_id")


def test_counts(figures: pd.DataFrame) -> None:
    a, b = figures.loc["A"], figures.loc["B"]
    assert (a["bets"], a["stated_bets"], a["missing_bets"], a["resolved_bets"]) == (4, 3, 1, 2)
    assert (a["kelly_bets"], a["deviating_bets"], a["cohorts"]) == (2, 1, 1)
    assert (b["bets"], b["stated_bets"], b["resolved_bets"], b["deviating_bets"]) == (1, 1, 1, 1)
    assert figures.loc["A", "display_name"] == "Model A"


def test_brier_of_the_stated_probability_beside_implied_and_market(figures: pd.DataFrame) -> None:
    a = figures.loc["A"]
    # Resolved bets with a stated p: bet 1 (p 0.55, lost) and bet 3 (p 0.75, won).
    assert a["stated_brier"] == pytest.approx((0.55**2 + 0.25**2) / 2)  # 0.1825
    implied = (0.04 + (1 - 250 / 2125) ** 2) / 2  # the v1 Brier rows of the same two bets
    assert a["implied_brier"] == pytest.approx(implied)
    assert a["brier_gap"] == pytest.approx(0.1825 - implied)
    assert a["market_brier"] == pytest.approx((0.4**2 + 0.2**2) / 2)  # 0.1
    assert a["skill_vs_market"] == pytest.approx(0.1825 - 0.1)
    b = figures.loc["B"]
    assert (b["stated_brier"], b["implied_brier"]) == pytest.approx((0.05**2, 0.84**2))
    assert b["skill_vs_market"] == pytest.approx(0.0025 - 0.16)


def test_consistency_by_hand(figures: pd.DataFrame) -> None:
    a = figures.loc["A"]
    # Stated bets: 0.55 > 0.4 agrees, 0.75 < 0.8 does not, 0.9 > 0.2 agrees; the bet without
    # a stated p is not counted either way.
    assert a["consistent_share"] == pytest.approx(2 / 3)
    assert a["mean_edge"] == pytest.approx((0.15 - 0.05 + 0.7) / 3)
    assert figures.loc["B", "consistent_share"] == 1.0
    assert figures.loc["B", "mean_edge"] == pytest.approx(0.35)


def test_kelly_efficiency_and_log_growth_by_hand(figures: pd.DataFrame) -> None:
    a = figures.loc["A"]
    # Kelly stakes where p > q: bet 1 f* = 0.25 → $2,500; bet 4 f* = 0.875, capped at 25% of
    # $8,250 → $2,062.50. Stakes $500 + $200.
    assert a["stake_efficiency"] == pytest.approx(700 / 4562.5)
    # Resolved bets 1 (lost at 0.4) and 3 (won at 0.8; p < q: the Kelly stake is 0).
    actual = (math.log(1 - 0.05) + math.log(1 + 250 / 8500 * (1 / 0.8 - 1))) / 2
    kelly = (math.log(1 - 0.25) + 0.0) / 2
    assert a["log_growth"] == pytest.approx(actual)
    assert a["kelly_log_growth"] == pytest.approx(kelly)
    assert a["growth_gap"] == pytest.approx(actual - kelly)
    b = figures.loc["B"]
    assert b["stake_efficiency"] == pytest.approx(400 / 2500)  # f* 0.875 capped at 0.25
    assert b["log_growth"] == pytest.approx(math.log(1 + 0.04 * (1 / 0.6 - 1)))
    assert b["kelly_log_growth"] == pytest.approx(math.log(1 + 0.25 * (1 / 0.6 - 1)))


def test_skill_when_deviating_by_hand(figures: pd.DataFrame) -> None:
    a = figures.loc["A"]
    # |p − q| > 0.1 among resolved stated bets: bet 1 (0.15) only; bet 3 deviates by 0.05.
    assert a["deviating_brier"] == pytest.approx(0.55**2)
    assert a["deviating_market_brier"] == pytest.approx(0.4**2)
    assert a["deviating_skill"] == pytest.approx(0.55**2 - 0.4**2)
    assert figures.loc["B", "deviating_skill"] == pytest.approx(0.05**2 - 0.4**2)


def test_the_intervals_are_the_leaderboards_cluster_bootstrap(figures: pd.DataFrame) -> None:
    """The same draw as `stats.ClusterBootstrap` (clusters within cohorts, seeded), checked by
    brute force: resample the clusters by index and recompute A's stated Brier."""
    frame = bets()
    terms = bet_terms(frame)
    labels = sorted(set(frame["cluster"]))
    indices = stats.bootstrap_indices(np.ones(len(labels), dtype=np.int64), 400, 5)
    mine = frame["family_id"] == "A"
    top = np.array([terms.loc[mine & (frame["cluster"] == c), "stated_sq"].sum() for c in labels])
    bottom = np.array([terms.loc[mine & (frame["cluster"] == c), "resolved"].sum() for c in labels])
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = np.array(
            [top[row].sum() / bottom[row].sum() if bottom[row].sum() else NAN for row in indices]
        )
    low, high = stats.percentile_interval(reps)
    assert (figures.loc["A", "stated_brier_ci_low"], figures.loc["A", "stated_brier_ci_high"]) == (
        pytest.approx(low),
        pytest.approx(high),
    )
    for name in ("stated_brier", "consistent_share", "stake_efficiency", "growth_gap"):
        for family in ("A", "B"):
            row = figures.loc[family]
            assert row[f"{name}_ci_low"] <= row[name] + 1e-12 <= row[f"{name}_ci_high"] + 2e-12


def test_no_bet_gives_the_documented_empty_frame() -> None:
    empty = stated_figures(bets().iloc[0:0])
    assert list(empty.columns) == list(STATED_COLUMNS) and empty.empty


def test_a_family_that_stated_nothing_has_counts_and_no_figures() -> None:
    frame = bets()
    frame["probability"] = NAN
    out = stated_figures(frame, NAMES, replicates=50).set_index("family_id")
    assert out.loc["A", "missing_bets"] == 4 and out.loc["A", "stated_bets"] == 0
    assert out.loc["A", ["stated_brier", "consistent_share", "stake_efficiency"]].isna().all()
