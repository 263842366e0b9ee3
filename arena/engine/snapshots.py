"""`arena snapshot`: value every live portfolio, one row per agent per slot (methodology §12).

The pass is set-based and all-or-nothing: a fixed handful of statements whatever the number
of agents or positions, inside one transaction, so a failure writes nothing and a rerun in the
same slot simply overwrites the slot's rows (upsert on agent × slot).

Valuation follows §12.4: an open market with a usable live price marks at it; a closed but
unresolved market, or one whose prices are unusable, keeps the position's last mark (never
its leftover trading price); a position never marked is valued at its entry price.

Agents, their open positions and those positions' markets are read in ONE statement, so on
PostgreSQL (read committed) cash and positions come from the same instant: a trade committing
mid-pass can never be counted half (cash spent but position missing).

A cohort stamped methodology v2 marks at validated CLOB midpoints instead, read for the open
positions of v2 cohorts in one batched request before the pass (`arena.engine.provenance`); a
position with no CLOB price keeps its prior value. Its rows record each position's mark and
where it came from (`price_provenance`); a v1 row has none. A `book_execution` cohort marks
at what its shares would fetch from the bids of its token's book, read the same way
(`snapshot_prices.BookMarks`). A pass without v2 or `book_execution` positions never reads the
CLOB.

A late entrant's shadow is valued by its player one agent at a time (`write_agent_snapshot`),
never by this pass; the demo copies a pass nothing changed since (`carry_forward`).
"""

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Text,
    and_,
    bindparam,
    cast,
    exists,
    func,
    insert,
    select,
    type_coerce,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from arena.config import is_v2
from arena.core.accounting import (
    TradeRejected,
    choose_mark,
    mark_value,
    portfolio_value,
    side_price,
)
from arena.core.money import money
from arena.core.scoring import return_pct
from arena.core.timeutil import slot_start
from arena.engine.cohorts import decision_week, window_weeks_of
from arena.engine.logs import log_event
from arena.engine.provenance import PriceReader
from arena.engine.rollups import roll_up_slot
from arena.engine.snapshot_prices import BookMarks, V2Marks, pass_marks
from arena.markets.price_source import PriceQuote
from arena.storage.db import bulk_execute, is_sqlite, transaction
from arena.storage.dbtypes import from_units
from arena.storage.tables import AGENTS as _agents
from arena.storage.tables import BRIER_SCORES as _briers
from arena.storage.tables import COHORTS as _cohorts
from arena.storage.tables import MARKETS as _markets
from arena.storage.tables import PORTFOLIO_SNAPSHOTS as _snapshots
from arena.storage.tables import POSITIONS as _positions
from arena.storage.tables import live_cohort

log = logging.getLogger("arena.engine.snapshots")

SOURCE = "snapshot"


_UPSERT_COLUMNS = (
    "snapshot_timestamp",
    "cash_balance",
    "positions_value",
    "total_value",
    "total_pnl",
    "total_pnl_percent",
    "brier_score",
    "num_resolved_bets",
    "price_provenance",
)


@dataclass
class SnapshotResult:
    """What one snapshot pass did, for the job log."""

    slot: datetime | None = None
    agents: int = 0
    rows_written: int = 0
    positions_marked: int = 0
    cohorts_completed: int = 0
    cohorts_tracking: int = 0

    def counts(self) -> dict[str, object]:
        return {
            "slot": self.slot.isoformat() if self.slot else None,
            "agents": self.agents,
            "rows_written": self.rows_written,
            "positions_marked": self.positions_marked,
            "cohorts_completed": self.cohorts_completed,
            "cohorts_tracking": self.cohorts_tracking,
        }


@dataclass
class _Book:
    """One agent's accounts as read for this pass."""

    agent_id: int
    cohort_id: int
    cash: Decimal
    starting_balance: Decimal
    position_values: list[Decimal] = field(default_factory=list)
    provenance: dict[str, Any] | None = None  # v2: each position's mark record, by id


@dataclass(frozen=True)
class Valuation:
    """The mark of one open position and whether it was a fresh live price."""

    mark: Decimal
    live: bool


def value_position(
    market_type: str,
    outcomes: list[str] | None,
    prices: list[Any] | None,
    side: str,
    market_open: bool,
    last_mark: Decimal | None,
    avg_entry: Decimal,
) -> Valuation:
    """The §12.4 mark of one position: live price if open and usable, else last mark, else entry."""
    try:
        live: Decimal | None = side_price(market_type, outcomes or [], prices or [], side)
    except TradeRejected:
        live = None
    mark = choose_mark(market_open, live, last_mark, avg_entry)
    return Valuation(mark, market_open and live is not None)


def take_snapshots(
    engine: Engine,
    at: datetime,
    *,
    interval_minutes: int = 10,
    decision_window_weeks: int = 5,
    prices: Callable[[], PriceReader] | None = None,
) -> SnapshotResult:
    """Value every agent of every live cohort as of `at`, then move cohort statuses along.

    `prices`: the CLOB reader for v2 cohorts' marks and `book_execution` cohorts' bid marks,
    asked for only when such a live cohort holds an open position (one batched read each,
    before the pass's transaction).

    Live cohort = not completed and already started (week_start <= at). Writes one snapshot
    row per agent for the slot of `at` (upsert), refreshes the marks of positions priced live,
    and updates cohort statuses: deciding inside the decision window (the cohort's stamped
    `decision_window_weeks`, else `decision_window_weeks`), tracking after it, completed once
    tracking with no open position left. One transaction for all of it.
    """
    if at.tzinfo is None:
        raise ValueError("take_snapshots needs an aware UTC datetime for `at`")
    slot = slot_start(at, interval_minutes)
    result = SnapshotResult(slot=slot)
    quotes, at_bid = pass_marks(engine, at, prices)  # at_bid: book_execution's bid marks
    with transaction(engine) as conn:
        books, marks = _read_and_value(conn, at, quotes, at_bid)
        briers = _brier_aggregates(conn, at)
        result.positions_marked = _store_marks(conn, marks, at)
        rows = [_snapshot_row(book, briers.get(book.agent_id), slot, at) for book in books]
        result.rows_written = _upsert_snapshots(conn, rows, is_sqlite(engine))
        result.agents = len(books)
        holding = {book.cohort_id for book in books if book.position_values}
        finish_pass(conn, at, result, decision_window_weeks, holding)
    return result


def carry_forward(
    conn: Connection,
    source: datetime,
    at: datetime,
    *,
    interval_minutes: int = 10,
    decision_window_weeks: int = 5,
) -> SnapshotResult:
    """The pass of `at` when nothing it reads has changed since the pass of slot `source`:
    that pass's rows of still-live agents copied under the new slot (one INSERT … SELECT),
    then `finish_pass` as usual, in the caller's transaction.

    Why: between two market syncs a pass recomputes identical rows. Only a caller that knows
    nothing changed may use it — no sync, trade, settlement or new cohort since `source`:
    the demo's simulated clock knows (it runs every job itself); the live scheduler does not,
    so it always takes a real pass. A cohort completed by the source pass drops out here.
    """
    result = SnapshotResult(slot=slot_start(at, interval_minutes))
    params = {"b_source": source, "b_slot": result.slot, "b_at": at}
    copied = conn.execute(_COPY, params).all()  # RETURNING: rowcount is -1 on psycopg
    result.rows_written = result.agents = len(copied)
    finish_pass(conn, at, result, decision_window_weeks)
    return result


def finish_pass(
    conn: Connection,
    at: datetime,
    result: SnapshotResult,
    decision_window_weeks: int = 5,
    holding: set[int] | None = None,
) -> None:
    """Close a pass whose rows for `result.slot` are written, in the pass's transaction: fold
    them into the rollups, move cohort statuses along (into `result`'s counts), log the pass.

    `holding`: the cohorts with an open position in the pass's read; None leaves completion
    to the UPDATE's own open-position check. Public for a bulk load that writes a pass's rows
    another way (bench/make_year.py carries unchanged rows forward)."""
    assert result.slot is not None
    if result.rows_written:
        roll_up_slot(conn, result.slot)
    result.cohorts_tracking, result.cohorts_completed = _update_cohort_statuses(
        conn, at, decision_window_weeks, holding if holding is not None else set()
    )
    log_event(
        conn,
        at,
        "INFO",
        SOURCE,
        f"snapshot {result.slot.isoformat()}: {result.rows_written} agent(s), "
        f"{result.positions_marked} position(s) marked live, "
        f"{result.cohorts_completed} cohort(s) completed",
        **result.counts(),
    )


# The pass's statements are built once (it runs every 10 minutes for months, and in a demo
# season ten thousand times); `b_now` binds the pass's `at`.
_NOW = bindparam("b_now", type_=_cohorts.c.week_start.type)
# a cohort still worth valuing at `b_now`: live (a late entrant's shadow is valued by its
# player, never by this pass), not completed and already started
_LIVE_COHORT = and_(
    _cohorts.c.status != "completed", _cohorts.c.week_start <= _NOW, live_cohort(_cohorts)
)


def _copy_statement() -> Any:
    """INSERT … SELECT of slot `b_source`'s rows of agents whose cohort is not completed,
    under slot `b_slot` and timestamp `b_at` (`carry_forward`)."""
    live = (
        select(_snapshots)
        .join(_agents, _agents.c.id == _snapshots.c.agent_id)
        .join(_cohorts, _cohorts.c.id == _agents.c.cohort_id)
        .where(
            _snapshots.c.slot == bindparam("b_source", type_=_snapshots.c.slot.type),
            _cohorts.c.status != "completed",
            live_cohort(_cohorts),
        )
        .subquery("live")
    )
    new = {
        "slot": bindparam("b_slot", type_=_snapshots.c.slot.type),
        "snapshot_timestamp": bindparam("b_at", type_=_snapshots.c.snapshot_timestamp.type),
    }
    columns = [column.name for column in _snapshots.c if column.name != "id"]
    values = [new.get(name, live.c[name]) for name in columns]
    return (
        insert(_snapshots)
        .from_select(columns, select(*values).order_by(live.c.agent_id))
        .returning(_snapshots.c.agent_id)
    )


_COPY = _copy_statement()


def _raw(column: Any) -> Any:
    """A Fixed column read as its stored integer (decoded once per distinct value, below)."""
    return type_coerce(column, BigInteger)


_BOOKS = (
    select(
        _agents.c.id,
        _agents.c.cohort_id,
        _cohorts.c.methodology_version,
        _positions.c.market_id,
        _raw(_agents.c.cash_balance),
        _raw(_agents.c.starting_balance),
        _positions.c.id,
        _markets.c.market_type,
        cast(_markets.c.outcomes, Text),
        cast(_markets.c.prices, Text),
        _positions.c.side,
        and_(_markets.c.status == "open", ~_markets.c.closed),
        _raw(_positions.c.mark_price),
        _raw(_positions.c.avg_entry_price),
        _raw(_positions.c.shares),
    )
    .select_from(
        _agents.join(_cohorts, _cohorts.c.id == _agents.c.cohort_id)
        .outerjoin(
            _positions,
            and_(_positions.c.agent_id == _agents.c.id, _positions.c.status == "open"),
        )
        .outerjoin(_markets, _markets.c.id == _positions.c.market_id)
    )
    .where(_LIVE_COHORT)
    .order_by(_agents.c.id, _positions.c.id)
)


def _read_and_value(
    conn: Connection,
    at: datetime,
    quotes: Mapping[str, list[PriceQuote]] | None = None,
    at_bid: BookMarks | None = None,
) -> tuple[list[_Book], list[dict[str, Any]]]:
    """Every live agent with its open positions and their markets, in one statement.

    Returns the books (cash plus the value of each position) and the live marks to store.
    Columns are read raw (integer units, JSON text) and each distinct (market prices,
    position) combination is valued once by the memoised `_valued`: between two market syncs
    every pass sees the same inputs, so a pass costs a lookup per position, not a JSON decode
    and a Decimal valuation.
    """
    books: dict[int, _Book] = {}
    marks: list[dict[str, Any]] = []
    v2 = V2Marks(quotes)
    bid_cohorts = at_bid.cohorts if at_bid is not None else set()
    rows = conn.execute(_BOOKS, {"b_now": at}).all()
    for agent_id, cohort_id, version, market_id, cash, starting, position_id, *key in rows:
        book = books.get(agent_id)
        if book is None:
            book = books[agent_id] = _Book(
                agent_id, cohort_id, from_units(cash), from_units(starting)
            )
            if is_v2(version) or cohort_id in bid_cohorts:
                book.provenance = {}
        if position_id is None:
            continue
        if at_bid is not None and cohort_id in bid_cohorts:
            mark, value, changed, record = at_bid.value(market_id, *key)
            book.provenance[str(position_id)] = record  # type: ignore[index]
        elif book.provenance is not None:
            mark, value, changed, record = v2.value(market_id, *key)
            book.provenance[str(position_id)] = record
        else:
            mark, value, changed = _valued(*key)
        book.position_values.append(value)
        if changed:
            marks.append({"b_id": position_id, "b_mark": mark})
    return list(books.values()), marks


@lru_cache(maxsize=1 << 14)
def _valued(
    market_type: str,
    outcomes_json: str | None,
    prices_json: str | None,
    side: str,
    market_open: bool | int | None,
    last_mark: int | None,
    avg_entry: int,
    share_count: int,
) -> tuple[Decimal, Decimal, bool]:
    """(mark, position value, whether the mark is a new live price) for one raw position row.

    Pure in its arguments (raw column values), hence safe to memoise across passes.
    """
    previous = from_units(last_mark) if last_mark is not None else None
    valuation = value_position(
        market_type,
        _json_list(outcomes_json),
        _json_list(prices_json),
        side,
        bool(market_open),
        previous,
        from_units(avg_entry),
    )
    changed = valuation.live and valuation.mark != previous
    return valuation.mark, mark_value(from_units(share_count), valuation.mark), changed


def _json_list(text: str | None) -> list[Any] | None:
    """A stored JSON list (None when absent or not a list: the valuation then falls back)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


_BRIERS = (
    select(_briers.c.agent_id, func.avg(_briers.c.brier_score), func.count(_briers.c.id))
    .where(
        _briers.c.agent_id.in_(
            select(_agents.c.id)
            .join(_cohorts, _cohorts.c.id == _agents.c.cohort_id)
            .where(_LIVE_COHORT)
        )
    )
    .group_by(_briers.c.agent_id)
)


def _brier_aggregates(conn: Connection, at: datetime) -> dict[int, tuple[float, int]]:
    """(mean Brier, resolved bets) per live agent, one grouped statement."""
    rows = conn.execute(_BRIERS, {"b_now": at}).all()
    return {agent_id: (float(mean), int(n)) for agent_id, mean, n in rows}


def _store_marks(conn: Connection, marks: list[dict[str, Any]], at: datetime) -> int:
    """Remember each live mark on its position (one executemany).

    Guarded by status = 'open': a position settled by a concurrent resolve keeps its final
    mark (1, 0 or entry) instead of being overwritten with a trading price.
    """
    if not marks:
        return 0
    bulk_execute(conn, _STORE_MARK, [{**mark, "b_at": at} for mark in marks])
    return len(marks)


_STORE_MARK = (
    update(_positions)
    .where(_positions.c.id == bindparam("b_id"), _positions.c.status == "open")
    .values(
        mark_price=bindparam("b_mark", type_=_positions.c.mark_price.type),
        marked_at=bindparam("b_at", type_=_positions.c.marked_at.type),
    )
)


def _snapshot_row(
    book: _Book, brier: tuple[float, int] | None, slot: datetime, at: datetime
) -> dict[str, Any]:
    positions_value = money(sum(book.position_values, Decimal(0)))
    total = portfolio_value(book.cash, book.position_values)
    mean_brier, resolved = brier if brier is not None else (None, 0)
    return {
        "agent_id": book.agent_id,
        "slot": slot,
        "snapshot_timestamp": at,
        "cash_balance": book.cash,
        "positions_value": positions_value,
        "total_value": total,
        "total_pnl": total - book.starting_balance,
        "total_pnl_percent": return_pct(total, book.starting_balance),
        "brier_score": mean_brier,
        "num_resolved_bets": resolved,
        "price_provenance": book.provenance,
    }


def write_agent_snapshot(
    conn: Connection,
    agent_id: int,
    cash: Decimal,
    starting_balance: Decimal,
    position_values: list[Decimal],
    provenance: dict[str, Any] | None,
    brier: tuple[float, int] | None,
    slot: datetime,
    at: datetime,
) -> None:
    """One agent's snapshot row for `slot` (upsert) and its rollups, nobody else's: a late
    entrant's replayed valuation (`arena.engine.late_entry_runs`), in the caller's
    transaction. The row is built as a pass builds every row (`_snapshot_row`)."""
    book = _Book(agent_id, 0, cash, starting_balance, position_values, provenance)
    _upsert_snapshots(conn, [_snapshot_row(book, brier, slot, at)], conn.dialect.name == "sqlite")
    roll_up_slot(conn, slot, agent_id)


def _upsert_snapshots(conn: Connection, rows: list[dict[str, Any]], on_sqlite: bool) -> int:
    """Insert the slot's rows, or overwrite them when this slot was already taken (rerun)."""
    if not rows:
        return 0
    bulk_execute(conn, _UPSERT_SQLITE if on_sqlite else _UPSERT_POSTGRESQL, rows)
    return len(rows)


def _upsert_statement(insert: Any) -> Any:
    return insert.on_conflict_do_update(
        index_elements=[_snapshots.c.agent_id, _snapshots.c.slot],
        set_={name: insert.excluded[name] for name in _UPSERT_COLUMNS},
    )


_UPSERT_SQLITE = _upsert_statement(sqlite.insert(_snapshots))
_UPSERT_POSTGRESQL = _upsert_statement(postgresql.insert(_snapshots))


def _update_cohort_statuses(
    conn: Connection, at: datetime, default_window: int, holding: set[int]
) -> tuple[int, int]:
    """Deciding inside the window, tracking after it, completed when nothing is left open.

    Each cohort's window is the one it was stamped with, read exactly as the decision run
    reads it (`window_weeks_of`), so a cohort is never completed while it may still decide.
    One read of the (few) live cohorts; an UPDATE only for a cohort whose status must change
    (most passes write nothing). `holding` = cohorts with an open position in this pass's read;
    the completion UPDATE re-checks it in SQL. A completed cohort is final. Returns (cohorts
    that became tracking, cohorts that became completed).
    """
    columns = (_cohorts.c.id, _cohorts.c.status, _cohorts.c.week_start, _cohorts.c.constants)
    live = conn.execute(select(*columns).where(_LIVE_COHORT), {"b_now": at}).all()
    to_deciding: list[int] = []
    to_tracking: list[int] = []
    to_complete: list[int] = []
    for cohort in live:
        in_window = decision_week(cohort.week_start, at) <= window_weeks_of(cohort, default_window)
        if in_window:
            if cohort.status != "deciding":
                to_deciding.append(cohort.id)
            continue
        if cohort.status != "tracking":
            to_tracking.append(cohort.id)
        if cohort.id not in holding:
            to_complete.append(cohort.id)
    if to_deciding:
        conn.execute(
            update(_cohorts).where(_cohorts.c.id.in_(to_deciding)).values(status="deciding")
        )
    tracking = 0
    if to_tracking:
        tracking = conn.execute(
            update(_cohorts).where(_cohorts.c.id.in_(to_tracking)).values(status="tracking")
        ).rowcount
    if not to_complete:
        return tracking, 0
    open_position = exists().where(
        _positions.c.status == "open",
        _positions.c.agent_id == _agents.c.id,
        _agents.c.cohort_id == _cohorts.c.id,
    )
    completed = conn.execute(
        update(_cohorts)
        .where(_cohorts.c.id.in_(to_complete), _cohorts.c.status == "tracking", ~open_position)
        .values(status="completed", completed_at=at)
    ).rowcount
    return tracking, completed
