"""Schema migrations: `arena init-db` brings any database, empty or older, to the newest schema.

Alembic revisions live in `arena/migrations/versions/`. After migrating, the methodology
version row for v1 is ensured, so cohorts can reference it.
"""

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


def head_revision() -> str:
    script = ScriptDirectory.from_config(alembic_config_for_scripts())
    head = script.get_current_head()
    assert head is not None
    return head


def alembic_config_for_scripts() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply every pending revision in one transaction per revision set."""
    config = alembic_config(engine)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Step the schema back to `revision` ("base" = empty); used to test upgrades from old DBs."""
    config = alembic_config(engine)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, revision)


def init_db(engine: Engine) -> str:
    """Migrate to head and ensure the methodology rows; returns the schema revision."""
    from arena.seed import ensure_methodology_versions

    upgrade(engine)
    ensure_methodology_versions(engine)
    return head_revision()
