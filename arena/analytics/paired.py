"""Paired comparisons of two families on the markets both traded (same cohort, same market).

Why its own module: a leaderboard interval says how sure one family's number is; whether A beat
B is a different question, answered on the markets they share so market difficulty cancels
out: per market the difference A − B (P/L contribution, or mean Brier), a stratified cluster
bootstrap interval of its mean and a cluster sign-flip test (`stats.paired_test`).
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from arena.analytics.leaderboard_inputs import load_inputs
from arena.core import stats
from arena.core.errors import InputError

PAIRED_COLUMNS: tuple[str, ...] = (
    "family_a",
    "family_b",
    "metric",
    "markets",
    "clusters",
    "mean_difference",
    "ci_low",
    "ci_high",
    "p_value",
    "exact",
)
PAIRED_METRICS = ("pnl", "brier")


def _paired_units(units: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per family × cohort × market: the statistic compared (P/L in $, or mean Brier)."""
    if metric not in PAIRED_METRICS:
        raise InputError(f"unknown paired metric {metric!r}", "use pnl or brier")
    if units.empty:
        return pd.DataFrame(columns=["family_id", "cohort_id", "market_id", "cluster", "value"])
    if metric == "pnl":
        chosen = units[units["buys"] > 0].assign(value=lambda u: u["pnl"])
    else:
        chosen = units[units["brier_n"] > 0].assign(value=lambda u: u["brier_sum"] / u["brier_n"])
    return chosen[["family_id", "cohort_id", "market_id", "cluster", "value"]]


def _compare(
    per_unit: pd.DataFrame,
    family_a: str,
    family_b: str,
    metric: str,
    replicates: int,
    seed: int,
    level: float,
) -> dict[str, Any]:
    keys = ["cohort_id", "market_id"]
    a = per_unit[per_unit["family_id"] == family_a]
    b = per_unit[per_unit["family_id"] == family_b]
    both = a.merge(b[[*keys, "value"]], on=keys, suffixes=("_a", "_b"))
    result = stats.paired_test(
        (both["value_a"] - both["value_b"]).to_numpy(dtype=np.float64),
        both["cluster"].to_numpy(),
        both["cohort_id"].to_numpy(),
        replicates=replicates,
        seed=seed,
        level=level,
    )
    return {
        "family_a": family_a,
        "family_b": family_b,
        "metric": metric,
        "markets": result.units,
        "clusters": result.clusters,
        "mean_difference": result.mean_difference,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "p_value": result.p_value,
        "exact": result.exact,
    }


def pairwise_comparisons(
    engine: Engine,
    *,
    metric: str = "pnl",
    families: Sequence[str] | None = None,
    cohort: int | None = None,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """Paired tests between families on the markets both traded (same cohort, same market).

    One row per pair (A, B) of `families` (default: every family in scope, in id order).
    Columns (`PAIRED_COLUMNS`): ``family_a``, ``family_b``, ``metric`` (``pnl``: the market's
    P/L contribution in $, counted where both bought; ``brier``: the mean Brier of each one's
    bets in the market, where both have resolved bets), ``markets`` (paired markets),
    ``clusters`` (their events), ``mean_difference`` (mean of A − B over the paired markets),
    ``ci_low`` / ``ci_high`` (stratified cluster bootstrap), ``p_value`` (two-sided cluster
    sign-flip test of no difference), ``exact`` (whether the sign-flip test was enumerated).
    """
    data, _ = load_inputs(engine, cohort)
    per_unit = _paired_units(data.units, metric)
    present = sorted(set(data.agents["family_id"]))
    chosen = list(families) if families is not None else present
    unknown = [f for f in chosen if f not in present]
    if unknown:
        raise InputError(
            f"family {unknown[0]!r} has no agent in this scope",
            "use a family id from the leaderboard",
        )
    rows = [
        _compare(per_unit, a, b, metric, replicates, seed, level)
        for i, a in enumerate(chosen)
        for b in chosen[i + 1 :]
    ]
    return pd.DataFrame(rows, columns=list(PAIRED_COLUMNS))


def paired_comparison(
    engine: Engine,
    family_a: str,
    family_b: str,
    *,
    metric: str = "pnl",
    cohort: int | None = None,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """`pairwise_comparisons` for one pair: a one-row frame (A − B)."""
    return pairwise_comparisons(
        engine,
        metric=metric,
        families=[family_a, family_b],
        cohort=cohort,
        replicates=replicates,
        seed=seed,
        level=level,
    )
