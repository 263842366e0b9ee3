"""`arena detectability`: "When will we know?" at the command line (the page's read model).

Why its own module: the data commands' module holds the leaderboard and the exports; this one
adds a scope by protocol group (`--protocol v1+horizon-14d`), which no other command takes.
"""

import sys
from typing import Annotated

import typer

from arena.app.cli.database import open_engine
from arena.app.cli.options import MAX_COHORT
from arena.core.errors import InputError


def detectability(
    cohort: Annotated[
        int | None, typer.Option(min=1, max=MAX_COHORT, help="Only this cohort number.")
    ] = None,
    protocol: Annotated[
        str | None,
        typer.Option(
            help="Every cohort of this protocol group (v1, v2, v1+horizon-14d…); default v1."
        ),
    ] = None,
    format: Annotated[str, typer.Option("--format", help="table or csv")] = "table",
) -> None:
    """Print whether each pair's and each family's difference is separable now (the two-sided
    5% test, its p), its MDE and the cohorts a gap that holds needs to reach it."""
    if format not in ("table", "csv"):
        raise InputError(f"--format {format!r} is not supported", "use --format table or csv")
    if cohort is not None and protocol is not None:
        raise InputError(
            "--cohort and --protocol name two scopes", "give one: a cohort reads as it ran"
        )
    from arena.analytics.views.detectability import (
        detectability_frame,
        detectability_table,
        pair_sentences,
        write_detectability_csv,
    )
    from arena.config import METHODOLOGY_VERSION

    engine = open_engine("reader")
    frame = detectability_frame(engine, cohort=cohort, methodology=protocol or METHODOLOGY_VERSION)
    if format == "csv":
        write_detectability_csv(frame, sys.stdout)
        return
    if frame.empty:
        typer.echo("no family in this scope yet: run `arena start-cohort` (or `arena demo`) first")
        return
    from rich.console import Console
    from rich.markup import escape

    from arena.core.text import printable

    console = Console(width=None if sys.stdout.isatty() else 200)
    for sentence in pair_sentences(frame):
        console.print(escape(printable(sentence)))
    scope = f"cohort {cohort}" if cohort else f"every {protocol or METHODOLOGY_VERSION} cohort"
    console.print(detectability_table(frame, f"When will we know? ({escape(scope)})"))
