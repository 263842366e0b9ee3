"""The engine's jobs as the scheduler, `--catch-up`, the demo and the `arena` job commands run
them: claimed per slot.

Every job is a function `(ctx, at) -> JobOutcome` over the engine; `run_job` wraps one run for
one slot in a `job_runs` claim, so two scheduler processes, a restart, a catch-up or a manual
`arena snapshot --at T` never do the same job × slot twice:

- the claim is an INSERT of (job, slot) taken FIRST; the unique key makes a second claimer
  lose and report `skipped`;
- a row left `running` by a crashed process is re-claimable once it is older than the stale
  timeout (an UPDATE guarded by status and started_at, so only one re-claimer wins);
- a finished row (`ok` or `failed`) is final: the slot was done. A failure is recorded with a
  one-line, secret-free error and never propagates: the scheduler must survive every job.

Slots are the instants the trigger table fires at: start-cohort the week start (Sunday 00:00),
decide the Sunday hour at :05 (00:05 … 23:05; see `decide_slot`), snapshot the 10-minute slot,
sync-markets the 5-minute slot, resolve the hour, analyses the hour's :30, bundle its :45.
`slot_for(job, at)` is the latest fire time at or before `at`; a job run late (or by
`--catch-up`) is recorded under that slot.

Decision retries: decide fires every hour on Sunday. Its first run (00:05) makes the week's
decisions; later runs find finished decisions and skip them, but re-claim `error` and
`zero_trade` rows (the engine's claim-before-call rules), so a transient provider failure is
retried within the hour instead of losing the week. Decide also makes sure the week's cohort
exists first (idempotent), so a failed start-cohort run cannot cost a week of decisions, and
refuses to run on a market table not synced within the last hour (`require_fresh_universe`),
so a Gamma outage delays the decisions instead of trading at stale prices.
"""

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol

from apscheduler.triggers.cron import CronTrigger
from sqlalchemy import Connection, bindparam, func, insert, select, update
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError

from arena.agents.responders import ResponderFactory
from arena.config import Settings
from arena.core.errors import ArenaError, error_line
from arena.core.timeutil import slot_start, week_start
from arena.engine.cohorts import CohortResult, start_cohort
from arena.engine.decision_claims import new_owner
from arena.engine.decisions import run_decisions
from arena.engine.logs import log_event
from arena.engine.market_sync import horizons_to_sync, sync_markets
from arena.engine.provenance import PriceReader
from arena.engine.settlement import resolve_markets
from arena.engine.snapshots import take_snapshots
from arena.engine.sources import MarketSource, foreign_markets, skipped_line
from arena.engine.universe import open_markets_of
from arena.lineup import Lineup
from arena.markets.breaker import breaker_run
from arena.storage.db import session_scope
from arena.storage.tables import JOB_RUNS as _RUNS
from arena.storage.tables import MARKETS as _MARKETS

if TYPE_CHECKING:
    from arena.markets.clob import ClobClient

log = logging.getLogger("arena.engine.jobs")


START_COHORT = "start-cohort"
DECIDE = "decide"
SNAPSHOT = "snapshot"
SYNC_MARKETS = "sync-markets"
RESOLVE = "resolve"
ANALYSES = "analyses"
BUNDLE = "bundle"
# The order jobs run in when several are due at one instant (catch-up, the demo): the week's
# cohort first, fresh prices next, settlements, then decisions on them, the valuation, the
# statistics over all of it, and the replay bundles of cohorts that just finished last.
JOB_ORDER = (START_COHORT, SYNC_MARKETS, RESOLVE, DECIDE, SNAPSHOT, ANALYSES, BUNDLE)

RunStatus = Literal["ok", "failed", "skipped"]
LOG_SOURCE = "jobs"
FRESH_UNIVERSE = timedelta(hours=1)  # decide needs markets synced at most this long ago
# The pacing of the jobs' CLOB reader (seconds between requests): at most 50 a second, the
# limit Polymarket documents for POST /books (500 per 10 s; GET /book allows 1,500). The
# client's default, 0.1 s (Gamma's), made a year's v2 snapshot pass wait over a second between
# the single-token reads of books a batch left out (bench/RESULTS.md).
CLOB_MIN_INTERVAL = 0.02


class JobOutcome(Protocol):
    """What every engine job returns: its counts for the job_runs row and the log."""

    def counts(self) -> dict[str, Any]: ...


@dataclass
class JobContext:
    """Everything a job needs, built once per process (scheduler) or per season (demo).

    `clock` is the wall clock for `finished_at` in real runs; None on a simulated clock, where a
    job takes no simulated time (finished_at = at), so a replay writes the same rows.
    """

    engine: Engine
    settings: Settings
    lineup: Lineup
    source: MarketSource
    responders: ResponderFactory
    owner: str = field(default_factory=new_owner)
    clock: Callable[[], datetime] | None = None
    secrets: tuple[str, ...] = ()
    # A reader engine for jobs that only read before they write (the hourly analyses); None:
    # `engine`. On SQLite a writer's transaction takes the write lock as it begins.
    reader: Engine | None = None
    # Methodology v2's CLOB reader; None: a ClobClient at ARENA_CLOB_URL, built on first use
    # (`price_reader`), so a deployment without v2 cohorts never reads the CLOB.
    clob: PriceReader | None = None
    # The client `price_reader` built (this context owns it and `close` closes it); a reader
    # passed in as `clob` (the demo's) is its owner's to close.
    _built: "ClobClient | None" = field(default=None, init=False, repr=False, compare=False)
    # Scheduler jobs run on several threads: one lock so they build one client, not two.
    _clob_lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def price_reader(self) -> PriceReader:
        """The one CLOB reader of this process (the demo passes the simulated CLOB's)."""
        with self._clob_lock:
            if self.clob is None:
                from arena.markets.clob import ClobClient

                url = self.settings.clob_url
                self.clob = self._built = ClobClient(url, min_interval=CLOB_MIN_INTERVAL)
            return self.clob

    def close(self) -> None:
        """Close the CLOB client `price_reader` built, if it built one (its connection pool);
        a later `price_reader` builds a new one. What the CLI's job commands and the
        scheduler call when they end."""
        with self._clob_lock:
            built, self._built = self._built, None
            if built is not None and self.clob is built:
                self.clob = None
        if built is not None:
            built.close()

    @property
    def stale_after(self) -> timedelta:
        """How old a `running` claim (job or decision) must be before another may take it."""
        return timedelta(minutes=self.settings.claim_stale_minutes)


JobFunction = Callable[[JobContext, datetime], JobOutcome]


@dataclass(frozen=True)
class CohortOutcome:
    """start_cohort's result with the common `counts()`."""

    result: CohortResult

    def counts(self) -> dict[str, Any]:
        return {
            "cohort": self.result.number,
            "week_start": self.result.week_start.isoformat(),
            "created": self.result.created,
            "agents": self.result.agents,
        }


@dataclass(frozen=True)
class DecideOutcome:
    """The week's cohort (ensured), the decision run's counts and how many open markets of
    the other kind were left out of the universe (`left_out`, methodology §18)."""

    cohort: CohortOutcome
    decisions: JobOutcome
    left_out: int = 0

    def counts(self) -> dict[str, Any]:
        return {
            **self.decisions.counts(),
            "cohort": self.cohort.counts(),
            "markets_left_out": self.left_out,
        }


# --------------------------------------------------------------------------------------------
# The jobs


def start_cohort_job(ctx: JobContext, at: datetime) -> CohortOutcome:
    """Create the cohort of the week containing `at` (idempotent)."""
    s = ctx.settings
    days = s.horizon()
    started = start_cohort(
        ctx.engine, at, ctx.lineup, s.methodology, s.extensions, s.replicates, horizon_days=days
    )
    return CohortOutcome(started)


def require_fresh_universe(engine: Engine, at: datetime) -> None:
    """Refuse to decide on a stale or empty market table (Gamma down, sync failing).

    Decisions execute at the prices of the frozen universe, so prices older than
    `FRESH_UNIVERSE` would be paper trades at prices that no longer exist. The decide job
    fails instead, and its next hourly Sunday slot tries again once a sync has succeeded.
    """
    with engine.connect() as conn:
        query = select(func.max(_MARKETS.c.updated_at)).where(_MARKETS.c.status == "open")
        latest = conn.execute(query).scalar_one_or_none()
    if latest is not None and latest.tzinfo is None:
        latest = latest.replace(tzinfo=UTC)
    if latest is None or latest < at - FRESH_UNIVERSE:
        seen = f"last synced {latest:%Y-%m-%d %H:%M} UTC" if latest else "no market synced yet"
        raise ArenaError(
            f"no fresh market universe for the decision run ({seen})",
            "fix sync-markets (ARENA_GAMMA_URL, network); decide retries hourly on Sunday",
        )


def decide_job(ctx: JobContext, at: datetime) -> DecideOutcome:
    """Ensure this week's cohort, then run the decisions of every cohort in its window."""
    require_fresh_universe(ctx.engine, at)
    cohort = start_cohort_job(ctx, at)
    foreign = foreign_markets(ctx.source.name)
    left_out = _left_out(ctx, at, foreign)
    result = run_decisions(
        ctx.engine,
        at,
        ctx.lineup,
        ctx.settings.methodology,
        ctx.responders,
        stale_after=ctx.stale_after,
        owner=ctx.owner,
        exclude_source=foreign,
        prices=ctx.price_reader,
        books=ctx.price_reader if ctx.settings.record_books else None,
    )
    return DecideOutcome(cohort, result, left_out)


def _left_out(ctx: JobContext, at: datetime, foreign: str) -> int:
    """Count (and log) the open markets of the other kind the universe will not show."""
    with session_scope(ctx.engine) as session:
        count = open_markets_of(session, at, foreign)
        if count:
            line = skipped_line(count, ctx.source.name, "left out of the universe")
            log_event(session, at, "WARNING", DECIDE, line, market_source=foreign)
    return count


def snapshot_job(ctx: JobContext, at: datetime) -> JobOutcome:
    """Value every live portfolio for the 10-minute slot of `at`."""
    methodology = ctx.settings.methodology
    return take_snapshots(
        ctx.engine,
        at,
        interval_minutes=methodology.snapshot_interval_minutes,
        decision_window_weeks=methodology.decision_window_weeks,
        prices=ctx.price_reader,
    )


def sync_markets_job(ctx: JobContext, at: datetime) -> JobOutcome:
    """Refresh the top markets by volume (overall, and per horizon still deciding) and every
    held market from the source."""
    s = ctx.settings
    window = s.methodology.decision_window_weeks
    horizons = horizons_to_sync(ctx.engine, at, window, s.horizon())
    return sync_markets(ctx.engine, ctx.source, at, s.methodology.market_universe_size, horizons)


def resolve_job(ctx: JobContext, at: datetime) -> JobOutcome:
    """Settle markets the source says are resolved; score Brier."""
    return resolve_markets(ctx.engine, ctx.source, at)


def analyses_job(ctx: JobContext, at: datetime) -> JobOutcome:
    """Recompute and store every stored analysis the dashboard shows (`stored.ANALYSES`)."""
    from arena.engine.analyses import store_analyses  # pandas & co: only when it runs

    return store_analyses(ctx.engine, at, reader=ctx.reader)


def bundle_job(ctx: JobContext, at: datetime) -> JobOutcome:
    """Build and keep the replay bundle of every cohort that finished since the last run."""
    from arena.engine.bundles import build_bundles  # the leaderboard's pandas: only when it runs

    return build_bundles(ctx.engine, at)


JOBS: dict[str, JobFunction] = {
    START_COHORT: start_cohort_job,
    DECIDE: decide_job,
    SNAPSHOT: snapshot_job,
    SYNC_MARKETS: sync_markets_job,
    RESOLVE: resolve_job,
    ANALYSES: analyses_job,
    BUNDLE: bundle_job,
}


# --------------------------------------------------------------------------------------------
# Slots and the trigger table


def decide_slot(at: datetime) -> datetime:
    """The latest Sunday HH:05 (UTC) at or before `at`: the decide job's slot."""
    start = week_start(at)
    first = start + timedelta(minutes=5)
    if at < first:
        return first - timedelta(weeks=1) + timedelta(hours=23)
    hours = min(int((at - first) // timedelta(hours=1)), 23)
    return first + timedelta(hours=hours)


SLOTS: dict[str, Callable[[datetime], datetime]] = {
    START_COHORT: week_start,
    DECIDE: decide_slot,
    SNAPSHOT: lambda at: slot_start(at, 10),
    SYNC_MARKETS: lambda at: slot_start(at, 5),
    RESOLVE: lambda at: slot_start(at, 60),
    ANALYSES: lambda at: slot_start(at - timedelta(minutes=30), 60) + timedelta(minutes=30),
    BUNDLE: lambda at: slot_start(at - timedelta(minutes=45), 60) + timedelta(minutes=45),
}


def slot_for(job: str, at: datetime) -> datetime:
    """The slot a run of `job` at `at` belongs to (the latest trigger fire time ≤ at)."""
    return SLOTS[job](at.astimezone(UTC))


@dataclass(frozen=True)
class Schedule:
    """One job's place on the methodology's UTC clock, and how late a missed run may start.

    Grace: a snapshot, sync or resolve run may start late but within its own slot (a later
    slot's run takes over after that); start-cohort and decide may start any time in their
    week, since the week's cohort and decisions are still due. Missed runs coalesce into one.
    """

    job: str
    cron: dict[str, str]
    misfire_grace_seconds: int
    describe: str


WEEK_SECONDS = 7 * 24 * 3600
SCHEDULES: tuple[Schedule, ...] = (
    # day_of_week="sun", never 0: APScheduler's CronTrigger counts 0 as MONDAY.
    Schedule(
        START_COHORT,
        {"day_of_week": "sun", "hour": "0", "minute": "0"},
        WEEK_SECONDS,
        "Sunday 00:00",
    ),
    Schedule(
        DECIDE,
        {"day_of_week": "sun", "hour": "*", "minute": "5"},
        WEEK_SECONDS,
        "Sunday 00:05 (then hourly to 23:05, retrying error / zero_trade decisions)",
    ),
    Schedule(SNAPSHOT, {"minute": "*/10"}, 9 * 60, "every 10 minutes"),
    Schedule(SYNC_MARKETS, {"minute": "*/5"}, 4 * 60, "every 5 minutes"),
    Schedule(RESOLVE, {"minute": "0"}, 59 * 60, "hourly at :00"),
    Schedule(ANALYSES, {"minute": "30"}, 59 * 60, "hourly at :30 (stored leaderboard)"),
    Schedule(BUNDLE, {"minute": "45"}, 59 * 60, "hourly at :45 (finished cohorts' replay bundles)"),
)


def trigger_table() -> list[tuple[str, CronTrigger]]:
    """[(job, UTC cron trigger)]: what the scheduler runs, and what its tests walk through."""
    return [(s.job, CronTrigger(timezone=UTC, **s.cron)) for s in SCHEDULES]


# --------------------------------------------------------------------------------------------
# Running one job for one slot


@dataclass(frozen=True)
class JobRunResult:
    """What `run_job` did: ran (ok / failed) or found the slot taken (skipped).

    `run_id` is this run's job_runs row (None when skipped, or when the claim itself failed);
    `outcome` the job's own result when it ran to the end; `exception` what made it fail
    (the CLI re-raises it, so a manual run's failure reads exactly as before).
    """

    job: str
    slot: datetime
    status: RunStatus
    counts: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    run_id: int | None = None
    outcome: JobOutcome | None = field(default=None, compare=False, repr=False)
    exception: BaseException | None = field(default=None, compare=False, repr=False)


def claim_slot(
    engine: Engine, job: str, slot: datetime, at: datetime, owner: str, stale_after: timedelta
) -> int | None:
    """Claim job × slot; the job_runs id, or None when another run did or does it."""
    try:
        with engine.begin() as conn:
            params = {"job": job, "slot": slot, "owner": owner, "started_at": at}
            return int(conn.execute(_CLAIM, params).scalar_one())
    except IntegrityError:
        pass
    return _reclaim_stale(engine, job, slot, at, owner, stale_after)


def _reclaim_stale(
    engine: Engine, job: str, slot: datetime, at: datetime, owner: str, stale_after: timedelta
) -> int | None:
    """Take over a `running` row whose owner has been silent past the timeout (a crash)."""
    with engine.begin() as conn:
        taken = conn.execute(
            update(_RUNS)
            .where(
                _RUNS.c.job == job,
                _RUNS.c.slot == slot,
                _RUNS.c.status == "running",
                _RUNS.c.started_at < at - stale_after,
            )
            .values(owner=owner, started_at=at, finished_at=None, error=None, counts={})
            .returning(_RUNS.c.id)
        ).first()
        if taken is None:
            return None
        message = f"{job} {slot.isoformat()}: re-claimed a stale running claim"
        _log_line(conn, at, "WARNING", message, job=job, slot=slot.isoformat(), owner=owner)
        return int(taken[0])


def run_job(ctx: JobContext, name: str, slot_at: datetime, at: datetime) -> JobRunResult:
    """Run job `name` for `slot_at` as of `at`, at most once per slot; never raises."""
    job = JOBS[name]
    try:
        run_id = claim_slot(ctx.engine, name, slot_at, at, ctx.owner, ctx.stale_after)
    except Exception as exc:  # the database itself is unusable: report, keep the process alive
        error = error_line(exc, ctx.secrets)
        log.error("%s %s: could not claim the slot: %s", name, slot_at.isoformat(), error)
        return JobRunResult(name, slot_at, "failed", error=f"claim failed: {error}", exception=exc)
    if run_id is None:
        log.debug("%s %s: already done or in progress elsewhere", name, slot_at.isoformat())
        return JobRunResult(name, slot_at, "skipped")
    try:
        with breaker_run():  # an outside service's failures count within this run alone
            outcome = job(ctx, at)
    except Exception as exc:
        log.debug("job %s failed", name, exc_info=True)
        error = error_line(exc, ctx.secrets)
        return _finish(ctx, run_id, name, slot_at, at, {}, error, exception=exc)
    counts = _json_safe(outcome.counts())
    return _finish(ctx, run_id, name, slot_at, at, counts, None, outcome=outcome)


def _finish(
    ctx: JobContext,
    run_id: int,
    name: str,
    slot_at: datetime,
    at: datetime,
    counts: dict[str, Any],
    error: str | None,
    *,
    outcome: JobOutcome | None = None,
    exception: BaseException | None = None,
) -> JobRunResult:
    """Record the end of our claim (only if it is still ours) and its system log line."""
    status: RunStatus = "failed" if error else "ok"
    message = f"{name} {slot_at.isoformat()}: {status}" + (f": {error}" if error else "")
    values = {
        "b_id": run_id,
        "b_owner": ctx.owner,
        "b_started": at,
        "status": status,
        "finished_at": ctx.clock() if ctx.clock else at,
        "counts": counts,
        "error": error,
    }
    try:
        with ctx.engine.begin() as conn:
            conn.execute(_FINISH, values)
            level = "ERROR" if error else "INFO"
            _log_line(conn, at, level, message, job=name, slot=slot_at.isoformat())
    except Exception as exc:  # recording failed: the claim goes stale and is re-claimable
        log.error("%s: could not record the outcome: %s", message, error_line(exc, ctx.secrets))
        error = error or "could not record outcome"
        return JobRunResult(
            name, slot_at, "failed", counts, error, run_id, outcome, exception or exc
        )
    return JobRunResult(name, slot_at, status, counts, error, run_id, outcome, exception)


# Prebuilt statements: a job run's bookkeeping is two small transactions, on the hot path of
# every 10-minute snapshot (tens of thousands of runs in a demo season).
_CLAIM = insert(_RUNS).values(status="running", counts={}).returning(_RUNS.c.id)
_FINISH = update(_RUNS).where(
    _RUNS.c.id == bindparam("b_id"),
    _RUNS.c.owner == bindparam("b_owner"),
    _RUNS.c.started_at == bindparam("b_started", type_=_RUNS.c.started_at.type),
)


def _log_line(conn: Connection, at: datetime, level: str, message: str, **context: Any) -> None:
    """A `jobs` line in system_logs, in the caller's transaction."""
    log_event(conn, at, level, LOG_SOURCE, message, **context)


def record_run(
    conn: Connection, name: str, slot_at: datetime, at: datetime, owner: str, counts: dict[str, Any]
) -> None:
    """A finished `ok` run of `name` for `slot_at`, in the caller's transaction: the job_runs
    row and log line `run_job` leaves, without its two extra transactions.

    Why: on a simulated clock (the demo) one process runs every job and takes no time
    (started = finished = at), so nobody else can hold the slot; a fresh insert that collides
    raises IntegrityError, as a double run should.
    """
    values = {"job": name, "slot": slot_at, "owner": owner, "started_at": at, "finished_at": at}
    conn.execute(_RECORD, {**values, "status": "ok", "counts": _json_safe(counts), "error": None})
    slot = slot_at.isoformat()
    _log_line(conn, at, "INFO", f"{name} {slot}: ok", job=name, slot=slot)


_RECORD = insert(_RUNS)


@dataclass(frozen=True)
class SlotRun:
    """The job_runs row that holds a job × slot: what a skipped run found."""

    id: int
    status: str  # running | ok | failed
    owner: str | None
    started_at: datetime
    finished_at: datetime | None
    error: str | None


def slot_run(engine: Engine, job: str, slot: datetime) -> SlotRun | None:
    """The job_runs row of job × slot, if any (one indexed read)."""
    columns = (
        _RUNS.c.id,
        _RUNS.c.status,
        _RUNS.c.owner,
        _RUNS.c.started_at,
        _RUNS.c.finished_at,
        _RUNS.c.error,
    )
    with engine.connect() as conn:
        row = conn.execute(select(*columns).where(_RUNS.c.job == job, _RUNS.c.slot == slot))
        found = row.first()
    if found is None:
        return None
    started = _aware(found.started_at)
    assert started is not None  # NOT NULL
    return SlotRun(
        int(found.id), found.status, found.owner, started, _aware(found.finished_at), found.error
    )


def _aware(value: datetime | None) -> datetime | None:
    """A datetime as aware UTC (SQLite hands it back naive)."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def next_slot(job: str, slot: datetime) -> datetime:
    """The job's next trigger fire time after `slot`: the next slot the scheduler runs."""
    trigger = dict(trigger_table())[job]
    fire = trigger.get_next_fire_time(None, slot + timedelta(seconds=1))
    assert fire is not None  # a cron trigger without an end date always fires again
    return fire.astimezone(UTC)


def known_secrets(settings: Settings) -> tuple[str, ...]:
    """Values that must never reach a job_runs row or a log line: the database password,
    the LLM API key and the admin password (the same list `scheduler.py` blanks out)."""
    try:
        values = [make_url(settings.database_url).password]
    except ArgumentError:  # unusable URL: the engine says so, in its own clear line
        values = []
    for secret in (settings.llm_api_key, settings.admin_password):
        values.append(secret.get_secret_value() if secret else None)
    return tuple(str(v) for v in values if v)


def _json_safe(value: Any) -> Any:
    """Counts as plain JSON (datetimes as ISO text, tuples as lists)."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json_safe(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
