"""The schema: Alembic migrations build exactly the SQLModel tables, on SQLite and PostgreSQL."""

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel, select

from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import current_revision, downgrade, head_revision, init_db
from arena.storage.models import MethodologyVersion

EXPECTED_TABLES = {
    "agents",
    "brier_scores",
    "cohorts",
    "decision_attempts",
    "decisions",
    "families",
    "job_run_counts",
    "job_runs",
    "market_holdings",
    "market_snapshot_items",
    "market_snapshots",
    "markets",
    "methodology_versions",
    "portfolio_snapshots",
    "positions",
    "system_logs",
    "trades",
}


def test_init_db_builds_every_table_and_the_v1_row(engine: Engine) -> None:
    tables = set(inspect(engine).get_table_names())
    assert tables >= EXPECTED_TABLES
    assert current_revision(engine) == head_revision()
    with session_scope(engine) as session:
        v1 = session.get(MethodologyVersion, "v1")
        assert v1 is not None
        assert v1.constants["starting_balance"] == "10000"
        assert v1.constants["is_default"] is True


def test_migrations_match_the_models_exactly(engine: Engine) -> None:
    """No drift: autogenerate against the migrated DB finds nothing to change."""
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, SQLModel.metadata)
    assert diff == []


def test_init_db_is_idempotent(engine: Engine) -> None:
    init_db(engine)
    init_db(engine)
    with session_scope(engine) as session:
        assert len(session.exec(select(MethodologyVersion)).all()) == 1


def test_an_older_database_is_brought_up_to_date(db_url: str) -> None:
    """A database at an older revision (here: empty, revision 'base') upgrades to head."""
    eng = create_db_engine(db_url)
    downgrade(eng, "base")
    assert current_revision(eng) is None
    assert not EXPECTED_TABLES & set(inspect(eng).get_table_names())
    init_db(eng)
    assert current_revision(eng) == head_revision()
    assert set(inspect(eng).get_table_names()) >= EXPECTED_TABLES
    eng.dispose()


def test_a_database_never_migrated_has_no_revision(db_url: str) -> None:
    """No version table at all (a fresh database): None, and the engine stays usable (on
    PostgreSQL the failed select aborts its transaction; the reading starts over)."""
    eng = create_db_engine(db_url)
    downgrade(eng, "base")
    with eng.begin() as conn:
        conn.execute(text("DROP TABLE alembic_version"))
    assert current_revision(eng) is None
    assert current_revision(eng) is None
    init_db(eng)
    assert current_revision(eng) == head_revision()
    eng.dispose()
