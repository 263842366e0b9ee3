"""bench/make_year.py: the bulk snapshot path writes exactly what the real snapshot job writes.

Each test builds the same short season twice, on SQLite and on PostgreSQL: once with the real
snapshot job at every 10-minute slot, once with the carry-forward copies, and compares every
table the snapshot job touches (snapshots, cohorts, job runs, system logs, position marks,
rollups) plus the trades, all columns but the surrogate ids. The default lineup trades and
settles over two days; a cash-only lineup with a one-week decision window has its cohort
completed by the tail's first pass, which no decision run follows (its agent must then drop
out of the copied slots: a carry-forward that ignored completion fails here).
"""

import shutil
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Table, select

from arena.config import Methodology
from arena.lineup import Lineup, load_lineup
from arena.sim.world import DEMO_START
from arena.storage import tables
from arena.storage.book_models import DecisionBook
from arena.storage.db import create_db_engine
from bench.make_year import build_year, year_ticks
from tests import offline_guard
from tests.offline import netguard
from tests.pg import PostgresCluster

ONE_WEEK_WINDOW = Methodology(decision_window_weeks=1)
BOOKS: Table = DecisionBook.__table__  # type: ignore[attr-defined]


@pytest.fixture
def twin_urls(
    db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """The `db_url` database and a second fresh one on the same backend."""
    if db_url.startswith("sqlite"):
        path = tmp_path_factory.mktemp("twin") / "arena.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield db_url, f"sqlite:///{path}"
        return
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    other = cluster.new_database(template=request.getfixturevalue("pg_template"))
    try:
        yield db_url, other
    finally:
        cluster.drop_database(other)


def _rows(url: str, table: Table, order: tuple[str, ...], skip: tuple[str, ...] = ()) -> list[Any]:
    columns = [c for c in table.c if c.name != "id" and c.name not in skip]
    engine = create_db_engine(url)
    try:
        with engine.connect() as conn:
            query = select(*columns).order_by(*(table.c[name] for name in order))
            return [tuple(row) for row in conn.execute(query)]
    finally:
        engine.dispose()


# (table, order, columns left out): everything a snapshot pass writes, and the trades.
COMPARED: list[tuple[Table, tuple[str, ...], tuple[str, ...]]] = [
    (tables.PORTFOLIO_SNAPSHOTS, ("agent_id", "slot"), ()),
    (tables.COHORTS, ("number",), ("created_at",)),
    (tables.JOB_RUNS, ("id",), ()),
    (tables.SYSTEM_LOGS, ("id",), ()),
    (tables.POSITIONS, ("id",), ()),
    (tables.TRADES, ("id",), ()),
    (tables.PORTFOLIO_ROLLUPS, ("agent_id", "width", "bucket"), ()),
]


def assert_same_season(build: Callable[[str, bool], dict[str, int]], urls: tuple[str, str]) -> None:
    real_url, bulk_url = urls
    real = build(real_url, False)
    bulk = build(bulk_url, True)
    assert real == bulk
    for table, order, skip in COMPARED:
        expected = _rows(real_url, table, order, skip)
        assert _rows(bulk_url, table, order, skip) == expected, table.name


def _column(url: str, table: Table, name: str, order: str) -> list[Any]:
    engine = create_db_engine(url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(select(table.c[name]).order_by(table.c[order])).scalars())
    finally:
        engine.dispose()


def test_bulk_snapshots_equal_real_ones_over_trading_and_settling(
    twin_urls: tuple[str, str],
) -> None:
    """Default lineup (7 simulated LLMs + 3 baselines): the week's decisions, the marks of
    every sync, the first settlements and a refund (31 hours: seed 3's first 26 settlements
    and its first refund fall before it; two days took half as long again)."""
    stop = DEMO_START + timedelta(hours=31)

    def build(url: str, bulk: bool) -> dict[str, int]:
        return build_year(
            url, weeks=2, seed=3, tail_weeks=0, bulk_snapshots=bulk, stop_at=stop,
            methodology=ONE_WEEK_WINDOW,
        )  # fmt: skip

    assert_same_season(build, twin_urls)
    real_url, _ = twin_urls
    assert _column(real_url, tables.COHORTS, "status", "number") == ["deciding"]
    assert {"BUY", "SETTLE", "REFUND"} <= set(_column(real_url, tables.TRADES, "trade_type", "id"))


CASH_ONLY = Lineup(families=[f for f in load_lineup(None).families if f.id == "baseline-cash"])


def test_a_cohort_completed_by_a_real_pass_drops_out_of_the_copies(
    twin_urls: tuple[str, str],
) -> None:
    """Cash only, one week, then the tail: the tail's first pass (a sync tick, no decision run
    after it) ends cohort 1's window and completes it at once, as it holds nothing; the copied
    slots after it must hold no rows, as the real passes write none. The reference build
    copies the idle week too (the copies of a week are compared in the test above) and values
    for real from two hours before the tail: the passes around the completion are compared."""
    tail = DEMO_START + timedelta(weeks=1)
    stop = tail + timedelta(hours=2)

    def build(url: str, bulk: bool) -> dict[str, int]:
        return build_year(
            url, weeks=1, seed=3, tail_weeks=1, bulk_snapshots=bulk, stop_at=stop,
            stop_when_settled=False, lineup=CASH_ONLY, methodology=ONE_WEEK_WINDOW,
            sync_every=timedelta(days=1), real_from=tail - timedelta(hours=2),
        )  # fmt: skip

    assert_same_season(build, twin_urls)
    real_url, _ = twin_urls
    assert _column(real_url, tables.COHORTS, "status", "number") == ["completed"]
    assert _column(real_url, tables.COHORTS, "completed_at", "number") == [tail]
    slots = _column(real_url, tables.PORTFOLIO_SNAPSHOTS, "slot", "slot")
    assert len(slots) == 7 * 144 + 1 and slots[-1] == tail  # nothing after the completing pass
    runs = _column(real_url, tables.JOB_RUNS, "slot", "id")
    assert runs[-1] == stop - timedelta(minutes=10)  # the snapshot job still ran every slot


def test_the_year_build_records_its_books_from_the_simulated_clob(
    sqlite_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recording on (the default outside the suite): the first week's decision run stores a
    book for every token of its universe, read from the loopback simulated CLOB, and the
    build attempts no connection outside loopback (the offline guard records every one)."""
    monkeypatch.setenv("ARENA_RECORD_BOOKS", "1")
    path = tmp_path / "year.db"
    shutil.copyfile(sqlite_template, path)
    url = f"sqlite:///{path}"
    assert netguard.installed()
    build_year(
        url, weeks=1, seed=3, tail_weeks=0, stop_at=DEMO_START + timedelta(minutes=10),
        lineup=CASH_ONLY,
    )  # fmt: skip
    assert offline_guard.take() == []
    statuses = _column(url, BOOKS, "status", "token_id")
    markets = _column(url, tables.MARKET_SNAPSHOT_ITEMS, "market_id", "market_id")
    assert len(statuses) >= len(markets) * 2 > 100  # every outcome token of the universe
    assert statuses.count("ok") > 0.9 * len(statuses)


def test_the_year_clock() -> None:
    """Weeks of cohorts and decisions, syncs every 6 hours, snapshots every 10 minutes."""
    runs: dict[str, list[datetime]] = {}
    for tick in year_ticks(DEMO_START, weeks=2, tail_weeks=1):
        for job in tick.jobs:
            runs.setdefault(job, []).append(tick.at)
    assert len(runs["start-cohort"]) == len(runs["decide"]) == 2
    assert len(runs["snapshot"]) == 3 * 1008 + 1
    assert len(runs["sync-markets"]) == len(runs["resolve"]) == 3 * 28 + 1
    assert runs["decide"][0] == DEMO_START + timedelta(minutes=5)
