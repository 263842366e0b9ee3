"""The family bootstrap: one stratified cluster draw shared by every interval of a scope.

Why its own module: the leaderboard, the calibration page and "When will we know?" resample the
same clusters with the same draw, so for one seed they show identical intervals (the
execution-sensitivity view labels its clusters in this module's order). The units (per agent ×
market sums, `arena.analytics.stats.leaderboard_inputs`) are summed per cluster × family into
one matrix per `UNIT_SUMS` column; `stats.ClusterBootstrap` draws clusters within their cohort,
jointly for all families. P/L replicates are centred on the headline P/L (latest snapshots)
by a fixed per-cohort, per-family offset: prices or settlements newer than the snapshot.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from arena.analytics.query.selects import agent_pnl
from arena.analytics.stats.leaderboard_inputs import (
    UNIT_SUMS,
    LeaderboardInputs,
    float_values,
    load_inputs,
)
from arena.analytics.stats.one_run import once
from arena.config import METHODOLOGY_VERSION
from arena.core import stats


def _agent_books(agents: pd.DataFrame) -> pd.DataFrame:
    """Per agent: v1 P/L (latest snapshot, else cash + open cost basis − start), realized P/L,
    and the value still in unresolved positions."""
    start = float_values(agents["starting_balance"])
    cash = float_values(agents["cash_balance"])
    open_cost = np.nan_to_num(float_values(agents["open_cost"]))
    snap_pnl = float_values(agents["total_pnl"])
    has_snapshot = ~np.isnan(snap_pnl)
    book_total = cash + open_cost
    return pd.DataFrame(
        {
            "family_id": agents["family_id"].to_numpy(),
            "cohort_id": agents["cohort_id"].to_numpy(),
            "replicate": agents["replicate"].to_numpy(),
            "capital": start,
            "pnl": agent_pnl(start, cash, open_cost, snap_pnl),
            "realized": np.nan_to_num(float_values(agents["realized"])),
            "unresolved_value": np.where(
                has_snapshot, float_values(agents["positions_value"]), open_cost
            ),
            "total_value": np.where(has_snapshot, float_values(agents["total_value"]), book_total),
        }
    )


def _headline(books: pd.DataFrame) -> pd.DataFrame:
    """`_agent_books` summed per family (P/L summed over cohorts, never averaged)."""
    return books.groupby("family_id", as_index=False).agg(
        cohorts=("cohort_id", "nunique"),
        capital=("capital", "sum"),
        pnl=("pnl", "sum"),
        realized=("realized", "sum"),
        unresolved_value=("unresolved_value", "sum"),
        total_value=("total_value", "sum"),
    )


@dataclass(frozen=True)
class _Matrices:
    """Per cluster × family sums (one matrix per `UNIT_SUMS` column) and the cluster strata."""

    sums: dict[str, np.ndarray]
    stratum_of: np.ndarray


def _matrices(units: pd.DataFrame, families: Sequence[str]) -> _Matrices:
    index = {fid: i for i, fid in enumerate(families)}
    if units.empty:
        empty = {c: np.zeros((0, len(families))) for c in UNIT_SUMS}
        return _Matrices(empty, np.zeros(0, dtype=np.int64))
    keys = units["cohort_id"].astype(str) + "|" + units["cluster"]
    labels, cluster = np.unique(keys.to_numpy(dtype=str), return_inverse=True)
    column = units["family_id"].map(index).to_numpy(dtype=np.int64)
    sums = {}
    for name in UNIT_SUMS:
        matrix = np.zeros((labels.size, len(families)))
        np.add.at(matrix, (cluster, column), units[name].to_numpy(dtype=np.float64))
        sums[name] = matrix
    stratum_of = np.zeros(labels.size, dtype=np.int64)
    stratum_of[cluster] = units["cohort_id"].to_numpy(dtype=np.int64)
    return _Matrices(sums, stratum_of)


@dataclass(frozen=True)
class FamilyBootstrap:
    """Everything the leaderboard resamples, shared with the calibration page so both show
    the same intervals: per-family headline numbers, per cluster × family sums, one draw."""

    data: LeaderboardInputs
    names: dict[str, tuple[str, str]]  # family id → (display name, kind)
    head: pd.DataFrame  # per family: cohorts, capital, pnl, realized, unresolved/total value
    families: list[str]
    sums: dict[str, np.ndarray]  # `UNIT_SUMS` name → (clusters × families)
    boot: stats.ClusterBootstrap
    books: pd.DataFrame  # `_agent_books`: per agent capital and P/L

    def pnl_replicates(self, cohorts: Collection[int] | None = None) -> np.ndarray:
        """(B × F) P/L replicates, summed over cohorts (only the cohort ids `cohorts`, when
        given: a comparison resting on the cohorts two families share).

        Per cohort and family: the resampled market contributions, plus the fixed offset that
        centres them on the headline P/L (prices or settlements newer than the snapshot),
        floored at −capital (an agent cannot lose more than it was given).
        """
        books = self.books
        if cohorts is not None:
            books = books[books["cohort_id"].isin(list(cohorts))]
        strata = sorted({int(c) for c in books["cohort_id"]})
        row = {c: i for i, c in enumerate(strata)}
        col = {f: j for j, f in enumerate(self.families)}
        offsets = np.zeros((len(strata), len(self.families)))
        floors = np.zeros_like(offsets)
        for cohort_id, family_id, capital, pnl in zip(
            books["cohort_id"], books["family_id"], books["capital"], books["pnl"], strict=True
        ):
            offsets[row[int(cohort_id)], col[family_id]] += pnl
            floors[row[int(cohort_id)], col[family_id]] -= capital
        pnl_sums = self.sums["pnl"]
        for label, i in row.items():
            offsets[i] -= pnl_sums[self.boot.stratum_of == label].sum(axis=0)
        return self.boot.floored_total(pnl_sums, strata, offsets, floors)

    def in_cohorts(self, cohorts: Collection[int]) -> np.ndarray:
        """(K,) whether each cluster lies in one of the cohort ids `cohorts`: a ratio's sums
        times it (`sums[name] * mask[:, None]`) are the ratio over those cohorts alone."""
        return np.isin(self.boot.stratum_of, list(cohorts))


def family_bootstrap(
    engine: Engine,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    late_entry: bool = False,
) -> FamilyBootstrap:
    """Load the scope (unknown cohort → InputError) and draw its cluster bootstrap once (once
    per run of the hourly analyses too: `one_run`, shared by every analysis of the scope).
    `late_entry`: the scope of late entrants on the same cohorts (`load_inputs`)."""
    key: tuple[object, ...] = (
        "family_bootstrap",
        id(engine),
        cohort,
        methodology,
        replicates,
        seed,
    )
    key += ("late_entry",) if late_entry else ()  # the live scope's key as it was
    return once(key, lambda: _draw(engine, cohort, methodology, replicates, seed, late_entry))


def _draw(
    engine: Engine,
    cohort: int | None,
    methodology: str,
    replicates: int,
    seed: int,
    late_entry: bool = False,
) -> FamilyBootstrap:
    data, names = load_inputs(engine, cohort, methodology, late_entry=late_entry)
    books = _agent_books(data.agents)
    head = _headline(books)
    families = list(head["family_id"])
    m = _matrices(data.units, families)
    boot = stats.ClusterBootstrap(m.stratum_of, replicates, seed)
    return FamilyBootstrap(data, names, head, families, m.sums, boot, books)
