"""The database a command runs on: the configured engine, refusing a missing SQLite file."""

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from arena.storage.db import Role


def open_engine(role: "Role" = "writer", *, create: bool = False) -> "Engine":
    """The configured database's engine; a command that only reads takes a reader's.

    Why a reader: on SQLite a writer's transaction takes the write lock as it begins, so
    `arena export trades | less` on a writer would hold the scheduler's writes off until the
    pager quit (and past the busy timeout, fail them).

    Only a command that builds the schema (`create`: init-db, demo) may create a SQLite file;
    any other would leave an empty file (and its folder) behind and fail on its first table.
    """
    from arena.config import get_settings
    from arena.storage.db import get_engine

    url = get_settings().database_url
    if not create:
        _require_sqlite_file(url)
    return get_engine(url, role=role)


def _require_sqlite_file(url: str) -> None:
    """Refuse a SQLite URL whose file does not exist, naming the file or its missing folder."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from arena.core.errors import ConfigError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return  # get_engine names a malformed URL itself
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return
    if database.startswith("file:"):
        return
    path = Path(database).expanduser()
    if path.exists():
        return
    what = (
        f"database file {path} does not exist"
        if path.parent.is_dir()
        else f"database folder {path.parent} does not exist (for {path})"
    )
    raise ConfigError(what, "run `arena init-db` to create it, or fix ARENA_DATABASE_URL")
