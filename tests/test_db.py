"""The database layer on both backends: exact money, UTC times, natural keys, WAL readers."""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal as D
from typing import Any

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, StatementError
from sqlmodel import Session, select

from arena.storage import db
from arena.storage.db import consistent_read, create_db_engine, session_scope
from arena.storage.models import (
    Agent,
    BrierScore,
    Cohort,
    Decision,
    JobRun,
    PortfolioSnapshot,
    Position,
    Trade,
)
from tests.factories import WEEK1, seed_basic


def test_sqlite_pragmas(tmp_path: Any) -> None:
    eng = create_db_engine(f"sqlite:///{tmp_path / 'p.db'}")
    with eng.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000


def test_money_is_exact_and_times_are_utc(engine: Engine) -> None:
    ids = seed_basic(engine)
    agent_id = ids["agent_1_gpt-5.1"]
    tricky = D("1234567.891234")
    with session_scope(engine) as s:
        agent = s.get(Agent, agent_id)
        assert agent is not None
        agent.cash_balance = tricky
        s.add(agent)
    with session_scope(engine) as s:
        agent = s.get(Agent, agent_id)
        assert agent is not None and agent.cash_balance == tricky
        assert str(agent.cash_balance) == "1234567.891234"
        cohort = s.exec(select(Cohort).where(Cohort.number == 1)).one()
        assert cohort.week_start == WEEK1
        assert cohort.week_start.tzinfo is not None
        assert cohort.week_start.utcoffset() == timedelta(0)


def test_other_timezones_are_stored_as_utc(engine: Engine) -> None:
    paris = timezone(timedelta(hours=1))
    with session_scope(engine) as s:
        s.add(
            JobRun(
                job="snapshot",
                slot=datetime(2026, 11, 1, 1, 0, tzinfo=paris),
                started_at=datetime(2026, 11, 1, tzinfo=UTC),
            )
        )
    with session_scope(engine) as s:
        run = s.exec(select(JobRun)).one()
        assert run.slot == datetime(2026, 11, 1, 0, 0, tzinfo=UTC)


def test_naive_datetimes_are_refused(engine: Engine) -> None:
    with pytest.raises(StatementError, match="naive datetime"), session_scope(engine) as s:
        s.add(JobRun(job="snapshot", slot=datetime(2026, 11, 1), started_at=WEEK1))


def _dup_cohort_week(s: Session, ids: dict[str, int]) -> None:
    s.add(Cohort(number=99, week_start=WEEK1, methodology_version="v1"))


def _dup_cohort_number(s: Session, ids: dict[str, int]) -> None:
    s.add(Cohort(number=1, week_start=WEEK1 + timedelta(weeks=50), methodology_version="v1"))


def _dup_agent(s: Session, ids: dict[str, int]) -> None:
    cohort = s.exec(select(Cohort).where(Cohort.number == 1)).one()
    assert cohort.id is not None
    s.add(
        Agent(
            cohort_id=cohort.id,
            family_id="gpt-5.1",
            model_id="m",
            display_name="d",
            starting_balance=D(1),
            cash_balance=D(1),
        )
    )


def _dup_decision(s: Session, ids: dict[str, int]) -> None:
    agent = s.get(Agent, ids["agent_1_gpt-5.1"])
    assert agent is not None and agent.id is not None
    s.add(Decision(agent_id=agent.id, cohort_id=agent.cohort_id, decision_week=1))


def _dup_open_position(s: Session, ids: dict[str, int]) -> None:
    s.add(
        Position(
            agent_id=ids["agent_1_gpt-5.1"],
            market_id="842093",
            side="YES",
            shares=D(1),
            cost_basis=D(1),
            avg_entry_price=D(1),
            opened_at=WEEK1,
        )
    )


def _dup_leg(s: Session, ids: dict[str, int]) -> None:
    trade = s.exec(select(Trade).where(Trade.agent_id == ids["agent_1_gpt-5.1"])).one()
    s.add(
        Trade(
            agent_id=trade.agent_id,
            decision_id=trade.decision_id,
            leg_index=0,
            position_id=trade.position_id,
            market_id=trade.market_id,
            trade_type="BUY",
            side="YES",
            amount=D(50),
            shares=D(1),
            cash_before=D(1),
            created_at=WEEK1,
        )
    )


def _double_settlement(s: Session, ids: dict[str, int]) -> None:
    trade = s.exec(select(Trade).where(Trade.agent_id == ids["agent_1_gpt-5.1"])).one()
    for kind in ("SETTLE", "REFUND"):
        s.add(
            Trade(
                agent_id=trade.agent_id,
                position_id=trade.position_id,
                market_id=trade.market_id,
                trade_type=kind,
                side="YES",
                amount=D(0),
                shares=D(1),
                cash_before=D(1),
                created_at=WEEK1,
            )
        )


def _dup_snapshot(s: Session, ids: dict[str, int]) -> None:
    s.add(
        PortfolioSnapshot(
            agent_id=ids["agent_1_gpt-5.1"],
            slot=WEEK1 + timedelta(minutes=5),
            snapshot_timestamp=WEEK1,
            cash_balance=D(0),
            positions_value=D(0),
            total_value=D(0),
            total_pnl=D(0),
            total_pnl_percent=0.0,
        )
    )


def _dup_brier(s: Session, ids: dict[str, int]) -> None:
    brier = s.exec(select(BrierScore).where(BrierScore.agent_id == ids["agent_1_gpt-5.1"])).one()
    s.add(
        BrierScore(
            trade_id=brier.trade_id,
            agent_id=brier.agent_id,
            market_id="842093",
            side="YES",
            forecast_probability=0.1,
            actual_outcome=1,
            brier_score=0.81,
            created_at=WEEK1,
        )
    )


def _dup_job_slot(s: Session, ids: dict[str, int]) -> None:
    for _ in range(2):
        s.add(JobRun(job="decide", slot=WEEK1, started_at=WEEK1))
        s.flush()


def _negative_cash(s: Session, ids: dict[str, int]) -> None:
    agent = s.get(Agent, ids["agent_1_gpt-5.1"])
    assert agent is not None
    agent.cash_balance = D("-0.000001")
    s.add(agent)


def _unknown_family(s: Session, ids: dict[str, int]) -> None:
    cohort = s.exec(select(Cohort).where(Cohort.number == 1)).one()
    assert cohort.id is not None
    s.add(
        Agent(
            cohort_id=cohort.id,
            family_id="no-such-family",
            model_id="m",
            display_name="d",
            starting_balance=D(1),
            cash_balance=D(1),
        )
    )


@pytest.mark.parametrize(
    "violation",
    [
        _dup_cohort_week,
        _dup_cohort_number,
        _dup_agent,
        _dup_decision,
        _dup_open_position,
        _dup_leg,
        _double_settlement,
        _dup_snapshot,
        _dup_brier,
        _dup_job_slot,
        _negative_cash,
        _unknown_family,
    ],
)
def test_natural_keys_and_checks_are_enforced_by_the_database(
    engine: Engine, violation: Callable[[Session, dict[str, int]], None]
) -> None:
    ids = seed_basic(engine)
    with pytest.raises(IntegrityError), session_scope(engine) as s:
        violation(s, ids)


def test_a_closed_position_does_not_block_a_new_open_one(engine: Engine) -> None:
    ids = seed_basic(engine)
    with session_scope(engine) as s:
        old = s.exec(select(Position).where(Position.agent_id == ids["agent_1_gpt-5.1"])).one()
        old.status = "sold"
        s.add(old)
        s.flush()
        _dup_open_position(s, ids)


def test_a_reader_sees_committed_data_while_a_writer_holds_the_lock(tmp_path: Any) -> None:
    """SQLite WAL: the dashboard's reader engine never waits on the scheduler's write lock."""
    url = f"sqlite:///{tmp_path / 'wal.db'}"
    from arena.storage.migrate import init_db

    writer = create_db_engine(url)
    init_db(writer)
    seed_basic(writer)
    reader = create_db_engine(url, role="reader", busy_timeout_ms=100)
    with writer.begin() as conn:
        conn.execute(text("UPDATE agents SET cash_balance = 1"))
        with reader.connect() as rconn:
            count = rconn.execute(text("SELECT count(*) FROM agents WHERE cash_balance = 1"))
            assert count.scalar() == 0
    with reader.connect() as rconn:
        assert (
            rconn.execute(text("SELECT count(*) FROM agents WHERE cash_balance = 1")).scalar() == 4
        )


def test_bulk_execute_writes_what_execute_writes(engine: Engine) -> None:
    """Same rows through `bulk_execute` and SQLAlchemy's executemany: Fixed money, aware UTC
    times, JSON lists, a None JSON bound as SQL NULL, and literals the statement carries."""
    from sqlalchemy import JSON, bindparam, func, insert, update

    from arena.storage.db import bulk_execute
    from arena.storage.tables import MARKETS

    def row(mid: str) -> dict[str, Any]:
        return {
            "id": mid,
            "question": f"Q {mid}?",
            "market_type": "binary",
            "outcomes": ["Yes", "No"],
            "prices": ["0.25", "0.75"],
            "volume": 12.5,
            "end_date": WEEK1 + timedelta(days=3),
            "first_seen_at": WEEK1,
            "updated_at": WEEK1,
            "active": True,
            "closed": False,
            "neg_risk": False,
            "status": "open",
            "source": "gamma",
        }

    with engine.begin() as conn:
        conn.execute(insert(MARKETS), [row("a1"), row("a2")])
        bulk_execute(conn, insert(MARKETS), [row("b1"), row("b2")])
        prices = bindparam("b_prices", type_=JSON(none_as_null=True))
        renew = (
            update(MARKETS)
            .where(MARKETS.c.id == bindparam("b_id"))
            .values(
                prices=func.coalesce(prices, MARKETS.c.prices),
                status="closed",  # a literal no row supplies
                updated_at=bindparam("b_at", type_=MARKETS.c.updated_at.type),
            )
        )
        later = WEEK1 + timedelta(hours=1)
        conn.execute(renew, [{"b_id": "a1", "b_prices": None, "b_at": later}])
        bulk_execute(conn, renew, [{"b_id": "b1", "b_prices": None, "b_at": later}])
        conn.execute(renew, [{"b_id": "a2", "b_prices": ["0.5", "0.5"], "b_at": later}])
        bulk_execute(conn, renew, [{"b_id": "b2", "b_prices": ["0.5", "0.5"], "b_at": later}])
    with engine.connect() as conn:
        got = {
            r.id: (r.outcomes, r.prices, r.volume, r.end_date, r.status, r.updated_at)
            for r in conn.execute(MARKETS.select())
        }
    assert got["a1"] == got["b1"] and got["a2"] == got["b2"]
    assert got["b1"][1] == ["0.25", "0.75"]  # NULL kept the old list
    assert got["b2"][1] == ["0.5", "0.5"] and got["b2"][4] == "closed"
    assert got["b2"][5] == WEEK1 + timedelta(hours=1) and got["b2"][3].tzinfo is not None
    with engine.begin() as conn, pytest.raises(ValueError, match="active"):
        bulk_execute(conn, insert(MARKETS), [{k: v for k, v in row("c1").items() if k != "active"}])


def test_postgresql_sessions_run_in_utc_whatever_the_server_default(
    pg_cluster: Any,
) -> None:
    """A database whose default time zone is not UTC: our sessions still run in UTC, and a
    timestamptz comes back as the same instant with `timezone.utc`, which pandas converts
    fast (a `ZoneInfo` there costs about ten times as much)."""
    url = pg_cluster.new_database()
    name = url.rsplit("/", 1)[1]
    engine = create_db_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"ALTER DATABASE {name} SET timezone = 'America/New_York'"))
        engine.dispose()  # new sessions pick up the database default
        with engine.connect() as conn:
            assert conn.execute(text("SHOW timezone")).scalar() == "UTC"
            got = conn.execute(text("SELECT timestamptz '2026-07-01 12:00:00+00'")).scalar()
        assert got == datetime(2026, 7, 1, 12, tzinfo=UTC) and got.tzinfo is UTC
        plain = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(plain) as bare:  # the control: the database default is not UTC
            assert bare.execute("SHOW timezone").fetchone() == ("America/New_York",)
    finally:
        engine.dispose()
        pg_cluster.drop_database(url)


@pytest.fixture
def pg_reader(pg_cluster: Any) -> Iterator[tuple[Engine, Engine]]:
    """A fresh PostgreSQL database's dashboard reader engine, and an admin (writer) engine
    to watch or break the reader's sessions from outside."""
    url = pg_cluster.new_database()
    reader, admin = create_db_engine(url, role="reader"), create_db_engine(url)
    try:
        yield reader, admin
    finally:
        reader.dispose()
        admin.dispose()
        pg_cluster.drop_database(url)


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.exec_driver_sql("select pg_backend_pid()").scalar_one())


def _terminate(admin: Engine, pid: int) -> None:
    """What a server restart or an idle-session timeout does to a pooled connection."""
    with admin.connect() as conn:
        assert conn.exec_driver_sql(f"select pg_terminate_backend({pid})").scalar() is True


def test_a_postgres_reader_holds_no_transaction_between_reads(
    pg_reader: tuple[Engine, Engine],
) -> None:
    """Reader engines on PostgreSQL run in autocommit: a read leaves its session idle, not
    idle in a transaction, and `consistent_read` still gets a real one."""
    reader, admin = pg_reader

    def state(conn: Connection) -> str:
        pid = conn.exec_driver_sql("select pg_backend_pid()").scalar()
        with admin.connect() as other:
            query = "select state from pg_stat_activity where pid = %(pid)s"
            return str(other.exec_driver_sql(query, {"pid": pid}).scalar())

    with reader.connect() as conn:
        assert state(conn) == "idle"
    with consistent_read(reader) as conn:
        assert state(conn) == "idle in transaction"
        level = conn.exec_driver_sql("show transaction_isolation").scalar()
        assert level == "repeatable read"
    with reader.connect() as conn:  # the pool hands it back in autocommit
        assert state(conn) == "idle"


def test_an_idle_postgres_reader_connection_that_died_is_replaced_before_the_read(
    pg_reader: tuple[Engine, Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pooled reader connection idle past `READER_PING_AFTER_IDLE_S` is pinged on
    checkout; a dead one is replaced, and the read never sees it."""
    monkeypatch.setattr(db, "READER_PING_AFTER_IDLE_S", 0.0)
    reader, admin = pg_reader
    first = _backend_pid(reader)
    _terminate(admin, first)
    assert _backend_pid(reader) != first


def test_a_reader_connection_used_moments_ago_is_trusted(
    pg_reader: tuple[Engine, Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The price of not pinging before every read: a connection that died within the idle
    window fails one read; the pool then drops it and the next read gets a new one."""
    monkeypatch.setattr(db, "READER_PING_AFTER_IDLE_S", 3600.0)
    reader, admin = pg_reader
    first = _backend_pid(reader)
    _terminate(admin, first)
    with pytest.raises(DBAPIError) as failed:
        _backend_pid(reader)
    assert failed.value.connection_invalidated
    assert _backend_pid(reader) != first
