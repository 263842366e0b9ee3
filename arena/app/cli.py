"""The `arena` command line (contract §4).

Every failure the user can act on ends as ONE line on stderr and a non-zero exit;
`--debug` shows the traceback instead.
"""

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

try:  # typer >= 0.20 vendors click; older releases use click itself
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover
    from click import exceptions as click_exceptions  # type: ignore[no-redef]

from arena.config import MAX_REPLICATES
from arena.core.errors import ArenaError, InputError
from arena.engine.sources import GammaSource

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy.engine import Engine

    from arena.agents.responders import ResponderFactory
    from arena.engine.analyses import AnalysesOutcome
    from arena.engine.bundles import BundleResult
    from arena.engine.cohorts import CohortResult
    from arena.engine.decisions import DecideResult
    from arena.engine.jobs import CohortOutcome, DecideOutcome, JobContext, JobRunResult
    from arena.engine.market_sync import SyncResult
    from arena.engine.settlement import ResolveResult
    from arena.engine.snapshots import SnapshotResult
    from arena.engine.sources import MarketSource
    from arena.lineup import FamilySpec, Lineup
    from arena.markets.types import ParsedMarket
    from arena.storage.db import Role

app = typer.Typer(
    name="arena",
    help="Forecaster Arena: LLMs paper-trade Polymarket prediction markets (methodology v1).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

AtOption = Annotated[
    str | None,
    typer.Option("--at", help="Run as of this UTC instant (ISO-8601); default now."),
]

# The largest integer a command accepts (`max=` of every integer option): what an id column
# (SQLite INTEGER, PostgreSQL BIGINT) and the drivers can bind. Beyond it a value is a usage
# error before anything runs, not an OverflowError half way through the output.
MAX_ID = 2**63 - 1
# A cohort number is an INTEGER column: 4 bytes on PostgreSQL, which refuses to compare it
# with anything larger (a DataError) where SQLite just finds no cohort.
MAX_COHORT = 2**31 - 1


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log retries and progress to stderr.")
    ] = False,
) -> None:
    """Forecaster Arena command line."""


def _at(value: str | None) -> datetime:
    from arena.core.timeutil import parse_instant

    return parse_instant(value) if value else datetime.now(UTC)


def _engine(role: "Role" = "writer", *, create: bool = False) -> "Engine":
    """The configured database's engine; a command that only reads takes a reader's.

    Why a reader: on SQLite a writer's transaction takes the write lock as it begins, so
    `arena export trades | less` on a writer would hold the scheduler's writes off until the
    pager quit (and past the busy timeout, fail them).

    Only a command that builds the schema (`create`: init-db, demo) may create a SQLite file;
    any other would leave an empty file (and its folder) behind and fail on its first table.
    """
    from arena.config import get_settings
    from arena.storage.db import get_engine

    url = get_settings().database_url
    if not create:
        _require_sqlite_file(url)
    return get_engine(url, role=role)


def _require_sqlite_file(url: str) -> None:
    """Refuse a SQLite URL whose file does not exist, naming the file or its missing folder."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from arena.core.errors import ConfigError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return  # get_engine names a malformed URL itself
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return
    if database.startswith("file:"):
        return
    path = Path(database).expanduser()
    if path.exists():
        return
    what = (
        f"database file {path} does not exist"
        if path.parent.is_dir()
        else f"database folder {path.parent} does not exist (for {path})"
    )
    raise ConfigError(what, "run `arena init-db` to create it, or fix ARENA_DATABASE_URL")


@app.command("init-db")
def init_db() -> None:
    """Create or migrate the schema to the newest revision (idempotent)."""
    from arena.config import get_settings
    from arena.lineup import load_lineup
    from arena.storage.migrate import init_db as run_init
    from arena.storage.seed import sync_families

    settings = get_settings()
    engine = _engine(create=True)
    revision = run_init(engine)
    sync_families(engine, load_lineup(settings.lineup))
    typer.echo(f"database ready at schema revision {revision}")


@contextmanager
def _gamma_source() -> Iterator[GammaSource]:
    """The live market source at ARENA_GAMMA_URL, closed when the command ends."""
    from arena.config import get_settings
    from arena.markets.gamma import GammaClient

    with GammaClient(get_settings().gamma_url) as client:
        yield GammaSource(client)


# --------------------------------------------------------------------------------------------
# The job commands: each is ONE run of the scheduler's job for the slot of --at, through the
# scheduler's own job_runs claim (`arena.engine.jobs.run_job`), so a manual run is recorded like a
# scheduled one and a slot already done (or being done) by another run is not done again.


class _NoMarketSource:
    """The market source of a command whose job never asks one."""

    name = "none"

    def top_markets(self, at: datetime, limit_total: int) -> "list[ParsedMarket]":
        raise RuntimeError("this command has no market source")

    def get_market(self, market_id: str, at: datetime) -> "ParsedMarket | None":
        raise RuntimeError("this command has no market source")


def _no_responders(family: "FamilySpec") -> None:
    return None


def _job_context(
    *,
    lineup: "Lineup | None" = None,
    source: "MarketSource | None" = None,
    responders: "ResponderFactory | None" = None,
) -> "JobContext":
    """The context of a manual run, as the scheduler builds its own: the configured database
    (writer, plus a reader), a wall clock for `finished_at`, the secrets to blank out of
    job_runs and the logs; a lineup, market source and responders only for jobs that use them.
    """
    from arena.config import get_settings
    from arena.engine.jobs import JobContext, known_secrets
    from arena.lineup import Lineup

    settings = get_settings()
    return JobContext(
        engine=_engine(),
        reader=_engine("reader"),
        settings=settings,
        lineup=lineup if lineup is not None else Lineup(families=[]),
        source=source if source is not None else _NoMarketSource(),
        responders=responders if responders is not None else _no_responders,
        clock=lambda: datetime.now(UTC),
        secrets=known_secrets(settings),
    )


def _run_claimed(ctx: "JobContext", name: str, when: datetime) -> "JobRunResult | None":
    """Run job `name` for the slot of `when` under a job_runs claim.

    The result of a run that went through (status ok, recorded); None when the slot was
    already done or is being done by another run, after saying so (exit 0: nothing failed,
    the slot is taken care of). A failed run is recorded `failed` first, then its own
    exception is raised again, so `main` prints the usual one line and exits non-zero.
    """
    from arena.engine.jobs import run_job, slot_for

    slot = slot_for(name, when)
    with _quiet_job_errors():
        result = run_job(ctx, name, slot, when)
    if result.status == "skipped":
        for line in _skipped_lines(ctx, name, slot):
            typer.echo(line)
        return None
    if result.status == "failed":
        if result.exception is not None:
            raise result.exception
        raise ArenaError(f"{name} failed: {result.error}", "job_runs and system_logs hold details")
    return result


class _JobErrorEcho(logging.Filter):
    """Drops `run_job`'s own error lines: a failed claim or record (`arena.engine.jobs`) and the
    `jobs` system-log line of a failed run, echoed on the `arena` logger. They are the
    scheduler's stderr; a command reports the failure as its one `arena: error:` line."""

    def filter(self, record: logging.LogRecord) -> bool:
        from arena.engine.jobs import LOG_SOURCE

        if record.levelno < logging.ERROR:
            return True
        if record.name == "arena.engine.jobs":
            return False
        args = record.args if isinstance(record.args, tuple) else ()
        return not (record.name == "arena" and args[:1] == (LOG_SOURCE,))


@contextmanager
def _quiet_job_errors() -> Iterator[None]:
    """Without --verbose, a run's failure shows as the command's one line, not twice."""
    loggers = [logging.getLogger("arena"), logging.getLogger("arena.engine.jobs")]
    if loggers[0].isEnabledFor(logging.INFO):  # --verbose: every log line shows
        yield
        return
    echo = _JobErrorEcho()
    for logger in loggers:
        logger.addFilter(echo)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(echo)


def _skipped_lines(ctx: "JobContext", name: str, slot: datetime) -> list[str]:
    """What a run that found its slot taken says: by which job_runs row, and what now."""
    from arena.core.timeutil import week_start
    from arena.engine.jobs import DECIDE, next_slot, slot_run

    head = f"{name} {slot:%Y-%m-%d %H:%M} UTC: "
    tail = "; skipped, 0 rows written"
    run = slot_run(ctx.reader or ctx.engine, name, slot)
    if run is None:  # taken, then deleted meanwhile: nothing more to say
        return [head + "slot taken by another run" + tail]
    if run.status == "running":
        started = f"{run.started_at:%Y-%m-%d %H:%M:%S} UTC"
        return [
            head + f"slot in progress in another run (job_runs #{run.id}, status running, "
            f"owner {run.owner}, started {started})" + tail,
            "if that run's process died, a run of this slot takes its claim over once the "
            f"claim is {ctx.settings.claim_stale_minutes} minutes old (ARENA_CLAIM_STALE_MINUTES)",
        ]
    status = run.status + (f": {run.error}" if run.error else "")
    after = next_slot(name, slot)
    hint = (
        f"a finished slot is final and no command re-runs it; the next {name} slot is "
        f"{after:%Y-%m-%d %H:%M} UTC"
    )
    if name == DECIDE and week_start(after) == week_start(slot):
        hint += " (it decides what is still undecided and re-runs error / zero_trade decisions)"
    return [
        head + f"slot already done by another run (job_runs #{run.id}, status {status})" + tail,
        hint,
    ]


def _done(result: "JobRunResult", summary: str) -> None:
    """A run's summary line, with the job_runs row that records it."""
    typer.echo(f"{summary} [job_runs #{result.run_id}, slot {result.slot:%Y-%m-%d %H:%M} UTC]")


@app.command("sync-markets")
def sync_markets(at: AtOption = None) -> None:
    """Fetch the top markets by volume and refresh markets with open positions."""
    from arena.engine.jobs import SYNC_MARKETS

    when = _at(at)
    with _gamma_source() as source:
        run = _run_claimed(_job_context(source=source), SYNC_MARKETS, when)
    if run is None:
        return
    result = cast("SyncResult", run.outcome)
    _done(
        run,
        f"synced {result.top} top markets and {result.held_refreshed} held markets "
        f"({result.inserted} new, {result.updated} updated, {len(result.missing)} unavailable)"
        + _skipped_part(result.skipped, source.name),
    )


def _skipped_part(skipped: list[str], source_name: str) -> str:
    """The summary's clause for markets of the other kind the job left alone (none: empty)."""
    from arena.engine.sources import skipped_line

    return f"; {skipped_line(len(skipped), source_name)}" if skipped else ""


@app.command("start-cohort")
def start_cohort(at: AtOption = None) -> None:
    """Create the cohort of the UTC week containing --at (idempotent)."""
    from arena.config import get_settings
    from arena.engine.jobs import START_COHORT
    from arena.lineup import load_lineup

    when = _at(at)
    ctx = _job_context(lineup=load_lineup(get_settings().lineup))
    run = _run_claimed(ctx, START_COHORT, when)
    if run is None:
        return
    _done(run, _cohort_line(cast("CohortOutcome", run.outcome).result))


def _cohort_line(result: "CohortResult") -> str:
    verb = "created" if result.created else "already exists:"
    return (
        f"cohort {result.number} {verb} week of {result.week_start:%Y-%m-%d}, "
        f"{result.agents} agents"
    )


@app.command("decide")
def decide(at: AtOption = None) -> None:
    """Run the weekly decision for every cohort inside its decision window."""
    from arena.agents.responders import default_responders
    from arena.config import get_settings
    from arena.engine.jobs import DECIDE
    from arena.lineup import load_lineup

    when = _at(at)
    settings = get_settings()
    responders, close = default_responders(settings)
    try:
        ctx = _job_context(lineup=load_lineup(settings.lineup), responders=responders)
        run = _run_claimed(ctx, DECIDE, when)
    finally:
        close()
    if run is None:
        return
    outcome = cast("DecideOutcome", run.outcome)
    if outcome.cohort.result.created:
        typer.echo(_cohort_line(outcome.cohort.result))
    result = cast("DecideResult", outcome.decisions)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(result.statuses.items())) or "none"
    _done(
        run,
        f"{result.cohorts} cohort(s) deciding: {result.claimed} decision(s) made ({statuses}), "
        f"{result.trades} trade(s), {result.skipped} already done or in progress",
    )
    if result.unavailable:
        typer.echo(
            f"arena: {len(result.unavailable)} agent(s) skipped, no usable endpoint or key "
            "(set OPENROUTER_API_KEY or a family base_url): " + ", ".join(result.unavailable),
            err=True,
        )


@app.command("snapshot")
def snapshot(at: AtOption = None) -> None:
    """Value every open portfolio: one row per agent per 10-minute slot."""
    from arena.engine.jobs import SNAPSHOT

    when = _at(at)
    run = _run_claimed(_job_context(), SNAPSHOT, when)
    if run is None:
        return
    result = cast("SnapshotResult", run.outcome)
    _done(
        run,
        f"snapshot {run.slot:%Y-%m-%d %H:%M} UTC: {result.agents} agent(s) valued, "
        f"{result.rows_written} row(s) written, "
        f"{result.positions_marked} position(s) marked at live prices, "
        f"{result.cohorts_tracking} cohort(s) now tracking, {result.cohorts_completed} completed",
    )


@app.command("analyses")
def analyses(at: AtOption = None) -> None:
    """Compute and store the leaderboard and calibration frames the dashboard shows."""
    from arena.engine.jobs import ANALYSES

    when = _at(at)
    run = _run_claimed(_job_context(), ANALYSES, when)
    if run is None:
        return
    result = cast("AnalysesOutcome", run.outcome)
    _done(run, f"stored {result.stored} frame(s) for {', '.join(result.scopes)}")


@app.command("keep-bundles")
def keep_bundles(at: AtOption = None) -> None:
    """Keep the replay bundle of every finished cohort that has none (the hourly bundle job)."""
    from arena.engine.jobs import BUNDLE

    run = _run_claimed(_job_context(), BUNDLE, _at(at))
    if run is None:
        return
    result = cast("BundleResult", run.outcome)
    kept = ", ".join(f"cohort {n} {h}" for n, h in result.built.items()) or "none new"
    waiting = (
        f"; waiting: cohort(s) {', '.join(map(str, result.waiting))}" if result.waiting else ""
    )
    _done(run, f"kept {len(result.built)} bundle(s): {kept}{waiting}")


@app.command("resolve")
def resolve(at: AtOption = None) -> None:
    """Check closed / past-end markets, settle positions and score Brier."""
    from arena.engine.jobs import RESOLVE

    when = _at(at)
    with _gamma_source() as source:
        run = _run_claimed(_job_context(source=source), RESOLVE, when)
    if run is None:
        return
    result = cast("ResolveResult", run.outcome)
    _done(
        run,
        f"checked {result.checked} markets: {len(result.resolved)} resolved, "
        f"{len(result.cancelled)} cancelled, {result.unresolved} not yet resolved, "
        f"{len(result.unavailable)} unavailable; {result.positions_settled} positions settled, "
        f"{result.brier_rows} Brier rows" + _skipped_part(result.skipped, source.name),
    )


@app.command("demo")
def demo(
    weeks: Annotated[int, typer.Option(min=1, max=260, help="Simulated weeks.")] = 8,
    seed: Annotated[int, typer.Option(min=0, max=MAX_ID, help="Seed of the simulated world.")] = 7,
    extensions: Annotated[
        str | None,
        typer.Option(
            help="Protocol extensions stamped on every cohort of the season, comma-separated "
            "(stated_probability); default: ARENA_EXTENSIONS, else none (methodology v1)."
        ),
    ] = None,
    replicates: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_REPLICATES,
            help="Independent agents per family in every cohort; default: ARENA_REPLICATES, "
            "else 1 (methodology v1).",
        ),
    ] = None,
) -> None:
    """Run an offline simulated season into the configured database."""
    from arena.app.demo import ensure_empty, format_summary, progress_bar, run_demo
    from arena.config import get_settings, parse_extensions
    from arena.lineup import load_lineup
    from arena.storage.db import dispose_engines
    from arena.storage.migrate import init_db as run_init

    settings = get_settings()
    if extensions is not None:
        try:
            names = parse_extensions(extensions)
        except ValueError as exc:
            raise InputError(
                f"--extensions: {exc}", "e.g. --extensions stated_probability"
            ) from None
        settings = settings.model_copy(update={"extensions": names})
    if replicates is not None:
        settings = settings.model_copy(update={"replicates": replicates})
    engine = _engine(create=True)
    try:
        run_init(engine)
        ensure_empty(engine)
        lineup = load_lineup(settings.lineup)
        with progress_bar(weeks) as on_tick:
            summary = run_demo(engine, settings, lineup, weeks=weeks, seed=seed, on_tick=on_tick)
    finally:
        dispose_engines()  # close every connection: the SQLite file is complete on exit
    for line in format_summary(summary):
        typer.echo(line)


@app.command("model-server")
def model_server(
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Loopback port; 0 lets the OS choose.")
    ] = 8701,
    seed: Annotated[
        int, typer.Option(min=0, max=MAX_ID, help="Seed of the simulated world and personas.")
    ] = 7,
    weeks: Annotated[int, typer.Option(min=1, max=260, help="Weeks of the demo world.")] = 8,
) -> None:
    """Serve the simulated model personas (OpenAI-compatible) on 127.0.0.1 until stopped.

    The personas read the hidden probabilities of the demo's world for --seed and --weeks (the
    world `arena demo --seed S --weeks W` plays). Stops on SIGTERM or Ctrl-C.
    """
    import signal
    import threading

    from arena.sim.model_server import ModelServer
    from arena.sim.world import demo_world

    try:
        server = ModelServer(seed=seed, world=demo_world(seed, weeks), port=port)
    except OSError as exc:
        raise ArenaError(
            f"cannot listen on 127.0.0.1:{port}: {exc}", "choose another --port"
        ) from exc
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    try:
        with server:
            typer.echo(f"simulated model server (seed {seed}) at {server.base_url}")
            sys.stdout.flush()
            try:
                while not stop.wait(0.5):
                    pass
            except KeyboardInterrupt:
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    typer.echo(f"served {len(server.log)} chat requests")


@app.command("leaderboard")
def leaderboard(
    cohort: Annotated[
        int | None, typer.Option(min=1, max=MAX_COHORT, help="Only this cohort number.")
    ] = None,
    format: Annotated[str, typer.Option("--format", help="table or csv")] = "table",
) -> None:
    """Print the leaderboard with its intervals."""
    if format not in ("table", "csv"):
        raise InputError(f"--format {format!r} is not supported", "use --format table or csv")
    from arena.analytics.query.scope import excluded_cohorts
    from arena.analytics.stats import leaderboard as board

    engine = _engine("reader")
    frame = board.leaderboard(engine, cohort=cohort)
    if format == "csv":
        board.write_leaderboard_csv(frame, sys.stdout)
        return
    # All cohorts means all v1 cohorts: extended ones are left out (methodology §18).
    left_out = excluded_cohorts(engine) if cohort is None else []
    named = ", ".join(map(str, left_out))
    if frame.empty:
        typer.echo(
            f"no v1 cohort: the extended cohorts {named} are left out; --cohort N shows one"
            if left_out
            else "no cohort yet: run `arena start-cohort` (or `arena demo`) first"
        )
        return
    from rich.console import Console

    title = f"Leaderboard, cohort {cohort}" if cohort else "Leaderboard, all cohorts"
    if left_out:
        title = f"Leaderboard, all v1 cohorts (extended cohorts {named} left out)"
    console = Console(width=None if sys.stdout.isatty() else 240)
    console.print(board.leaderboard_table(_shown_text(frame, ("family_id", "kind")), title))


def _shown_text(frame: "pd.DataFrame", columns: tuple[str, ...]) -> "pd.DataFrame":
    """`frame` with its database text `printable` and Rich markup escaped, for a Rich table:
    a family id cannot drive the terminal or style itself (`[bold red]`)."""
    from rich.markup import escape

    from arena.core.text import printable

    return frame.assign(**{c: frame[c].map(lambda v: escape(printable(str(v)))) for c in columns})


@app.command("export")
def export(
    table: Annotated[
        str,
        typer.Argument(
            help="cohorts, decisions, trades, positions, snapshots, brier_scores or markets"
        ),
    ],
    format: Annotated[str, typer.Option("--format", help="Output format (csv).")] = "csv",
    cohort: Annotated[
        int | None, typer.Option(min=1, max=MAX_COHORT, help="Only this cohort number.")
    ] = None,
    family: Annotated[str | None, typer.Option(help="Only this family id.")] = None,
    since: Annotated[str | None, typer.Option(help="From this UTC instant (inclusive).")] = None,
    until: Annotated[str | None, typer.Option(help="Up to this UTC instant (exclusive).")] = None,
    out: Annotated[
        str | None,
        typer.Option(
            help="Write to this file instead of stdout (replaced whole when done; a device, "
            "a FIFO or - is written straight through)."
        ),
    ] = None,
    limit: Annotated[
        # The query asks for one row more than the cap: the cap stays below the id range.
        int | None,
        typer.Option(min=1, max=MAX_ID - 1, help="Row cap (default from settings)."),
    ] = None,
) -> None:
    """Export a bounded slice of one table as CSV (stdout unless --out)."""
    from arena.analytics.export.tables import ExportFilters, get_spec, write_csv
    from arena.app.output import open_output
    from arena.config import get_settings
    from arena.core.timeutil import parse_instant

    if format != "csv":
        raise InputError(f"--format {format!r} is not supported", "use --format csv")
    get_spec(table)
    filters = ExportFilters(
        cohort=cohort,
        family=family,
        since=parse_instant(since, "--since") if since else None,
        until=parse_instant(until, "--until") if until else None,
    )
    if filters.since and filters.until and filters.since >= filters.until:
        raise InputError("--since must be before --until", "swap or widen the range")
    cap = limit or get_settings().export_row_cap
    with open_output(out) as handle:
        result = write_csv(_engine("reader"), table, filters, handle, cap)
    if result.truncated:
        typer.echo(
            f"arena: row cap of {result.cap} reached: output truncated; narrow with "
            "--cohort/--family/--since/--until or raise --limit",
            err=True,
        )


@app.command("bundle")
def bundle(
    cohort: Annotated[int, typer.Argument(min=1, max=MAX_COHORT, help="The cohort number.")],
    out: Annotated[Path, typer.Option(help="A folder to write the files into, or a FILE.zip.")],
    provisional: Annotated[
        bool,
        typer.Option(help="Bundle a cohort still running (its state so far, stamped not final)."),
    ] = False,
) -> None:
    """Write a cohort's replay bundle: every input and output, hashed, for `arena verify`."""
    from arena.analytics.replay.bundle import build_bundle
    from arena.core.text import printable

    built = build_bundle(_engine("reader"), cohort, provisional=provisional)
    try:
        written = built.bundle.write(out)
    except OSError as exc:
        raise InputError(
            f"cannot write {printable(str(out))}: {exc.strerror}", "choose a writable --out path"
        ) from None
    size = sum(len(data) for data in built.bundle.files.values())
    typer.echo(
        f"cohort {cohort}: bundle {built.hash} -> {printable(str(written))} "
        f"({len(built.bundle.files)} files, {size:,} bytes)"
    )


@app.command("verify")
def verify(
    path: Annotated[Path, typer.Argument(help="A bundle folder or .zip from `arena bundle`.")],
    hash: Annotated[
        str | None,
        typer.Option("--hash", help="The published bundle hash it must have (SHA-256, hex)."),
    ] = None,
) -> None:
    """Recompute a replay bundle's every number from its files alone (no database)."""
    from rich.console import Console

    from arena.analytics.replay.format import read_bundle
    from arena.analytics.replay.report import mismatch_lines, report_table
    from arena.analytics.replay.verify import verify_bundle

    report = verify_bundle(read_bundle(path), published_hash=hash)
    console = Console(width=None if sys.stdout.isatty() else 160, markup=False)
    console.print(report_table(report))
    mismatch_lines(report, typer.echo)
    if not report.ok:
        raise typer.Exit(1)
    typer.echo(f"all matched: bundle {report.bundle_hash}")


@app.command("backup")
def backup(
    directory: Annotated[Path, typer.Option("--dir", help="Where backups go.")] = Path("backups"),
    keep: Annotated[int, typer.Option(min=1, max=MAX_ID, help="How many backups to keep.")] = 7,
    at: AtOption = None,
) -> None:
    """Write a consistent backup of the database (SQLite backup API / pg_dump), with retention."""
    from arena.config import get_settings
    from arena.storage.backup import backup as run_backup

    result = run_backup(get_settings().database_url, directory, _at(at), keep)
    typer.echo(
        f"backup written: {result.path} ({result.size_bytes:,} bytes); "
        f"{len(result.removed)} old backup(s) removed"
    )


@app.command("restore")
def restore(
    source: Annotated[Path, typer.Argument(help="A file written by `arena backup`.")],
    yes: Annotated[bool, typer.Option("--yes", help="Confirm replacing the database.")] = False,
) -> None:
    """Replace the database's contents with a backup (stop the scheduler first).

    The backup is checked first (an arena database at a known schema revision) and the
    replaced database is kept; the line printed says where.
    """
    from arena.config import get_settings
    from arena.storage.backup import restore as run_restore

    if not yes:
        raise InputError(
            "restore replaces the whole database", "stop the scheduler, then add --yes"
        )
    settings = get_settings()
    result = run_restore(settings.database_url, source, settings.sqlite_busy_timeout_ms)
    kept = (
        f"the replaced database is kept at {result.kept}"
        if result.kept
        else "there was no database to keep"
    )
    migrate = "" if result.current else "; run `arena init-db` to bring its schema up to date"
    typer.echo(
        f"database restored from {source} (schema revision {result.revision}); {kept}{migrate}"
    )


@app.command("serve")
def serve(
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8501,
    address: Annotated[
        str,
        typer.Option(
            help="Address to listen on; the default serves this machine only, "
            "0.0.0.0 serves every network it is on."
        ),
    ] = "127.0.0.1",
) -> None:
    """Start the dashboard (streamlit run dashboard.py) on 127.0.0.1 unless --address.

    Why loopback: Streamlit's own default listens on every interface, so a researcher's
    laptop would serve the dashboard to whatever network it is on.

    The process replaces itself with Streamlit (exec), so a process manager's SIGTERM reaches
    the server itself: no orphaned child keeps the port after `kill PID`.
    """
    address = _listen_address(address)
    entry = Path(__file__).resolve().parents[2] / "dashboard.py"
    if not entry.exists():
        raise ArenaError(f"dashboard entry {entry} not found", "run from a checkout of the project")
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(entry),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        address,
    ]
    os.chdir(entry.parent)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, command)


def _listen_address(value: str) -> str:
    """`--address` as Streamlit takes it: an IP address or a host name, nothing else."""
    import ipaddress
    import re

    text = value.strip()
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    if re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})", text) and ".." not in text:
        return text
    raise InputError(
        f"--address {value!r} is not an IP address or host name",
        "use e.g. --address 127.0.0.1 (this machine) or --address 0.0.0.0 (every network)",
    )


def _error_line(exc: BaseException) -> str:
    from sqlalchemy.exc import OperationalError, SQLAlchemyError

    from arena.storage.db import busy_error, is_locked_error

    if isinstance(exc, OperationalError) and is_locked_error(exc):
        exc = busy_error()
    if isinstance(exc, ArenaError):
        return f"error: {exc.one_line()}"
    detail = _missing_table(exc)
    if detail:
        return (
            f"error: the database has no schema yet ({detail}) — run `arena init-db`, or "
            "point ARENA_DATABASE_URL at the arena database"
        )
    if isinstance(exc, OperationalError):
        detail = str(exc.orig).strip().splitlines()[0] if exc.orig else "operational error"
        return (
            f"error: database error: {detail} — check ARENA_DATABASE_URL and that the "
            "database is reachable and writable"
        )
    if isinstance(exc, SQLAlchemyError):
        name = type(exc).__name__
        return f"error: database error: {name} — run `arena init-db`, or retry with --debug"
    return f"error: unexpected {type(exc).__name__}: {exc} — retry with --debug for a traceback"


def _missing_table(exc: BaseException) -> str | None:
    """The driver's first line when a query met a table that is not there (SQLite's "no such
    table", PostgreSQL's undefined_table, SQLSTATE 42P01): the schema was never built, which
    `arena init-db` fixes, not an unreachable server."""
    from sqlalchemy.exc import DBAPIError

    if not isinstance(exc, DBAPIError) or exc.orig is None:
        return None
    detail = str(exc.orig).strip()
    first = detail.splitlines()[0] if detail else "undefined table"
    if getattr(exc.orig, "sqlstate", None) == "42P01" or first.lower().startswith("no such table"):
        return first
    return None


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: run the app, turning failures into one stderr line."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    verbose = debug or "--verbose" in args or "-v" in args
    logging.basicConfig(
        level=logging.INFO if verbose else logging.ERROR,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        code = app(args=args, prog_name="arena", standalone_mode=False)
    except click_exceptions.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            print(exc.format_message())
            sys.exit(0)
        command = exc.ctx.command_path if exc.ctx else "arena"
        message = " ".join(exc.format_message().split())
        print(f"arena: error: {message} — see `{command} --help`", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        print("arena: aborted", file=sys.stderr)
        sys.exit(130)
    except click_exceptions.ClickException as exc:
        print(f"arena: error: {' '.join(exc.format_message().split())}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except Exception as exc:
        if debug:
            raise
        print(f"arena: {_error_line(exc)}", file=sys.stderr)
        sys.exit(exc.exit_code if isinstance(exc, ArenaError) else 1)
    sys.exit(code if isinstance(code, int) else 0)
