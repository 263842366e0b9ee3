"""One migrated SQLite file per test process, copied wherever a test needs a fresh database.

Migrating from empty runs every Alembic revision (~0.3-1 s); a copy of a migrated file takes
well under a millisecond. `sqlite_template` (the fixture behind `db_url`) and the plain helper
functions of modules that build their own databases share this one template.
"""

import atexit
import functools
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db


@functools.cache
def template() -> Path:
    """The process's migrated template (built on first use, removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-template-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "template.db"
    engine = create_db_engine(f"sqlite:///{path}")
    try:
        init_db(engine)
    finally:
        engine.dispose()
    with closing(sqlite3.connect(path)) as conn:  # fold the WAL in, so a plain copy is whole
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def migrated_sqlite(path: Path) -> str:
    """A fresh migrated database at `path` (a copy of the template); its URL."""
    shutil.copyfile(template(), path)
    return f"sqlite:///{path}"
