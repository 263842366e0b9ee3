"""A full disk or a read-only database: the job fails loudly and nothing is half-written."""

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlmodel import select

from arena.app.cli import main
from arena.engine.market_sync import sync_markets
from arena.sim.world import SimulatedWorld
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import init_db
from arena.storage.models import Market, SystemLog
from tests.factories import WEEK1


def _cap_pages(engine: Engine, pages: int) -> None:
    """Make SQLite report 'database or disk is full' once the file reaches `pages` pages."""

    @event.listens_for(engine, "connect")
    def _limit(dbapi_conn: object, _record: object) -> None:
        dbapi_conn.execute(f"PRAGMA max_page_count = {pages}")  # type: ignore[attr-defined]


def test_disk_full_during_a_sync_writes_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'full.db'}"
    setup = create_db_engine(url)
    init_db(setup)
    with setup.connect() as conn:
        used = conn.exec_driver_sql("PRAGMA page_count").scalar()
    setup.dispose()
    engine = create_db_engine(url)
    _cap_pages(engine, int(used or 0) + 3)
    world = SimulatedWorld(1, WEEK1, n_initial=400)
    with pytest.raises(OperationalError, match="full"):
        sync_markets(engine, world, WEEK1 + timedelta(hours=1), 500)
    with session_scope(engine) as s:
        assert s.exec(select(Market)).all() == []
        assert s.exec(select(SystemLog)).all() == []


def test_read_only_database_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "ro.db"
    eng = create_db_engine(f"sqlite:///{db}")
    init_db(eng)
    eng.dispose()
    # root ignores file modes, so open the file read-only through SQLite's URI instead
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///file:{db}?mode=ro&uri=true")
    with pytest.raises(SystemExit) as exited:
        main(["start-cohort", "--at", "2026-11-22T00:00:00Z"])
    err = capsys.readouterr().err
    assert exited.value.code == 1
    assert err.count("\n") == 1 and "database error" in err and "readonly" in err.replace("-", "")
    check = create_db_engine(f"sqlite:///{db}")
    with check.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM cohorts").scalar() == 0
