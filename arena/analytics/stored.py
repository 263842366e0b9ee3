"""Stored read models: the hourly `analyses` job (`arena.engine.analyses`) computes them,
pages read them.

Why: the leaderboard, the calibration summary, the execution sensitivity, "When will we
know?" and the extensions' figures rest on a 2,000-replicate cluster bootstrap (the
leaderboard and detectability also on a 200-seed random-baseline null) over every resolved
bet: seconds of CPU at a year's scale, far beyond what a page load may take. The overview's
exact row counts read every index entry of a table that grows by ~8M snapshots a year
(seconds from a cold disk), so they are stored too. The job computes each scope (all cohorts;
each cohort still live or not yet stored since it completed; each other methodology version's
and each protocol group's all-cohort scope) with the very same functions, drawing a scope's
bootstrap and null once for all of them (`arena.analytics.stats.one_run`), and stores the
frame (Parquet bytes: dtypes survive exactly). A page shows the stored frame when it is
current — computed on data within `STALE_AFTER` of the newest snapshot — and says when it was
computed; otherwise it computes live.
"""

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial

import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.query.selects import newest_slot
from arena.analytics.stats.calibration import brier_over_time, calibration_summary, reliability
from arena.analytics.stats.execution_inputs import execution_sensitivity
from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.stats.replicates import replicate_agents, replicate_analysis
from arena.analytics.stats.stated import stated_probability
from arena.analytics.views.database import overview
from arena.analytics.views.detectability import detectability_frame
from arena.analytics.views.execution import robustness_flags
from arena.config import METHODOLOGY_VERSION, STALE_AFTER
from arena.storage.tables import ANALYSIS_RESULTS as RESULTS


@dataclass(frozen=True)
class Analysis:
    """A stored read model: how to compute it, and whether it has a frame per cohort."""

    compute: Callable[..., pd.DataFrame]
    per_cohort: bool = True
    per_version: bool = False  # its compute takes `methodology`: an all-cohort scope per version

    def __call__(
        self, engine: Engine, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
    ) -> pd.DataFrame:
        if methodology != METHODOLOGY_VERSION and not self.per_version:
            raise ValueError("this analysis has no per-version scope")
        if not self.per_cohort:
            if cohort is not None:
                raise ValueError("this analysis has no per-cohort scope")
            return self.compute(engine)
        if self.per_version:
            return self.compute(engine, cohort=cohort, methodology=methodology)
        return self.compute(engine, cohort=cohort)


ANALYSES: dict[str, Analysis] = {
    "leaderboard": Analysis(leaderboard, per_version=True),
    "calibration_summary": Analysis(calibration_summary, per_version=True),
    # The Calibration page's diagrams: aggregates over every Brier row, so they grow with
    # history (~350 ms warm at two years) while their stored frames are a few kB.
    "reliability": Analysis(reliability, per_version=True),
    "reliability_market": Analysis(partial(reliability, forecaster="market"), per_version=True),
    "brier_over_time": Analysis(brier_over_time, per_version=True),
    "overview": Analysis(overview, per_cohort=False),
    # The protocol extension `stated_probability`'s figures (a bootstrap over its cohorts' bets;
    # an empty frame where no cohort in scope is stamped with it).
    "stated_probability": Analysis(stated_probability),
    # Replicates (`ARENA_REPLICATES`): each agent's P/L and Brier, and the per-family spread,
    # noise share (a bootstrap) and rank stability (20,000 picks) over the replicated cohorts
    # in scope; empty frames where no cohort in scope has replicates.
    "replicate_agents": Analysis(replicate_agents),
    "replicates": Analysis(replicate_analysis),
    # Execution sensitivity: every leg re-executed at the display price, the mid
    # and the stored book, each with the leaderboard's cluster bootstrap (the Execution page,
    # and the leaderboard's "rank not robust to the execution rule" flag).
    "execution_sensitivity": Analysis(execution_sensitivity, per_version=True),
    # "When will we know?": every pair's and each family's MDE and the cohorts its
    # gap needs, from the leaderboard's bootstrap draw and a 200-seed random null (~0.7 s on a
    # six-week demo, more with history).
    "detectability": Analysis(detectability_frame, per_version=True),
}
ALL = "all"


def scope_of(cohort: int | None, methodology: str = METHODOLOGY_VERSION) -> str:
    """The stored key of a scope: ``all`` for the all-cohort read (`cohort` None), which each
    analysis defines as it computes it — every v1 cohort for the v1 analyses (extended
    cohorts left out: `arena.analytics.query.scope`), every extended cohort for the extension's
    figures — and ``cohort:N`` for cohort number N, extended or not. A cohort's stamp never
    changes, so neither does what a key covers; ``all`` is recomputed on every run of the job.
    Another version's all-cohort scope is ``all:v2`` (its plain cohorts), a protocol group's
    ``all:v1+horizon-14d`` (its cohorts), so v1's ``all`` rows mean what they always meant."""
    if cohort is not None:
        return f"cohort:{cohort}"
    return ALL if methodology == METHODOLOGY_VERSION else f"{ALL}:{methodology}"


@dataclass(frozen=True)
class StoredResult:
    """One stored frame and when (and on which data) it was computed."""

    name: str
    scope: str
    computed_at: datetime
    data_as_of: datetime | None
    frame: pd.DataFrame


def frame_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def bytes_frame(data: bytes) -> pd.DataFrame:
    return pd.read_parquet(io.BytesIO(data))


def stored_result(
    engine: Engine, name: str, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> StoredResult | None:
    """The stored frame of analysis `name` for a scope, or None."""
    scope = scope_of(cohort, methodology)
    with engine.connect() as conn:
        row = conn.execute(
            select(RESULTS).where(RESULTS.c.name == name, RESULTS.c.scope == scope)
        ).first()
    if row is None:
        return None
    return StoredResult(
        row.name, row.scope, row.computed_at, row.data_as_of, bytes_frame(row.frame)
    )


def current_stored(
    engine: Engine, name: str, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> StoredResult | None:
    """The stored frame of `name` for a scope when it is current (data within `STALE_AFTER`
    of the newest snapshot), else None: the page then offers the live computation."""
    stored = stored_result(engine, name, cohort, methodology)
    if stored is None:
        return None
    with engine.connect() as conn:
        newest = newest_slot(conn)
    as_of = stored.data_as_of
    if newest is None or (as_of is not None and newest - as_of <= STALE_AFTER):
        return stored
    return None


def live(
    engine: Engine, name: str, *, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """Analysis `name` computed now, with the very functions the hourly job stores."""
    return ANALYSES[name](engine, cohort=cohort, methodology=methodology)


def current_or_live(
    engine: Engine, name: str, *, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> tuple[pd.DataFrame, StoredResult | None]:
    """The analysis for a scope: the stored frame when current, else computed now.

    Returns (frame, the stored result used or None when computed live).
    """
    stored = current_stored(engine, name, cohort, methodology)
    if stored is not None:
        return stored.frame, stored
    return live(engine, name, cohort=cohort, methodology=methodology), None


def execution_flags(
    engine: Engine,
    cohort: int | None = None,
    methodology: str | None = None,
    *,
    live_if_missing: bool = True,
) -> dict[str, bool]:
    """family id → rank not robust to the execution rule, for a leaderboard scope: the
    stored execution sensitivity when current, else computed now when `live_if_missing`
    (the leaderboard beside it was computed now too), else none. One function for the page
    and the CLI, so the two agree."""
    version = {} if methodology is None else {"methodology": methodology}
    found = current_stored(engine, "execution_sensitivity", cohort, **version)
    if found is not None:
        return robustness_flags(found.frame)
    if not live_if_missing:
        return {}
    return robustness_flags(live(engine, "execution_sensitivity", cohort=cohort, **version))
