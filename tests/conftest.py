"""Shared fixtures: real databases (a SQLite file and a throw-away PostgreSQL server)."""

from collections.abc import Iterator

import pytest
from sqlalchemy.engine import Engine

from arena.config import get_settings
from arena.db import create_db_engine, dispose_engines
from arena.migrate import init_db
from tests.pg import PostgresCluster, start_cluster

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=BACKENDS)
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """An empty database URL on each backend: a fresh SQLite file, a fresh PG database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'arena.db'}"
        return
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    url = cluster.new_database()
    try:
        yield url
    finally:
        dispose_engines()
        cluster.drop_database(url)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """A migrated database (schema at head, methodology rows in place)."""
    eng = create_db_engine(db_url)
    init_db(eng)
    try:
        yield eng
    finally:
        eng.dispose()


@pytest.fixture(autouse=True)
def _fresh_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test sees another's settings or engines, or the developer's own keys and database."""
    for key in ("ARENA_DATABASE_URL", "OPENROUTER_API_KEY", "ARENA_LLM_API_KEY", "ARENA_LINEUP"):
        monkeypatch.delenv(key, raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
    dispose_engines()
