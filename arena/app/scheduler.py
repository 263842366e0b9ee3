"""The scheduler's wiring behind `python scheduler.py`: the engine's jobs on the methodology's UTC
clock.

    python scheduler.py                      # check the configuration, catch up, then run
    python scheduler.py --catch-up           # run what is due now, once, and exit
    python scheduler.py --skip-unconfigured  # run without the LLM families that have no key

The trigger table, the slots and the job-run claims live in `arena.engine.jobs`; this module builds
the context (database, Gamma source, lineup, responders), says plainly what it will run, and hands
the triggers to an APScheduler `BlockingScheduler` in UTC. On start it first catches up (each
job once for its current slot, if that slot is in the current UTC week and not done yet), so a
restart on a Tuesday still takes that week's cohort and decision run. Ctrl-C / SIGTERM stop it
between jobs: running jobs finish, nothing new starts.
"""

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import FrameType
from urllib.parse import urlsplit

from apscheduler.events import EVENT_SCHEDULER_START
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.blocking import BlockingScheduler
from sqlalchemy.engine import make_url

from arena.config import Settings, get_settings
from arena.core.errors import ArenaError, ConfigError
from arena.core.timeutil import parse_instant, week_start
from arena.engine.jobs import (
    JOB_ORDER,
    SCHEDULES,
    JobContext,
    JobRunResult,
    known_secrets,
    run_job,
    slot_for,
    trigger_table,
)
from arena.lineup import FamilySpec, Lineup, load_lineup

__all__ = ["build_plan", "due_now", "main", "trigger_table"]

PROG = "scheduler"
EXIT_CONFIG = 2
EXIT_FAILED = 1

log = logging.getLogger("arena.scheduler")


# --------------------------------------------------------------------------------------------
# The plan: what will run, said plainly


@dataclass(frozen=True)
class FamilyReadiness:
    """Whether a family can take part here, and how (endpoint, key, built in)."""

    family: FamilySpec
    usable: bool
    how: str


@dataclass(frozen=True)
class Plan:
    """The checked configuration: printable, with the lineup that will actually run."""

    database: str
    source: str
    lineup_name: str
    families: list[FamilyReadiness]

    def missing_llm(self) -> list[str]:
        return [r.family.id for r in self.families if r.family.kind == "llm" and not r.usable]

    def running(self) -> Lineup:
        return Lineup(families=[r.family for r in self.families if r.usable])


def describe_database(url: str) -> str:
    """The backend and where it is — never the URL, which may carry a password."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return f"sqlite file {parsed.database or ':memory:'}"
    where = parsed.host or "local socket"
    if parsed.port:
        where += f":{parsed.port}"
    user = f" as {parsed.username}" if parsed.username else ""
    return f"{backend} database {parsed.database or '?'} on {where}{user}"


def _bare_url(url: str) -> str:
    """An http(s) URL without any user:password part."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}"


def readiness(family: FamilySpec, settings: Settings) -> FamilyReadiness:
    """Baselines are built in; an LLM family needs its own base_url or the configured key."""
    if family.kind == "baseline":
        if family.strategy == "oracle":
            return FamilyReadiness(family, False, "simulation only (needs the simulated world)")
        return FamilyReadiness(family, True, f"built-in baseline ({family.strategy})")
    if family.base_url is not None:
        return FamilyReadiness(family, True, f"own endpoint {_bare_url(family.base_url)}")
    if settings.llm_api_key is not None:
        return FamilyReadiness(family, True, f"API key set for {_bare_url(settings.llm_base_url)}")
    return FamilyReadiness(family, False, "no API key")


def build_plan(settings: Settings, lineup: Lineup) -> Plan:
    """Check the configuration: database, market source, lineup, each family's readiness."""
    return Plan(
        database=describe_database(settings.database_url),
        source=f"Polymarket Gamma at {_bare_url(settings.gamma_url)}",
        lineup_name=str(settings.lineup) if settings.lineup else "bundled default",
        families=[readiness(family, settings) for family in lineup.enabled()],
    )


def plan_lines(plan: Plan, skip_unconfigured: bool) -> list[str]:
    """The start-up report, one fact per line."""
    lines = [
        "Forecaster Arena scheduler (all times UTC)",
        f"  database:      {plan.database}",
        f"  market source: {plan.source}",
        f"  lineup:        {plan.lineup_name}, {len(plan.families)} enabled families",
    ]
    for ready in plan.families:
        verdict = "runs" if ready.usable else ("SKIPPED" if skip_unconfigured else "NOT READY")
        if not ready.usable and ready.family.kind == "baseline":
            verdict = "SKIPPED"
        lines.append(f"    {ready.family.id:<20} {ready.family.kind:<8} {verdict:<9} {ready.how}")
    lines.append("  jobs:")
    lines += [f"    {s.job:<13} {s.describe}" for s in SCHEDULES]
    return lines


def refusal(plan: Plan, skip_unconfigured: bool) -> str | None:
    """The one-line reason not to start, or None: LLM families without a key, unless skipped."""
    missing = plan.missing_llm()
    if not missing or skip_unconfigured:
        return None
    shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
    return (
        f"{PROG}: error: {len(missing)} LLM famil{'y has' if len(missing) == 1 else 'ies have'} "
        f"no API key ({shown}) — set OPENROUTER_API_KEY, give the family a base_url in the "
        "lineup, or pass --skip-unconfigured to run without them"
    )


# --------------------------------------------------------------------------------------------
# Running


def due_now(at: datetime) -> list[str]:
    """The jobs a catch-up at `at` runs: those whose current slot lies in this UTC week.

    So a catch-up between Sunday 00:00 and 00:05 does not run the new week's decisions early
    (decide's current slot is then last week's).
    """
    start = week_start(at)
    return [job for job in JOB_ORDER if slot_for(job, at) >= start]


def catch_up(ctx: JobContext, at: datetime, stop: threading.Event) -> list[JobRunResult]:
    """Each due job once for its current slot, in order, stopping between jobs if asked."""
    results = []
    for job in due_now(at):
        if stop.is_set():
            break
        result = run_job(ctx, job, slot_for(job, at), at)
        report(result, at)
        results.append(result)
    return results


def report(result: JobRunResult, at: datetime) -> None:
    """One line per run on stdout (failures also on stderr)."""
    counts = ", ".join(f"{k}={v}" for k, v in result.counts.items() if _short(v))
    line = f"{at:%Y-%m-%dT%H:%M:%SZ} {result.job} [slot {result.slot:%Y-%m-%d %H:%M}] "
    line += result.status + (f": {counts}" if counts else "")
    print(line, flush=True)
    if result.status == "failed":
        print(f"{PROG}: {result.job} failed: {result.error}", file=sys.stderr, flush=True)


def _short(value: object) -> bool:
    return isinstance(value, bool | int | float | str) and len(str(value)) <= 40


def fire(ctx: JobContext, job: str) -> None:
    """What a trigger calls: the job for the slot of now (late runs land in their slot)."""
    at = datetime.now(UTC)
    report(run_job(ctx, job, slot_for(job, at), at), at)


def build_scheduler(ctx: JobContext) -> BlockingScheduler:
    """The APScheduler wiring: one UTC cron trigger per job, never two runs of one job at once."""
    scheduler = BlockingScheduler(
        timezone=UTC, executors={"default": ThreadPoolExecutor(max_workers=len(SCHEDULES))}
    )
    grace = {s.job: s.misfire_grace_seconds for s in SCHEDULES}
    for job, trigger in trigger_table():
        scheduler.add_job(
            fire,
            trigger,
            args=[ctx, job],
            id=job,
            name=job,
            misfire_grace_time=grace[job],
            coalesce=True,
            max_instances=1,
        )
    return scheduler


def build_context(settings: Settings, lineup: Lineup) -> tuple[JobContext, Callable[[], None]]:
    """The live context (Gamma source, responders) and a closer for its HTTP clients: the
    responders', Gamma's and the CLOB client the context builds on first use (v2)."""
    from arena.agents.responders import default_responders
    from arena.engine.sources import GammaSource
    from arena.markets.gamma import GammaClient
    from arena.storage.db import get_engine

    gamma = GammaClient(settings.gamma_url)
    responders, close_responders = default_responders(settings)
    ctx = JobContext(
        engine=get_engine(settings.database_url),
        reader=get_engine(settings.database_url, role="reader"),
        settings=settings,
        lineup=lineup,
        source=GammaSource(gamma),
        responders=responders,
        clock=lambda: datetime.now(UTC),
        secrets=known_secrets(settings),
    )

    def close() -> None:
        close_responders()
        gamma.close()
        ctx.close()

    return ctx, close


def _known_secrets() -> tuple[str, ...]:
    try:
        return known_secrets(get_settings())
    except Exception:
        return ()


def check_schema(ctx: JobContext) -> None:
    """Refuse to run on a database that `arena init-db` has not brought to the newest schema."""
    from arena.storage.migrate import current_revision, head_revision

    if current_revision(ctx.engine) != head_revision():
        raise ConfigError(
            "the database schema is missing or not at the newest revision",
            "run `arena init-db` first",
        )


class Stopper:
    """Ctrl-C / SIGTERM: stop between jobs, in the catch-up and in the scheduler alike.

    The signal only sets a flag (the catch-up checks it between jobs) and, once the scheduler
    runs, shuts it down from a helper thread that waits for running jobs to finish. A signal
    that arrives while the scheduler is still starting is honoured as soon as it has started.
    """

    def __init__(self) -> None:
        self.flag = threading.Event()
        self._lock = threading.RLock()  # re-entrant: the handler runs on the main thread
        self._scheduler: BlockingScheduler | None = None
        self._thread: threading.Thread | None = None

    def install(self) -> None:
        signal.signal(signal.SIGINT, self.request)
        signal.signal(signal.SIGTERM, self.request)

    def request(self, signum: int, _frame: FrameType | None) -> None:
        if not self.flag.is_set():
            print(f"{PROG}: stopping after the running job(s) finish", file=sys.stderr)
        self.flag.set()
        self._shutdown()

    def attach(self, scheduler: BlockingScheduler) -> None:
        self._scheduler = scheduler
        scheduler.add_listener(lambda _event: self._shutdown(), EVENT_SCHEDULER_START)

    def _shutdown(self) -> None:
        with self._lock:
            scheduler = self._scheduler
            if not self.flag.is_set() or self._thread or scheduler is None:
                return
            if not scheduler.running:
                return  # not started yet: the start listener calls back
            self._thread = threading.Thread(target=scheduler.shutdown, kwargs={"wait": True})
            self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()


def serve(ctx: JobContext, stopper: Stopper) -> None:
    """Catch up, then run the triggers until Ctrl-C / SIGTERM; running jobs finish first."""
    catch_up(ctx, datetime.now(UTC), stopper.flag)
    if stopper.flag.is_set():
        return
    scheduler = build_scheduler(ctx)
    stopper.attach(scheduler)
    print(f"{PROG}: running; Ctrl-C or SIGTERM stops it between jobs", flush=True)
    scheduler.start()
    stopper.join()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scheduler.py", description="Run Forecaster Arena's jobs on the UTC clock."
    )
    parser.add_argument("--catch-up", action="store_true", help="run what is due now once and exit")
    parser.add_argument(
        "--skip-unconfigured",
        action="store_true",
        help="run without LLM families that have no API key or endpoint",
    )
    parser.add_argument(
        "--at", help="with --catch-up: run as of this UTC instant (ISO-8601) instead of now"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--verbose", "-v", action="store_true", help="log to stderr")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    """Check, report, then catch up once (`--catch-up`) or run until stopped."""
    if args.at and not args.catch_up:
        raise ConfigError("--at only applies to --catch-up", "add --catch-up or drop --at")
    at = parse_instant(args.at) if args.at else datetime.now(UTC)
    settings = get_settings()
    plan = build_plan(settings, load_lineup(settings.lineup))
    print("\n".join(plan_lines(plan, args.skip_unconfigured)), flush=True)
    refused = refusal(plan, args.skip_unconfigured)
    if refused:
        print(refused, file=sys.stderr)
        return EXIT_CONFIG
    ctx, close = build_context(settings, plan.running())
    try:
        check_schema(ctx)
        stopper = Stopper()
        stopper.install()
        if args.catch_up:
            results = catch_up(ctx, at, stopper.flag)
            return EXIT_FAILED if any(r.status == "failed" for r in results) else 0
        serve(ctx, stopper)
        return 0
    finally:
        close()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: one clear stderr line and a non-zero exit on any problem (unless --debug)."""
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if (args.verbose or args.debug) else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        return run(args)
    except ArenaError as exc:
        if args.debug:
            raise
        print(f"{PROG}: error: {exc.one_line()}", file=sys.stderr)
        return EXIT_CONFIG if isinstance(exc, ConfigError) else EXIT_FAILED
    except Exception as exc:
        if args.debug:
            raise
        from arena.core.errors import error_line

        line = error_line(exc, _known_secrets())
        print(
            f"{PROG}: error: {line} — check ARENA_DATABASE_URL, or retry with --debug",
            file=sys.stderr,
        )
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
