"""The demo's fast path and its background season.

A copied snapshot pass (`carry_forward`) must write exactly what a real pass writes, so the
season with copies equals the season without, row for row; a season stopped early is told
apart from a finished one.
"""

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Table, func, select
from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from arena.app import demo, demo_launch
from arena.app.demo import DEMO_START, run_demo
from arena.config import load_settings
from arena.engine import jobs
from arena.engine.jobs import record_run
from arena.lineup import load_lineup
from arena.storage import tables
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db
from tests.dashboard_caches import clear_dashboard_caches
from tests.stated_season import DemoSeasons, checkpoint

ROOT = Path(__file__).resolve().parents[1]
SEED = 5
UNTIL = DEMO_START + timedelta(days=2)  # the week's decisions, eight syncs, 288 passes


def play(path: Path, *, carry: bool) -> Engine:
    url = f"sqlite:///{path}"
    engine = create_db_engine(url)
    init_db(engine)
    settings = load_settings(database_url=url, llm_api_key=None)
    run_demo(
        engine,
        settings,
        load_lineup(None),
        weeks=1,
        seed=SEED,
        stop_at=UNTIL,
        carry=carry,
        finish=False,  # half-played, as a killed `make demo` leaves it
    )
    return engine


def play_both(folder: Path) -> None:
    """Both seasons into `folder` (fast.db, slow.db), each WAL folded in."""
    for name, carry in (("fast", True), ("slow", False)):
        play(folder / f"{name}.db", carry=carry).dispose()
        checkpoint(folder / f"{name}.db")


@pytest.fixture(scope="module")
def seasons(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, Engine]]:
    """The same two days played with copied passes and with every pass valued afresh: copies
    of the pair played once per test run (`DemoSeasons.once`), not once per xdist worker
    running one of these tests."""
    played, _ = demo_seasons.once(f"test_demo_background: seed {SEED}, carry and not", play_both)
    folder = tmp_path_factory.mktemp("carry")
    for name in ("fast.db", "slow.db"):
        shutil.copyfile(played / name, folder / name)
    fast = create_db_engine(f"sqlite:///{folder / 'fast.db'}")
    slow = create_db_engine(f"sqlite:///{folder / 'slow.db'}")
    try:
        yield fast, slow
    finally:
        fast.dispose()
        slow.dispose()


def rows(engine: Engine, table: Table, *skip: str) -> list[tuple[Any, ...]]:
    columns = [c for c in table.c if c.name not in skip]
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(*columns).order_by(*table.primary_key))]


# Audit columns a replay never reproduces: claim owners, row creation instants, latencies.
AUDIT = ("owner", "claimed_at", "claim_token", "created_at", "latency_ms", "updated_at")


@pytest.mark.parametrize(
    "table",
    [
        tables.PORTFOLIO_SNAPSHOTS,
        tables.PORTFOLIO_ROLLUPS,
        tables.POSITIONS,
        tables.COHORTS,
        tables.JOB_RUNS,
        tables.JOB_RUN_COUNTS,
        tables.SYSTEM_LOGS,
        tables.AGENTS,
        tables.TRADES,
    ],
    ids=lambda t: t.name,
)
def test_copied_passes_write_what_real_passes_write(
    seasons: tuple[Engine, Engine], table: Table
) -> None:
    fast, slow = seasons
    copied, valued = rows(fast, table, *AUDIT), rows(slow, table, *AUDIT)
    assert len(copied) > 0
    assert copied == valued


def test_most_passes_were_copied(seasons: tuple[Engine, Engine]) -> None:
    """The fast season really took the fast path: its passes marked no position live."""
    fast, _ = seasons
    runs = tables.JOB_RUNS
    with fast.connect() as conn:
        snapshot_runs = conn.execute(select(runs.c.counts).where(runs.c.job == "snapshot")).all()
    assert len(snapshot_runs) == 2 * 144


# --------------------------------------------------------------------------------------------
# make demo's launcher: finished seasons are reused, anything else rebuilt


def test_the_launcher_names_the_demo_owner_and_bundle_job_right() -> None:
    assert demo_launch.DEMO_OWNER == demo.DEMO_OWNER
    assert demo_launch.BUNDLE == jobs.BUNDLE


def test_a_half_played_season_is_not_finished_and_is_rebuilt(
    seasons: tuple[Engine, Engine], tmp_path: Path
) -> None:
    fast, _ = seasons
    copy = snapshot_of(fast, tmp_path / "demo.db")
    assert not demo_launch.season_finished(copy)
    assert demo_launch.prepare(copy)  # rebuilt: a fresh schema, no cohort
    engine = create_db_engine(f"sqlite:///{copy}")
    try:
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(tables.COHORTS)).scalar() == 0
    finally:
        engine.dispose()


def test_a_finished_season_is_reused(seasons: tuple[Engine, Engine], tmp_path: Path) -> None:
    fast, _ = seasons
    copy = snapshot_of(fast, tmp_path / "demo.db")
    engine = create_db_engine(f"sqlite:///{copy}")
    try:
        with engine.begin() as conn:  # the final bundle run `run_demo` records
            record_run(conn, jobs.BUNDLE, UNTIL, UNTIL, demo.DEMO_OWNER, {})
    finally:
        engine.dispose()
    assert demo_launch.season_finished(copy)
    assert not demo_launch.prepare(copy)
    assert demo_launch.season_finished(copy)  # untouched


def test_no_file_or_a_file_without_schema_is_not_finished(tmp_path: Path) -> None:
    assert not demo_launch.season_finished(tmp_path / "missing.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all")
    assert not demo_launch.season_finished(junk)
    assert demo_launch.prepare(junk) and not demo_launch.season_finished(junk)


def test_make_demo_serves_at_once_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    """The launcher as `make demo` runs it: health answers while the season plays, the
    schema exists before; SIGINT to the group (Ctrl-C) leaves no process and a half-played,
    unfinished database that the next launch rebuilds."""
    database = tmp_path / "demo.db"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    command = [sys.executable, "-m", "arena.app.demo_launch", "--database", str(database)]
    launcher = subprocess.Popen(
        [*command, "--port", str(port), "--", "--weeks", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not healthy(port):
            assert launcher.poll() is None, launcher.stdout.read() if launcher.stdout else ""
            assert time.monotonic() < deadline, "no health within 120 s"
            time.sleep(0.2)
        engine = create_db_engine(f"sqlite:///{database}")
        try:
            with engine.connect() as conn:  # the schema is there while the season plays
                conn.execute(select(func.count()).select_from(tables.COHORTS)).scalar()
        finally:
            engine.dispose()
    finally:
        os.killpg(launcher.pid, signal.SIGINT)
        launcher.wait(60)
    time.sleep(1)
    with pytest.raises(ProcessLookupError):
        os.killpg(launcher.pid, 0)
    assert not healthy(port)
    assert not demo_launch.season_finished(database)
    assert (tmp_path / "demo.log").exists()


def snapshot_of(engine: Engine, copy: Path) -> Path:
    """A copy of the season's SQLite file (the backup API: consistent, WAL included)."""
    source = sqlite3.connect(str(engine.url.database))
    target = sqlite3.connect(copy)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    return copy


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
            return bool(r.read() == b"ok")
    except OSError:
        return False


# --------------------------------------------------------------------------------------------
# The dashboard over a half-played season


def page_files() -> list[str]:
    """Every page file dashboard.py registers (app_pages/)."""
    entry = (ROOT / "dashboard.py").read_text()
    return sorted(set(re.findall(r"st\.Page\(\s*\"([\w/]+\.py)\"", entry)))


@pytest.fixture
def half_played(
    seasons: tuple[Engine, Engine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Engine]:
    """The dashboard pointed at a copy of two days of a one-week season (no stored analyses,
    cohort deciding, no final runs): what `make demo` serves while the season plays."""
    fast, _ = seasons
    copy = snapshot_of(fast, tmp_path / "half.db")
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD", raising=False)
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{copy}")
    clear_dashboard_caches()
    engine = create_db_engine(f"sqlite:///{copy}")
    try:
        yield engine
    finally:
        engine.dispose()
        clear_dashboard_caches()


def test_home_shows_the_season_playing(half_played: Engine) -> None:
    at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=60).run()

    assert not at.exception and not at.error
    text = " ".join(str(m.value) for m in at.markdown)
    assert "still playing" in text
    assert "simulated date 2026-01-05 23:50" in text.replace("\\", "")
    with half_played.connect() as conn:
        decisions = conn.execute(select(func.count()).select_from(tables.DECISIONS)).scalar()
    assert f"{decisions} decisions so far" in text and decisions
    assert "Demo season playing" in text  # the status badge (st.badge is Markdown)


def test_every_page_renders_a_half_played_season(half_played: Engine) -> None:
    pages = page_files()
    assert len(pages) >= 10, pages
    for page in pages:
        at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=60)
        at.switch_page(page)
        at.run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not at.error, (page, [e.value for e in at.error])
        assert at.title, page
