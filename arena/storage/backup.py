"""`arena backup` / `arena restore`: consistent copies of the database, with retention.

SQLite uses the online backup API, so a copy is consistent even while the scheduler writes.
PostgreSQL uses `pg_dump --format=custom` (and `pg_restore` to restore) when the client tools
are installed. The password of a PostgreSQL URL goes to the tools through PGPASSWORD, never
on a command line or in a message.

A restore checks its source before it touches the database (it must be an arena database at a
schema revision this code knows, whose schema is exactly what the migrations make at that
revision: `arena.storage.schema_check`), keeps a copy of the database it replaces, and checks
the result; a failed restore puts the kept copy back. See `restore`.
"""

import os
import re
import resource
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import make_url
from sqlmodel import SQLModel

from arena.core.errors import ArenaError, ConfigError, InputError
from arena.storage import models as _models  # noqa: F401  (fills SQLModel.metadata)
from arena.storage.db import SQLITE_BUSY_TIMEOUT_MS, busy_error, create_db_engine
from arena.storage.migrate import alembic_config, current_revision, head_revision
from arena.storage.schema_check import pg_schema_problem, sqlite_schema_problem

PREFIX = "arena-"
KEPT_SUFFIX = ".before-restore"
PARTIAL_SUFFIX = ".partial"
NOT_A_BACKUP_HINT = "pass a file made by `arena backup`"
FOREIGN_SCHEMA_HINT = (
    "restore a backup of an untouched arena database; its schema must be the migrations' alone"
)

# The tables every schema revision has (created by 0001_initial_schema, never dropped); a
# source at the head revision must hold every table of the models.
CORE_TABLES = frozenset(
    {
        "agents",
        "brier_scores",
        "cohorts",
        "decision_attempts",
        "decisions",
        "families",
        "job_runs",
        "market_snapshot_items",
        "market_snapshots",
        "markets",
        "methodology_versions",
        "portfolio_snapshots",
        "positions",
        "system_logs",
        "trades",
    }
)
VERSION_TABLE = "alembic_version"


@dataclass(frozen=True)
class BackupResult:
    path: Path
    size_bytes: int
    removed: list[Path]


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did: the schema revision now in place and where the old data went."""

    revision: str
    current: bool  # the revision is this code's head (no `arena init-db` needed)
    kept: Path | None  # the replaced database's copy; None when there was no database


def backup_name(at: datetime, suffix: str) -> str:
    return f"{PREFIX}{at:%Y%m%dT%H%M%SZ}{suffix}"


def backup(url: str, directory: Path, at: datetime, keep: int) -> BackupResult:
    """Write one backup of the database at `url` into `directory`, then apply retention."""
    if keep < 1:
        raise InputError(f"--keep {keep} must be at least 1", "keep at least the new backup")
    directory.mkdir(parents=True, exist_ok=True)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        target = directory / backup_name(at, ".db")
        _sqlite_backup(_sqlite_path(url), target)
        suffix = ".db"
    elif parsed.get_backend_name() == "postgresql":
        target = directory / backup_name(at, ".dump")
        _pg_backup(url, target)
        suffix = ".dump"
    else:
        raise ConfigError(f"cannot back up a {parsed.get_backend_name()} database", "")
    return BackupResult(target, target.stat().st_size, _retain(directory, suffix, keep))


def restore(url: str, source: Path, busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS) -> RestoreResult:
    """Replace the database's contents with the backup at `source`, safely.

    In order: the source is validated without touching the database (a garbage, foreign or
    unknown-revision file, or one whose schema holds an object the migrations do not make at
    its revision or lacks one they make, is refused with one line naming it); the database is
    copied to a kept file (`<db>.before-restore`, or `<dbname>.before-restore.dump` beside a
    PostgreSQL source; an older kept copy of that name is replaced once the restore has
    succeeded); the source is loaded; the result is checked, and on failure the kept copy is
    put back.
    """
    if not source.is_file():
        raise InputError(f"backup file {source} not found", NOT_A_BACKUP_HINT)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_restore(source, _sqlite_path(url), busy_timeout_ms)
    if parsed.get_backend_name() == "postgresql":
        return _pg_restore(url, source)
    raise ConfigError(f"cannot restore a {parsed.get_backend_name()} database", "")


def known_revisions() -> frozenset[str]:
    """Every Alembic revision in arena/storage/migrations/versions."""
    script = ScriptDirectory.from_config(alembic_config())
    return frozenset(rev.revision for rev in script.walk_revisions())


def arena_schema_problem(tables: Iterable[str], revision: str | None) -> str | None:
    """Why a source with these tables and this revision is no arena database (None: it is).

    Pure: both backends read the tables and revision their own way, then ask this.
    """
    present = set(tables)
    if not present & CORE_TABLES:
        return "it holds none of the arena tables"
    missing = CORE_TABLES - present
    if revision == head_revision():
        missing |= {t for t in SQLModel.metadata.tables if t not in present}
    if missing:
        return f"it lacks the arena tables {', '.join(sorted(missing))}"
    if VERSION_TABLE not in present or not revision:
        return f"it carries no schema revision (no {VERSION_TABLE} row)"
    if revision not in known_revisions():
        return f"its schema revision {revision!r} is not one this version of arena knows"
    return None


def _refusal(source: Path, why: str) -> InputError:
    hint = NOT_A_BACKUP_HINT
    if "schema revision" in why and "not one" in why:
        hint = "restore it with the arena version that wrote it"
    return InputError(
        f"restore refused: {source} is not an arena backup: {why}; the database was not touched",
        hint,
    )


def _schema_refusal(source: Path, problem: str) -> InputError:
    return InputError(
        f"restore refused: {source}: {problem}; the database was not touched", FOREIGN_SCHEMA_HINT
    )


def _failed_check(source: Path, problem: str, tool: str) -> ArenaError:
    return ArenaError(
        f"restore from {source} failed its check afterwards ({problem}); the previous "
        "database was put back",
        f"check the backup file, e.g. with {tool}",
    )


def _put_back(load: Callable[[], None], kept_partial: Path, kept: Path) -> None:
    """Run `load` (the kept copy back in); if that fails too, keep the copy under its name."""
    try:
        load()
    except Exception as exc:
        if kept_partial.exists():
            kept_partial.replace(kept)
        raise ArenaError(
            f"restore failed its check and putting the previous database back failed too ({exc})",
            f"the previous database is kept at {kept}: restore it with `arena restore`",
        ) from exc


def _sqlite_path(url: str) -> Path:
    database = make_url(url).database
    if not database or database == ":memory:":
        raise ConfigError("an in-memory SQLite database cannot be backed up", "use a file URL")
    return Path(database.removeprefix("file:").split("?", 1)[0])


def _partial(path: Path) -> Path:
    return path.with_name(path.name + PARTIAL_SUFFIX)


def _sqlite_backup(source: Path, target: Path) -> None:
    if not source.exists():
        raise InputError(f"database file {source} not found", "run `arena init-db` first")
    partial = _partial(target)
    try:
        try:
            with closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src:
                _sqlite_copy(src, partial)
        except sqlite3.Error as exc:  # even reading writes: a WAL database's `-shm` index
            raise _write_failed(target, source.stat().st_size, f"SQLite: {exc}") from None
        partial.replace(target)
    finally:
        _remove_partial(partial)


def _pg_backup(url: str, target: Path) -> None:
    """pg_dump into `<target>.partial`, renamed to `target` once whole."""
    partial = _partial(target)
    try:
        try:
            _pg_tool("pg_dump", url, ["--format=custom", f"--file={partial}"])
        except ArenaError as exc:
            size = partial.stat().st_size if partial.exists() else 0
            raise _write_failed(target, size, exc.message, exc.hint) from None
        partial.replace(target)
    finally:
        _remove_partial(partial)


def _remove_partial(partial: Path) -> None:
    """A temp file and whatever SQLite kept beside it (a failed copy leaves its journal)."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        partial.with_name(partial.name + suffix).unlink(missing_ok=True)


# A write that stops within this many bytes of the file-size limit was stopped by it.
_LIMIT_SLACK = 1 << 16


def _write_failed(target: Path, size: int, detail: str, hint: str | None = None) -> ArenaError:
    """One line for a backup that could not be written, naming the file and, when it is one
    of them, the cause: the process's file-size limit (`ulimit -f`, RLIMIT_FSIZE, whose write
    fails with EFBIG where SIGXFSZ is ignored) or a full disk. `size`: the bytes the backup
    needs, or those written when it failed."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    free = shutil.disk_usage(target.parent).free
    if limit != resource.RLIM_INFINITY and size + _LIMIT_SLACK > limit:
        return ArenaError(
            f"cannot write the backup {target}: it is larger than this process's file-size "
            f"limit ({limit:,} bytes, `ulimit -f`); nothing was kept",
            "raise the limit (`ulimit -f unlimited`) and run `arena backup` again",
        )
    if free < max(size, _LIMIT_SLACK):
        return ArenaError(
            f"cannot write the backup {target}: the disk is full ({free:,} bytes free); "
            "nothing was kept",
            "free some space, or pass a --dir on another disk",
        )
    return ArenaError(f"cannot write the backup {target}: {detail}; nothing was kept", hint)


def _sqlite_copy(src: sqlite3.Connection, target: Path) -> None:
    """Copy `src` into a new file `target` with the backup API (consistent, whole)."""
    target.unlink(missing_ok=True)
    with closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def _sqlite_restore(source: Path, live: Path, busy_timeout_ms: int) -> RestoreResult:
    """Validate, keep, load through the backup API into the live file, check.

    Why the backup API INTO the live file rather than renaming a new file over it: a rename
    leaves the live `-wal`/`-shm` beside the new file, and SQLite lays the old WAL frames over
    it (the restore silently does not happen, or the file is corrupt). Written through the
    backup API, the restore is one ordinary write transaction on the live database: SQLite's
    own locking and WAL handling apply, a reader mid-transaction keeps its snapshot and sees
    the restored data on its next one, and a failure rolls back to the old contents whole.
    """
    if live.exists() and source.resolve() == live.resolve():
        raise InputError(f"{source} is the database itself", "pass a backup file to restore")
    kept = live.with_name(live.name + KEPT_SUFFIX)
    kept_partial = _partial(kept)
    try:
        with closing(_open_sqlite_source(source)) as src:
            revision = _validate_sqlite(src, source)
            had_database = live.exists() and live.stat().st_size > 0
            if had_database:
                with closing(sqlite3.connect(f"file:{live}?mode=ro", uri=True)) as old:
                    _sqlite_copy(old, kept_partial)
            live.parent.mkdir(parents=True, exist_ok=True)
            _sqlite_load(src, live, busy_timeout_ms)
        problem = _sqlite_result_problem(live, revision)
        if problem:
            _put_back(
                lambda: _sqlite_put_back(
                    kept_partial if had_database else None, live, busy_timeout_ms
                ),
                kept_partial,
                kept,
            )
            raise _failed_check(source, problem, "`sqlite3 FILE 'pragma integrity_check'`")
        if had_database:
            kept_partial.replace(kept)
    finally:
        _remove_partial(kept_partial)
    return RestoreResult(revision, revision == head_revision(), kept if had_database else None)


def _open_sqlite_source(source: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{source}?mode=ro", uri=True)


def _validate_sqlite(src: sqlite3.Connection, source: Path) -> str:
    """The source's schema revision, or a refusal naming what is wrong with it."""
    if source.stat().st_size == 0:
        raise _refusal(source, "it is empty (0 bytes)")
    try:
        check = [row[0] for row in src.execute("PRAGMA quick_check")]
        tables = [r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        revision = None
        if VERSION_TABLE in tables:
            row = src.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchone()
            revision = row[0] if row else None
    except sqlite3.DatabaseError as exc:
        raise _refusal(source, f"SQLite cannot read it ({exc})") from None
    if check != ["ok"]:
        raise _refusal(source, f"it fails SQLite's quick_check ({check[0]})")
    problem = arena_schema_problem(tables, revision)
    if problem or revision is None:
        raise _refusal(source, problem or "it carries no schema revision")
    schema = sqlite_schema_problem(src, str(revision))
    if schema:
        raise _schema_refusal(source, schema)
    return str(revision)


class _Busy(Exception):
    """Raised from the backup's progress callback to stop waiting on a held lock."""


def _give_up_when_busy(status: int, _remaining: int, _total: int) -> None:
    # Python's backup retries a busy step forever; the busy timeout has already been waited
    # out inside the step, so a busy status here means the lock stayed held that long.
    if status in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        raise _Busy


def _sqlite_load(src: sqlite3.Connection, live: Path, busy_timeout_ms: int) -> None:
    """Write `src` over the live database in one transaction of the backup API."""
    with closing(sqlite3.connect(live, timeout=busy_timeout_ms / 1000)) as dst:
        src_page = src.execute("PRAGMA page_size").fetchone()[0]
        dst_page = dst.execute("PRAGMA page_size").fetchone()[0]
        wal = dst.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        if wal and src_page != dst_page:
            raise InputError(
                f"restore refused: the backup's page size ({src_page}) differs from the "
                f"database's ({dst_page}), which SQLite cannot copy over a WAL database",
                f"move {live} away and restore into the empty path",
            )
        try:
            src.backup(dst, progress=_give_up_when_busy)
        except _Busy:
            raise busy_error() from None


def _sqlite_result_problem(live: Path, revision: str) -> str | None:
    """What is wrong with the restored database, read afresh (None: nothing)."""
    with closing(sqlite3.connect(f"file:{live}?mode=ro", uri=True)) as conn:
        try:
            check = [row[0] for row in conn.execute("PRAGMA integrity_check")]
            row = conn.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchone()
        except sqlite3.DatabaseError as exc:
            return str(exc)
    if check != ["ok"]:
        return f"integrity_check: {check[0]}"
    if not row or row[0] != revision:
        return f"schema revision {row[0] if row else None!r} instead of {revision!r}"
    return None


def _sqlite_put_back(kept: Path | None, live: Path, busy_timeout_ms: int) -> None:
    """Load the kept copy back into the live file (no kept copy: empty the file)."""
    if kept is None:
        live.unlink(missing_ok=True)
        for suffix in ("-wal", "-shm"):
            live.with_name(live.name + suffix).unlink(missing_ok=True)
        return
    with closing(sqlite3.connect(f"file:{kept}?mode=ro", uri=True)) as src:
        _sqlite_load(src, live, busy_timeout_ms)


def _pg_restore(url: str, source: Path) -> RestoreResult:
    """Validate the dump, keep the database (pg_dump), load in one transaction, check.

    `pg_restore --single-transaction` makes a failed load roll back whole; the check after it
    (the schema revision and the tables, read through the app's own engine) puts the kept
    dump back if the loaded database is not the arena database the dump promised.
    """
    revision = _validate_dump(source)
    schema = pg_schema_problem(url, revision, source, _pg_dump_schema, _pg_load_schema)
    if schema:
        raise _schema_refusal(source, schema)
    name = make_url(url).database or "database"
    kept = source.resolve().parent / f"{name}{KEPT_SUFFIX}.dump"
    kept_partial = _partial(kept)
    try:
        _pg_tool("pg_dump", url, ["--format=custom", f"--file={kept_partial}"])
        _pg_load(url, source)
        problem = _pg_result_problem(url, revision)
        if problem:
            _put_back(lambda: _pg_load(url, kept_partial), kept_partial, kept)
            raise _failed_check(source, problem, "`pg_restore --list FILE`")
        kept_partial.replace(kept)
    finally:
        _remove_partial(kept_partial)
    return RestoreResult(revision, revision == head_revision(), kept)


_TOC_TABLE = re.compile(r"^\d+; \d+ \d+ TABLE \S+ (\S+) ")


def _validate_dump(source: Path) -> str:
    """The dump's schema revision, or a refusal naming what is wrong with it."""
    listing = _tool_output("pg_restore", ["--list", str(source)])
    if listing is None:
        raise _refusal(source, "pg_restore cannot read it as a custom-format dump")
    tables = {m.group(1) for m in map(_TOC_TABLE.match, listing.splitlines()) if m}
    revision = None
    if VERSION_TABLE in tables:
        data = _tool_output(
            "pg_restore", ["--data-only", f"--table={VERSION_TABLE}", "--file=-", str(source)]
        )
        revision = _copy_first_value(data or "", VERSION_TABLE)
    problem = arena_schema_problem(tables, revision)
    if problem or revision is None:
        raise _refusal(source, problem or "it carries no schema revision")
    return revision


def _copy_first_value(sql: str, table: str) -> str | None:
    """The first row's first column of a table's COPY block in pg_restore's SQL output."""
    lines = sql.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("COPY ") and f"{table} (" in line and index + 1 < len(lines):
            value = lines[index + 1].split("\t", 1)[0]
            return None if value == "\\." else value
    return None


def _pg_load(url: str, dump: Path) -> None:
    _pg_tool(
        "pg_restore",
        url,
        ["--clean", "--if-exists", "--no-owner", "--single-transaction", str(dump)],
    )


def _pg_dump_schema(url: str, target: Path) -> None:
    _pg_tool("pg_dump", url, ["--format=custom", "--schema-only", f"--file={target}"])


def _pg_load_schema(url: str, dump: Path, clean: bool) -> None:
    """The dump's tables, functions, triggers… without rows, into a scratch database (`clean`:
    over the same objects, dropped first)."""
    options = ["--clean", "--if-exists"] if clean else []
    options += ["--schema-only", "--no-owner", "--exit-on-error", "--single-transaction"]
    try:
        _pg_tool("pg_restore", url, [*options, str(dump)])
    except ArenaError as exc:
        raise _schema_refusal(dump, f"its schema does not load ({exc.message})") from None


def _pg_result_problem(url: str, revision: str) -> str | None:
    engine = create_db_engine(url)
    try:
        found = current_revision(engine)
        tables = inspect(engine).get_table_names()
    finally:
        engine.dispose()
    if found != revision:
        return f"schema revision {found!r} instead of {revision!r}"
    return arena_schema_problem(tables, found)


def _tool_output(tool: str, args: list[str]) -> str | None:
    """A client tool's stdout on a file (no database), None when it fails."""
    executable = shutil.which(tool)
    if executable is None:
        raise ConfigError(f"{tool} not found", "install the PostgreSQL client tools")
    done = subprocess.run(
        [executable, *args], capture_output=True, text=True, errors="replace", timeout=3600
    )
    return done.stdout if done.returncode == 0 else None


def _pg_tool(tool: str, url: str, args: list[str]) -> None:
    executable = shutil.which(tool)
    if executable is None:
        raise ConfigError(f"{tool} not found", "install the PostgreSQL client tools")
    parsed = make_url(url)
    env = {**os.environ}
    if parsed.password:
        env["PGPASSWORD"] = str(parsed.password)
    dsn = parsed.set(drivername="postgresql", password=None).render_as_string(hide_password=False)
    database_arg = ["--dbname", dsn]
    done = subprocess.run(
        [executable, *args, *database_arg], env=env, capture_output=True, text=True, timeout=3600
    )
    if done.returncode != 0:
        detail = " ".join(done.stderr.split())[:300]
        if parsed.password:
            detail = detail.replace(str(parsed.password), "[redacted]")
        raise ArenaError(f"{tool} failed: {detail}", "check the database URL and permissions")


def _retain(directory: Path, suffix: str, keep: int) -> list[Path]:
    """Delete all but the newest `keep` backups of this kind (names sort by time)."""
    backups = sorted(directory.glob(f"{PREFIX}*{suffix}"))
    removed = backups[:-keep]
    for path in removed:
        path.unlink()
    return removed
