"""The data commands: schema, leaderboard, export, replay bundles, backup and restore."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena.app.cli.database import open_engine
from arena.app.cli.options import MAX_COHORT, MAX_ID, AtOption, at_instant
from arena.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd


def init_db() -> None:
    """Create or migrate the schema to the newest revision (idempotent)."""
    from arena.config import get_settings
    from arena.lineup import load_lineup
    from arena.storage.migrate import init_db as run_init
    from arena.storage.seed import sync_families

    settings = get_settings()
    engine = open_engine(create=True)
    revision = run_init(engine)
    sync_families(engine, load_lineup(settings.lineup))
    typer.echo(f"database ready at schema revision {revision}")


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
    from arena.analytics.stored import execution_flags
    from arena.analytics.views.execution import with_flags

    engine = open_engine("reader")
    frame = board.leaderboard(engine, cohort=cohort)
    # its last column: the rank is not robust to the execution rule (the page's, the same read)
    frame = with_flags(frame, execution_flags(engine, cohort)) if not frame.empty else frame
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


def export(
    table: Annotated[
        str,
        typer.Argument(
            help="cohorts, decisions, trades, positions, snapshots, brier_scores, markets or "
            "legs; or dictionary: every export column's meaning and unit"
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
    """Export a bounded slice of one table as CSV (stdout unless --out), or the data
    dictionary of every table (`arena export dictionary`)."""
    from arena.analytics.export.tables import ExportFilters, get_spec, write_csv
    from arena.app.output import open_output
    from arena.config import get_settings
    from arena.core.timeutil import parse_instant

    if format != "csv":
        raise InputError(f"--format {format!r} is not supported", "use --format csv")
    if table == "dictionary":
        from arena.analytics.export.dictionary import write_dictionary

        if any(v is not None for v in (cohort, family, since, until, limit)):
            raise InputError("the dictionary takes no filter", "drop the filters and --limit")
        with open_output(out) as handle:
            write_dictionary(handle)
        return
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
        result = write_csv(open_engine("reader"), table, filters, handle, cap)
    if result.truncated:
        typer.echo(
            f"arena: row cap of {result.cap} reached: output truncated; narrow with "
            "--cohort/--family/--since/--until or raise --limit",
            err=True,
        )


def bundle(
    cohort: Annotated[int, typer.Argument(min=1, max=MAX_COHORT, help="The cohort number.")],
    out: Annotated[Path, typer.Option(help="A folder to write the files into, or a FILE.zip.")],
    provisional: Annotated[
        bool,
        typer.Option(help="Bundle a cohort still running (its state so far, stamped not final)."),
    ] = False,
    late_entry: Annotated[
        str | None,
        typer.Option(
            "--late-entry",
            metavar="FAMILY",
            help="The shadow cohort FAMILY played of this cohort as a late entrant.",
        ),
    ] = None,
) -> None:
    """Write a cohort's replay bundle: every input and output, hashed, for `arena verify`."""
    from arena.analytics.replay.bundle import build_bundle
    from arena.app.output import open_binary_output
    from arena.core.text import printable

    engine = open_engine("reader")
    built = build_bundle(engine, cohort, provisional=provisional, late_entry=late_entry)
    written = out
    if out.suffix == ".zip":  # replaced whole (or written through, for a device), as exports
        if not out.parent.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
        with open_binary_output(str(out)) as handle:
            handle.write(built.bundle.zip_bytes())
    else:
        try:
            written = built.bundle.write(out)
        except OSError as exc:
            raise InputError(
                f"cannot write {printable(str(out))}: {exc.strerror}",
                "choose a writable --out path",
            ) from None
    size = sum(len(data) for data in built.bundle.files.values())
    whose = f"cohort {cohort}" + ("" if late_entry is None else f" late:{printable(late_entry)}")
    typer.echo(
        f"{whose}: bundle {built.hash} -> {printable(str(written))} "
        f"({len(built.bundle.files)} files, {size:,} bytes)"
    )


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


def backup(
    directory: Annotated[Path, typer.Option("--dir", help="Where backups go.")] = Path("backups"),
    keep: Annotated[int, typer.Option(min=1, max=MAX_ID, help="How many backups to keep.")] = 7,
    at: AtOption = None,
) -> None:
    """Write a consistent backup of the database (SQLite backup API / pg_dump), with retention."""
    from arena.config import get_settings
    from arena.storage.backup import backup as run_backup

    result = run_backup(get_settings().database_url, directory, at_instant(at), keep)
    typer.echo(
        f"backup written: {result.path} ({result.size_bytes:,} bytes); "
        f"{len(result.removed)} old backup(s) removed"
    )


def restore(
    source: Annotated[Path, typer.Argument(help="A file written by `arena backup`.")],
    yes: Annotated[bool, typer.Option("--yes", help="Confirm replacing the database.")] = False,
) -> None:
    """Replace the database's contents with a backup (stop the scheduler first).

    The backup is checked first (an arena database at a known schema revision whose schema
    is exactly what the migrations make at it) and the replaced database is kept; the line
    printed says where.
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
