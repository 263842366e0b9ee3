"""Dashboard smoke tests with Streamlit's AppTest: the real entry script, real SQLite files.

Each test points ARENA_DATABASE_URL at its own database and clears every cache (settings,
engines, st.cache_data, st.cache_resource), so no test sees another's database.
"""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from arena.config import get_settings
from arena.db import create_db_engine, dispose_engines, session_scope
from arena.migrate import head_revision, init_db
from arena.models import Agent, Cohort, Family

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboard.py"
NO_DATABASE = "No database yet: run `arena init-db` or `make demo`."
NO_COHORT = "No cohort yet: run `arena start-cohort` or `make demo`."


def _clear_caches() -> None:
    get_settings.cache_clear()
    dispose_engines()
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture(autouse=True)
def _isolated_caches() -> Iterator[None]:
    _clear_caches()
    yield
    _clear_caches()


@pytest.fixture
def use_database(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Point the dashboard at `url` for this test."""

    def _use(url: str) -> None:
        monkeypatch.setenv("ARENA_DATABASE_URL", url)
        _clear_caches()

    return _use


def _migrated(path: Path, *, with_cohort: bool = False) -> str:
    url = f"sqlite:///{path}"
    engine = create_db_engine(url)
    try:
        init_db(engine)
        if with_cohort:
            with session_scope(engine) as session:
                session.add(
                    Family(
                        id="baseline-cash",
                        display_name="Cash",
                        provider="Arena",
                        model="baseline/cash",
                        kind="baseline",
                    )
                )
                cohort = Cohort(
                    number=1,
                    week_start=datetime(2025, 1, 5, tzinfo=UTC),
                    methodology_version="v1",
                )
                session.add(cohort)
                session.flush()
                assert cohort.id is not None
                session.add(
                    Agent(
                        cohort_id=cohort.id,
                        family_id="baseline-cash",
                        model_id="baseline/cash",
                        display_name="Cash",
                        starting_balance=Decimal("10000"),
                        cash_balance=Decimal("10000"),
                    )
                )
    finally:
        engine.dispose()
    return url


def _run() -> AppTest:
    return AppTest.from_file(str(DASHBOARD), default_timeout=30).run()


def _sidebar_text(at: AppTest) -> str:
    return " ".join(str(caption.value) for caption in at.sidebar.caption)


def test_empty_migrated_database_shows_the_no_cohort_state(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db"))

    at = _run()

    assert not at.exception
    assert not at.error
    assert [title.value for title in at.title] == ["Forecaster Arena"]
    assert [info.value for info in at.info] == [NO_COHORT]
    frame = at.dataframe[0].value
    assert list(frame.columns) == ["table", "rows"]
    assert frame["rows"].sum() == 0
    assert [button.label for button in at.get("download_button")] == ["Download CSV"]


def test_populated_database_shows_counts_without_empty_state(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db", with_cohort=True))

    at = _run()

    assert not at.exception
    assert not at.info
    counts = dict(zip(at.dataframe[0].value["table"], at.dataframe[0].value["rows"], strict=True))
    assert counts["cohorts"] == 1
    assert counts["agents"] == 1
    assert counts["families"] == 1


def test_sidebar_names_backend_and_methodology_but_not_the_path(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db"))

    sidebar = _sidebar_text(_run())

    assert "Database: sqlite" in sidebar
    assert "Methodology v1" in sidebar
    assert f"Schema revision {head_revision()}" in sidebar
    assert str(tmp_path) not in sidebar


def test_database_without_schema_shows_no_database_yet(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    path = tmp_path / "never-migrated.db"
    path.touch()
    use_database(f"sqlite:///{path}")

    at = _run()

    assert not at.exception
    assert [info.value for info in at.info] == [NO_DATABASE]
    assert not at.dataframe
    assert path.stat().st_size == 0, "the dashboard must not write to the database"


def test_missing_database_file_shows_no_database_yet_and_creates_nothing(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    path = tmp_path / "data" / "arena.db"
    use_database(f"sqlite:///{path}")

    at = _run()

    assert not at.exception
    assert [info.value for info in at.info] == [NO_DATABASE]
    assert not path.parent.exists()


def test_unreachable_database_is_one_clear_error_without_the_password(
    use_database: Callable[[str], None],
) -> None:
    # Port 1 on loopback refuses at once: no server, no waiting.
    use_database("postgresql+psycopg://arena:s3cret-pw@127.0.0.1:1/arena")

    at = _run()

    assert not at.exception
    assert len(at.error) == 1
    message = str(at.error[0].value)
    assert message.startswith("Cannot read the database")
    assert "s3cret-pw" not in message
    assert "s3cret-pw" not in _sidebar_text(at)
    assert "Database: postgresql" in _sidebar_text(at)


def test_bad_configuration_is_one_clear_error(use_database: Callable[[str], None]) -> None:
    use_database("data/arena.db")  # no scheme

    at = _run()

    assert not at.exception
    assert len(at.error) == 1
    assert "ARENA_DATABASE_URL" in str(at.error[0].value)
