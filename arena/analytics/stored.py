"""Stored read models: the hourly `analyses` job computes them, pages read them.

Why: the leaderboard and the calibration summary rest on a 2,000-replicate cluster bootstrap
(and the leaderboard on a 200-seed random-baseline null) over every resolved bet: seconds of
CPU at a year's scale, far beyond what a page load may take. The overview's exact row counts
read every index entry of a table that grows by ~8M snapshots a year (seconds from a cold
disk), so they are stored too. The job computes each scope
(all cohorts, and each cohort still live or not yet stored since it completed) with the very
same functions and stores the frame (Parquet bytes: dtypes survive exactly). A page shows the
stored frame when it is current — computed on data within `STALE_AFTER` of the newest
snapshot — and says when it was computed; otherwise it computes live, as before.
"""

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import pandas as pd
from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.calibration import brier_over_time, calibration_summary, reliability
from arena.analytics.leaderboard import leaderboard
from arena.analytics.overview import overview
from arena.storage.tables import ANALYSIS_RESULTS as RESULTS
from arena.storage.tables import COHORTS
from arena.storage.tables import PORTFOLIO_SNAPSHOTS as SNAPSHOTS


@dataclass(frozen=True)
class Analysis:
    """A stored read model: how to compute it, and whether it has a frame per cohort."""

    compute: Callable[..., pd.DataFrame]
    per_cohort: bool = True

    def __call__(self, engine: Engine, cohort: int | None = None) -> pd.DataFrame:
        if not self.per_cohort:
            if cohort is not None:
                raise ValueError("this analysis has no per-cohort scope")
            return self.compute(engine)
        return self.compute(engine, cohort=cohort)


ANALYSES: dict[str, Analysis] = {
    "leaderboard": Analysis(leaderboard),
    "calibration_summary": Analysis(calibration_summary),
    # The Calibration page's diagrams: aggregates over every Brier row, so they grow with
    # history (~350 ms warm at two years) while their stored frames are a few kB.
    "reliability": Analysis(reliability),
    "reliability_market": Analysis(partial(reliability, forecaster="market")),
    "brier_over_time": Analysis(brier_over_time),
    "overview": Analysis(overview, per_cohort=False),
}
ALL = "all"
# A stored frame is shown while the newest snapshot is at most this much newer than its data
# (the job runs hourly); past that the page recomputes live instead of showing stale numbers.
STALE_AFTER = timedelta(hours=2)


def scope_of(cohort: int | None) -> str:
    return ALL if cohort is None else f"cohort:{cohort}"


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


def newest_slot(conn: Connection) -> datetime | None:
    """The newest snapshot slot (one seek on the slot index)."""
    return conn.execute(select(func.max(SNAPSHOTS.c.slot))).scalar_one_or_none()


def stored_result(engine: Engine, name: str, cohort: int | None = None) -> StoredResult | None:
    """The stored frame of analysis `name` for a scope, or None."""
    with engine.connect() as conn:
        row = conn.execute(
            select(RESULTS).where(RESULTS.c.name == name, RESULTS.c.scope == scope_of(cohort))
        ).first()
    if row is None:
        return None
    return StoredResult(
        row.name, row.scope, row.computed_at, row.data_as_of, bytes_frame(row.frame)
    )


def current_or_live(
    engine: Engine, name: str, *, cohort: int | None = None
) -> tuple[pd.DataFrame, StoredResult | None]:
    """The analysis for a scope: the stored frame when current, else computed now.

    Returns (frame, the stored result used or None when computed live).
    """
    stored = stored_result(engine, name, cohort)
    if stored is not None:
        with engine.connect() as conn:
            newest = newest_slot(conn)
        as_of = stored.data_as_of
        if newest is None or (as_of is not None and newest - as_of <= STALE_AFTER):
            return stored.frame, stored
    return ANALYSES[name](engine, cohort=cohort), None


@dataclass
class AnalysesOutcome:
    """What one `analyses` run stored, for the job log."""

    scopes: list[str] = field(default_factory=list)
    stored: int = 0

    def counts(self) -> dict[str, Any]:
        return {"scopes": self.scopes, "stored": self.stored}


def scopes_due(conn: Connection, at: datetime) -> list[int | None]:
    """All cohorts, every started cohort not completed, and every completed cohort whose
    results were not stored after it completed (a completed cohort's figures are final) or
    lack an analysis (one added by a later version)."""
    per_cohort = sum(1 for analysis in ANALYSES.values() if analysis.per_cohort)
    stored_at: dict[str, datetime] = {}
    query = select(
        RESULTS.c.scope, func.min(RESULTS.c.computed_at), func.count(RESULTS.c.name)
    ).where(RESULTS.c.name.in_(list(ANALYSES)))
    for scope, computed_at, names in conn.execute(query.group_by(RESULTS.c.scope)):
        if names >= per_cohort:
            stored_at[scope] = computed_at
    due: list[int | None] = [None]
    cohorts = select(COHORTS.c.number, COHORTS.c.status, COHORTS.c.completed_at).where(
        COHORTS.c.week_start <= at
    )
    for number, status, completed_at in conn.execute(cohorts.order_by(COHORTS.c.number)):
        last = stored_at.get(scope_of(int(number)))
        final = status == "completed" and completed_at is not None
        if not final or last is None or last < completed_at:
            due.append(int(number))
    return due


def store_analyses(engine: Engine, at: datetime, reader: Engine | None = None) -> AnalysesOutcome:
    """Compute every analysis for every due scope and store it (one transaction per scope).

    The analyses read through `reader` when given (the scheduler's): on SQLite a writer's
    transaction holds the write lock from its BEGIN, and at a year the all-cohort scope reads
    for about 5 s an hour (2 s in one go), holding the snapshot job and decision runs off.
    """
    reader = reader or engine
    outcome = AnalysesOutcome()
    with reader.connect() as conn:
        as_of = newest_slot(conn)
        scopes = scopes_due(conn, at)
    for cohort in scopes:
        names = [name for name, a in ANALYSES.items() if cohort is None or a.per_cohort]
        rows = [
            {
                "name": name,
                "scope": scope_of(cohort),
                "computed_at": at,
                "data_as_of": as_of,
                "frame": frame_bytes(ANALYSES[name](reader, cohort=cohort)),
            }
            for name in names
        ]
        with engine.begin() as conn:
            conn.execute(
                delete(RESULTS).where(
                    RESULTS.c.scope == scope_of(cohort), RESULTS.c.name.in_(names)
                )
            )
            conn.execute(insert(RESULTS), rows)
        outcome.scopes.append(scope_of(cohort))
        outcome.stored += len(rows)
    return outcome
