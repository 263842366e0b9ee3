"""Build a realistic YEAR of arena data through the engine's own jobs (issue: year-scale perf).

Run:
    .venv/bin/python bench/make_year.py --url sqlite:///data/bench/year.db [--weeks 52]
        [--seed 7] [--tail-weeks 1] [--sync-hours 6]
    .venv/bin/python bench/make_year.py --url postgresql+psycopg://user@host/db
    .venv/bin/python bench/make_year.py --pg      # a throw-away cluster (tests/pg.py), kept
                                                  # running afterwards; its URL is printed

Why: the dashboard and the engine must stay fast at a year's scale (52 cohorts, ~8M
portfolio snapshots), and a benchmark needs that year without a year of waiting. The season is
played exactly like `arena demo` plays one (same world, same start, same jobs through
`run_job`, claims and all), with the full default lineup: the seven LLM families answered by a
simulated LLM (`bench/year_llm.py`) through the real decision path (prompts, raw answers,
attempts, tokens, cost) and the three baselines.

Snapshots, the bulk of the rows, take a shortcut that writes identical rows. A snapshot pass
depends only on the database (cash, positions, market prices and statuses, Brier rows, cohort
statuses) and, through the cohort window, on the week; every one of those changes only when
another job runs (sync, resolve, decide, start-cohort) or at a Sunday 00:00, which is always a
job tick. So the real snapshot job runs at the first slot at or after every job tick, and each
later slot up to the next job tick is a copy of that pass (`INSERT … SELECT` with the new slot),
minus the agents of cohorts that pass completed (the next real pass would skip them), plus the
job_runs row and the two system_logs lines the real run would write. The test
`tests/bench/test_make_year.py` proves both paths write the same rows.
"""

import argparse
import importlib
import importlib.util
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
from arena.app.demo import DEMO_START, Tick, any_open_position
from arena.config import Methodology, load_settings
from arena.core.errors import ArenaError, InputError
from arena.core.timeutil import week_start
from arena.engine.jobs import (
    DECIDE,
    RESOLVE,
    SNAPSHOT,
    START_COHORT,
    SYNC_MARKETS,
    JobContext,
    JobRunResult,
    run_job,
    slot_for,
)
from arena.lineup import Lineup, load_lineup
from arena.markets.simulated import SimulatedWorld
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
MAX_COPY_BATCH = 2_000  # slots per carry-forward transaction (a 6-hour gap is 35)

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
        jobs: list[str] = []
        if deciding and at == sunday:
            jobs.append(START_COHORT)
        if (at - sunday) % sync_every == timedelta(0):
            jobs += [SYNC_MARKETS, RESOLVE]
        if deciding and at == sunday + timedelta(minutes=5):
            jobs.append(DECIDE)
        if slot_for(SNAPSHOT, at) == at:
            jobs.append(SNAPSHOT)
        if jobs:
            yield Tick(at, tuple(jobs), not deciding)
        at += TICK


# --------------------------------------------------------------------------------------------
# Snapshot carry-forward: identical rows without a pass per slot


def _live_source() -> Any:
    """The source slot's rows of agents whose cohort is still live (not completed, started)."""
    return (
        select(_SNAPS)
        .join(_AGENTS, _AGENTS.c.id == _SNAPS.c.agent_id)
        .join(_COHORTS, _COHORTS.c.id == _AGENTS.c.cohort_id)
        .where(
            _SNAPS.c.slot == bindparam("b_source", type_=_SNAPS.c.slot.type),
            _COHORTS.c.status != "completed",
            _COHORTS.c.week_start <= bindparam("b_slot", type_=_SNAPS.c.slot.type),
        )
    )


_COPY_COLUMNS = [column.name for column in _SNAPS.c if column.name != "id"]


def _copy_statement() -> Any:
    """INSERT … SELECT of one slot's live rows under a new slot (and snapshot_timestamp)."""
    live = _live_source().subquery("live")
    slot = bindparam("b_slot", type_=_SNAPS.c.slot.type)
    values = [
        slot if name in ("slot", "snapshot_timestamp") else live.c[name] for name in _COPY_COLUMNS
    ]
    return insert(_SNAPS).from_select(_COPY_COLUMNS, select(*values))


_COPY = _copy_statement()
_COUNT_LIVE = select(func.count()).select_from(_live_source().subquery("live"))


def snapshot_counts(slot: datetime, agents: int) -> dict[str, Any]:
    """The counts a real pass reports when nothing changed since the previous one."""
    return {
        "slot": slot.isoformat(),
        "agents": agents,
        "rows_written": agents,
        "positions_marked": 0,
        "cohorts_completed": 0,
        "cohorts_tracking": 0,
    }


def copy_snapshot_slots(
    conn: Connection, source: datetime, slots: list[datetime], owner: str
) -> int:
    """Write `slots` as the real snapshot job would, given the pass of `source` (one txn).

    Per slot: the live agents' rows of `source` re-slotted, a finished job_runs row (a
    simulated job takes no time: started = finished = slot) and the two system_logs lines
    (the pass's own, then the job runner's), in the order the real run writes them.
    Returns the snapshot rows written.
    """
    if not slots:
        return 0
    agents = int(conn.execute(_COUNT_LIVE, {"b_source": source, "b_slot": slots[0]}).scalar_one())
    if agents:
        conn.execute(_COPY, [{"b_source": source, "b_slot": slot} for slot in slots])
    runs: list[dict[str, Any]] = []
    logs: list[dict[str, Any]] = []
    for slot in slots:
        counts = snapshot_counts(slot, agents)
        stamp = slot.isoformat()
        runs.append(
            {
                "job": SNAPSHOT,
                "slot": slot,
                "status": "ok",
                "owner": owner,
                "started_at": slot,
                "finished_at": slot,
                "counts": counts,
                "error": None,
            }
        )
        message = (
            f"snapshot {stamp}: {agents} agent(s), 0 position(s) marked live, 0 cohort(s) completed"
        )
        logs.append(
            {
                "at": slot,
                "level": "INFO",
                "source": "snapshot",
                "message": message,
                "context": counts,
            }
        )
        logs.append(
            {
                "at": slot,
                "level": "INFO",
                "source": "jobs",
                "message": f"{SNAPSHOT} {stamp}: ok",
                "context": {"job": SNAPSHOT, "slot": stamp},
            }
        )
    conn.execute(insert(tables.JOB_RUNS), runs)
    conn.execute(insert(tables.SYSTEM_LOGS), logs)
    return agents * len(slots)


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

    def __init__(self, ctx: JobContext, bulk: bool) -> None:
        self.ctx = ctx
        self.bulk = bulk
        self.source: datetime | None = None  # slot of the latest real snapshot pass
        self.dirty = True  # another job ran since that pass
        self.pending: list[datetime] = []
        self.snapshot_rows = 0

    def run_tick(self, tick: Tick) -> None:
        others = [job for job in tick.jobs if job != SNAPSHOT]
        if others:
            self.flush()
            for name in others:
                self._run(name, tick.at)
            self.dirty = True
        if SNAPSHOT in tick.jobs:
            self.snapshot(tick.at)

    def snapshot(self, at: datetime) -> None:
        if not self.bulk or self.dirty or self.source is None or at == week_start(at):
            self.flush()
            result = self._run(SNAPSHOT, at)
            self.snapshot_rows += int(result.counts.get("rows_written", 0))
            self.source, self.dirty = slot_for(SNAPSHOT, at), False
            return
        self.pending.append(at)
        if len(self.pending) >= MAX_COPY_BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the pending carry-forward slots in one transaction."""
        if not self.pending:
            return
        assert self.source is not None
        with transaction(self.ctx.engine) as conn:
            self.snapshot_rows += copy_snapshot_slots(
                conn, self.source, self.pending, self.ctx.owner
            )
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
) -> dict[str, int]:
    """Play a season into the empty database at `url`; returns its row counts.

    `bulk_snapshots=False` runs the real snapshot job at every 10-minute slot (the reference
    the bulk path is tested against). `stop_at` stops the clock early, `lineup` and
    `methodology` replace the default lineup and the v1 constants (tests). The tail ends early
    once no position is open, as in `arena demo`, unless `stop_when_settled` is False.
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
        world = SimulatedWorld(
            seed,
            start,
            n_initial=arena.app.demo.WORLD_INITIAL_MARKETS,
            new_per_day=arena.app.demo.WORLD_NEW_PER_DAY,
            days=(weeks + tail_weeks) * 7 + 1,
        )
        players = lineup if lineup is not None else load_lineup(None)
        baselines, close = default_responders(settings, seed, probability=world.hidden_probability)
        responders = with_simulated_llms(baselines, seed, world.hidden_probability)
        ctx = JobContext(engine, settings, players, world, responders, owner=OWNER)
        season = _Season(ctx, bulk_snapshots)
        began = time.perf_counter()
        try:
            clock = year_ticks(start, weeks, tail_weeks, sync_every)
            _play(season, clock, start, stop_at, stop_when_settled, progress, began)
        finally:
            close()
        _rebuild_rollups(engine)
        return row_counts(engine)
    finally:
        engine.dispose()


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
                season.flush()
                season._run(SNAPSHOT, tick.at)
            break
    season.flush()


def _rebuild_rollups(engine: Engine) -> int | None:
    """Recompute the dashboard's curve rollups from the snapshots, once the engine has them
    (the carry-forward copies bypass the snapshot job that maintains them per pass)."""
    if importlib.util.find_spec("arena.engine.rollups") is None:
        return None
    rollups = importlib.import_module("arena.engine.rollups")
    return int(rollups.rebuild_rollups(engine))


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
            return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar())
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
        "--real-snapshots", action="store_true", help="run the snapshot job at every slot (slow)"
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
