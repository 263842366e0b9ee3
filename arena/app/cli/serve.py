"""The commands that run something: the demo season, the simulated model and CLOB servers, the
dashboard."""

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from arena.app.cli.database import open_engine
from arena.app.cli.options import MAX_ID
from arena.config import (
    EXTENSIONS,
    HORIZON,
    MAX_HORIZON_DAYS,
    MAX_REPLICATES,
    METHODOLOGY_VERSIONS,
)
from arena.core.errors import ArenaError, InputError

if TYPE_CHECKING:  # the servers are imported by their commands only: `arena --help` stays light
    from sqlalchemy.engine import Engine

    from arena.app.demo import DemoSummary
    from arena.config import Settings
    from arena.engine.late_entry import LateEntryResult
    from arena.lineup import Lineup
    from arena.sim.loopback import LoopbackServer

_S = TypeVar("_S")


def demo(
    weeks: Annotated[int, typer.Option(min=1, max=260, help="Simulated weeks.")] = 8,
    seed: Annotated[int, typer.Option(min=0, max=MAX_ID, help="Seed of the simulated world.")] = 7,
    extensions: Annotated[
        str | None,
        typer.Option(
            help="Protocol extensions stamped on every cohort of the season, comma-separated "
            f"({', '.join(EXTENSIONS)}); default: ARENA_EXTENSIONS, else none (methodology "
            "v1)."
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
    horizon_days: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_HORIZON_DAYS,
            help="Extension horizon: only markets ending within this many days of each "
            "decision run (implies --extensions horizon); default: ARENA_HORIZON_DAYS, else 14 "
            "when horizon is named.",
        ),
    ] = None,
    methodology: Annotated[
        str | None,
        typer.Option(
            help="Methodology version stamped on the season's cohorts (v1 or v2; v2 plays "
            "against a simulated CLOB); default: ARENA_METHODOLOGY, else v1."
        ),
    ] = None,
    late_entry: Annotated[
        str | None,
        typer.Option(
            "--late-entry",
            help="After the season, play this lineup family (e.g. newcomer) as a late entrant "
            "over the finished cohorts; on a database holding a finished demo season, only that.",
        ),
    ] = None,
) -> None:
    """Run an offline simulated season into the configured database."""
    from arena.config import get_settings, parse_extensions
    from arena.lineup import load_lineup
    from arena.sim.world import DEFAULT_TAIL_WEEKS, horizon_tail_weeks
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
    if horizon_days is not None:
        settings = settings.model_copy(update={"horizon_days": horizon_days})
    if settings.horizon() is not None and HORIZON not in settings.extensions:
        settings = settings.model_copy(update={"extensions": (*settings.extensions, HORIZON)})
    if methodology is not None:
        if methodology not in METHODOLOGY_VERSIONS:
            raise InputError(
                f"--methodology: unknown version {methodology!r}",
                f"known: {', '.join(METHODOLOGY_VERSIONS)}",
            )
        chosen = settings.methodology.model_copy(update={"version": methodology})
        settings = settings.model_copy(update={"methodology": chosen})
    engine = open_engine(create=True)
    try:
        run_init(engine)
        lineup = load_lineup(settings.lineup)
        days = settings.horizon()
        tail = DEFAULT_TAIL_WEEKS if days is None else horizon_tail_weeks(days)
        summary, entry = _play_demo(engine, settings, lineup, late_entry, weeks, seed, tail)
    finally:
        dispose_engines()  # close every connection: the SQLite file is complete on exit
    _print_demo(summary, entry, days, tail)


def _print_demo(
    summary: "DemoSummary | None",
    entry: "tuple[LateEntryResult, list[Any]] | None",
    days: int | None,
    tail: int,
) -> None:
    """The season's summary (none when only a late entrant played), the late entrant's."""
    from arena.app.demo import format_summary

    for line in format_summary(summary) if summary is not None else []:
        typer.echo(line)
    if entry is not None:
        from arena.app.cli.late_entry import summary_lines

        for line in summary_lines(entry[0]):
            typer.echo(line)
        typer.echo(f"late entrant served by the simulated model server: {len(entry[1])} request(s)")
    if days is not None:
        typer.echo(
            f"horizon: {days} days (markets ending within {days} days of each decision run; "
            f"settling tail up to {tail} weeks)"
        )


def _play_demo(
    engine: "Engine",
    settings: "Settings",
    lineup: "Lineup",
    late_entry: str | None,
    weeks: int,
    seed: int,
    tail: int,
) -> tuple["DemoSummary | None", "tuple[LateEntryResult, list[Any]] | None"]:
    """The season into an empty database, then the late entrant if one is named; a database
    holding a finished demo season plays only the late entrant (`make demo`'s second step)."""
    from arena.app.demo import ensure_empty, progress_bar, run_demo
    from arena.app.demo_late_entry import check_entrant, play_demo_late_entry, season_finished

    if late_entry is not None:
        check_entrant(lineup, late_entry)  # before a season is played, not after
    summary = None
    if late_entry is None or not season_finished(engine):
        ensure_empty(engine)
        with progress_bar(weeks, tail) as on_tick:
            summary = run_demo(
                engine, settings, lineup, weeks=weeks, seed=seed, on_tick=on_tick, tail_weeks=tail
            )
    if late_entry is None:
        return summary, None
    return summary, play_demo_late_entry(
        engine, settings, lineup, late_entry, seed=seed, weeks=weeks, tail_weeks=tail
    )


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
    from arena.sim.model_server import ModelServer
    from arena.sim.world import demo_world

    server = _listening(
        port, lambda: ModelServer(seed=seed, world=demo_world(seed, weeks), port=port)
    )
    _serve_until_stopped(server, f"simulated model server (seed {seed}) at {server.base_url}")
    typer.echo(f"served {len(server.log)} chat requests")


def _listening(port: int, make: Callable[[], _S]) -> _S:
    """`make()` a loopback server, or one line saying the port is taken."""
    try:
        return make()
    except OSError as exc:
        raise ArenaError(
            f"cannot listen on 127.0.0.1:{port}: {exc}", "choose another --port"
        ) from exc


def _serve_until_stopped(server: "LoopbackServer", banner: str) -> None:
    """Serve from a thread, print `banner`, and return on SIGTERM or Ctrl-C."""
    import signal
    import threading

    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    try:
        with server:
            typer.echo(banner)
            sys.stdout.flush()
            try:
                while not stop.wait(0.5):
                    pass
            except KeyboardInterrupt:
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def clob_server(
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Loopback port; 0 lets the OS choose.")
    ] = 8702,
    seed: Annotated[int, typer.Option(min=0, max=MAX_ID, help="Seed of the simulated world.")] = 7,
    weeks: Annotated[int, typer.Option(min=1, max=260, help="Weeks of the demo world.")] = 8,
    at: Annotated[
        str | None,
        typer.Option(help="The simulated instant (ISO-8601) when a request sends no X-Arena-At."),
    ] = None,
) -> None:
    """Serve the demo world's order books (Polymarket CLOB read API) on 127.0.0.1 until stopped.

    The books of the world `arena demo --seed S --weeks W` plays; a request's X-Arena-At header
    sets the instant, else --at (default: the demo's start). Stops on SIGTERM or Ctrl-C.
    """
    from datetime import UTC, datetime

    from arena.sim.clob_server import ClobServer
    from arena.sim.world import DEMO_START, demo_world

    try:
        instant = datetime.fromisoformat(at.replace("Z", "+00:00")) if at else DEMO_START
    except ValueError as exc:
        raise InputError(
            f"--at {at!r} is not an ISO-8601 instant", "e.g. 2026-01-04T00:05Z"
        ) from exc
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    server = _listening(port, lambda: ClobServer(demo_world(seed, weeks), at=instant, port=port))
    _serve_until_stopped(
        server, f"simulated CLOB (seed {seed}, at {instant.isoformat()}) at {server.origin}"
    )
    typer.echo(f"served {len(server.log)} CLOB requests")


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
    entry = Path(__file__).resolve().parents[3] / "dashboard.py"
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
