"""`arena restore` checks its source before it swaps, keeps what it replaces, and never leaves a
half-restored database or temp files.

Every test drives the real CLI on real SQLite files or on the suite's PostgreSQL server.
"""

import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.app.cli import main
from arena.config import get_settings
from arena.storage.backup import backup
from arena.storage.db import create_db_engine, session_scope
from arena.storage.models import Agent, Cohort
from tests.factories import seed_basic
from tests.pg import PostgresCluster

UNKNOWN_REVISION = "ffffffffffff"
AT = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run `arena ARGS`; returns (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(args)
    out = capsys.readouterr()
    code = done.value.code
    return (code if isinstance(code, int) else 1), out.out, out.err


def sqlite_dump(path: Path) -> list[str]:
    """Every schema statement and row of a SQLite file, read afresh (WAL included)."""
    with closing(sqlite3.connect(path)) as conn:
        return list(conn.iterdump())


def integrity(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("PRAGMA integrity_check")]


def leftovers(*folders: Path) -> list[str]:
    """Temp files a restore must not leave behind."""
    return sorted(
        p.name for folder in folders for p in folder.iterdir() if p.name.endswith(".partial")
    )


def zero_cash(engine: Engine, number: int) -> None:
    """A write we may want to undo: cohort `number`'s agents lose their cash."""
    with session_scope(engine) as s:
        cohort = s.exec(select(Cohort).where(Cohort.number == number)).one()
        for agent in s.exec(select(Agent).where(Agent.cohort_id == cohort.id)):
            agent.cash_balance = agent.cash_balance * 0
            s.add(agent)


@pytest.fixture
def live(sqlite_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A seeded arena SQLite database the CLI is pointed at (its WAL folded in)."""
    path = tmp_path / "live" / "arena.db"
    path.parent.mkdir()
    shutil.copyfile(sqlite_template, path)
    engine = create_db_engine(f"sqlite:///{path}")
    seed_basic(engine)
    engine.dispose()
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{path}")
    yield path


def cli_backup(folder: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code, _, err = run_cli(["backup", "--dir", str(folder), "--at", "2026-11-22T03:00:00Z"], capsys)
    assert code == 0, err
    (made,) = folder.iterdir()
    return made


# --- sources that are not arena backups ------------------------------------------------------


def empty_file(path: Path, _backup: Path) -> None:
    path.write_bytes(b"")


def random_bytes(path: Path, _backup: Path) -> None:
    path.write_bytes(os.urandom(64 * 1024))


def unrelated_sqlite(path: Path, _backup: Path) -> None:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('not an arena database')")
        conn.commit()


def unknown_revision(path: Path, backup_file: Path) -> None:
    """The arena tables, but a schema revision no version of this code wrote."""
    shutil.copyfile(backup_file, path)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE alembic_version SET version_num = ?", (UNKNOWN_REVISION,))
        conn.commit()


def no_revision(path: Path, backup_file: Path) -> None:
    shutil.copyfile(backup_file, path)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("DROP TABLE alembic_version")
        conn.commit()


BAD_SOURCES = [
    pytest.param(empty_file, "empty", id="zero-bytes"),
    pytest.param(random_bytes, "cannot read it", id="random-bytes"),
    pytest.param(unrelated_sqlite, "none of the arena tables", id="unrelated-sqlite"),
    pytest.param(unknown_revision, UNKNOWN_REVISION, id="unknown-revision"),
    pytest.param(no_revision, "no schema revision", id="no-revision"),
]


@pytest.mark.parametrize(("make", "why"), BAD_SOURCES)
def test_sqlite_restore_refuses_what_is_not_an_arena_backup(
    make: object,
    why: str,
    live: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = cli_backup(tmp_path / "bk", capsys)
    source = tmp_path / "src" / "candidate.bin"
    source.parent.mkdir()
    make(source, good)  # type: ignore[operator]
    before = sqlite_dump(live)
    code, out, err = run_cli(["restore", str(source), "--yes"], capsys)
    assert code != 0 and "restored" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(source) in lines[0] and why in lines[0] and "arena backup" in lines[0]
    assert sqlite_dump(live) == before and integrity(live) == ["ok"]
    assert leftovers(live.parent, source.parent) == []
    assert not (live.parent / "arena.db.before-restore").exists()


def test_sqlite_restore_keeps_the_replaced_database(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = cli_backup(tmp_path / "bk", capsys)
    engine = create_db_engine(f"sqlite:///{live}")
    zero_cash(engine, 2)
    engine.dispose()
    replaced = sqlite_dump(live)
    code, out, err = run_cli(["restore", str(good), "--yes"], capsys)
    assert code == 0, err
    kept = live.parent / "arena.db.before-restore"
    assert str(kept) in out and "restored" in out
    assert sqlite_dump(live) == sqlite_dump(good) and integrity(live) == ["ok"]
    assert sqlite_dump(kept) == replaced  # the old rows, cohort 2 without its cash
    assert leftovers(live.parent, good.parent) == []
    # and the kept copy undoes the restore
    code, out, err = run_cli(["restore", str(kept), "--yes"], capsys)
    assert code == 0, err
    assert sqlite_dump(live) == replaced
    assert sqlite_dump(kept) == sqlite_dump(good)


def test_sqlite_restore_with_a_reader_mid_transaction(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dashboard page mid-read holds the WAL open: the restore still takes effect whole
    (or is refused with one line), never the old WAL frames laid over the restored file."""
    good = cli_backup(tmp_path / "bk", capsys)
    reader = sqlite3.connect(live, isolation_level=None)
    try:
        reader.execute("BEGIN")
        seen = reader.execute("SELECT count(*) FROM agents").fetchone()[0]
        engine = create_db_engine(f"sqlite:///{live}")
        zero_cash(engine, 1)  # WAL frames the open reader keeps from being checkpointed
        zero_cash(engine, 2)
        engine.dispose()
        replaced = sqlite_dump(live)
        assert (live.parent / "arena.db-wal").stat().st_size > 0
        code, _out, err = run_cli(["restore", str(good), "--yes"], capsys)
        if code == 0:
            assert sqlite_dump(live) == sqlite_dump(good) and integrity(live) == ["ok"]
            assert sqlite_dump(live.parent / "arena.db.before-restore") == replaced
        else:
            assert len(err.strip().splitlines()) == 1, err
            assert sqlite_dump(live) == replaced
        assert reader.execute("SELECT count(*) FROM agents").fetchone()[0] == seen
        reader.execute("COMMIT")
    finally:
        reader.close()
    # the next write by the app keeps what is there, whole
    engine = create_db_engine(f"sqlite:///{live}")
    with session_scope(engine) as s:
        cashes = {a.cash_balance for a in s.exec(select(Agent))}
    engine.dispose()
    assert cashes == ({9500} if code == 0 else {0})
    engine = create_db_engine(f"sqlite:///{live}")
    with engine.begin() as conn:
        conn.execute(text("UPDATE families SET display_name = display_name"))
    engine.dispose()
    assert integrity(live) == ["ok"]
    assert leftovers(live.parent, good.parent) == []


def test_sqlite_restore_puts_the_database_back_when_the_result_fails_its_check(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A backup whose index disagrees with its table passes quick_check but not
    integrity_check: the restore is undone and says so in one line. (The index's schema is
    the migrations' own, so the schema check lets it through: only its entries are wrong.)"""
    good = cli_backup(tmp_path / "bk", capsys)
    source = tmp_path / "src" / "bad-index.db"
    source.parent.mkdir()
    shutil.copyfile(good, source)
    index = "ix_markets_category"
    with closing(sqlite3.connect(source)) as conn:
        (original,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = ?", (index,)
        ).fetchone()
    for step in (f"CREATE INDEX {index} ON markets (question)", None, original):
        with closing(sqlite3.connect(source)) as conn:  # each step on a freshly read schema
            if step is None:  # the index's entries built from the wrong column
                conn.execute(f"REINDEX {index}")
            else:
                conn.execute("PRAGMA writable_schema = ON")
                conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (step, index))
            conn.commit()
    with closing(sqlite3.connect(source)) as conn:
        assert [r[0] for r in conn.execute("PRAGMA quick_check")] == ["ok"]
        assert [r[0] for r in conn.execute("PRAGMA integrity_check")] != ["ok"]
    before = sqlite_dump(live)
    code, out, err = run_cli(["restore", str(source), "--yes"], capsys)
    assert code != 0 and "restored" not in out
    (line,) = err.strip().splitlines()
    assert str(source) in line and "put back" in line
    assert sqlite_dump(live) == before and integrity(live) == ["ok"]
    assert leftovers(live.parent, source.parent) == []


def test_sqlite_restore_into_a_missing_database(
    tmp_path: Path, live: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = cli_backup(tmp_path / "bk", capsys)
    fresh = tmp_path / "fresh" / "arena.db"
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{fresh}")
    get_settings.cache_clear()
    code, out, err = run_cli(["restore", str(good), "--yes"], capsys)
    assert code == 0, err
    assert "no database to keep" in out
    assert sqlite_dump(fresh) == sqlite_dump(good) and integrity(fresh) == ["ok"]
    assert sorted(p.name for p in fresh.parent.iterdir()) == ["arena.db"]


# --- PostgreSQL ------------------------------------------------------------------------------


def pg_fingerprint(url: str) -> dict[str, object]:
    """Row counts of the arena tables, the agents' cash and the schema revision."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as conn:
            counts = {
                t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar()
                for t in ("cohorts", "agents", "markets", "trades", "positions", "brier_scores")
            }
            cash = sorted(
                str(v) for v in conn.execute(text("SELECT cash_balance FROM agents")).scalars()
            )
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    finally:
        engine.dispose()
    return {"counts": counts, "cash": cash, "revision": revision}


@pytest.fixture
def pg_live(
    pg_cluster: PostgresCluster, pg_template: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """A seeded arena PostgreSQL database the CLI is pointed at."""
    url = pg_cluster.new_database(template=pg_template)
    engine = create_db_engine(url)
    seed_basic(engine)
    engine.dispose()
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    try:
        yield url
    finally:
        pg_cluster.drop_database(url)


def pg_dump_of(url: str, folder: Path) -> Path:
    return backup(url, folder, AT, keep=1).path


def pg_foreign_dump(cluster: PostgresCluster, folder: Path) -> Path:
    url = cluster.new_database()
    try:
        engine = create_db_engine(url)
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE notes (id serial PRIMARY KEY, body text)"))
            conn.execute(text("INSERT INTO notes (body) VALUES ('not an arena database')"))
        engine.dispose()
        return pg_dump_of(url, folder)
    finally:
        cluster.drop_database(url)


def pg_unknown_revision_dump(cluster: PostgresCluster, template: str, folder: Path) -> Path:
    url = cluster.new_database(template=template)
    try:
        engine = create_db_engine(url)
        with engine.begin() as conn:
            conn.execute(
                text("UPDATE alembic_version SET version_num = :v"), {"v": UNKNOWN_REVISION}
            )
        engine.dispose()
        return pg_dump_of(url, folder)
    finally:
        cluster.drop_database(url)


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("zero-bytes", "pg_restore cannot read it"),
        ("random-bytes", "pg_restore cannot read it"),
        ("foreign-dump", "none of the arena tables"),
        ("unknown-revision", UNKNOWN_REVISION),
    ],
    ids=["zero-bytes", "random-bytes", "foreign-dump", "unknown-revision"],
)
def test_pg_restore_refuses_what_is_not_an_arena_dump(
    kind: str,
    why: str,
    pg_live: str,
    pg_cluster: PostgresCluster,
    pg_template: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    if kind == "zero-bytes":
        source = folder / "candidate.dump"
        source.write_bytes(b"")
    elif kind == "random-bytes":
        source = folder / "candidate.dump"
        source.write_bytes(os.urandom(64 * 1024))
    elif kind == "foreign-dump":
        source = pg_foreign_dump(pg_cluster, folder)
    else:
        source = pg_unknown_revision_dump(pg_cluster, pg_template, folder)
    before = pg_fingerprint(pg_live)
    code, out, err = run_cli(["restore", str(source), "--yes"], capsys)
    assert code != 0 and "restored" not in out
    (line,) = err.strip().splitlines()
    assert str(source) in line and why in line
    assert pg_fingerprint(pg_live) == before
    assert sorted(p.name for p in folder.iterdir()) == [source.name]


def test_pg_restore_keeps_the_replaced_database(
    pg_live: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = cli_backup(tmp_path / "bk", capsys)
    restored = pg_fingerprint(pg_live)
    engine = create_db_engine(pg_live)
    zero_cash(engine, 2)
    engine.dispose()
    replaced = pg_fingerprint(pg_live)
    assert replaced != restored
    code, out, err = run_cli(["restore", str(good), "--yes"], capsys)
    assert code == 0, err
    name = pg_live.rsplit("/", 1)[1]
    kept = good.parent / f"{name}.before-restore.dump"
    assert str(kept) in out and kept.is_file()
    assert pg_fingerprint(pg_live) == restored
    assert sorted(p.name for p in good.parent.iterdir()) == sorted([good.name, kept.name])
    # the kept dump holds the replaced rows: restoring it undoes the restore
    code, out, err = run_cli(["restore", str(kept), "--yes"], capsys)
    assert code == 0, err
    assert pg_fingerprint(pg_live) == replaced
