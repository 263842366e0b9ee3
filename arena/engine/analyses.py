"""The hourly `analyses` job: compute the stored read models and write them.

The read side (`arena.analytics.stored`) names the analyses and reads what is stored; this
module is the one that writes, so the read side never does.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.scope import is_group, protocols_present, versions_present
from arena.analytics.query.selects import newest_slot
from arena.analytics.stats.leaderboard import LEADERBOARD_COLUMNS
from arena.analytics.stats.one_run import one_run
from arena.analytics.stored import ANALYSES, frame_bytes, scope_of
from arena.config import METHODOLOGY_VERSION
from arena.storage.tables import ANALYSIS_RESULTS as RESULTS
from arena.storage.tables import COHORTS, live_cohort

# The columns a stored frame must carry to be read as current: a frame stored before a column
# was added is recomputed (its scope is due), never shown without it.
CURRENT_COLUMNS: dict[str, tuple[str, ...]] = {"leaderboard": LEADERBOARD_COLUMNS}


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
    lack an analysis (one added by a later version) or a column (`CURRENT_COLUMNS`)."""
    per_cohort = sum(1 for analysis in ANALYSES.values() if analysis.per_cohort)
    stored_at: dict[str, datetime] = {}
    query = select(
        RESULTS.c.scope, func.min(RESULTS.c.computed_at), func.count(RESULTS.c.name)
    ).where(RESULTS.c.name.in_(list(ANALYSES)))
    for scope, computed_at, names in conn.execute(query.group_by(RESULTS.c.scope)):
        if names >= per_cohort:
            stored_at[scope] = computed_at
    outdated = outdated_scopes(conn)
    due: list[int | None] = [None]
    # live cohorts: a scope is a live cohort's number (a shadow repeats it, never stored)
    cohorts = select(COHORTS.c.number, COHORTS.c.status, COHORTS.c.completed_at).where(
        COHORTS.c.week_start <= at, live_cohort()
    )
    for number, status, completed_at in conn.execute(cohorts.order_by(COHORTS.c.number)):
        last = stored_at.get(scope_of(int(number)))
        final = status == "completed" and completed_at is not None
        if not final or last is None or last < completed_at or scope_of(int(number)) in outdated:
            due.append(int(number))
    return due


def outdated_scopes(conn: Connection) -> set[str]:
    """The scopes with a stored frame that lacks a column its analysis now has (read from
    the Parquet footer alone: the frame is not decoded)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    found: set[str] = set()
    for name, wanted in CURRENT_COLUMNS.items():
        rows = conn.execute(select(RESULTS.c.scope, RESULTS.c.frame).where(RESULTS.c.name == name))
        for scope, data in rows:
            if not set(wanted) <= set(pq.read_schema(pa.BufferReader(data)).names):
                found.add(scope)
    return found


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
        versions = versions_present(conn)
        groups = [key for key in protocols_present(conn) if is_group(key)]
    due: list[tuple[int | None, str]] = [(cohort, METHODOLOGY_VERSION) for cohort in scopes]
    # Each other version's all-cohort scope (``all:v2``), only once a cohort ran under it.
    due += [(None, v) for v in versions if v != METHODOLOGY_VERSION]
    # Each protocol group's all-cohort scope (``all:v1+horizon-14d``): its cohorts alone.
    due += [(None, key) for key in groups]
    for cohort, version in due:
        names = [
            name
            for name, a in ANALYSES.items()
            if (cohort is None or a.per_cohort)
            and (version == METHODOLOGY_VERSION or a.per_version)
        ]
        scope = scope_of(cohort, version)
        with one_run():  # one bootstrap draw and one random null per scope, shared
            rows = [
                {
                    "name": name,
                    "scope": scope,
                    "computed_at": at,
                    "data_as_of": as_of,
                    "frame": frame_bytes(
                        ANALYSES[name](reader, cohort=cohort, methodology=version)
                    ),
                }
                for name in names
            ]
        with engine.begin() as conn:
            conn.execute(delete(RESULTS).where(RESULTS.c.scope == scope, RESULTS.c.name.in_(names)))
            conn.execute(insert(RESULTS), rows)
        outcome.scopes.append(scope)
        outcome.stored += len(rows)
    return outcome
