"""`arena backup` / `arena restore`: consistent copies of the database, with retention.

SQLite uses the online backup API, so a copy is consistent even while the scheduler writes.
PostgreSQL uses `pg_dump --format=custom` (and `pg_restore` to restore) when the client tools
are installed. The password of a PostgreSQL URL goes to the tools through PGPASSWORD, never
on a command line or in a message.
"""

import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy.engine import make_url

from arena.core.errors import ArenaError, ConfigError, InputError

PREFIX = "arena-"


@dataclass(frozen=True)
class BackupResult:
    path: Path
    size_bytes: int
    removed: list[Path]


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
        _pg_tool("pg_dump", url, ["--format=custom", f"--file={target}"])
        suffix = ".dump"
    else:
        raise ConfigError(f"cannot back up a {parsed.get_backend_name()} database", "")
    return BackupResult(target, target.stat().st_size, _retain(directory, suffix, keep))


def restore(url: str, source: Path) -> None:
    """Replace the database's contents with the backup at `source`."""
    if not source.is_file():
        raise InputError(f"backup file {source} not found", "pass a file made by `arena backup`")
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        _sqlite_backup(source, _sqlite_path(url))
    elif parsed.get_backend_name() == "postgresql":
        _pg_tool("pg_restore", url, ["--clean", "--if-exists", "--no-owner", str(source)])
    else:
        raise ConfigError(f"cannot restore a {parsed.get_backend_name()} database", "")


def _sqlite_path(url: str) -> Path:
    database = make_url(url).database
    if not database or database == ":memory:":
        raise ConfigError("an in-memory SQLite database cannot be backed up", "use a file URL")
    return Path(database.removeprefix("file:").split("?", 1)[0])


def _sqlite_backup(source: Path, target: Path) -> None:
    if not source.exists():
        raise InputError(f"database file {source} not found", "run `arena init-db` first")
    partial = target.with_name(target.name + ".partial")
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(partial)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    partial.replace(target)


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
