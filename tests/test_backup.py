"""`arena backup` and `arena restore` on SQLite and PostgreSQL, with retention."""

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.app.cli import main
from arena.core.errors import InputError
from arena.storage.backup import backup, restore
from arena.storage.db import session_scope
from arena.storage.models import Agent, Cohort, MarketHolding
from tests.factories import seed_basic
from tests.faults.invariants import assert_market_counts_match

AT = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)


def cohort_numbers(engine: Engine) -> list[int]:
    with session_scope(engine) as s:
        return sorted(c.number for c in s.exec(select(Cohort)))


def test_backup_then_restore_brings_the_data_back(
    engine: Engine, db_url: str, tmp_path: Path
) -> None:
    seed_basic(engine)
    result = backup(db_url, tmp_path / "b", AT, keep=3)
    assert result.path.exists() and result.size_bytes > 0
    with session_scope(engine) as s:  # a bad write we want to undo: cohort 2 loses its cash
        cohort = s.exec(select(Cohort).where(Cohort.number == 2)).one()
        for agent in s.exec(select(Agent).where(Agent.cohort_id == cohort.id)):
            agent.cash_balance = agent.cash_balance * 0
            s.add(agent)
    engine.dispose()
    restore(db_url, result.path)
    with session_scope(engine) as s:
        assert {a.cash_balance for a in s.exec(select(Agent))} == {9500}
    assert cohort_numbers(engine) == [1, 2]
    # the trigger-kept counts come back as they were, not counted twice by the reload
    assert_market_counts_match(engine)
    with session_scope(engine) as s:
        assert sorted(h.position_count for h in s.exec(select(MarketHolding))) == [2, 2]


def test_retention_keeps_the_newest(engine: Engine, db_url: str, tmp_path: Path) -> None:
    for hours in range(5):
        backup(db_url, tmp_path, AT + timedelta(hours=hours), keep=2)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and names[-1].startswith("arena-20261122T070000Z")


def test_cli_backup_and_refusals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{tmp_path / 'a.db'}")
    with pytest.raises(SystemExit):
        main(["init-db"])
    with pytest.raises(SystemExit) as done:
        main(["backup", "--dir", str(tmp_path / "bk"), "--at", "2026-11-22T00:00:00Z"])
    assert done.value.code == 0
    assert (tmp_path / "bk" / "arena-20261122T000000Z.db").exists()
    with pytest.raises(SystemExit) as refused:
        main(["restore", str(tmp_path / "bk" / "arena-20261122T000000Z.db")])
    assert refused.value.code == 1 and "--yes" in capsys.readouterr().err
    with pytest.raises(InputError):
        restore(f"sqlite:///{tmp_path / 'a.db'}", tmp_path / "missing.db")


def file_size_limit(limit: int) -> Callable[[], None]:
    """A child's setup: writes past `limit` bytes fail with EFBIG (SIGXFSZ ignored, as a
    service manager or `ulimit -f` in a shell that ignores the signal leaves it)."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return apply


def test_backup_under_a_file_size_limit_is_one_line_and_leaves_nothing(
    engine: Engine, db_url: str, tmp_path: Path
) -> None:
    seed_basic(engine)
    engine.dispose()
    folder = tmp_path / "bk"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena",
            "backup",
            "--dir",
            str(folder),
            "--at",
            "2026-11-22T03:00:00Z",
        ],
        env={**os.environ, "ARENA_DATABASE_URL": db_url},
        preexec_fn=file_size_limit(16_384),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    suffix = ".db" if db_url.startswith("sqlite") else ".dump"
    assert str(folder / f"arena-20261122T030000Z{suffix}") in lines[0]
    assert "file-size limit (16,384 bytes" in lines[0] and "unexpected" not in lines[0]
    assert sorted(p.name for p in folder.iterdir()) == []  # no .partial, no -journal
    # and without the limit the same backup is written
    result = backup(db_url, folder, AT, keep=1)
    assert result.size_bytes > 16_384
