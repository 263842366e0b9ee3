"""Counts kept by database triggers (migration 0006): each market's holdings (positions ever,
open, distinct holders) and the job runs per job × status. Every kind of write keeps them
equal to a fresh count, on both backends, and the migration backfills an older database."""

import random
import threading
from datetime import timedelta
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import delete, inspect, select, update
from sqlalchemy.engine import Engine

from arena.analytics.views import markets, operations
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import downgrade, upgrade
from arena.storage.models import MarketHolding, Position
from arena.storage.tables import JOB_RUNS, POSITIONS
from tests.analytics.season import sqlite_season, writable_copy
from tests.factories import WEEK1, market, new_cohort_agents
from tests.faults.invariants import assert_job_run_counts_match, assert_market_counts_match

STATUSES = ("open", "won", "lost", "sold", "cancelled")


def _counts(engine: Engine, market_id: str) -> tuple[int, int, int]:
    with session_scope(engine) as s:
        row = s.get(MarketHolding, market_id)
        return (row.position_count, row.open_position_count, row.holder_count) if row else (0, 0, 0)


def _position(agent_id: int, market_id: str, side: str, status: str = "open") -> Position:
    return Position(
        agent_id=agent_id,
        market_id=market_id,
        side=side,
        status=status,
        shares=D("10"),
        cost_basis=D("4"),
        avg_entry_price=D("0.4"),
        opened_at=WEEK1,
    )


def _row(agent_id: int, market_id: str, side: str, status: str = "open") -> dict[str, object]:
    """A positions row for Core inserts (no ORM defaults there)."""
    return {
        "agent_id": agent_id,
        "market_id": market_id,
        "side": side,
        "status": status,
        "shares": D("1"),
        "cost_basis": D("1"),
        "avg_entry_price": D("1"),
        "realized_pnl": D("0"),
        "opened_at": WEEK1,
    }


def test_each_position_write_moves_the_counts(engine: Engine) -> None:
    a, b = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    with session_scope(engine) as s:
        s.add_all([market("1"), market("2")])
    assert _counts(engine, "1") == (0, 0, 0)

    with session_scope(engine) as s:  # the ORM path (the executor's)
        s.add_all([_position(a, "1", "YES"), _position(a, "1", "NO"), _position(b, "1", "YES")])
    assert _counts(engine, "1") == (3, 3, 2)  # agent a holds both sides: one holder

    with engine.begin() as conn:  # Core updates (settlement's shape): a status change
        conn.execute(
            update(POSITIONS)
            .where(POSITIONS.c.agent_id == a, POSITIONS.c.side == "YES")
            .values(status="won")
        )
        conn.execute(update(POSITIONS).where(POSITIONS.c.agent_id == b).values(shares=D("0")))
    assert _counts(engine, "1") == (3, 2, 2)  # a change of shares alone counts nothing

    with engine.begin() as conn:  # a position moved to another market (never done; still kept)
        conn.execute(update(POSITIONS).where(POSITIONS.c.agent_id == b).values(market_id="2"))
    assert (_counts(engine, "1"), _counts(engine, "2")) == ((2, 1, 1), (1, 1, 1))

    with engine.begin() as conn:
        conn.execute(delete(POSITIONS).where(POSITIONS.c.agent_id == a, POSITIONS.c.side == "NO"))
    assert _counts(engine, "1") == (1, 0, 1)  # a still holds its won YES
    with engine.begin() as conn:
        conn.execute(delete(POSITIONS).where(POSITIONS.c.market_id == "1"))
    assert _counts(engine, "1") == (0, 0, 0)
    assert_market_counts_match(engine)


def test_a_random_walk_of_position_writes_never_drifts(engine: Engine) -> None:
    """Inserts, status changes, moves and deletes in random order and batches."""
    agents = new_cohort_agents(engine, ("gpt-5.1", "claude-4", "baseline-cash"))
    ids = [str(n) for n in range(1, 5)]
    with session_scope(engine) as s:
        s.add_all([market(mid) for mid in ids])
    rng = random.Random(20261122)
    sides = iter(range(10_000))  # each side its own: the one-open-per-side index never bites
    for _ in range(40):
        with engine.begin() as conn:
            existing = [row[0] for row in conn.execute(select(POSITIONS.c.id))]
            move = rng.random()
            if move < 0.4 or not existing:
                rows = [
                    _row(
                        rng.choice(agents), rng.choice(ids), f"S{next(sides)}", rng.choice(STATUSES)
                    )
                    for _ in range(rng.randint(1, 3))
                ]
                conn.execute(POSITIONS.insert(), rows)
            elif move < 0.7:
                chosen = rng.sample(existing, min(len(existing), rng.randint(1, 3)))
                conn.execute(
                    update(POSITIONS)
                    .where(POSITIONS.c.id.in_(chosen))
                    .values(status=rng.choice(STATUSES))
                )
            elif move < 0.85:
                conn.execute(
                    update(POSITIONS)
                    .where(POSITIONS.c.id == rng.choice(existing))
                    .values(market_id=rng.choice(ids), agent_id=rng.choice(agents))
                )
            else:
                conn.execute(delete(POSITIONS).where(POSITIONS.c.id == rng.choice(existing)))
        assert_market_counts_match(engine)


def test_migration_0006_backfills_the_counts(db_url: str) -> None:
    """A database at 0005 (no counts, no triggers) gets each market's counts on upgrade."""
    engine = create_db_engine(db_url)
    try:
        a, b = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
        with session_scope(engine) as s:
            s.add_all([market("1"), market("2"), market("3")])
        downgrade(engine, "0005")
        with engine.connect() as conn:
            assert "market_holdings" not in inspect(conn).get_table_names()
        with engine.begin() as conn:  # written with no trigger in place
            for agent, mid, side, status in (
                (a, "1", "YES", "open"),
                (a, "1", "NO", "lost"),
                (b, "1", "YES", "sold"),
                (b, "2", "NO", "open"),
            ):
                conn.execute(POSITIONS.insert().values(**_row(agent, mid, side, status)))
        upgrade(engine)
        assert [_counts(engine, mid) for mid in "123"] == [(3, 1, 2), (1, 1, 1), (0, 0, 0)]
        with session_scope(engine) as s:  # and the triggers are in place from here on
            s.add(_position(b, "3", "YES"))
        assert _counts(engine, "3") == (1, 1, 1)
        assert_market_counts_match(engine)
    finally:
        engine.dispose()


def test_season_counts_match_and_survive_the_migration(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """A real season (engine, settlement, sells): the counts agree with a fresh count, and a
    copy taken back to 0005 and upgraded lists the same markets, counts and order."""
    built = sqlite_season(tmp_path_factory.getbasetemp())  # the session's, built once
    engine = create_db_engine(writable_copy(built, tmp_path / "season.db"))
    try:
        assert_market_counts_match(engine)
        before = markets.markets(engine)
        assert before["positions"].sum() > before["open_positions"].sum() > 0
        downgrade(engine, "0005")
        upgrade(engine)
        assert_market_counts_match(engine)
        pd.testing.assert_frame_equal(markets.markets(engine), before)
    finally:
        engine.dispose()


def test_concurrent_writers_of_one_market_count_each_other(engine: Engine) -> None:
    """Two transactions open positions in the same market at once: the second waits for the
    first (PostgreSQL: the holdings row lock; SQLite: the write lock) and counts its rows."""
    a, b, c = new_cohort_agents(engine, ("gpt-5.1", "claude-4", "baseline-cash"))
    with session_scope(engine) as s:
        s.add(market("1"))
    with engine.begin() as conn:  # the market's holdings row exists: both writers update it
        conn.execute(POSITIONS.insert().values(**_row(c, "1", "NO")))
    first = engine.connect()
    first.begin()
    first.execute(POSITIONS.insert().values(**_row(a, "1", "YES")))
    done = threading.Event()

    def second() -> None:
        with engine.begin() as conn:
            conn.execute(POSITIONS.insert().values(**_row(b, "1", "YES")))
        done.set()

    thread = threading.Thread(target=second)
    thread.start()
    assert not done.wait(0.5)  # blocked behind the first transaction
    first.commit()
    first.close()
    thread.join(timeout=30)
    assert done.is_set()
    assert _counts(engine, "1") == (3, 3, 3)
    assert_market_counts_match(engine)


def test_job_run_counts_follow_inserts_status_changes_and_deletes(engine: Engine) -> None:
    rng = random.Random(7)
    slots = iter(WEEK1 + timedelta(minutes=10 * n) for n in range(10_000))
    for _ in range(40):
        with engine.begin() as conn:
            existing = [row[0] for row in conn.execute(select(JOB_RUNS.c.id))]
            move = rng.random()
            if move < 0.5 or not existing:
                rows: list[dict[str, Any]] = [
                    {
                        "job": rng.choice(("snapshot", "resolve")),
                        "slot": next(slots),
                        "status": rng.choice(("running", "ok", "failed")),
                        "started_at": WEEK1,
                        "counts": {},
                    }
                    for _ in range(rng.randint(1, 3))
                ]
                conn.execute(JOB_RUNS.insert(), rows)
            elif move < 0.85:
                chosen = rng.sample(existing, min(len(existing), rng.randint(1, 3)))
                conn.execute(
                    update(JOB_RUNS)
                    .where(JOB_RUNS.c.id.in_(chosen))
                    .values(status=rng.choice(("ok", "failed")), owner="x")
                )
            else:
                conn.execute(delete(JOB_RUNS).where(JOB_RUNS.c.id == rng.choice(existing)))
        assert_job_run_counts_match(engine)


def test_migration_0006_backfills_the_job_run_counts(db_url: str) -> None:
    engine = create_db_engine(db_url)
    try:
        downgrade(engine, "0005")
        with engine.begin() as conn:
            conn.execute(
                JOB_RUNS.insert(),
                [
                    {
                        "job": job,
                        "slot": WEEK1 + timedelta(hours=n),
                        "status": status,
                        "started_at": WEEK1,
                        "counts": {},
                    }
                    for n, (job, status) in enumerate(
                        [
                            ("snapshot", "ok"),
                            ("snapshot", "ok"),
                            ("snapshot", "failed"),
                            ("resolve", "running"),
                        ]
                    )
                ],
            )
        upgrade(engine)
        assert_job_run_counts_match(engine)
        health = operations.job_health(engine).set_index("job")
        assert health.loc["snapshot", ["runs", "ok", "failed"]].tolist() == [3, 2, 1]
        assert health.loc["resolve", "running"] == 1
    finally:
        engine.dispose()
