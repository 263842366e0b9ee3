"""`arena late-entry FAMILY --cohorts A-B`: a family plays finished past cohorts afterwards
(methodology §20), through the engine's player (`arena.engine.late_entry`).

Exits 1 with one line when the endpoint stops it: unreachable before the first week (nothing
written), or failing the same week `OUTAGE_STOP_AFTER` times in a row (the summary of what was
played first; a rerun resumes at that week). A run another process still holds is named in the
summary, with when its claim goes stale, and exits 0, as a job command that finds its slot
taken does (methodology §18): nothing failed.

Why its own module: it is no scheduler job (no slot, no job_runs row; its idempotency is the
shadow cohort's unique key and the decision claims), and it is the one command that takes
responders, a market source and the CLOB reader at once.

The market source is the resolve job's (Gamma at ARENA_GAMMA_URL); as the resolve job does,
the player never asks a live source about the simulated world's markets (a demo database's),
which it cannot know: such a position stays open until `arena demo --late-entry` (the simulated
world answers there) settles it.
"""

from contextlib import closing
from typing import TYPE_CHECKING, Annotated

import typer

from arena.app.cli.database import open_engine
from arena.app.cli.job_runs import gamma_source, job_context
from arena.app.cli.options import AtOption, at_instant
from arena.core.late_entry import held_line

if TYPE_CHECKING:
    from arena.engine.late_entry import LateEntryResult


def late_entry(
    family: Annotated[str, typer.Argument(help="A family id of the lineup (may be disabled).")],
    cohorts: Annotated[
        str, typer.Option("--cohorts", help="Finished live cohorts: a range 1-8 or a list 2,4,7.")
    ],
    allow_contaminated: Annotated[
        bool,
        typer.Option(
            "--allow-contaminated",
            help="Play cohorts the leakage guard refuses (week start on or before the family's "
            "knowledge_cutoff, or no cutoff); they are stamped contaminated everywhere.",
        ),
    ] = False,
    at: AtOption = None,
) -> None:
    """Play FAMILY over finished past cohorts as a late entrant (shadow cohorts; idempotent)."""
    from arena.agents.responders import default_responders
    from arena.config import get_settings
    from arena.core.late_entry import LateEntryStopped, parse_cohorts
    from arena.engine.late_entry import play_late_entry
    from arena.lineup import load_lineup

    numbers = parse_cohorts(cohorts)
    when = at_instant(at)
    settings = get_settings()
    lineup = load_lineup(settings.lineup)
    engine = open_engine()
    responders, close = default_responders(settings)
    try:
        with gamma_source() as source, closing(job_context(source=source)) as ctx:
            result = play_late_entry(
                engine,
                when,
                lineup,
                family,
                numbers,
                responders,
                allow_contaminated=allow_contaminated,
                source=source,
                prices=ctx.price_reader,
                stale_after=ctx.stale_after,
                owner=ctx.owner,
            )
    except LateEntryStopped as stopped:
        if stopped.played is not None:  # what was played before the stop, then the one line
            for line in summary_lines(stopped.played):
                typer.echo(line)
        raise
    finally:
        close()
    for line in summary_lines(result):
        typer.echo(line)


def _tally(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "none"


def summary_lines(result: "LateEntryResult") -> list[str]:
    """The command's summary: what was played, decided, traded, settled and marked."""
    numbers = ", ".join(map(str, result.cohorts))
    lines = [
        f"late entry of {result.family} over cohort(s) {numbers}: "
        f"{result.shadows_created} shadow cohort(s) created, {result.runs} decision run(s) in all",
        f"decisions: {_tally(result.decided)}; {result.already_done} already done",
        f"trades: {result.trades}; settled at recorded resolutions: {result.settled_recorded}; "
        f"markets asked of the source: {len(result.asked)}",
        f"marks by source: {_tally(result.marks)}",
        "completed: "
        + (", ".join(map(str, result.completed)) or "none")
        + "; contaminated: "
        + (", ".join(map(str, result.contaminated)) or "none"),
    ]
    if result.held_runs:  # another process is playing them: not a failure (exit 0)
        lines.append(held_line(result.held_runs))
    if result.endpoint_failures:
        lines.append(
            f"decisions lost to the endpoint and asked again: {result.endpoint_failures} "
            "(none of them counted as played)"
        )
    if result.left_alone:
        lines.append(
            f"{len(result.left_alone)} simulated market(s) left open: a live source cannot resolve "
            "them (`arena demo --late-entry` asks the simulated world)"
        )
    return lines
