"""The job commands: one run of a scheduler job for the slot of --at (`job_runs`).

`decide` and `snapshot` may read the CLOB (a v2 cohort's prices): their job context is closed
when the command ends, which closes the CLOB client it built (`JobContext.close`).
"""

from contextlib import closing
from typing import TYPE_CHECKING, cast

import typer

from arena.app.cli.job_runs import gamma_source, job_context, report_run, run_claimed
from arena.app.cli.options import AtOption, at_instant

if TYPE_CHECKING:
    from arena.engine.analyses import AnalysesOutcome
    from arena.engine.bundles import BundleResult
    from arena.engine.cohorts import CohortResult
    from arena.engine.decisions import DecideResult
    from arena.engine.jobs import CohortOutcome, DecideOutcome
    from arena.engine.market_sync import SyncResult
    from arena.engine.settlement import ResolveResult
    from arena.engine.snapshots import SnapshotResult


def sync_markets(at: AtOption = None) -> None:
    """Fetch the top markets by volume and refresh markets with open positions."""
    from arena.engine.jobs import SYNC_MARKETS

    when = at_instant(at)
    with gamma_source() as source:
        run = run_claimed(job_context(source=source), SYNC_MARKETS, when)
    if run is None:
        return
    result = cast("SyncResult", run.outcome)
    report_run(
        run,
        f"synced {result.top} top markets and {result.held_refreshed} held markets "
        f"({result.inserted} new, {result.updated} updated, {len(result.missing)} unavailable)"
        + _skipped_part(result.skipped, source.name),
    )


def _skipped_part(skipped: list[str], source_name: str) -> str:
    """The summary's clause for markets of the other kind the job left alone (none: empty)."""
    from arena.engine.sources import skipped_line

    return f"; {skipped_line(len(skipped), source_name)}" if skipped else ""


def start_cohort(at: AtOption = None) -> None:
    """Create the cohort of the UTC week containing --at (idempotent)."""
    from arena.config import get_settings
    from arena.engine.jobs import START_COHORT
    from arena.lineup import load_lineup

    when = at_instant(at)
    ctx = job_context(lineup=load_lineup(get_settings().lineup))
    run = run_claimed(ctx, START_COHORT, when)
    if run is None:
        return
    report_run(run, _cohort_line(cast("CohortOutcome", run.outcome).result))


def _cohort_line(result: "CohortResult") -> str:
    verb = "created" if result.created else "already exists:"
    return (
        f"cohort {result.number} {verb} week of {result.week_start:%Y-%m-%d}, "
        f"{result.agents} agents"
    )


def decide(at: AtOption = None) -> None:
    """Run the weekly decision for every cohort inside its decision window."""
    from arena.agents.responders import default_responders
    from arena.config import get_settings
    from arena.engine.jobs import DECIDE
    from arena.lineup import load_lineup

    when = at_instant(at)
    settings = get_settings()
    responders, close = default_responders(settings)
    try:
        ctx = job_context(lineup=load_lineup(settings.lineup), responders=responders)
        with closing(ctx):
            run = run_claimed(ctx, DECIDE, when)
    finally:
        close()
    if run is None:
        return
    outcome = cast("DecideOutcome", run.outcome)
    if outcome.cohort.result.created:
        typer.echo(_cohort_line(outcome.cohort.result))
    result = cast("DecideResult", outcome.decisions)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(result.statuses.items())) or "none"
    report_run(
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


def snapshot(at: AtOption = None) -> None:
    """Value every open portfolio: one row per agent per 10-minute slot."""
    from arena.engine.jobs import SNAPSHOT

    when = at_instant(at)
    with closing(job_context()) as ctx:
        run = run_claimed(ctx, SNAPSHOT, when)
    if run is None:
        return
    result = cast("SnapshotResult", run.outcome)
    report_run(
        run,
        f"snapshot {run.slot:%Y-%m-%d %H:%M} UTC: {result.agents} agent(s) valued, "
        f"{result.rows_written} row(s) written, "
        f"{result.positions_marked} position(s) marked at live prices, "
        f"{result.cohorts_tracking} cohort(s) now tracking, {result.cohorts_completed} completed",
    )


def analyses(at: AtOption = None) -> None:
    """Compute and store the leaderboard and calibration frames the dashboard shows."""
    from arena.engine.jobs import ANALYSES

    when = at_instant(at)
    run = run_claimed(job_context(), ANALYSES, when)
    if run is None:
        return
    result = cast("AnalysesOutcome", run.outcome)
    report_run(run, f"stored {result.stored} frame(s) for {', '.join(result.scopes)}")


def keep_bundles(at: AtOption = None) -> None:
    """Keep the replay bundle of every finished cohort that has none (the hourly bundle job)."""
    from arena.engine.jobs import BUNDLE

    run = run_claimed(job_context(), BUNDLE, at_instant(at))
    if run is None:
        return
    result = cast("BundleResult", run.outcome)
    kept = ", ".join(f"cohort {n} {h}" for n, h in result.built.items()) or "none new"
    waiting = (
        f"; waiting: cohort(s) {', '.join(map(str, result.waiting))}" if result.waiting else ""
    )
    report_run(run, f"kept {len(result.built)} bundle(s): {kept}{waiting}")


def resolve(at: AtOption = None) -> None:
    """Check closed / past-end markets, settle positions and score Brier."""
    from arena.engine.jobs import RESOLVE

    when = at_instant(at)
    with gamma_source() as source:
        run = run_claimed(job_context(source=source), RESOLVE, when)
    if run is None:
        return
    result = cast("ResolveResult", run.outcome)
    report_run(
        run,
        f"checked {result.checked} markets: {len(result.resolved)} resolved, "
        f"{len(result.cancelled)} cancelled, {result.unresolved} not yet resolved, "
        f"{len(result.unavailable)} unavailable; {result.positions_settled} positions settled, "
        f"{result.brier_rows} Brier rows" + _skipped_part(result.skipped, source.name),
    )
