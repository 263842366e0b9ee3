"""The `arena` command line: working commands, and one clear stderr line on bad input."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.app.cli import main
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db
from tests.factories import seed_basic


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


@pytest.fixture
def sqlite_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    return url


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("arena: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]


def test_init_db_twice_then_export(sqlite_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["init-db"], capsys)[0] == 0
    code, out, _ = run(["init-db"], capsys)
    assert code == 0 and "schema revision" in out
    seed_basic(create_db_engine(sqlite_url))
    code, out, err = run(["export", "trades", "--cohort", "1"], capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith("trade_id,decision_id,cohort_number")
    assert len(out.splitlines()) == 3


def test_init_db_loads_the_lineup_families(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run(["init-db"], capsys)
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        ids = {row[0] for row in conn.execute("SELECT id FROM families")}
    assert {"gpt-5.1", "claude-opus-4.5", "baseline-random"} <= ids


def test_export_to_a_file_and_row_cap_message(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(["init-db"], capsys)
    seed_basic(create_db_engine(sqlite_url))
    target = tmp_path / "snaps.csv"
    code, out, err = run(["export", "snapshots", "--out", str(target), "--limit", "4"], capsys)
    assert code == 0 and out == ""
    assert len(target.read_text().splitlines()) == 5
    assert "row cap of 4 reached" in err
    assert not (tmp_path / "snaps.csv.partial").exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["export", "secrets"], "unknown export table"),
        (["export", "trades", "--cohort", "x"], "--cohort"),
        (["export", "trades", "--since", "yesterday"], "--since"),
        (["export", "trades", "--since", "2026-02-01", "--until", "2026-01-01"], "--since"),
        (["export", "trades", "--format", "xlsx"], "--format"),
        (["export"], "Missing argument"),
        (["frobnicate"], "No such command"),
        (["decide", "--at", "not-a-time"], "--at"),
        (["leaderboard", "--format", "pdf"], "--format"),
    ],
)
def test_bad_input_is_one_clear_line(
    sqlite_url: str, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    run(["init-db"], capsys)
    code, _, err = run(args, capsys)
    assert_one_line_error(code, err, needle)


def test_bad_database_url_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", "not a url")
    code, _, err = run(["init-db"], capsys)
    assert_one_line_error(code, err, "ARENA_DATABASE_URL")


def test_unreachable_postgres_is_one_line_without_the_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", "postgresql+psycopg://u:hunter2@127.0.0.1:9/x")
    code, _, err = run(["init-db"], capsys)
    assert_one_line_error(code, err, "database error")
    assert "hunter2" not in err


def test_locked_database_is_one_clear_line(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another process holds the write lock: the command waits, then says so, loses nothing."""
    run(["init-db"], capsys)
    monkeypatch.setenv("ARENA_SQLITE_BUSY_TIMEOUT_MS", "300")
    holder = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute(
        "INSERT INTO system_logs (at, level, source, message, context) "
        "VALUES ('2026-11-01 00:00:00', 'INFO', 'test', 'held', '{}')"
    )
    try:
        from arena.config import get_settings
        from arena.storage.db import dispose_engines

        get_settings.cache_clear()
        dispose_engines()
        code, _, err = run(["init-db"], capsys)
        assert_one_line_error(code, err, "locked by another process")
    finally:
        holder.execute("COMMIT")
        holder.close()
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        assert conn.execute("SELECT count(*) FROM system_logs").fetchone() == (1,)


def test_the_console_script_runs_as_a_real_process(tmp_path: Path) -> None:
    env = {"ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'p.db'}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "arena", "init-db"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "arena", "export", "nope"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1
    assert bad.stderr.count("\n") == 1 and "unknown export table" in bad.stderr


def test_init_db_on_a_migrated_engine_fixture_is_fine(tmp_path: Path) -> None:
    eng = create_db_engine(f"sqlite:///{tmp_path / 'x.db'}")
    assert init_db(eng) == init_db(eng)
