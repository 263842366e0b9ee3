"""How a job command runs.

Each job command is ONE run of the scheduler's job for the slot of --at, through the
scheduler's own job_runs claim (`arena.engine.jobs.run_job`), so a manual run is recorded
like a scheduled one and a slot already done (or being done) by another run is not done
again.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import typer

from arena.app.cli.database import open_engine
from arena.core.errors import ArenaError
from arena.engine.sources import GammaSource

if TYPE_CHECKING:
    from arena.agents.responders import ResponderFactory
    from arena.engine.jobs import JobContext, JobRunResult
    from arena.engine.sources import MarketSource
    from arena.lineup import FamilySpec, Lineup
    from arena.markets.types import EndWindow, ParsedMarket


@contextmanager
def gamma_source() -> Iterator[GammaSource]:
    """The live market source at ARENA_GAMMA_URL, closed when the command ends."""
    from arena.config import get_settings
    from arena.markets.gamma import GammaClient

    with GammaClient(get_settings().gamma_url) as client:
        yield GammaSource(client)


class _NoMarketSource:
    """The market source of a command whose job never asks one."""

    name = "none"

    def top_markets(
        self, at: datetime, limit_total: int, ending: "EndWindow | None" = None
    ) -> "list[ParsedMarket]":
        raise RuntimeError("this command has no market source")

    def get_market(self, market_id: str, at: datetime) -> "ParsedMarket | None":
        raise RuntimeError("this command has no market source")


def _no_responders(family: "FamilySpec") -> None:
    return None


def job_context(
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
        engine=open_engine(),
        reader=open_engine("reader"),
        settings=settings,
        lineup=lineup if lineup is not None else Lineup(families=[]),
        source=source if source is not None else _NoMarketSource(),
        responders=responders if responders is not None else _no_responders,
        clock=lambda: datetime.now(UTC),
        secrets=known_secrets(settings),
    )


def run_claimed(ctx: "JobContext", name: str, when: datetime) -> "JobRunResult | None":
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


def report_run(result: "JobRunResult", summary: str) -> None:
    """A run's summary line, with the job_runs row that records it."""
    typer.echo(f"{summary} [job_runs #{result.run_id}, slot {result.slot:%Y-%m-%d %H:%M} UTC]")
