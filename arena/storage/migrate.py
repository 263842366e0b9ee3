"""Schema migrations: `arena init-db` brings any database, empty or older, to the newest schema.

Alembic revisions live in `arena/storage/migrations/versions/`. After migrating, the methodology
version row for v1 is ensured, so cohorts can reference it.
"""

from collections.abc import Callable
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def alembic_config() -> Config:
    """Alembic's configuration: only where the revisions live (env.py gets the connection)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


_VERSION = text("SELECT version_num FROM alembic_version")


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, None when it was never migrated.

    Why a plain select first: the dashboard checks this on every page run, and Alembic's own
    reading (a migration context, a table-existence query) costs two to four times as much.
    Any failure of the select (no such table, or anything else) gets Alembic's reading,
    which tells a missing table from a real error.
    """
    with engine.connect() as conn:
        try:
            return conn.execute(_VERSION).scalar()
        except DBAPIError:
            conn.rollback()  # PostgreSQL refuses anything more in a failed transaction
        return MigrationContext.configure(conn).get_current_revision()


def _migrate(engine: Engine, step: Callable[[Config, str], None], revision: str) -> None:
    """Run one Alembic command on `engine`, in one transaction.

    On SQLite, foreign keys are switched off around the transaction and checked before it
    commits (SQLite's procedure for altering a table: a batch migration rebuilds a table by
    copy, drop and rename, and the drop would otherwise be refused while rows reference it).
    A violation found by the check rolls everything back.
    """
    config = alembic_config()
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        if sqlite and raw is not None:  # before any statement: a pragma inside BEGIN is ignored
            raw.execute("PRAGMA foreign_keys = OFF")
        try:
            with conn.begin():
                before = MigrationContext.configure(conn).get_current_revision()
                config.attributes["connection"] = conn
                step(config, revision)
                after = MigrationContext.configure(conn).get_current_revision()
                if sqlite and after != before:  # the check reads every table: only after work
                    _check_foreign_keys(conn)
        finally:
            if sqlite and raw is not None:
                raw.execute("PRAGMA foreign_keys = ON")


def _check_foreign_keys(conn: Connection) -> None:
    """Raise (rolling the migration back) if any row references a missing parent."""
    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        table, rowid, parent, _ = broken[0]
        raise RuntimeError(
            f"migration left {len(broken)} broken foreign key(s), e.g. {table} row {rowid} "
            f"→ {parent}; rolled back"
        )


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply every pending revision."""
    _migrate(engine, command.upgrade, revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Step the schema back to `revision` ("base" = empty); used to test upgrades from old DBs."""
    _migrate(engine, command.downgrade, revision)


def init_db(engine: Engine) -> str:
    """Migrate to head and ensure the methodology rows; returns the schema revision."""
    from arena.storage.seed import ensure_methodology_versions

    upgrade(engine)
    ensure_methodology_versions(engine)
    return head_revision()
