"""`make demo`: the dashboard at once, the season playing into its database behind it.

Why: a whole 8-week season takes one to four minutes; the person who typed the README's first
command should see the dashboard within seconds and watch the season fill in (Home shows the
simulated date and what has been played so far).

`python -m arena.app.demo_launch --database data/demo.db --port 8501 -- --weeks 8`:

- a database holding a FINISHED season (its final `bundle` run recorded by the demo) is
  reused and served as it is;
- anything else — no file, an empty schema, a season stopped half-way (Ctrl-C, a crash, a
  killed machine) — is deleted and rebuilt: the schema is written first (the dashboard refuses
  a schema-less database), then `arena demo …` plays the season in a child process (its output
  in `<database stem>.log`, e.g. data/demo.log) while `arena serve` serves the dashboard;
- Ctrl-C or SIGTERM stops both children; so does the launcher's own death (Linux
  PR_SET_PDEATHSIG). A season that fails stops the server too, with the log's last lines: a
  half-played season is never left served as if it were playing;
- a lock file beside the database keeps a second `make demo` from deleting the season a first
  one is playing.
"""

import argparse
import ctypes
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db
from arena.storage.tables import JOB_RUNS

POLL_SECONDS = 0.5
STOP_SECONDS = 10.0  # how long a child may take to stop on SIGTERM before SIGKILL
PR_SET_PDEATHSIG = 1
# arena.app.demo.DEMO_OWNER and arena.engine.jobs.BUNDLE, not imported: the launcher starts
# light (the engine's imports cost seconds on a loaded 2-core machine, before the server starts)
DEMO_OWNER = "demo"
BUNDLE = "bundle"


def say(line: str) -> None:
    """One line of make demo's output, flushed (a pipe or a log file must see it at once)."""
    print(line, flush=True)


def season_finished(database: Path) -> bool:
    """Whether the SQLite file holds a finished demo season: its final bundle run is recorded.

    `run_demo` runs analyses and bundle once, after the last tick, so a season stopped earlier
    (killed, failed, `stop_at`) has no such row. Unreadable or schema-less files are unfinished.
    """
    if not database.is_file():
        return False
    engine = create_db_engine(f"sqlite:///{database}")
    query = select(JOB_RUNS.c.id).where(
        JOB_RUNS.c.job == BUNDLE, JOB_RUNS.c.owner == DEMO_OWNER, JOB_RUNS.c.status == "ok"
    )
    try:
        with engine.connect() as conn:
            return conn.execute(query.limit(1)).first() is not None
    except SQLAlchemyError:
        return False
    finally:
        engine.dispose()


def remove_database(database: Path) -> None:
    """The SQLite file and its WAL companions."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)


def prepare(database: Path) -> bool:
    """Reuse a finished season (False: nothing to play) or start afresh with the schema (True)."""
    database.parent.mkdir(parents=True, exist_ok=True)
    if season_finished(database):
        say(f"reusing {database}: a finished season (delete it to rebuild the demo)")
        return False
    if database.exists():
        say(f"{database} holds no finished season (stopped half-way?): rebuilding it")
    remove_database(database)
    engine = create_db_engine(f"sqlite:///{database}")
    try:
        init_db(engine)
    finally:
        engine.dispose()
    return True


@contextmanager
def locked(database: Path) -> Iterator[None]:
    """Hold `<database>.lock` for the launcher's life; a second launcher is refused."""
    database.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{database}.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SystemExit(
                f"another `make demo` is using {database}: stop it first (Ctrl-C in its terminal)"
            ) from None
        yield


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the launcher dies, however it dies (Linux)."""
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _start(args: list[str], env: dict[str, str], out: IO[str] | None) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "arena", *args]
    stderr = subprocess.STDOUT if out is not None else None
    return subprocess.Popen(
        command, env=env, stdout=out, stderr=stderr, preexec_fn=_die_with_parent
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _tail(log: Path, lines: int = 15) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.replace("\r", "\n").splitlines()[-lines:])


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def supervise(
    server: subprocess.Popen[bytes], season: subprocess.Popen[bytes] | None, log: Path
) -> int:
    """Wait on both children: a failed season stops the server; the server's end stops all."""
    try:
        while True:
            if season is not None and season.poll() is not None:
                if season.returncode != 0:
                    say(f"the demo season failed; the log's end ({log}):\n{_tail(log)}")
                    return 1
                say(f"the season has finished ({log} holds its summary); still serving")
                season = None
            if server.poll() is not None:
                return server.returncode
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        return 130
    finally:
        for child in (season, server):
            if child is not None:
                _stop(child)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, default=Path("data/demo.db"))
    parser.add_argument("--port", type=int, default=8501)
    parser.add_argument("demo_args", nargs="*", help="after --: arguments of `arena demo`")
    args = parser.parse_args(argv)
    database: Path = args.database
    log = database.with_suffix(".log")
    signal.signal(signal.SIGTERM, _raise_interrupt)
    signal.signal(signal.SIGHUP, _raise_interrupt)
    env = {**os.environ, "ARENA_DATABASE_URL": f"sqlite:///{database}"}
    with locked(database):
        season = None
        try:
            play = prepare(database)
            if play:
                with open(log, "w") as out:  # the child keeps its own descriptor
                    season = _start(["demo", *args.demo_args], env, out)
                say(f"the season plays in the background (log: {log}); Home shows its progress")
            server = _start(["serve", "--port", str(args.port)], env, None)
        except KeyboardInterrupt:
            if season is not None:
                _stop(season)
            return 130
        return supervise(server, season, log)


if __name__ == "__main__":
    sys.exit(main())
