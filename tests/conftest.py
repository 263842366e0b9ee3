"""Shared fixtures: real databases (a SQLite file and a throw-away PostgreSQL server)."""

import functools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import Connection, Engine

from arena.config import get_settings
from arena.storage.db import create_db_engine, dispose_engines
from arena.storage.migrate import init_db
from arena.storage.tables import COHORTS
from tests import migrated, offline_guard
from tests.analytics.season import Season, analysed_copy, sqlite_season
from tests.backends import BACKENDS
from tests.pg import PostgresCluster, start_cluster
from tests.stated_season import DemoSeasons
from tests.tiers import tiers

# The suite runs offline: a decision run that records its books (ARENA_RECORD_BOOKS, on by
# default) would build a ClobClient at clob.polymarket.com wherever a test decides through the
# jobs with default settings. Recording is off for every test and the processes they start;
# the tests of recording pass a loopback CLOB and turn it on themselves.
os.environ["ARENA_RECORD_BOOKS"] = "0"
# Offline means offline: a connection or lookup outside loopback, in this process or any it
# starts, is refused and fails the test (tests/offline_guard.py; the `live` tier is exempt).
offline_guard.arm()


def _scan_installed_components_once() -> None:
    """Streamlit's AppTest scans the metadata of every installed distribution for v2
    components on each new AppTest: ~0.5 CPU-s, 85% of an empty page's AppTest run, and the
    suite makes hundreds. The installed packages cannot change during a test run, so the suite
    scans once per process and hands every AppTest the same (copied) list."""
    from streamlit.components.v2 import manifest_scanner

    scan = functools.cache(manifest_scanner.scan_component_manifests)

    def scanned(max_workers: int | None = None) -> list[Any]:
        return list(scan())

    manifest_scanner.scan_component_manifests = scanned


_scan_installed_components_once()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with the tiers of what it uses (tests.tiers), so `-m "not postgres"`
    never starts a cluster and `make check` runs the fast tier: no mark is set by hand."""
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        info = item._fixtureinfo
        fixtures = [
            (name, str(fixturedef.scope), fixturedef.func)
            for name in item.fixturenames
            for fixturedef in info.name2fixturedefs.get(name, ())
        ]
        callspec = getattr(item, "callspec", None)
        params = list(callspec.params.values()) if callspec else []
        for tier in sorted(tiers(item.function, fixtures, params)):
            item.add_marker(tier)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def demo_seasons(tmp_path_factory: pytest.TempPathFactory) -> DemoSeasons:
    """Short `arena demo` seasons, each played once per test run (see tests.stated_season).

    Under pytest-xdist each worker has its own base temp folder inside the run's: the seasons
    live in the run's, so the workers share them."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    return DemoSeasons(base / "demo-seasons")


@pytest.fixture(scope="session")
def season(tmp_path_factory: pytest.TempPathFactory) -> Season:
    """The session's simulated season (`tests.analytics.season`), shared read-only by the
    browser, AppTest and read-model tests."""
    return sqlite_season(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def analysed_url(season: Season, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A copy of the season's database after the hourly `analyses` job ran at its end, as a
    scheduler's database has (the shared season itself stays without stored frames)."""
    target = tmp_path_factory.mktemp("analysed") / "analysed.db"
    return analysed_copy(season.url, target, season.end)


EXTENDED_COHORT = 2  # the cohort `mixed_url`'s database re-stamps as extended


@pytest.fixture(scope="session")
def mixed_url(season: Season, analysed_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The analysed season with cohort 2 re-stamped `stated_probability`: one v1 cohort and
    one extended, the hourly analyses stored again after the re-stamp (as the job would). The
    all-cohort v1 figures then leave cohort 2 out (methodology §18)."""

    def extend(conn: Connection) -> None:
        where = COHORTS.c.number == EXTENDED_COHORT
        stamp = dict(conn.execute(select(COHORTS.c.constants).where(where)).scalar_one())
        stamp.pop("is_default", None)
        stamp.update(extensions=["stated_probability"], is_default=False)
        conn.execute(update(COHORTS).where(where).values(constants=stamp))

    target = tmp_path_factory.mktemp("mixed") / "mixed.db"
    return analysed_copy(analysed_url, target, season.end, extend)


@pytest.fixture(scope="session")
def sqlite_template() -> Path:
    """One migrated SQLite file per session; each test gets a copy (no migration per test)."""
    return migrated.template()


@pytest.fixture(scope="session")
def pg_template(pg_cluster: PostgresCluster) -> str:
    """One migrated PostgreSQL database per session, the template of every test database."""
    url = pg_cluster.new_database()
    eng = create_db_engine(url)
    init_db(eng)
    eng.dispose()
    return url.rsplit("/", 1)[1]


@pytest.fixture(params=BACKENDS)
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A fresh migrated database on each backend: a SQLite file, a PostgreSQL database.

    Both are copies of a template migrated once per session; `test_migrations` still
    migrates from an empty database (it downgrades to base first).
    """
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("db") / "arena.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    url = cluster.new_database(template=request.getfixturevalue("pg_template"))
    try:
        yield url
    finally:
        dispose_engines()
        cluster.drop_database(url)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """A migrated database (schema at head, methodology rows in place).

    `db_url` is a copy of a template `init_db` already ran on, so it is not run again: on a
    database at head it only checks, which took half a second a test on a loaded machine."""
    eng = create_db_engine(db_url)
    try:
        yield eng
    finally:
        eng.dispose()


@pytest.fixture(autouse=True)
def _offline(request: pytest.FixtureRequest) -> Iterator[None]:
    """No test reaches a host outside loopback, nor does any process it starts."""
    yield from offline_guard.check(request)


@pytest.fixture(autouse=True)
def _fresh_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test sees another's settings or engines, or the developer's own keys and database."""
    for key in ("ARENA_DATABASE_URL", "OPENROUTER_API_KEY", "ARENA_LLM_API_KEY", "ARENA_LINEUP"):
        monkeypatch.delenv(key, raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
    dispose_engines()
