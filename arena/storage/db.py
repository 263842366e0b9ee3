"""Database engines and sessions for SQLite (embedded default) and PostgreSQL (production).

SQLite is opened in WAL mode so the dashboard can read while the scheduler writes, with a
busy timeout and foreign keys on. Writer engines start every transaction with
`BEGIN IMMEDIATE`, taking SQLite's write lock up front: two writers queue on the busy
timeout instead of deadlocking on a lock upgrade, which is what makes claims safe across
processes. Reader engines (the dashboard) use plain deferred transactions and never block
the writer.
"""

import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DisconnectionError, OperationalError
from sqlalchemy.sql import Executable
from sqlmodel import Session

from arena.core.errors import ConfigError, DatabaseBusyError

Role = Literal["writer", "reader"]
SQLITE_BUSY_TIMEOUT_MS = 30_000

_engines: dict[tuple[str, str], Engine] = {}


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def create_db_engine(
    url: str, role: Role = "writer", busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS
) -> Engine:
    """A new engine for `url`; SQLite files get WAL, busy_timeout and foreign keys."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(
            f"ARENA_DATABASE_URL {url!r} is not a database URL",
            "use e.g. sqlite:///data/arena.db or postgresql+psycopg://user@host/db",
        ) from None
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, parsed.database, role, busy_timeout_ms)
    if parsed.get_backend_name() == "postgresql":
        return _postgresql_engine(url, role)
    raise ConfigError(
        f"unsupported database backend {parsed.get_backend_name()!r}",
        "use sqlite:/// or postgresql+psycopg://",
    )


def _postgresql_engine(url: str, role: Role) -> Engine:
    """Sessions in UTC, whatever the server's default: times come back as UTC (psycopg hands
    out `timezone.utc` for a session named exactly "UTC", which pandas converts about ten
    times faster than a `ZoneInfo`), and any date arithmetic in SQL is done in UTC.

    Reader engines run in autocommit. Under PostgreSQL's READ COMMITTED every statement
    takes its own snapshot anyway, so nothing a reader sees changes; what goes is a BEGIN and
    a ROLLBACK round trip per connection (a third of a millisecond each time the dashboard
    reads), and no reader can be left idle in a transaction. A read that needs one snapshot
    across statements, or a streaming cursor, asks for it: `consistent_read`.
    """
    reader = role == "reader"
    options: dict[str, Any] = {"isolation_level": "AUTOCOMMIT"} if reader else {}
    engine = create_engine(url, pool_pre_ping=not reader, pool_size=5, max_overflow=5, **options)
    if reader:
        _ping_after_idle(engine)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("SET TIME ZONE 'UTC'")
        dbapi_conn.commit()

    return engine


# A pooled reader connection idle at least this long is pinged before it is handed out.
READER_PING_AFTER_IDLE_S = 10.0


def _ping_after_idle(engine: Engine) -> None:
    """`pool_pre_ping`, but only for a connection idle `READER_PING_AFTER_IDLE_S` or more.

    Why: a dashboard page makes several reads back to back, and a ping before each doubled
    the round trips of the short ones. A connection used moments ago is trusted; one that sat
    idle (the first read of a page, after a server restart say) is pinged, and a dead one is
    replaced before the read, as `pool_pre_ping` does (SQLAlchemy retries the checkout on
    `DisconnectionError`). A server restart in the seconds between two reads of one page
    fails that read only; the pool then drops every connection older than the failure.
    """

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_conn: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        idle_since = record.info.pop("idle_since", None)
        if idle_since is None or time.monotonic() - idle_since < READER_PING_AFTER_IDLE_S:
            return
        try:
            dbapi_conn.execute("SELECT 1")
        except engine.dialect.loaded_dbapi.Error as exc:
            raise DisconnectionError(f"idle reader connection is gone: {exc}") from exc


def _sqlite_engine(url: str, database: str | None, role: Role, busy_timeout_ms: int) -> Engine:
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"timeout": busy_timeout_ms / 1000, "check_same_thread": False},
    )
    begin = "BEGIN IMMEDIATE" if role == "writer" else "BEGIN"

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
        # Let SQLAlchemy, not pysqlite, decide when transactions begin (see below).
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cursor.execute("PRAGMA foreign_keys = ON")
        if role == "writer":
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql(begin)

    return engine


def consistent_read(engine: Engine) -> Connection:
    """A read connection whose statements all see one snapshot, even while the scheduler
    writes: REPEATABLE READ on PostgreSQL (a real transaction, so server-side cursors work
    on an autocommit reader too); on SQLite the deferred read transaction already is one
    snapshot, from its first read until the connection closes."""
    conn = engine.connect()
    if engine.dialect.name == "postgresql":
        conn = conn.execution_options(isolation_level="REPEATABLE READ")
    return conn


def get_engine(url: str | None = None, role: Role = "writer") -> Engine:
    """The process-wide engine for `url` (default: the configured database)."""
    from arena.config import get_settings

    settings = get_settings()
    url = url or settings.database_url
    key = (url, role)
    if key not in _engines:
        _engines[key] = create_db_engine(url, role, settings.sqlite_busy_timeout_ms)
    return _engines[key]


def dispose_engines() -> None:
    """Close every cached engine (tests, forks, shutdown)."""
    for engine in _engines.values():
        engine.dispose()
    _engines.clear()


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """One unit of work: commit on success, roll back on any error, always close.

    A SQLite lock that outlasts the busy timeout surfaces as `DatabaseBusyError`, a clear
    message instead of a driver traceback.
    """
    session = Session(engine, expire_on_commit=False)
    try:
        yield session
        session.commit()
    except OperationalError as exc:
        session.rollback()
        if is_locked_error(exc):
            raise busy_error() from exc
        raise
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


@contextmanager
def transaction(engine: Engine) -> Iterator[Connection]:
    """`session_scope` for Core-only jobs: one transaction on a plain connection, without the
    ORM's per-statement overhead (the snapshot pass runs every 10 minutes for months)."""
    try:
        with engine.begin() as conn:
            yield conn
    except OperationalError as exc:
        if is_locked_error(exc):
            raise busy_error() from exc
        raise


@dataclass(frozen=True)
class _BulkPlan:
    """A statement compiled once for one dialect and one set of row keys."""

    sql: str
    names: tuple[str, ...]  # bind names, in the order a positional driver wants them
    positional: bool
    defaults: dict[str, Any]  # binds no row supplies (literals the statement carries)
    steps: tuple[tuple[str, Callable[[Any], Any] | None], ...]  # (name, bind processor)


_bulk_plans: dict[tuple[int, str, tuple[str, ...]], tuple[Executable, _BulkPlan]] = {}


def bulk_execute(
    conn: Connection, statement: Executable, rows: Sequence[Mapping[str, Any]]
) -> None:
    """`conn.execute(statement, rows)` for hundreds of rows at a time, without SQLAlchemy's
    per-row parameter bookkeeping (about 15 µs a row, the bulk of a 500-market sync).

    Same SQL and the same type processing: the statement is compiled once per dialect and
    key set (cached by statement identity, so pass module-level statements), each column
    type's own bind processor converts the values, and the driver's executemany runs it.
    Every row must have the keys of the first, and give every column that has a Python-side
    default (a ValueError says which, instead of a NULL or a constraint error).
    """
    if not rows:
        return
    keys = tuple(rows[0])
    cache_key = (id(statement), conn.dialect.name, keys)
    cached = _bulk_plans.get(cache_key)
    if cached is None or cached[0] is not statement:
        cached = _bulk_plans[cache_key] = (statement, _bulk_plan(conn, statement, keys))
    plan = cached[1]
    steps = plan.steps
    params: list[Any] = []
    for row in rows:
        merged = {**plan.defaults, **row} if plan.defaults else row
        values = [merged[name] if bind is None else bind(merged[name]) for name, bind in steps]
        params.append(
            tuple(values) if plan.positional else dict(zip(plan.names, values, strict=True))
        )
    conn.exec_driver_sql(plan.sql, params)


def _bulk_plan(conn: Connection, statement: Executable, keys: tuple[str, ...]) -> _BulkPlan:
    dialect = conn.dialect
    compiled = statement.compile(dialect=dialect, column_keys=list(keys))  # type: ignore[attr-defined]
    defaulted = [c.key for c in (*compiled.insert_prefetch, *compiled.update_prefetch)]
    if defaulted:  # Python-side column defaults are the one thing this path does not run
        raise ValueError(f"bulk_execute: rows must give {', '.join(defaulted)} (column defaults)")
    names = tuple(compiled.positiontup or compiled.params)
    steps = tuple(
        (name, compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect))
        for name in names
    )
    defaults = {name: value for name, value in compiled.params.items() if name not in keys}
    return _BulkPlan(compiled.string, names, bool(compiled.positiontup), defaults, steps)


def busy_error() -> DatabaseBusyError:
    """The one clear error for a SQLite lock that outlasted the busy timeout."""
    return DatabaseBusyError(
        "the database is locked by another process and stayed locked past the busy timeout",
        "retry shortly; if it persists, look for a stuck process holding the database",
    )


def is_locked_error(exc: BaseException) -> bool:
    text = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in text or "database is busy" in text
