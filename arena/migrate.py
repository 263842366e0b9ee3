"""Schema migrations: `arena init-db` brings any database, empty or older, to the newest schema.

Alembic revisions live in `arena/migrations/versions/`. After migrating, the methodology
version row for v1 is ensured, so cohorts can reference it.
"""

from collections.abc import Callable
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

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


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _migrate(engine: Engine, step: Callable[[Config, str], None], revision: str) -> None:
    """Run one Alembic command on `engine`, in one transaction."""
    config = alembic_config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        step(config, revision)


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply every pending revision."""
    _migrate(engine, command.upgrade, revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Step the schema back to `revision` ("base" = empty); used to test upgrades from old DBs."""
    _migrate(engine, command.downgrade, revision)


def init_db(engine: Engine) -> str:
    """Migrate to head and ensure the methodology rows; returns the schema revision."""
    from arena.seed import ensure_methodology_versions

    upgrade(engine)
    ensure_methodology_versions(engine)
    return head_revision()
