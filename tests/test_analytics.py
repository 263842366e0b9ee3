"""Read models: `overview` counts what the engine wrote, on a real migrated database."""

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from arena.analytics.views import database
from arena.storage.db import create_db_engine
from arena.storage.migrate import head_revision, init_db
from tests.factories import new_cohort_agents


def add_family_cohort_agent(engine: Engine) -> None:
    """One family entered in one cohort: the smallest real competition."""
    new_cohort_agents(engine, ("baseline-cash",))


def test_overview_counts_rows_of_every_main_table(engine: Engine) -> None:
    add_family_cohort_agent(engine)

    frame = database.overview(engine)

    assert list(frame.columns) == ["table", "rows"]
    assert frame["rows"].dtype == "int64"
    counts = dict(zip(frame["table"], frame["rows"], strict=True))
    assert list(counts) == [
        "families",
        "cohorts",
        "agents",
        "markets",
        "decisions",
        "trades",
        "positions",
        "portfolio_snapshots",
        "brier_scores",
        "job_runs",
    ]
    assert counts == {name: 0 for name in counts} | {"families": 1, "cohorts": 1, "agents": 1}
    assert database.row_count(frame, "cohorts") == 1
    assert database.row_count(frame, "no_such_table") == 0


def test_overview_of_a_fresh_database_is_all_zeros(engine: Engine) -> None:
    frame = database.overview(engine)
    assert len(frame) == len(database.OVERVIEW_TABLES)
    assert frame["rows"].sum() == 0


def test_overview_csv_header_is_table_rows(engine: Engine) -> None:
    """The dashboard's download is exactly this frame as CSV."""
    csv = database.overview(engine).to_csv(index=False)
    assert csv.splitlines()[0] == "table,rows"
    assert "families,0" in csv.splitlines()


def test_schema_revision_is_none_before_and_head_after_migrating(tmp_path: Path) -> None:
    engine = create_db_engine(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        assert database.schema_revision(engine) is None
        init_db(engine)
        assert database.schema_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_a_reader_engine_sees_the_writers_rows(tmp_path: Path) -> None:
    """The dashboard reads through a reader engine while the engine writes with a writer."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    writer = create_db_engine(url)
    reader = create_db_engine(url, role="reader")
    try:
        init_db(writer)
        add_family_cohort_agent(writer)
        assert database.row_count(database.overview(reader), "agents") == 1
    finally:
        reader.dispose()
        writer.dispose()


@pytest.mark.parametrize(
    ("url", "backend"),
    [
        ("sqlite:///data/arena.db", "sqlite"),
        ("postgresql+psycopg://user:secret@db.example/arena", "postgresql"),
        ("not a url", "unknown"),
    ],
)
def test_backend_name_never_reveals_the_url(url: str, backend: str) -> None:
    name = database.backend_name(url)
    assert name == backend
    assert "secret" not in name


def test_sqlite_file_missing(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "arena.db"
    assert database.sqlite_file_missing(f"sqlite:///{path}")
    assert not path.parent.exists(), "checking must not create the directory"
    path.parent.mkdir()
    path.touch()
    assert not database.sqlite_file_missing(f"sqlite:///{path}")
    assert not database.sqlite_file_missing("sqlite://")
    assert not database.sqlite_file_missing("sqlite:///:memory:")
    assert not database.sqlite_file_missing("postgresql+psycopg://u@h/db")
