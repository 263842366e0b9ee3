"""Portfolio rollups: the snapshot pass keeps them equal to a rebuild from the snapshots, a
bucket holds its LAST slot (a late rerun of an earlier slot never wins), and migration 0002
backfills a database that already has snapshots."""

from datetime import timedelta
from decimal import Decimal as D

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from arena.engine.rollups import DAY, HOUR, WIDTHS, rebuild_rollups
from arena.engine.snapshots import take_snapshots
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import downgrade, upgrade
from arena.storage.models import Market
from arena.storage.tables import PORTFOLIO_ROLLUPS as ROLLUPS
from arena.storage.tables import PORTFOLIO_SNAPSHOTS as SNAPSHOTS
from tests.factories import WEEK1, market, new_cohort_agents, trade_into


def rollup_rows(engine: Engine) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        query = select(ROLLUPS).order_by(ROLLUPS.c.agent_id, ROLLUPS.c.width, ROLLUPS.c.bucket)
        return [tuple(row) for row in conn.execute(query)]


def set_price(engine: Engine, market_id: str, yes: str) -> None:
    with session_scope(engine) as s:
        row = s.get(Market, market_id)
        assert row is not None
        row.prices = [yes, str(D(1) - D(yes))]
        s.add(row)


def test_the_pass_keeps_rollups_equal_to_a_rebuild(engine: Engine) -> None:
    with session_scope(engine) as s:
        s.add(market("m1", prices=["0.40", "0.60"]))
    yes, cash = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    trade_into(engine, yes, "m1", "YES", "100", "0.4", WEEK1 + timedelta(minutes=5))
    # Two days of 10-minute passes with a price that moves every 50 minutes.
    for k in range(2 * 144):
        if k % 5 == 0:
            set_price(engine, "m1", str(D("0.30") + D(k % 40) / 100))
        take_snapshots(engine, WEEK1 + timedelta(minutes=10 * k + 1))
    kept = rollup_rows(engine)
    assert {row[1] for row in kept} == set(WIDTHS)
    rebuild_rollups(engine)
    assert rollup_rows(engine) == kept

    # Each daily bucket holds the day's last slot and its value.
    with engine.connect() as conn:
        day_one = conn.execute(
            select(ROLLUPS.c.slot, ROLLUPS.c.total_value).where(
                ROLLUPS.c.agent_id == yes,
                ROLLUPS.c.width == DAY,
                ROLLUPS.c.bucket == int(WEEK1.timestamp()),
            )
        ).one()
        last_slot = WEEK1 + timedelta(days=1) - timedelta(minutes=10)
        value = conn.execute(
            select(SNAPSHOTS.c.total_value).where(
                SNAPSHOTS.c.agent_id == yes, SNAPSHOTS.c.slot == last_slot
            )
        ).scalar_one()
    assert day_one == (last_slot, value)
    assert cash != yes


def test_a_late_rerun_of_an_earlier_slot_never_overwrites_a_bucket(engine: Engine) -> None:
    with session_scope(engine) as s:
        s.add(market("m1", prices=["0.40", "0.60"]))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    trade_into(engine, agent, "m1", "YES", "100", "0.4", WEEK1 + timedelta(minutes=5))
    take_snapshots(engine, WEEK1 + timedelta(minutes=21))  # slot :20
    set_price(engine, "m1", "0.9")
    take_snapshots(engine, WEEK1 + timedelta(minutes=11))  # slot :10, rerun late
    with engine.connect() as conn:
        hour = conn.execute(
            select(ROLLUPS.c.slot).where(ROLLUPS.c.agent_id == agent, ROLLUPS.c.width == HOUR)
        ).scalar_one()
    assert hour == WEEK1 + timedelta(minutes=20)


def test_migration_0002_backfills_existing_snapshots(db_url: str) -> None:
    """A database still at 0001 with snapshots gets its rollups when it upgrades."""
    engine = create_db_engine(db_url)
    try:
        (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
        downgrade(engine, "0001")
        rows = [
            {
                "agent_id": agent,
                "slot": WEEK1 + timedelta(minutes=10 * k),
                "snapshot_timestamp": WEEK1 + timedelta(minutes=10 * k),
                "cash_balance": D(10000 + k),
                "positions_value": D(0),
                "total_value": D(10000 + k),
                "total_pnl": D(k),
                "total_pnl_percent": k / 100,
                "brier_score": None,
                "num_resolved_bets": 0,
            }
            for k in range(13)  # 00:00 … 02:00
        ]
        with engine.begin() as conn:
            conn.execute(insert(SNAPSHOTS), rows)
        upgrade(engine)
        hourly = [(row[2], row[4]) for row in rollup_rows(engine) if row[1] == HOUR]
        start = int(WEEK1.timestamp())
        assert hourly == [(start, D(10005)), (start + HOUR, D(10011)), (start + 2 * HOUR, D(10012))]
    finally:
        engine.dispose()
