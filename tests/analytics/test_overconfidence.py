"""Over/under-confidence per family (mean forecast − win rate) with its cluster-bootstrap
interval, checked against a hand computation and an independent resampling loop; the line
that says when the leader by return is not the leader by Brier."""

import math

import numpy as np
import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats import calibration as cal
from arena.analytics.stats.confidence_bets import (
    implied_bets,
    return_vs_brier,
    stated_overconfidence_bets,
)
from arena.core import stats
from tests.analytics import build_book

BETS = pd.DataFrame(
    {
        "family_id": ["a", "a", "a", "a", "b", "b", "b", "a"],
        "cohort_id": [1, 1, 1, 2, 1, 2, 2, 2],
        "cluster": ["e1", "e1", "e2", "e3", "e2", "e3", "e4", "e4"],
        "forecast": [0.9, 0.8, 0.7, 0.6, 0.2, 0.3, 0.1, np.nan],
        "outcome": [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0],
        "price": [0.5, 0.6, np.nan, 0.5, 0.4, 0.5, 0.2, 0.3],
    }
)


def test_point_estimates_by_hand() -> None:
    frame = cal.overconfidence(BETS, replicates=200)
    assert list(frame.columns) == list(cal.OVERCONFIDENCE_COLUMNS)
    # sorted most over-confident first: a (0.75 − 0.5 = +0.25) before b (0.2 − 2/3)
    assert frame["family_id"].tolist() == ["a", "b"]
    a, b = frame.iloc[0], frame.iloc[1]
    assert a["bets"] == 4  # the bet without a forecast is left out
    assert a["mean_forecast"] == pytest.approx(0.75) and a["win_rate"] == pytest.approx(0.5)
    assert a["overconfidence"] == pytest.approx(0.25)
    assert b["overconfidence"] == pytest.approx(0.2 - 2 / 3)
    # the market on a's priced bets: (0.5 − 1 + 0.6 − 0 + 0.5 − 1) / 3
    assert a["market_bets"] == 3 and a["market_overconfidence"] == pytest.approx(0.6 / 3 - 1 / 3)
    for row in (a, b):
        assert row["overconfidence_ci_low"] <= row["overconfidence"]
        assert row["overconfidence"] <= row["overconfidence_ci_high"]


def test_interval_matches_an_independent_resampling_loop() -> None:
    replicates, seed = 300, 7
    frame = cal.overconfidence(BETS, replicates=replicates, seed=seed).set_index("family_id")
    rows = BETS[BETS["forecast"].notna()].assign(
        key=lambda d: d["cohort_id"].astype(str) + "|" + d["cluster"]
    )
    labels = sorted(set(rows["key"]))
    strata = [int(label.split("|")[0]) for label in labels]
    indices = stats.bootstrap_indices(strata, replicates, seed)
    for family in ("a", "b"):
        own = rows[rows["family_id"] == family]
        means = []
        for drawn in indices:  # each replicate: the drawn clusters' bets, repeats kept
            picked = pd.concat([own[own["key"] == labels[j]] for j in drawn])
            gap = picked["forecast"] - picked["outcome"]
            means.append(gap.mean() if len(gap) else np.nan)
        low, high = stats.percentile_interval(np.array(means), stats.CONFIDENCE)
        assert frame.loc[family, "overconfidence_ci_low"] == pytest.approx(float(low))
        assert frame.loc[family, "overconfidence_ci_high"] == pytest.approx(float(high))


def test_no_resolved_forecast_gives_an_empty_frame() -> None:
    empty = cal.overconfidence(BETS.assign(outcome=np.nan))
    assert empty.empty and list(empty.columns) == list(cal.OVERCONFIDENCE_COLUMNS)


def test_stated_rows_keep_the_cohorts_asked_for() -> None:
    stated = pd.DataFrame(
        {
            "family_id": ["a", "a"],
            "cohort_id": [1, 2],
            "cluster": ["e1", "e2"],
            "probability": [0.8, 0.6],
            "outcome": [1.0, np.nan],
            "price": [0.5, 0.4],
        }
    )
    rows = stated_overconfidence_bets(stated, [1])
    assert rows["forecast"].tolist() == [0.8] and rows["cohort_id"].tolist() == [1]
    assert cal.overconfidence(rows, replicates=50)["overconfidence"].iloc[0] == pytest.approx(-0.2)


def test_implied_bets_are_the_brier_rows(engine: Engine) -> None:
    build_book(engine)
    bets = implied_bets(engine)
    rows = cal.brier_rows(engine)
    assert bets["forecast"].tolist() == pytest.approx(rows["forecast_probability"].tolist())
    assert bets["outcome"].tolist() == rows["actual_outcome"].tolist()
    assert bets["family_id"].tolist() == rows["family_id"].tolist()
    assert all(c.startswith(("event:", "market:")) for c in bets["cluster"])


def board(rows: list[tuple[str, str, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["family_id", "kind", "return_pct", "brier"])


def test_return_leader_ranked_by_brier() -> None:
    frame = board(
        [
            ("oracle", "baseline", 70.0, 0.1),  # a reference, never the leader
            ("x", "llm", 30.0, 0.4),
            ("y", "llm", 20.0, 0.2),
            ("z", "llm", 10.0, 0.3),
            ("w", "llm", 5.0, math.nan),  # no Brier: not ranked
        ]
    )
    assert return_vs_brier(frame) == ("x", 3, 3)
    assert return_vs_brier(frame.assign(brier=[0.1, 0.1, 0.2, 0.3, math.nan])) is None
    assert return_vs_brier(frame.iloc[:2]) is None
