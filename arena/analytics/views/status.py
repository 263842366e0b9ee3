"""Is the arena running? The Home page's status strip, and its current leader.

`arena_status(engine, at)` judges the arena at the instant `at`, which the caller passes (the
page passes the time it runs): nothing here reads the clock. It reads three things, each one
seek on an index — the cohorts (how many, how many not completed), the newest job run (its
slot, job and owner) and the newest portfolio snapshot slot — and says which of these holds:

- ``no_cohort``: the database has no cohort yet.
- ``live``: a job ran within `LIVE_WITHIN` (30 minutes) before `at` — the scheduler's snapshot
  job alone runs every 10 minutes, so a running scheduler always has — and the newest snapshot
  is within `LIVE_WITHIN` of that newest job run: the pages show the arena as it is now.
- ``catching_up``: jobs run (as for live) but the newest snapshot is older than that, or there
  is none yet: the scheduler is working through missed slots (a restart, `--catch-up`) or its
  snapshot job is failing; what the pages show is behind.
- ``finished``: no job ran within `LIVE_WITHIN`, and either every cohort is completed or the
  newest job run was the offline demo's (`arena demo` plays a whole season on a simulated
  clock and stops): the season is over; the pages show its last data.
- ``stopped``: no job ran within `LIVE_WITHIN` while cohorts are still running: the
  scheduler is not running, and nothing is updated until it is started again.
- ``playing``: the newest job run is the offline demo's and its final `bundle` run (the last
  thing `arena demo` records) is not there yet: the season is still being played into the
  database behind the dashboard (`make demo`), or was stopped half-way (`make demo` rebuilds
  such a season rather than serve it). `decisions` then counts the decisions so far.

`next_decision` is the next weekly decision run (Sunday 00:05 UTC) after `at` while the
scheduler runs (live, catching up), else None. `leaders` picks the Home page's leader out of a
stored leaderboard frame (it never computes one).
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

import pandas as pd
from sqlalchemy import Connection, Table, func, select
from sqlalchemy.engine import Engine

from arena.analytics.query.selects import newest_slot
from arena.analytics.views.protocol import next_decision_run
from arena.storage.models import COHORT_STATUSES
from arena.storage.tables import COHORTS, DECISIONS, JOB_RUNS, live_cohort

LIVE_WITHIN = timedelta(minutes=30)
# The claim owner `arena demo` writes on every job run (`arena.app.demo.DEMO_OWNER`; a test
# holds the two equal).
DEMO_OWNER = "demo"

DEMO_FINAL_JOB = "bundle"  # `arena.engine.jobs.BUNDLE`: the demo's last run marks it finished

State = Literal["no_cohort", "live", "catching_up", "finished", "stopped", "playing"]
STATE_LABELS: dict[str, str] = {
    "no_cohort": "No cohort yet",
    "live": "Live",
    "catching_up": "Catching up",
    "finished": "Season finished",
    "stopped": "Stopped",
    "playing": "Demo season playing",
}


@dataclass(frozen=True)
class ArenaStatus:
    """The arena at `at`: its state and the times it was judged on (None: never happened)."""

    state: State
    at: datetime
    cohorts: int
    running_cohorts: int  # cohorts not completed (deciding or tracking)
    by_status: dict[str, int]  # cohorts per status, in the order deciding, tracking, completed
    latest_snapshot: datetime | None
    last_job_run: datetime | None  # the newest job run's slot
    last_job: str | None
    demo: bool  # the newest job run was the offline demo's
    next_decision: datetime | None
    decisions: int | None = None  # decisions so far, counted while the demo plays

    @property
    def label(self) -> str:
        return STATE_LABELS[self.state]

    @property
    def last_data(self) -> datetime | None:
        """The newest data the pages show: the newest snapshot, else the newest job run."""
        return self.latest_snapshot or self.last_job_run


def arena_status(engine: Engine, at: datetime) -> ArenaStatus:
    """The arena's state at `at` (see the module docstring for the rules)."""
    with engine.connect() as conn:
        by_status = {
            str(name): int(n)
            for name, n in conn.execute(
                select(COHORTS.c.status, func.count())
                .where(live_cohort())
                .group_by(COHORTS.c.status)
            )
        }
        newest = conn.execute(
            select(JOB_RUNS.c.slot, JOB_RUNS.c.job, JOB_RUNS.c.owner)
            .order_by(JOB_RUNS.c.slot.desc(), JOB_RUNS.c.id.desc())
            .limit(1)
        ).first()
        snapshot = newest_slot(conn)
        demo = newest is not None and newest.owner == DEMO_OWNER
        playing = demo and not _demo_finished(conn)
        decisions = _count(conn, DECISIONS) if playing else None
    last_run = _utc(newest.slot) if newest is not None else None
    latest = _utc(snapshot)
    cohorts = sum(by_status.values())
    running = cohorts - by_status.get("completed", 0)
    state = _state(at, cohorts, running, last_run, latest, demo)
    if playing and cohorts:
        state = "playing"
    return ArenaStatus(
        state=state,
        at=at,
        cohorts=cohorts,
        running_cohorts=running,
        by_status={name: by_status[name] for name in COHORT_STATUSES if name in by_status},
        latest_snapshot=latest,
        last_job_run=last_run,
        last_job=str(newest.job) if newest is not None else None,
        demo=demo,
        next_decision=next_decision_run(at) if state in ("live", "catching_up") else None,
        decisions=decisions,
    )


def _demo_finished(conn: Connection) -> bool:
    """Whether the demo recorded its final run (one indexed seek)."""
    query = select(JOB_RUNS.c.id).where(
        JOB_RUNS.c.job == DEMO_FINAL_JOB,
        JOB_RUNS.c.owner == DEMO_OWNER,
        JOB_RUNS.c.status == "ok",
    )
    return conn.execute(query.limit(1)).first() is not None


def _count(conn: Connection, table: Table) -> int:
    return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def _state(
    at: datetime,
    cohorts: int,
    running: int,
    last_run: datetime | None,
    latest: datetime | None,
    demo: bool,
) -> State:
    if cohorts == 0:
        return "no_cohort"
    if last_run is None or at - last_run > LIVE_WITHIN:
        return "finished" if demo or running == 0 else "stopped"
    if latest is not None and last_run - latest <= LIVE_WITHIN:
        return "live"
    return "catching_up"


def _utc(value: datetime | None) -> datetime | None:
    """A stored time as aware UTC (SQLite hands it back naive)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class Leaders:
    """The Home page's leader: the best-ranked model (kind llm) and, when a reference row
    (a baseline or the oracle) ranks above it, the top row too; `families` rows in all."""

    model: pd.Series | None
    top: pd.Series | None
    families: int


def leaders(board: pd.DataFrame) -> Leaders:
    """The leading model of a `leaderboard` frame: the llm family with the best rank (ties:
    the higher P(rank #1) among the models, then family id), and the table's first row when
    it is not that model (it then ranks above it). Empty frame: no leader."""
    if board.empty:
        return Leaders(None, None, 0)
    # A frame stored before the contenders' figure existed ties on the all-rows one.
    first = "p_rank_1_contenders" if "p_rank_1_contenders" in board else "p_rank_1"
    ordered = board.sort_values(
        ["rank", first, "family_id"], ascending=[True, False, True], kind="stable"
    )
    top = ordered.iloc[0]
    models = ordered[ordered["kind"] == "llm"]
    model = models.iloc[0] if len(models) else None
    above = top if model is None or top["family_id"] != model["family_id"] else None
    return Leaders(model, above, len(board))
