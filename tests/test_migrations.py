"""The schema: Alembic migrations build exactly the SQLModel tables, on SQLite and PostgreSQL."""

import json

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import SQLModel, select

from arena.config import Methodology
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import current_revision, downgrade, head_revision, init_db
from arena.storage.models import Agent, MethodologyVersion
from tests.factories import seed_basic

EXPECTED_TABLES = {
    "agents",
    "brier_scores",
    "cohorts",
    "decision_attempts",
    "decision_books",
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
        assert len(session.exec(select(MethodologyVersion)).all()) == 2  # v1 and v2 (0010)


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


def _counts(eng: Engine) -> dict[str, int]:
    tables = ("agents", "decisions", "trades", "positions", "portfolio_snapshots", "brier_scores")
    with eng.connect() as conn:
        return {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in tables}


def test_replicates_migration_keeps_every_row_and_every_reference(db_url: str) -> None:
    """0009 (agents keyed cohort × family × replicate) on a database with agents that
    decisions, trades, positions, snapshots and Brier rows reference: on SQLite it rebuilds
    `agents` (foreign keys off, checked before commit); nothing is lost either way, every
    agent becomes replicate 1, and foreign keys are enforced again afterwards."""
    eng = create_db_engine(db_url)
    seed_basic(eng)
    before = _counts(eng)
    downgrade(eng, "0008")
    assert "replicate" not in {c["name"] for c in inspect(eng).get_columns("agents")}
    assert _counts(eng) == before
    init_db(eng)
    assert current_revision(eng) == head_revision() and _counts(eng) == before
    with eng.connect() as conn:
        replicates = conn.execute(text("SELECT DISTINCT replicate FROM agents")).scalars().all()
    assert replicates == [1]
    with pytest.raises(IntegrityError), eng.begin() as conn:  # a reference to no agent
        conn.execute(text("UPDATE decisions SET agent_id = 999999"))
    with session_scope(eng) as s:  # a second replicate is now allowed, a duplicate is not
        agent = s.exec(select(Agent)).first()
        assert agent is not None
        s.add(Agent(**{**agent.model_dump(exclude={"id"}), "replicate": 2}))
    with pytest.raises(IntegrityError), session_scope(eng) as s:
        s.add(Agent(**{**agent.model_dump(exclude={"id"}), "replicate": 2}))
        s.flush()
    eng.dispose()


def test_the_replicates_downgrade_refuses_to_merge_replicates(db_url: str) -> None:
    """Back to 0008 while a cohort has two agents of one family: the old unique key refuses
    it and the whole downgrade rolls back, replicates intact."""
    eng = create_db_engine(db_url)
    seed_basic(eng)
    with session_scope(eng) as s:
        agent = s.exec(select(Agent)).first()
        assert agent is not None
        s.add(Agent(**{**agent.model_dump(exclude={"id"}), "replicate": 2}))
    with pytest.raises(IntegrityError):
        downgrade(eng, "0008")
    assert current_revision(eng) == head_revision()
    with eng.connect() as conn:
        assert conn.execute(text("SELECT max(replicate) FROM agents")).scalar_one() == 2
    eng.dispose()


def test_the_decision_books_migration_goes_down_and_up(db_url: str) -> None:
    """0011 down drops `decision_books` and `markets.fee_schedule` (markets keep their rows);
    up brings both back, the (snapshot, token) key included."""
    eng = create_db_engine(db_url)
    seed_basic(eng)
    before = _counts(eng)
    downgrade(eng, "0010")
    assert "decision_books" not in inspect(eng).get_table_names()
    assert "fee_schedule" not in {c["name"] for c in inspect(eng).get_columns("markets")}
    assert _counts(eng) == before
    init_db(eng)
    assert current_revision(eng) == head_revision()
    assert inspect(eng).get_pk_constraint("decision_books")["constrained_columns"] == [
        "snapshot_id",
        "token_id",
    ]
    assert "fee_schedule" in {c["name"] for c in inspect(eng).get_columns("markets")}
    eng.dispose()


def test_the_book_fill_migration_goes_down_and_up(db_url: str) -> None:
    """0012 down drops `trades.book_fill` (trades keep their rows); up brings it back NULL on
    every existing trade, so a v1 trade reads as before."""
    eng = create_db_engine(db_url)
    seed_basic(eng)
    before = _counts(eng)
    downgrade(eng, "0011")
    assert "book_fill" not in {c["name"] for c in inspect(eng).get_columns("trades")}
    assert _counts(eng) == before
    init_db(eng)
    assert current_revision(eng) == head_revision()
    assert _counts(eng) == before
    with eng.connect() as conn:
        filled = conn.execute(text("SELECT count(*) FROM trades WHERE book_fill IS NOT NULL"))
        assert filled.scalar_one() == 0
    eng.dispose()


def test_the_late_entry_migration_goes_down_and_up(db_url: str) -> None:
    """0013 down restores the plain week-start and number uniques (cohorts keep their rows);
    up makes them partial to live cohorts and adds a shadow's key: a second live cohort of a
    week is still refused, a shadow of it is not, and a second shadow per family is."""
    eng = create_db_engine(db_url)
    seed_basic(eng)
    before = _counts(eng)
    downgrade(eng, "0012")
    assert "late_entry_of" not in {c["name"] for c in inspect(eng).get_columns("cohorts")}
    assert _counts(eng) == before
    init_db(eng)
    assert current_revision(eng) == head_revision() == "0014"
    assert _counts(eng) == before
    copy = (
        "INSERT INTO cohorts (number, week_start, methodology_version, constants, status, "
        "created_at, late_entry_of, late_entry_family) SELECT number, week_start, "
        "methodology_version, constants, status, created_at, {of}, {family} FROM cohorts "
        "WHERE late_entry_of IS NULL"
    )
    with pytest.raises(IntegrityError), eng.begin() as conn:
        conn.execute(text(copy.format(of="NULL", family="NULL")))
    with eng.begin() as conn:
        conn.execute(text(copy.format(of="id", family="'newcomer'")))
    with pytest.raises(IntegrityError), eng.begin() as conn:
        conn.execute(text(copy.format(of="id", family="'newcomer'")))
    with pytest.raises(IntegrityError), eng.begin() as conn:  # a shadow names its family
        conn.execute(text(copy.format(of="id", family="NULL")))
    eng.dispose()


def test_the_rule_set_migration_goes_down_and_up(db_url: str) -> None:
    """0014 names v2's rule set in the v2 row and leaves every cohort's stamp as it was; down
    gives the row its earlier constants back."""
    eng = create_db_engine(db_url)
    seed_basic(eng)
    with eng.connect() as conn:
        stamps = conn.execute(text("SELECT id, constants FROM cohorts ORDER BY id")).all()
    downgrade(eng, "0013")
    with eng.connect() as conn:
        row = conn.execute(text("SELECT constants FROM methodology_versions WHERE version='v2'"))
        before = row.scalar_one()
    before = json.loads(before) if isinstance(before, str) else before
    assert "rule_set" not in before and before["malformed_retries"] == 2
    init_db(eng)
    with eng.connect() as conn:
        after = conn.execute(text("SELECT constants FROM methodology_versions WHERE version='v2'"))
        constants = after.scalar_one()
        assert conn.execute(text("SELECT id, constants FROM cohorts ORDER BY id")).all() == stamps
    constants = json.loads(constants) if isinstance(constants, str) else constants
    assert constants == Methodology(version="v2").stamp()
    eng.dispose()
