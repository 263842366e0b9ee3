"""Build a realistic YEAR of arena data through the engine's own jobs.

Run:
    .venv/bin/python bench/make_year.py --url sqlite:///data/bench/year.db [--weeks 52]
        [--seed 7] [--tail-weeks 1] [--sync-hours 6]
    .venv/bin/python bench/make_year.py --url postgresql+psycopg://user@host/db
    .venv/bin/python bench/make_year.py --pg      # a throw-away cluster (tests/pg.py), kept
                                                  # running afterwards; its URL is printed

Why: the dashboard and the engine must stay fast at a year's scale (52 cohorts, ~8M
portfolio snapshots), and a benchmark needs that year without a year of waiting. The season is
played exactly like `arena demo` plays one (same world, same start, every job through
`run_job`, claims and all), with the full default lineup: the seven LLM families answered by a
simulated LLM (`bench/year_llm.py`) through the real decision path (prompts, raw answers,
attempts, tokens, cost) and the three baselines.

Snapshots, the bulk of the rows, take one shortcut that writes identical rows. A pass's
valuation depends only on the database (cash, positions, market prices, Brier rows) and every
one of those changes only when another job runs (sync, resolve, decide, start-cohort). So the
real snapshot job runs at the first slot at or after every job tick (and each Sunday 00:00); at
the later slots up to the next job tick, the previous pass's rows of still-live agents are
copied under the new slot (`INSERT … SELECT`) instead of valuing the books again, and each
copied pass is closed by the engine's own `arena.engine.snapshots.finish_pass` (rollups,
cohort statuses, the pass's log line) and recorded as `run_job` records a finished run (its
job_runs row and log line). Copied slots are written up to 2,000 to a transaction: through
`run_job`, three transactions per slot wrote 4.5× the bytes and took 45% more CPU on a 4-week
build. `tests/bench/test_make_year.py` proves both paths write the same rows.

Offline, as `arena demo` is: the decision runs record their universe's order books
(`ARENA_RECORD_BOOKS`, on by default) from the simulated CLOB (`arena.sim.clob_server`),
started on a loopback port for the build with its clock moved to each tick and read by the
real `ClobClient`, never from `ARENA_CLOB_URL`; with recording off (and no v2 or
`book_execution` cohort to price) no CLOB is started or read.
"""

import argparse
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, func, insert, select, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlmodel import SQLModel

import arena.app.demo
from arena.agents.responders import default_responders
from arena.app.demo import Tick, any_open_position
from arena.config import BOOK_EXECUTION, Methodology, is_v2, load_settings
from arena.core.errors import ArenaError, InputError
from arena.core.timeutil import week_start
from arena.engine.jobs import (
    DECIDE,
    LOG_SOURCE,
    RESOLVE,
    SNAPSHOT,
    START_COHORT,
    SYNC_MARKETS,
    JobContext,
    JobRunResult,
    run_job,
    slot_for,
)
from arena.engine.logs import log_event
from arena.engine.snapshots import SnapshotResult, finish_pass
from arena.lineup import Lineup, load_lineup
from arena.sim.clob_server import ClobServer
from arena.sim.world import DEMO_START, demo_world
from arena.storage import tables
from arena.storage.db import create_db_engine, transaction
from arena.storage.migrate import init_db

try:
    from bench.year_llm import with_simulated_llms
except ModuleNotFoundError:  # run as a script (python bench/make_year.py): bench/ is on sys.path
    from year_llm import with_simulated_llms  # type: ignore[no-redef]

DEFAULT_URL = "sqlite:///data/bench/year.db"
DEFAULT_WEEKS = 52
DEFAULT_SEED = 7
DEFAULT_TAIL_WEEKS = 1
SYNC_EVERY = arena.app.demo.SYNC_EVERY  # sync-markets + resolve cadence, as in the demo
TICK = arena.app.demo.TICK
OWNER = "bench-year"
MAX_COPY_BATCH = 2_000  # copied slots per transaction (a 6-hour gap between job ticks is 35)

_SNAPS = tables.PORTFOLIO_SNAPSHOTS
_AGENTS = tables.AGENTS
_COHORTS = tables.COHORTS


# --------------------------------------------------------------------------------------------
# The clock


def year_ticks(
    start: datetime, weeks: int, tail_weeks: int, sync_every: timedelta = SYNC_EVERY
) -> Iterator[Tick]:
    """Every tick with something due, in `arena.app.demo`'s cadence (sync every `sync_every`).

    Weeks 1…N: start-cohort Sunday 00:00, decide Sunday 00:05; throughout: sync-markets and
    resolve every `sync_every` from each Sunday 00:00, a snapshot every 10 minutes; then the
    settling tail of `tail_weeks` weeks.
    """
    season_end = start + timedelta(weeks=weeks)
    end = season_end + timedelta(weeks=tail_weeks)
    at = start
    while at <= end:
        deciding = at < season_end
        sunday = week_start(at)
        due: list[str] = []
        if deciding and at == sunday:
            due.append(START_COHORT)
        if (at - sunday) % sync_every == timedelta(0):
            due += [SYNC_MARKETS, RESOLVE]
        if deciding and at == sunday + timedelta(minutes=5):
            due.append(DECIDE)
        if slot_for(SNAPSHOT, at) == at:
            due.append(SNAPSHOT)
        if due:
            yield Tick(at, tuple(due), not deciding)
        at += TICK


# --------------------------------------------------------------------------------------------
# Snapshot carry-forward: identical rows without valuing the books again


def _copy_statement() -> Any:
    """INSERT … SELECT of the source slot's rows of agents whose cohort is not completed,
    under a new slot and timestamp. (A cohort completed by the source pass drops out here; one
    that starts later has its own job tick, hence a real pass.)"""
    live = (
        select(_SNAPS)
        .join(_AGENTS, _AGENTS.c.id == _SNAPS.c.agent_id)
        .join(_COHORTS, _COHORTS.c.id == _AGENTS.c.cohort_id)
        .where(
            _SNAPS.c.slot == bindparam("b_source", type_=_SNAPS.c.slot.type),
            _COHORTS.c.status != "completed",
        )
        .subquery("live")
    )
    new = {
        "slot": bindparam("b_slot", type_=_SNAPS.c.slot.type),
        "snapshot_timestamp": bindparam("b_at", type_=_SNAPS.c.snapshot_timestamp.type),
    }
    columns = [column.name for column in _SNAPS.c if column.name != "id"]
    values = [new.get(name, live.c[name]) for name in columns]
    return insert(_SNAPS).from_select(columns, select(*values)).returning(_SNAPS.c.agent_id)


_COPY = _copy_statement()


_RUN = insert(tables.JOB_RUNS)


def carry_forward(
    conn: Connection, source: datetime, at: datetime, owner: str, decision_window_weeks: int
) -> int:
    """The snapshot job's run at `at`, nothing having changed since the pass of slot `source`,
    in the caller's transaction; returns the rows written.

    That pass's rows of still-live agents are copied under the new slot, the engine's
    `finish_pass` closes the pass (rollups, cohort statuses, its log line), and the run is
    recorded as `run_job` records one: a finished job_runs row (a simulated job takes no time:
    started = finished = at) and the runner's log line.
    """
    result = SnapshotResult(slot=slot_for(SNAPSHOT, at))
    assert result.slot is not None
    params = {"b_source": source, "b_slot": result.slot, "b_at": at}
    copied = conn.execute(_COPY, params).all()  # RETURNING: rowcount is -1 on psycopg
    result.rows_written = result.agents = len(copied)
    finish_pass(conn, at, result, decision_window_weeks)
    run = {"job": SNAPSHOT, "slot": result.slot, "status": "ok", "owner": owner, "error": None}
    conn.execute(_RUN, {**run, "started_at": at, "finished_at": at, "counts": result.counts()})
    slot = result.slot.isoformat()
    log_event(conn, at, "INFO", LOG_SOURCE, f"{SNAPSHOT} {slot}: ok", job=SNAPSHOT, slot=slot)
    return result.rows_written


# --------------------------------------------------------------------------------------------
# The season


@dataclass(frozen=True)
class YearProgress:
    """Where the build is: simulated instant, phase, wall time, snapshot rows so far."""

    at: datetime
    phase: str
    wall_seconds: float
    snapshot_rows: int
    open_positions: int


ProgressHook = Callable[[YearProgress], None]


class _Season:
    """The build's state: runs ticks, decides real pass vs copy, batches the copies."""

    def __init__(
        self,
        ctx: JobContext,
        bulk: bool,
        real_from: datetime | None = None,
        clob: ClobServer | None = None,
    ) -> None:
        self.ctx = ctx
        self.bulk = bulk
        self.real_from = real_from  # the reference build copies before it (tests)
        self.clob = clob  # the simulated CLOB, its clock moved to each tick
        # v2 and book_execution mark at the books, which move hourly: a pass is copied only
        # within the hour (as in `arena demo`)
        settings = ctx.settings
        self.marks_at_books = is_v2(settings.methodology.version) or (
            BOOK_EXECUTION in settings.extensions
        )
        self.source: datetime | None = None  # slot of the latest real snapshot pass
        self.dirty = True  # another job ran since that pass
        self.pending: list[datetime] = []
        self.snapshot_rows = 0

    def run_tick(self, tick: Tick) -> None:
        if self.clob is not None:
            self.clob.at = tick.at
            if self.marks_at_books and tick.at.minute == 0:
                self.dirty = True
        for name in tick.jobs:
            if name == SNAPSHOT:
                self.snapshot(tick.at)
            else:
                self.flush()
                self._run(name, tick.at)
                self.dirty = True

    def snapshot(self, at: datetime) -> None:
        copying = self.bulk or (self.real_from is not None and at < self.real_from)
        if copying and not self.dirty and self.source is not None and at != week_start(at):
            self.pending.append(at)
            if len(self.pending) >= MAX_COPY_BATCH:
                self.flush()
            return
        self.flush()
        result = self._run(SNAPSHOT, at)
        self.snapshot_rows += int(result.counts.get("rows_written", 0))
        self.source, self.dirty = slot_for(SNAPSHOT, at), False

    def flush(self) -> None:
        """Write the pending copied slots in one transaction."""
        if not self.pending:
            return
        assert self.source is not None
        window = self.ctx.settings.methodology.decision_window_weeks
        with transaction(self.ctx.engine) as conn:
            for at in self.pending:
                self.snapshot_rows += carry_forward(conn, self.source, at, self.ctx.owner, window)
        self.pending = []

    def _run(self, name: str, at: datetime) -> JobRunResult:
        result = run_job(self.ctx, name, slot_for(name, at), at)
        if result.status != "ok":
            raise ArenaError(
                f"year build stopped: {name} at {at:%Y-%m-%d %H:%M} UTC: {result.status} "
                f"{result.error or ''}".strip(),
                "the job_runs and system_logs tables of the database hold the details",
            )
        return result


def ensure_empty(engine: Engine) -> None:
    """The build writes a season from a fixed start: refuse a database that holds one."""
    with engine.connect() as conn:
        for table in (_COHORTS, tables.MARKETS, tables.JOB_RUNS, _SNAPS):
            if conn.execute(select(func.count()).select_from(table)).scalar_one():
                raise InputError(
                    f"the database already holds rows in {table.name}; the year build needs "
                    "an empty one",
                    "pass a new database URL (e.g. sqlite:///data/bench/year2.db) or delete "
                    "the old file first",
                )


def build_year(
    url: str,
    weeks: int = DEFAULT_WEEKS,
    seed: int = DEFAULT_SEED,
    tail_weeks: int = DEFAULT_TAIL_WEEKS,
    progress: ProgressHook | None = None,
    *,
    bulk_snapshots: bool = True,
    stop_at: datetime | None = None,
    stop_when_settled: bool = True,
    sync_every: timedelta = SYNC_EVERY,
    lineup: Lineup | None = None,
    methodology: Methodology | None = None,
    start: datetime = DEMO_START,
    real_from: datetime | None = None,
) -> dict[str, int]:
    """Play a season into the empty database at `url`; returns its row counts.

    `bulk_snapshots=False` values the books at every 10-minute slot (the reference the copies
    are tested against). `stop_at` stops the clock early, `lineup` and `methodology` replace
    the default lineup and the v1 constants (tests). `real_from` makes the reference build copy
    the slots before it as the bulk build does, so a test compares the real passes from then on
    without paying for a week of them. The tail ends early once no position is
    open, as in `arena demo`, unless `stop_when_settled` is False.
    Counts: one key per table, plus `trades.<TYPE>` and `decisions.<status>`.
    """
    engine = create_db_engine(url)
    try:
        init_db(engine)
        ensure_empty(engine)
        overrides: dict[str, Any] = {"database_url": url, "llm_api_key": None}
        if methodology is not None:
            overrides["methodology"] = methodology
        settings = load_settings(**overrides)
        world = demo_world(seed, weeks, tail_weeks=tail_weeks, start=start)
        players = lineup if lineup is not None else load_lineup(None)
        baselines, close = default_responders(settings, seed, probability=world.hidden_probability)
        responders = with_simulated_llms(baselines, seed, world.hidden_probability)
        ctx = JobContext(engine, settings, players, world, responders, owner=OWNER)
        clob = _simulated_clob(ctx, world, start)
        reader = ctx.clob  # the simulated CLOB's client, closed with its server
        began = time.perf_counter()
        try:
            season = _Season(ctx, bulk_snapshots, real_from, clob)
            clock = year_ticks(start, weeks, tail_weeks, sync_every)
            _play(season, clock, start, stop_at, stop_when_settled, progress, began)
        finally:
            close()
            if clob is not None:
                clob.stop()
                getattr(reader, "close", lambda: None)()
        return row_counts(engine)
    finally:
        engine.dispose()


def _simulated_clob(ctx: JobContext, world: Any, start: datetime) -> ClobServer | None:
    """The simulated CLOB on loopback, set as the jobs' CLOB reader (`arena demo`'s), when a
    job reads books: recording is on, or the cohorts mark or trade at the books. None: no job
    of the build asks for a CLOB reader."""
    settings = ctx.settings
    reads = settings.record_books or is_v2(settings.methodology.version)
    if not (reads or BOOK_EXECUTION in settings.extensions):
        return None
    return arena.app.demo._start_clob(ctx, world, start)


def _play(
    season: _Season,
    clock: Iterator[Tick],
    start: datetime,
    stop_at: datetime | None,
    stop_when_settled: bool,
    progress: ProgressHook | None,
    began: float,
) -> None:
    engine = season.ctx.engine
    for tick in clock:
        if stop_at is not None and tick.at >= stop_at:
            break
        season.run_tick(tick)
        if progress is not None and tick.at == week_start(tick.at):
            with engine.connect() as conn:
                query = select(func.count()).where(tables.POSITIONS.c.status == "open")
                still_open = int(conn.execute(query).scalar_one())
            phase = "settling" if tick.settling else f"week {(tick.at - start).days // 7 + 1}"
            elapsed = time.perf_counter() - began
            progress(YearProgress(tick.at, phase, elapsed, season.snapshot_rows, still_open))
        settled = tick.settling and RESOLVE in tick.jobs and stop_when_settled
        if settled and not any_open_position(engine):
            if SNAPSHOT not in tick.jobs:  # everything settled: one last valuation
                season.snapshot(tick.at)
            break
    season.flush()


# --------------------------------------------------------------------------------------------
# Reporting


def row_counts(engine: Engine) -> dict[str, int]:
    """Rows per table, plus trades per type and decisions per status."""
    counts: dict[str, int] = {}
    with engine.connect() as conn:
        for table in SQLModel.metadata.sorted_tables:
            counts[table.name] = int(
                conn.execute(select(func.count()).select_from(table)).scalar_one()
            )
        trades, decisions = tables.TRADES, tables.DECISIONS
        for kind, n in conn.execute(
            select(trades.c.trade_type, func.count()).group_by(trades.c.trade_type)
        ):
            counts[f"trades.{kind}"] = int(n)
        for status, n in conn.execute(
            select(decisions.c.status, func.count()).group_by(decisions.c.status)
        ):
            counts[f"decisions.{status}"] = int(n)
    return counts


def database_size(url: str) -> int:
    """Bytes on disk: the SQLite file (WAL folded in first) or `pg_database_size`."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = Path(parsed.database or "")
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        return sum(f.stat().st_size for f in files if f.exists())
    engine = create_db_engine(url)
    try:
        with engine.connect() as conn:
            size = conn.execute(text("SELECT pg_database_size(current_database())"))
            return int(size.scalar_one())
    finally:
        engine.dispose()


def print_progress(point: YearProgress) -> None:
    print(
        f"  {point.at:%Y-%m-%d} {point.phase:<9} wall {point.wall_seconds:7.1f} s  "
        f"snapshot rows {point.snapshot_rows:>10,}  open positions {point.open_positions:>6,}",
        flush=True,
    )


def _start_pg() -> str:
    """A throw-away cluster (tests/pg.py) with one new database; left running on purpose."""
    root = Path(__file__).resolve().parents[1]
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from tests.pg import start_cluster

    cluster = start_cluster()
    url = cluster.new_database()
    command = f"{cluster.bin_dir / 'pg_ctl'} -D {cluster.base / 'data'} -m fast stop"
    if cluster.user:
        command = f"runuser -u {cluster.user} -- {command}"
    print(f"PostgreSQL cluster started (kept running): {url}", flush=True)
    print(f"  stop it with: {command} && rm -rf {cluster.base}", flush=True)
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=None, help=f"database URL (default {DEFAULT_URL})")
    parser.add_argument("--pg", action="store_true", help="start a throw-away PostgreSQL cluster")
    parser.add_argument("--weeks", type=int, default=DEFAULT_WEEKS)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--tail-weeks", type=int, default=DEFAULT_TAIL_WEEKS)
    parser.add_argument("--sync-hours", type=int, default=None, help="sync cadence (default 6)")
    parser.add_argument(
        "--real-snapshots", action="store_true", help="value the books at every slot (slow)"
    )
    args = parser.parse_args()
    if args.pg and args.url:
        parser.error("--pg starts its own database: pass --pg or --url, not both")
    sync_every = timedelta(hours=args.sync_hours) if args.sync_hours else SYNC_EVERY
    try:
        url = _start_pg() if args.pg else (args.url or DEFAULT_URL)
        backend = make_url(url).get_backend_name()
        print(
            f"year build: {args.weeks} week(s) + tail {args.tail_weeks}, seed {args.seed}, "
            f"{backend}, sync every {sync_every}",
            flush=True,
        )
        began = time.perf_counter()
        counts = build_year(
            url,
            args.weeks,
            args.seed,
            args.tail_weeks,
            print_progress,
            bulk_snapshots=not args.real_snapshots,
            sync_every=sync_every,
        )
        wall = time.perf_counter() - began
        size = database_size(url)
    except ArenaError as exc:
        print(exc.one_line(), file=sys.stderr)
        raise SystemExit(1) from None
    print("rows:")
    for name, n in counts.items():
        print(f"  {name:<28} {n:>12,}")
    print(f"wall time: {wall:.1f} s   database: {size / 1e6:,.1f} MB ({backend})")
    if args.pg:
        print(f"database URL: {url}")


if __name__ == "__main__":
    main()
