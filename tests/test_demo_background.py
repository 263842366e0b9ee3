"""The demo's fast path and its background season (issue 32).

A copied snapshot pass (`carry_forward`) must write exactly what a real pass writes, so the
season with copies equals the season without, row for row; a season stopped early is told
apart from a finished one.
"""

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Table, select
from sqlalchemy.engine import Engine

from arena.app.demo import DEMO_START, run_demo
from arena.config import load_settings
from arena.lineup import load_lineup
from arena.storage import tables
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db

SEED = 5
UNTIL = DEMO_START + timedelta(days=2)  # the week's decisions, eight syncs, 288 passes


def play(path: Path, *, carry: bool) -> Engine:
    url = f"sqlite:///{path}"
    engine = create_db_engine(url)
    init_db(engine)
    settings = load_settings(database_url=url, llm_api_key=None)
    run_demo(engine, settings, load_lineup(None), weeks=1, seed=SEED, stop_at=UNTIL, carry=carry)
    return engine


@pytest.fixture(scope="module")
def seasons(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, Engine]]:
    """The same two days played with copied passes and with every pass valued afresh."""
    folder = tmp_path_factory.mktemp("carry")
    fast, slow = play(folder / "fast.db", carry=True), play(folder / "slow.db", carry=False)
    try:
        yield fast, slow
    finally:
        fast.dispose()
        slow.dispose()


def rows(engine: Engine, table: Table, *skip: str) -> list[tuple[Any, ...]]:
    columns = [c for c in table.c if c.name not in skip]
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(*columns).order_by(*table.primary_key))]


# Audit columns a replay never reproduces: claim owners, row creation instants, latencies.
AUDIT = ("owner", "claimed_at", "claim_token", "created_at", "latency_ms", "updated_at")


@pytest.mark.parametrize(
    "table",
    [
        tables.PORTFOLIO_SNAPSHOTS,
        tables.PORTFOLIO_ROLLUPS,
        tables.POSITIONS,
        tables.COHORTS,
        tables.JOB_RUNS,
        tables.JOB_RUN_COUNTS,
        tables.SYSTEM_LOGS,
        tables.AGENTS,
        tables.TRADES,
    ],
    ids=lambda t: t.name,
)
def test_copied_passes_write_what_real_passes_write(
    seasons: tuple[Engine, Engine], table: Table
) -> None:
    fast, slow = seasons
    copied, valued = rows(fast, table, *AUDIT), rows(slow, table, *AUDIT)
    assert len(copied) > 0
    assert copied == valued


def test_most_passes_were_copied(seasons: tuple[Engine, Engine]) -> None:
    """The fast season really took the fast path: its passes marked no position live."""
    fast, _ = seasons
    runs = tables.JOB_RUNS
    with fast.connect() as conn:
        snapshot_runs = conn.execute(select(runs.c.counts).where(runs.c.job == "snapshot")).all()
    assert len(snapshot_runs) == 2 * 144
