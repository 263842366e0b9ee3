"""The `arena` command line (contract §4).

Every failure the user can act on ends as ONE line on stderr and a non-zero exit;
`--debug` shows the traceback instead.
"""

import logging
import sys
from collections.abc import Callable
from typing import Annotated

import typer

try:  # typer >= 0.20 vendors click; older releases use click itself
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover
    from click import exceptions as click_exceptions  # type: ignore[no-redef]

from arena.app.cli import data, detect, jobs, late_entry, serve
from arena.app.cli.errors import command_error_line
from arena.core.errors import ArenaError

app = typer.Typer(
    name="arena",
    help="Forecaster Arena: LLMs paper-trade Polymarket prediction markets (methodology v1).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log retries and progress to stderr.")
    ] = False,
) -> None:
    """Forecaster Arena command line."""


app.callback()(_root)

# Every command, in the order `arena --help` lists them.
COMMANDS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("init-db", data.init_db),
    ("sync-markets", jobs.sync_markets),
    ("start-cohort", jobs.start_cohort),
    ("decide", jobs.decide),
    ("snapshot", jobs.snapshot),
    ("analyses", jobs.analyses),
    ("keep-bundles", jobs.keep_bundles),
    ("resolve", jobs.resolve),
    ("late-entry", late_entry.late_entry),
    ("demo", serve.demo),
    ("model-server", serve.model_server),
    ("clob-server", serve.clob_server),
    ("leaderboard", data.leaderboard),
    ("detectability", detect.detectability),
    ("export", data.export),
    ("bundle", data.bundle),
    ("verify", data.verify),
    ("backup", data.backup),
    ("restore", data.restore),
    ("serve", serve.serve),
)
for _name, _command in COMMANDS:
    app.command(_name)(_command)


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
        print(f"arena: {command_error_line(exc)}", file=sys.stderr)
        sys.exit(exc.exit_code if isinstance(exc, ArenaError) else 1)
    sys.exit(code if isinstance(code, int) else 0)
