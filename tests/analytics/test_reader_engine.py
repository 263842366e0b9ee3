"""Every dashboard read, on the dashboard's PostgreSQL engine, gives what the writer's gives.

The two engines differ on PostgreSQL: the dashboard's runs in autocommit and pings a pooled
connection only after it sat idle (`arena.storage.db`). The read-model tests run on the writer's, so
here every page of the benchmark's catalogue (`bench/pages_catalog.py`: each page's reads on
first load, the clicks, every curve range, the live fallbacks) runs on a real season through
both engines, and each result must be the same.
"""

import dataclasses
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.engine.analyses import store_analyses
from arena.storage.db import create_db_engine
from bench.pages_catalog import PAGES, Reader, resolve_selection
from tests.analytics.season import build_season
from tests.pg import PostgresCluster


@pytest.fixture(scope="module")
def pg_season(pg_cluster: PostgresCluster) -> Iterator[tuple[Engine, Engine]]:
    """A season played into PostgreSQL with its analyses stored: (writer, dashboard reader)."""
    url = pg_cluster.new_database()
    built = build_season(url)
    writer, reader = create_db_engine(url), create_db_engine(url, role="reader")
    store_analyses(writer, built.end + timedelta(minutes=30))
    try:
        yield writer, reader
    finally:
        reader.dispose()
        writer.dispose()
        pg_cluster.drop_database(url)


def _assert_same(got: Any, expected: Any, where: str) -> None:
    if isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(got, expected, obj=where)
    elif dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        assert type(got) is type(expected), where
        for item in dataclasses.fields(expected):
            name = item.name
            _assert_same(getattr(got, name), getattr(expected, name), f"{where}.{name}")
    elif isinstance(expected, tuple | list):
        assert type(got) is type(expected) and len(got) == len(expected), where
        for i, (a, b) in enumerate(zip(got, expected, strict=True)):
            _assert_same(a, b, f"{where}[{i}]")
    else:
        assert got == expected, where


def test_every_page_reads_the_same_on_the_dashboard_engine(
    pg_season: tuple[Engine, Engine],
) -> None:
    writer, reader = pg_season
    selection = resolve_selection(reader)
    assert selection == resolve_selection(writer)
    assert None not in (selection.decision_id, selection.market_id, selection.snapshot_id)
    stored_pages = []
    for page in PAGES:
        on_reader, on_writer = Reader(reader), Reader(writer)
        page.run(on_reader, selection)
        page.run(on_writer, selection)
        assert on_reader.results.keys() == on_writer.results.keys(), page.name
        assert on_reader.results, page.name
        for name, expected in on_writer.results.items():
            _assert_same(on_reader.results[name], expected, f"{page.name}: {name}")
        if on_reader.used_stored():
            stored_pages.append(page.name)
    assert stored_pages == ["home", "leaderboard", "family", "calibration", "overview"]
