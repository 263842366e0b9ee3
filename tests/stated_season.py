"""A short demo season into a new SQLite file, with or without protocol extensions,
of methodology v1 or v2.

Shared by the demo tests of the stated-probability extension and of replicates, and their
browser tests: two decision weeks of `arena demo` (the simulated model server's personas, the
baselines and the oracle), stopped after `days`, the hourly analyses stored at its end as the
demo stores them.

A season takes half a minute to play, so `DemoSeasons` (the `demo_seasons` fixture) plays each
distinct one once per test run, whichever xdist worker needs it first, and hands every caller a
copy of its own (and its `DemoSummary`). A module whose season is not `demo_season`'s (a CLI
run, a patched persona) plays it through `DemoSeasons.once` for the same reason: a module
fixture is played again by every worker that runs one of the module's tests.
"""

import fcntl
import hashlib
import pickle
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import timedelta
from pathlib import Path
from typing import Any

from arena.app.demo import DEMO_START, DemoSummary, run_demo
from arena.config import METHODOLOGY_VERSION, Methodology, load_settings
from arena.lineup import Lineup, load_lineup
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db

SEED = 1
# The suite's v2 demo season: the baselines, the oracle and one simulated LLM for nine days
# against the simulated CLOB. Bundles, exports, the dashboard's v2 tests and the Chromium
# journey all copy this one season (`DemoSeasons.v2`), played once per run.
V2_LINEUP = Lineup(
    families=[f for f in load_lineup(None).families if f.kind == "baseline" or f.id == "kimi-k2"]
)
V2_DAYS = 9
# The baselines' season (cash, favourite, random and the oracle, which decide from the prompt's
# state): v1's in tests/test_v2_scope.py and tests/test_v2_read.py, v1's and the extended one
# in tests/test_demo_stated.py. Nine days hold both cohorts' decisions and settled bets of
# each (Brier rows, a P/L), all those tests read.
BASELINES = Lineup(families=[f for f in load_lineup(None).families if f.kind == "baseline"])
BASELINE_DAYS = 9


def demo_season(
    folder: Path,
    lineup: Lineup,
    extensions: str,
    days: int,
    replicates: int = 1,
    methodology: str = METHODOLOGY_VERSION,
) -> DemoSummary:
    """Play the season into `folder`/demo.db (`replicates` agents per family, cohorts of
    `methodology`: v2 plays against the simulated CLOB); its summary."""
    url = f"sqlite:///{folder / 'demo.db'}"
    engine = create_db_engine(url)
    try:
        init_db(engine)
        chosen: dict[str, Any] = {}  # a v1 season reads the methodology as it always did
        if methodology != METHODOLOGY_VERSION:
            chosen["methodology"] = Methodology(version=methodology)
        settings = load_settings(
            database_url=url,
            llm_api_key=None,
            extensions=extensions,
            replicates=replicates,
            **chosen,
        )
        return run_demo(
            engine, settings, lineup, weeks=2, seed=SEED, stop_at=DEMO_START + timedelta(days=days)
        )
    finally:
        engine.dispose()


def checkpoint(db: Path) -> None:
    """Fold a SQLite file's WAL into it, so that a plain file copy is the whole database."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


class DemoSeasons:
    """Each distinct demo season played once into `folder`; callers get their own copies.

    `folder` may be shared by the pytest-xdist workers of one run: a lock file per season
    makes the first worker to need it play it while the others wait, and a marker written
    last means a season interrupted half-way is played again, never copied."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def once(self, key: str, play: Callable[[Path], Any]) -> tuple[Path, Any]:
        """The folder `play` filled, played once per run for `key`, and what it returned.

        `play` writes its databases into the (empty) folder, WAL folded in, and returns a
        picklable value; callers copy what they change."""
        folder = self._folder / hashlib.sha256(key.encode()).hexdigest()[:16]
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (folder / "played").exists():
                for leftover in folder.iterdir():  # a play interrupted half-way
                    if leftover.is_dir():
                        shutil.rmtree(leftover)
                    elif leftover.name != "lock":
                        leftover.unlink()
                value = play(folder)
                (folder / "value.pickle").write_bytes(pickle.dumps(value))
                (folder / "played").touch()
        return folder, pickle.loads((folder / "value.pickle").read_bytes())

    def _played(
        self, lineup: Lineup, extensions: str, days: int, replicates: int, methodology: str
    ) -> tuple[Path, DemoSummary]:
        key = f"{lineup.model_dump_json()}|{extensions}|{days}|{replicates}"
        if methodology != METHODOLOGY_VERSION:  # v1 seasons keep their keys
            key += f"|{methodology}"

        def play(folder: Path) -> DemoSummary:
            summary = demo_season(folder, lineup, extensions, days, replicates, methodology)
            checkpoint(folder / "demo.db")
            return summary

        folder, summary = self.once(key, play)
        return folder / "demo.db", summary

    def copy(
        self,
        into: Path,
        lineup: Lineup,
        extensions: str,
        days: int,
        replicates: int = 1,
        methodology: str = METHODOLOGY_VERSION,
    ) -> str:
        """The season of these arguments as `into`/demo.db, a copy a test may change; its URL."""
        played, _ = self._played(lineup, extensions, days, replicates, methodology)
        into.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(played, into / "demo.db")
        return f"sqlite:///{into / 'demo.db'}"

    def summary(
        self,
        lineup: Lineup,
        extensions: str,
        days: int,
        replicates: int = 1,
        methodology: str = METHODOLOGY_VERSION,
    ) -> DemoSummary:
        """The `run_demo` summary of the season of these arguments (played if not yet)."""
        return self._played(lineup, extensions, days, replicates, methodology)[1]

    def v2(self, into: Path) -> str:
        """The suite's v2 demo season (`V2_LINEUP`, `V2_DAYS`) as `into`/demo.db; its URL."""
        return self.copy(into, V2_LINEUP, "", V2_DAYS, methodology="v2")

    def v2_summary(self) -> DemoSummary:
        """The `run_demo` summary of the suite's v2 demo season."""
        return self.summary(V2_LINEUP, "", V2_DAYS, methodology="v2")
