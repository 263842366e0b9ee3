"""`arena demo`: a whole season offline, through the very same jobs, on a simulated clock.

Why: the engine must be demonstrable (and benchmarkable) without a network or keys, and the
oracle baseline — which bets on the simulated world's unbiased posterior — must come out on
top if the scoring separates skill from luck.

The season starts on a fixed Sunday (2026-01-04 00:00 UTC), so a seed fully determines the
database (apart from audit columns: claim owners and tokens, row created_at; and the measured
latencies of LLM attempts). The clock advances
in 5-minute ticks and, at each tick, runs what is due through `run_job` (job_runs claims and
all), in `arena.engine.jobs.JOB_ORDER`:

- weeks 1…N: start-cohort every Sunday 00:00, decide Sunday 00:05 (once: baselines never fail
  transiently, so the scheduler's hourly Sunday retries would find nothing to redo);
- every 6 hours: sync-markets and resolve (the live scheduler syncs every 5 minutes and
  resolves hourly). A sync of 500 simulated markets costs ~35 ms, so this cadence keeps an
  8-week season under a minute while prices still move four times a day between decisions
  and snapshots (every decision still trades on a universe synced minutes before);
- every 10 minutes of simulated time: snapshot, as the methodology prescribes (§12.1);
- then a settling tail with no new cohorts or decisions — only sync, resolve and snapshots —
  until no position is open, or at most `tail_weeks` (default 1) weeks. Long-dated positions
  may outlive it; their cohorts stay tracking, as they would in a live season;
- finally one `analyses` run (the scheduler's hourly job) stores the leaderboard and
  calibration frames the dashboard shows, and one `bundle` run keeps the replay bundle of
  every finished cohort (`arena verify` recomputes it).

Agents: every enabled family of the lineup plus the `oracle`. The LLM families are served by
the simulated model server (`arena.sim.model_server`), which the demo starts on a free
loopback port for the season (seed and world = the demo's) and stops after: their decisions go
through the project's real `ChatClient` (HTTP, retries, backoff), parser, malformed-answer
retries and cost code, exactly as against OpenRouter — never a real model, and no key or
network is needed. Their configured endpoints are ignored. Every answer says
`provider: "simulated"`, so every LLM decision and attempt the demo writes carries
`provider = "simulated"` (what `arena.analytics.views.simulated` reads and the pages badge). Costs
are the tokens the server's usage block reports at the lineup's list prices (`price_in` /
`price_out`); the server is not asked for `usage.cost`.

Transport faults stay visible but cheap: a 429 says `Retry-After: 0`, backoff is tens of
milliseconds, and a "slow" answer is held `SLOW_SECONDS` beyond the client's `CLIENT_TIMEOUT`
(three seconds of wall time per timeout, about 1% of requests). The timeout is generous because
a replay is only identical while no *normal* answer times out: one that did would be retried
and draw a different answer. Wall-clock latencies (`latency_ms`) are measured, so they are the
one LLM column a replay does not reproduce.

A job that fails stops the season with its one-line error (the demo is also a proof that the
engine runs end to end). The demo needs an empty database: it refuses one holding cohorts.

Protocol extensions (`arena demo --extensions stated_probability`, or `ARENA_EXTENSIONS`) are
stamped on every cohort of the season as the settings name them; the personas and the oracle
then state their probabilities, and the extension's figures are stored with the rest.
Replicates (`arena demo --replicates N`, or `ARENA_REPLICATES`) give every family N agents per
cohort; identical requests of a family's replicates are separate draws of the simulated model
server (its attempt count), so replicates answer differently, as sampled models do.

Methodology v2 (`arena demo --methodology v2` or `ARENA_METHODOLOGY=v2`) also starts the simulated
CLOB (`arena.sim.clob_server`) on loopback, clock at each tick, read by the real `ClobClient`;
its books move hourly, so a snapshot pass is copied forward only within the hour.
"""

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import col

from arena.agents.llm import ChatClient
from arena.agents.responders import LLMResponder, Responder, ResponderFactory, default_responders
from arena.analytics.query.selects import agent_ids, latest_snapshots
from arena.analytics.views.simulated import SERVED_BY
from arena.config import BOOK_EXECUTION, Settings, is_v2
from arena.core.errors import ArenaError, InputError
from arena.core.timeutil import week_start
from arena.engine.jobs import (
    ANALYSES,
    BUNDLE,
    DECIDE,
    RESOLVE,
    SNAPSHOT,
    START_COHORT,
    SYNC_MARKETS,
    JobContext,
    record_run,
    run_job,
    slot_for,
)
from arena.engine.snapshots import carry_forward
from arena.lineup import FamilySpec, Lineup
from arena.sim.clob_server import ClobServer
from arena.sim.model_server import LoggedRequest, ModelServer
from arena.sim.world import (
    DEFAULT_TAIL_WEEKS,
    DEMO_START,
    demo_world,
)
from arena.storage import tables
from arena.storage.db import session_scope, transaction
from arena.storage.models import (
    Cohort,
    Position,
)

TICK = timedelta(minutes=5)
# The simulated model server's transport, kept fast: faults show as retries at little wall cost.
CLIENT_TIMEOUT = 3.0  # seconds; a normal answer takes ms, but a loaded CI box can stall for 1 s
SLOW_SECONDS = 3.3  # a "slow" fault is held this long: beyond the timeout, so a timeout
LATENCY_SCALE = 0.2  # the personas' latency ranges (0-50 ms) scaled to 0-10 ms
BACKOFF_BASE = 0.02
MAX_BACKOFF = 0.1
SYNC_EVERY = timedelta(hours=6)
DEMO_OWNER = "demo"
MAX_COPY_BATCH = 36  # copied snapshot passes per transaction: six simulated hours

ORACLE = FamilySpec(
    id="oracle",
    display_name="Oracle (simulation only)",
    provider="Forecaster Arena",
    model="baseline/oracle",
    kind="baseline",
    strategy="oracle",
)


# --------------------------------------------------------------------------------------------
# Who plays


def demo_lineup(lineup: Lineup) -> Lineup:
    """Every enabled family (LLM families are served by the simulated model server) + the oracle."""
    families = list(lineup.enabled())
    if not any(f.strategy == "oracle" for f in families if f.kind == "baseline"):
        families.append(ORACLE)
    return Lineup(families=families)


def simulated_responders(
    settings: Settings, seed: int, world: Any, base_url: str
) -> tuple[ResponderFactory, Callable[[], None]]:
    """Baselines (and the oracle) as usual; every LLM family through a real `ChatClient` at
    the simulated model server's `base_url` (no key is sent to it)."""
    baselines, close_baselines = default_responders(
        settings, seed, probability=world.hidden_probability
    )
    client = ChatClient(
        base_url,
        None,
        timeout=CLIENT_TIMEOUT,
        max_attempts=settings.methodology.transport_attempts,
        backoff_base=BACKOFF_BASE,
        max_backoff=MAX_BACKOFF,
        rng=random.Random(seed),
    )

    def factory(family: FamilySpec) -> Responder | None:
        if family.kind == "llm":
            return LLMResponder(client, family)
        return baselines(family)

    def close() -> None:
        client.close()
        close_baselines()

    return factory, close


# --------------------------------------------------------------------------------------------
# The simulated clock


@dataclass(frozen=True)
class Tick:
    """One instant of the simulated clock and the jobs due at it, in run order."""

    at: datetime
    jobs: tuple[str, ...]
    settling: bool


def due_jobs(at: datetime, deciding: bool) -> tuple[str, ...]:
    """The jobs due at `at` (a multiple of 5 minutes) in the demo's cadence.

    Syncs (and resolution checks) run every SYNC_EVERY, read at call time so a bench can try
    another cadence by setting the module constant.
    """
    jobs: list[str] = []
    sunday = week_start(at)
    if deciding and at == sunday:
        jobs.append(START_COHORT)
    if (at - sunday) % SYNC_EVERY == timedelta(0):
        jobs += [SYNC_MARKETS, RESOLVE]
    if deciding and at == sunday + timedelta(minutes=5):
        jobs.append(DECIDE)
    if slot_for(SNAPSHOT, at) == at:
        jobs.append(SNAPSHOT)
    return tuple(jobs)


def season_ticks(start: datetime, weeks: int, tail_weeks: int) -> Iterator[Tick]:
    """Every 5-minute tick of the season and its settling tail (the caller may stop early)."""
    season_end = start + timedelta(weeks=weeks)
    end = season_end + timedelta(weeks=tail_weeks)
    at = start
    while at <= end:
        deciding = at < season_end
        jobs = due_jobs(at, deciding)
        if jobs:
            yield Tick(at, jobs, not deciding)
        at += TICK


# --------------------------------------------------------------------------------------------
# The summary


@dataclass(frozen=True)
class LeaderRow:
    """One family's season: P/L summed over its cohorts, return on the capital it was given."""

    family_id: str
    kind: str
    cohorts: int
    total_pnl: Decimal
    return_pct: float
    brier: float | None
    resolved_bets: int


@dataclass
class DemoSummary:
    """What the season produced; printed at the end and returned for tests and benches."""

    seed: int
    weeks: int
    start: datetime
    end: datetime
    families: list[str]
    cohorts: int = 0
    decisions: int = 0
    decision_statuses: dict[str, int] = field(default_factory=dict)
    trades: dict[str, int] = field(default_factory=dict)
    resolved_markets: int = 0
    cancelled_markets: int = 0
    snapshots: int = 0
    job_runs: int = 0
    open_positions: int = 0
    leaderboard: list[LeaderRow] = field(default_factory=list)
    extensions: tuple[str, ...] = ()  # protocol extensions stamped on its cohorts
    replicates: int = 1  # agents per family in each cohort
    served_by: str = SERVED_BY  # who answered the LLM families
    methodology: str = "v1"  # the version stamped on its cohorts
    server_log: list[LoggedRequest] = field(default_factory=list)  # its requests, in order


def leaderboard(engine: Engine) -> list[LeaderRow]:
    """Per family: latest snapshot P/L summed over cohorts, return %, mean Brier, bets scored."""
    agents = tables.AGENTS
    briers = tables.BRIER_SCORES
    families = tables.FAMILIES
    latest = latest_snapshots()
    pnl_query = (
        select(
            agents.c.family_id, agents.c.cohort_id, agents.c.starting_balance, latest.c.total_pnl
        )
        .select_from(agents)
        .outerjoin(latest, latest.c.agent_id == agents.c.id)
    )
    brier_query = (
        select(agents.c.family_id, func.avg(briers.c.brier_score), func.count(briers.c.id))
        .join(agents, agents.c.id == briers.c.agent_id)
        .group_by(agents.c.family_id)
    )
    with engine.connect() as conn:
        kinds = dict(conn.execute(select(families.c.id, families.c.kind)).all())
        totals: dict[str, list[Decimal]] = {}
        cohorts: dict[str, set[int]] = {}
        for family_id, cohort_id, starting, pnl in conn.execute(pnl_query):
            row = totals.setdefault(family_id, [Decimal(0), Decimal(0)])
            row[0] += pnl or Decimal(0)
            row[1] += starting
            cohorts.setdefault(family_id, set()).add(cohort_id)
        scored = {fid: (float(mean), int(n)) for fid, mean, n in conn.execute(brier_query)}
    rows = [
        LeaderRow(
            family_id=fid,
            kind=kinds.get(fid, "?"),
            cohorts=len(cohorts[fid]),
            total_pnl=pnl,
            return_pct=float(pnl / capital * 100) if capital else 0.0,
            brier=scored[fid][0] if fid in scored else None,
            resolved_bets=scored[fid][1] if fid in scored else 0,
        )
        for fid, (pnl, capital) in totals.items()
    ]
    return sorted(rows, key=lambda r: (-r.total_pnl, r.family_id))


def _count(conn: Any, table: Any, *where: Any) -> int:
    return int(conn.execute(select(func.count()).select_from(table).where(*where)).scalar_one())


def _tally(conn: Any, column: Any, agent: Any, agents: Any) -> dict[str, int]:
    """Rows per value of `column`, of the agents `agents` selects."""
    query = select(column, func.count()).where(agent.in_(agents)).group_by(column)
    return {str(value): int(n) for value, n in conn.execute(query)}


def summarise(engine: Engine, summary: DemoSummary) -> DemoSummary:
    """The summary's counts and leaderboard, of live cohorts only (late entrants' are not)."""
    live = agent_ids()
    decisions, trades, markets = tables.DECISIONS, tables.TRADES, tables.MARKETS
    positions, snapshots = tables.POSITIONS, tables.PORTFOLIO_SNAPSHOTS
    with engine.connect() as conn:
        summary.cohorts = _count(conn, tables.COHORTS, tables.live_cohort())
        summary.decision_statuses = _tally(conn, decisions.c.status, decisions.c.agent_id, live)
        summary.decisions = sum(summary.decision_statuses.values())
        summary.trades = _tally(conn, trades.c.trade_type, trades.c.agent_id, live)
        summary.resolved_markets = _count(conn, markets, markets.c.status == "resolved")
        summary.cancelled_markets = _count(conn, markets, markets.c.status == "cancelled")
        summary.snapshots = _count(conn, snapshots, snapshots.c.agent_id.in_(live))
        summary.job_runs = _count(conn, tables.JOB_RUNS)
        held = (positions.c.status == "open", positions.c.agent_id.in_(live))
        summary.open_positions = _count(conn, positions, *held)
    summary.leaderboard = leaderboard(engine)
    return summary


# --------------------------------------------------------------------------------------------
# The season


ProgressHook = Callable[[Tick], None]


def ensure_empty(engine: Engine) -> None:
    """The demo writes a season from its fixed start: it needs a database without cohorts."""
    with session_scope(engine) as session:
        cohorts = session.execute(select(func.count()).select_from(Cohort)).scalar_one()
    if cohorts:
        raise InputError(
            f"the database already holds {cohorts} cohort(s); the demo needs an empty one",
            "point ARENA_DATABASE_URL at a new database (e.g. sqlite:///data/demo.db) "
            "or delete the old file first",
        )


def any_open_position(engine: Engine) -> bool:
    with engine.connect() as conn:
        query = select(col(Position.id)).where(col(Position.status) == "open").limit(1)
        return conn.execute(query).first() is not None


def run_demo(
    engine: Engine,
    settings: Settings,
    lineup: Lineup,
    *,
    weeks: int,
    seed: int,
    tail_weeks: int = DEFAULT_TAIL_WEEKS,
    start: datetime = DEMO_START,
    stop_at: datetime | None = None,
    on_tick: ProgressHook | None = None,
    carry: bool = True,
    finish: bool = True,
) -> DemoSummary:
    """Play `weeks` simulated weeks plus the settling tail into a migrated, empty database.

    `stop_at` stops the clock early (tests, benches); `finish=False` leaves out the final
    analyses and bundle runs, whose bundle run marks a season finished: a half-played season,
    as a killed background demo leaves it. `carry=False` values
    every snapshot pass afresh (the slow path `carry_forward` must equal; tests compare them).
    """
    ensure_empty(engine)
    world = demo_world(seed, weeks, tail_weeks=tail_weeks, start=start)
    players = demo_lineup(lineup)
    server = ModelServer(
        seed=seed,
        world=world,
        slow_seconds=SLOW_SECONDS,
        retry_after=0,
        latency_scale=LATENCY_SCALE,
    ).start()
    responders, close = simulated_responders(settings, seed, world, server.base_url)
    ctx = JobContext(engine, settings, players, world, responders, owner=DEMO_OWNER)
    v2 = is_v2(settings.methodology.version)
    walks = BOOK_EXECUTION in settings.extensions  # trades and marks at the books: needs them
    clob = _start_clob(ctx, world, start) if v2 or walks or settings.record_books else None
    reader = ctx.clob  # the demo's own CLOB client, closed with its server
    summary = DemoSummary(seed, weeks, start, start, [f.id for f in players.families])
    summary.served_by, summary.server_log = SERVED_BY, server.log
    summary.extensions = settings.extensions
    summary.replicates = settings.replicates
    summary.methodology = settings.methodology.version
    season = _Season(ctx, carry, clob, v2 or walks)
    try:
        for tick in season_ticks(start, weeks, tail_weeks):
            if stop_at is not None and tick.at >= stop_at:
                break
            season.run_tick(tick)
            summary.end = tick.at
            if on_tick is not None:
                on_tick(tick)
            if tick.settling and RESOLVE in tick.jobs and not any_open_position(engine):
                season.run_tick(_final_snapshot(tick))
                break
        season.flush()
        if finish:
            # The dashboard's leaderboard and calibration, stored as the scheduler's hourly
            # job would have stored them; then the finished cohorts' replay bundles, as the
            # hourly bundle job keeps them. Their bundle run marks the season finished.
            _run_tick(ctx, Tick(summary.end, (ANALYSES, BUNDLE), True))
    finally:
        close()
        server.stop()
        if clob is not None:
            clob.stop()
            getattr(reader, "close", lambda: None)()
    return summarise(engine, summary)


def _start_clob(ctx: JobContext, world: Any, start: datetime) -> ClobServer:
    """The simulated CLOB and the real ClobClient the jobs read it with (loopback: no pacing)."""
    from arena.markets.clob import ClobClient

    clob = ClobServer(world, at=start).start()
    ctx.clob = ClobClient(
        clob.origin,
        timeout=CLIENT_TIMEOUT,
        min_interval=0.0,
        backoff_base=BACKOFF_BASE,
        max_backoff=MAX_BACKOFF,
        rng=random.Random(0),
    )
    return clob


def _run_tick(ctx: JobContext, tick: Tick) -> None:
    """Run the tick's jobs in order; any failure stops the season with its one-line error."""
    for name in tick.jobs:
        result = run_job(ctx, name, slot_for(name, tick.at), tick.at)
        if result.status == "failed":
            raise ArenaError(
                f"demo stopped: {name} at {tick.at:%Y-%m-%d %H:%M} UTC failed: {result.error}",
                "the job_runs and system_logs tables of the database hold the details",
            )


def _final_snapshot(tick: Tick) -> Tick:
    """Everything settled: one last valuation (completing the cohorts) if the tick had none."""
    return Tick(tick.at, () if SNAPSHOT in tick.jobs else (SNAPSHOT,), True)


class _Season:
    """Runs the ticks; a snapshot pass with nothing changed since the last real one is copied.

    Only snapshot jobs ran since that pass (no sync, trade, settlement or cohort: the demo
    runs every job itself, so it knows), hence every price, position, cash balance and Brier
    row it read is unchanged and it would write the same values: `carry_forward` copies them
    and `record_run` records the run, several passes per transaction (`MAX_COPY_BATCH`).
    """

    def __init__(
        self, ctx: JobContext, carry: bool, clob: ClobServer | None = None, v2: bool = False
    ) -> None:
        self.ctx, self.carry, self.v2 = ctx, carry, v2
        self.clob = clob  # the simulated CLOB, its clock moved to each tick
        self.source: datetime | None = None  # slot of the latest real snapshot pass
        self.dirty = True  # another job ran since that pass
        self.pending: list[datetime] = []

    def run_tick(self, tick: Tick) -> None:
        if self.clob is not None:
            self.clob.at = tick.at
            if self.v2 and tick.at.minute == 0:  # v2 / book_execution mark at the moved books
                self.dirty = True
        for name in tick.jobs:
            if name == SNAPSHOT and self.carry and not self.dirty and self.source is not None:
                self.pending.append(tick.at)
                if len(self.pending) >= MAX_COPY_BATCH:
                    self.flush()
                continue
            self.flush()
            _run_tick(self.ctx, Tick(tick.at, (name,), tick.settling))
            if name == SNAPSHOT:
                self.source, self.dirty = slot_for(SNAPSHOT, tick.at), False
            else:
                self.dirty = True

    def flush(self) -> None:
        """Write the pending copied passes in one transaction."""
        if not self.pending:
            return
        assert self.source is not None
        methodology = self.ctx.settings.methodology
        with transaction(self.ctx.engine) as conn:
            for at in self.pending:
                result = carry_forward(
                    conn,
                    self.source,
                    at,
                    interval_minutes=methodology.snapshot_interval_minutes,
                    decision_window_weeks=methodology.decision_window_weeks,
                )
                slot = slot_for(SNAPSHOT, at)  # the job_runs slot, as run_job gets it
                record_run(conn, SNAPSHOT, slot, at, self.ctx.owner, result.counts())
        self.pending = []


# --------------------------------------------------------------------------------------------
# Presentation


@contextmanager
def progress_bar(
    weeks: int, tail_weeks: int = DEFAULT_TAIL_WEEKS, start: datetime = DEMO_START
) -> Iterator[ProgressHook]:
    """A rich progress bar on stderr over simulated hours, showing the simulated date."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    hours = (weeks + tail_weeks) * 7 * 24
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        task = progress.add_task("starting", total=hours)

        def on_tick(tick: Tick) -> None:
            if tick.at.minute != 0:
                return
            phase = "settling" if tick.settling else f"week {(tick.at - start).days // 7 + 1}"
            done = (tick.at - start) // timedelta(hours=1)
            progress.update(task, completed=done, description=f"{tick.at:%Y-%m-%d %H:%M} {phase}")

        yield on_tick
        progress.update(task, completed=hours, description="season done")


def format_summary(summary: DemoSummary) -> list[str]:
    """The end-of-demo report as plain lines (the CLI prints them)."""
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(summary.decision_statuses.items()))
    trades = ", ".join(f"{n} {t}" for t, n in sorted(summary.trades.items())) or "none"
    lines = [
        f"demo season (seed {summary.seed}): {summary.weeks} week(s) from "
        f"{summary.start:%Y-%m-%d}, settled until {summary.end:%Y-%m-%d %H:%M} UTC",
        f"families: {', '.join(summary.families)}",
        *(
            [
                f"protocol extensions: {', '.join(summary.extensions)} (stamped on every "
                "cohort: not a stock v1 season)"
            ]
            if summary.extensions
            else []
        ),
        *(
            [
                f"replicates: {summary.replicates} independent agents per family in every "
                "cohort (pooled per family below; not a stock v1 season)"
            ]
            if summary.replicates > 1
            else []
        ),
        *(
            [
                f"methodology {summary.methodology}: the original's rules, legs filled only at "
                "CLOB midpoints re-read after each answer (`arena export legs`: the refused)"
            ]
            if is_v2(summary.methodology)
            else []
        ),
        *(
            [f"LLM families served by the {summary.served_by}: simulated answers, not real models"]
            if summary.server_log
            else []
        ),
        f"cohorts: {summary.cohorts}   decisions: {summary.decisions} ({statuses or 'none'})",
        f"trades: {sum(summary.trades.values())} ({trades})",
        f"markets resolved: {summary.resolved_markets}   cancelled: "
        f"{summary.cancelled_markets}   positions still open: {summary.open_positions}",
        f"snapshots: {summary.snapshots}   job runs: {summary.job_runs}",
        "",
        f"{'#':>2}  {'family':<20} {'kind':<8} {'cohorts':>7} {'total P/L':>12} "
        f"{'return':>8} {'Brier':>6} {'bets':>5}",
    ]
    for rank, row in enumerate(summary.leaderboard, start=1):
        brier = f"{row.brier:.3f}" if row.brier is not None else "—"
        lines.append(
            f"{rank:>2}  {row.family_id:<20} {row.kind:<8} {row.cohorts:>7} "
            f"{row.total_pnl:>12,.2f} {row.return_pct:>7.2f}% {brier:>6} {row.resolved_bets:>5}"
        )
    lines.append("(P/L from each agent's latest snapshot; `arena leaderboard` adds intervals)")
    return lines
