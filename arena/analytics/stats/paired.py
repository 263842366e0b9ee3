"""Paired comparisons of two families on the markets both traded (same cohort, same market).

Why its own module: a leaderboard interval says how sure one family's number is; whether A beat
B is a different question, answered on the markets they share so market difficulty cancels
out: per market the difference A − B (P/L contribution, or mean Brier), a stratified cluster
bootstrap interval of its mean and a cluster sign-flip test (`stats.paired_test`).

`family_comparison` is the Compare page's read model: both metrics for one pair from one read,
each marked whether it rests on enough events (`MIN_EVENTS`) for its interval and test to mean
anything.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from arena.analytics.stats.leaderboard_inputs import load_inputs
from arena.config import METHODOLOGY_VERSION
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
    "bets_a",
    "bets_b",
)
PAIRED_METRICS = ("pnl", "brier")
# Fewer shared events than this and the cluster sign-flip test cannot reach p < 0.05 whatever
# the data (its smallest two-sided p-value is 2 / 2^events: 0.0625 at 5 events, 0.031 at 6),
# and the bootstrap interval rests on a handful of resamplable clusters: the Compare page says
# "too few" instead of showing them.
MIN_EVENTS = 6
COMPARISON_COLUMNS: tuple[str, ...] = (*PAIRED_COLUMNS, "enough", "better")
# Which sign of A − B is better for A: more P/L, a lower Brier.
BETTER_SIGN = {"pnl": 1.0, "brier": -1.0}


def _paired_units(units: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per family × cohort × market: the statistic compared (P/L in $, or mean Brier) and the
    bets it rests on (BUY legs, or resolved bets)."""
    columns = ["family_id", "cohort_id", "market_id", "cluster", "value", "bets"]
    if metric not in PAIRED_METRICS:
        raise InputError(f"unknown paired metric {metric!r}", "use pnl or brier")
    if units.empty:
        return pd.DataFrame(columns=columns)
    if metric == "pnl":
        chosen = units[units["buys"] > 0].assign(value=lambda u: u["pnl"], bets=lambda u: u["buys"])
    else:
        chosen = units[units["brier_n"] > 0].assign(
            value=lambda u: u["brier_sum"] / u["brier_n"], bets=lambda u: u["brier_n"]
        )
    return chosen[columns]


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
    both = a.merge(b[[*keys, "value", "bets"]], on=keys, suffixes=("_a", "_b"))
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
        "bets_a": int(both["bets_a"].sum()),
        "bets_b": int(both["bets_b"].sum()),
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
    sign-flip test of no difference), ``exact`` (whether the sign-flip test was enumerated),
    ``bets_a`` / ``bets_b`` (each one's bets in the paired markets: BUY legs for ``pnl``,
    resolved bets for ``brier``).
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


def _absent(family: str, late_entry: bool) -> InputError:
    """Why a side of a comparison has no agent in scope, and what to do instead."""
    if late_entry:
        return InputError(
            f"{family!r} did not play the cohorts of this protocol's late entrants",
            "pick a late entrant and an incumbent of its cohorts",
        )
    return InputError(
        f"family {family!r} has no agent in this scope", "use a family id from the leaderboard"
    )


def family_comparison(
    engine: Engine,
    family_a: str,
    family_b: str,
    *,
    cohort: int | None = None,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
    methodology: str = METHODOLOGY_VERSION,
    late_entry: bool = False,
) -> pd.DataFrame:
    """Family A against family B on both metrics (the Compare page): two rows, ``pnl`` then
    ``brier``, from one read of the scope's units (all cohorts: `methodology`'s, v1 default;
    `late_entry`: the late-entry scope of protocol `methodology`, a late entrant by its
    entrant id, `arena.analytics.stats.late_entry`).

    Columns `COMPARISON_COLUMNS`: `PAIRED_COLUMNS` (see `pairwise_comparisons`), ``enough``
    (bool): the pair shares at least `MIN_EVENTS` events (clusters) for that metric, so its
    interval and p-value mean something, and ``better``: the family id that did better (more
    P/L, lower Brier) when ``enough`` and the p-value is below 1 − `level`, else None. A family
    without an agent in scope → InputError.
    """
    data, _ = load_inputs(engine, cohort, methodology, late_entry=late_entry)
    present = set(data.agents["family_id"])
    for family in (family_a, family_b):
        if family not in present:
            raise _absent(family, late_entry)
    return comparison_of_units(
        data.units, family_a, family_b, replicates=replicates, seed=seed, level=level
    )


def comparison_of_units(
    units: pd.DataFrame,
    family_a: str,
    family_b: str,
    *,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """`family_comparison` on already-read units (one row per agent × market with
    ``family_id``, ``cohort_id``, ``market_id``, ``cluster`` and the `UNIT_SUMS`)."""
    rows = [
        _compare(_paired_units(units, metric), family_a, family_b, metric, replicates, seed, level)
        for metric in PAIRED_METRICS
    ]
    frame = pd.DataFrame(rows, columns=list(PAIRED_COLUMNS))
    frame["enough"] = frame["clusters"] >= MIN_EVENTS
    frame["better"] = [
        (family_a if row.mean_difference * BETTER_SIGN[row.metric] > 0 else family_b)
        if row.enough and row.p_value < 1 - level
        else None
        for row in frame.itertuples(index=False)
    ]
    return frame[list(COMPARISON_COLUMNS)]
