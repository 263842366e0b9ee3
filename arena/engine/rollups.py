"""Per-agent portfolio rollups: each agent's last snapshot per time bucket, for curves.

Why: a year of 10-minute snapshots is millions of rows; a chart needs a few hundred points
per line. `portfolio_rollups` keeps, for every agent and each width in `WIDTHS` (1 h, 4 h,
12 h, 1 day, 7 days, the curve ladder's steps from an hour up), the snapshot that ends each
bucket: its slot, total value and P/L. Buckets start at multiples of their width in epoch
seconds (the curves' alignment).

The table is derived data. The snapshot job folds each pass's rows in (`roll_up_slot`, one
set-based statement in the pass's transaction, so rollups and snapshots commit together), and
`rebuild_rollups` recomputes it from `portfolio_snapshots` (the migration that created it,
bulk loads, repairs). A later slot always wins a bucket; an earlier one rerun late never
overwrites it.
"""

from typing import Any

from sqlalchemy import (
    Connection,
    Integer,
    and_,
    bindparam,
    delete,
    func,
    insert,
    literal,
    select,
    true,
    union_all,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from arena.storage.models import ROLLUP_DAY, ROLLUP_HOUR, ROLLUP_WIDTHS
from arena.storage.sqltime import epoch_bucket
from arena.storage.tables import PORTFOLIO_ROLLUPS as ROLLUPS
from arena.storage.tables import PORTFOLIO_SNAPSHOTS as SNAPSHOTS

HOUR, DAY, WIDTHS = ROLLUP_HOUR, ROLLUP_DAY, ROLLUP_WIDTHS
_COLUMNS = ("agent_id", "width", "bucket", "slot", "total_value", "total_pnl")


def _widths() -> Any:
    """The widths as a one-column derived table (portable: no VALUES column aliases in SQLite)."""
    return union_all(*(select(literal(w, Integer).label("width")) for w in WIDTHS)).subquery(
        "widths"
    )


def _insert(dialect: str) -> Any:
    return sqlite.insert(ROLLUPS) if dialect == "sqlite" else postgresql.insert(ROLLUPS)


def _upsert_from(select_rows: Any, dialect: str) -> Any:
    """INSERT rows … ON CONFLICT: a bucket keeps the latest slot seen for it."""
    statement = _insert(dialect).from_select(list(_COLUMNS), select_rows)
    excluded = statement.excluded
    return statement.on_conflict_do_update(
        index_elements=[ROLLUPS.c.agent_id, ROLLUPS.c.width, ROLLUPS.c.bucket],
        set_={
            "slot": excluded.slot,
            "total_value": excluded.total_value,
            "total_pnl": excluded.total_pnl,
        },
        where=excluded.slot >= ROLLUPS.c.slot,
    )


def _slot_statement(dialect: str, one_agent: bool = False) -> Any:
    widths = _widths()
    rows = (
        select(
            SNAPSHOTS.c.agent_id,
            widths.c.width,
            epoch_bucket(SNAPSHOTS.c.slot, widths.c.width, dialect),
            SNAPSHOTS.c.slot,
            SNAPSHOTS.c.total_value,
            SNAPSHOTS.c.total_pnl,
        )
        .select_from(SNAPSHOTS.join(widths, true()))  # every row in every width
        .where(SNAPSHOTS.c.slot == bindparam("b_slot", type_=SNAPSHOTS.c.slot.type))
    )
    if one_agent:
        rows = rows.where(SNAPSHOTS.c.agent_id == bindparam("b_agent"))
    return _upsert_from(rows, dialect)


_SLOT_STATEMENTS = {dialect: _slot_statement(dialect) for dialect in ("sqlite", "postgresql")}
_AGENT_SLOT_STATEMENTS = {d: _slot_statement(d, one_agent=True) for d in ("sqlite", "postgresql")}


def roll_up_slot(conn: Connection, slot: Any, agent_id: int | None = None) -> None:
    """Fold every snapshot of `slot` (of `agent_id` alone when given: a late entrant's
    replayed snapshot) into every width's bucket (one statement)."""
    if agent_id is None:
        conn.execute(_SLOT_STATEMENTS[conn.dialect.name], {"b_slot": slot})
    else:
        statements = _AGENT_SLOT_STATEMENTS[conn.dialect.name]
        conn.execute(statements, {"b_slot": slot, "b_agent": agent_id})


def rebuild_rollups(target: Engine | Connection) -> int:
    """Recompute the whole table from `portfolio_snapshots`; returns the rows written.

    Widths nest, so each is grouped from the one below it (snapshots → 1 h → 4 h → …):
    the millions of snapshots are grouped once.
    """
    if isinstance(target, Engine):
        with target.begin() as conn:
            return rebuild_rollups(conn)
    conn = target
    dialect = conn.dialect.name
    conn.execute(delete(ROLLUPS))
    written = 0
    source_width: int | None = None
    for width in WIDTHS:
        written += conn.execute(_rebuild_width(width, source_width, dialect)).rowcount or 0
        source_width = width
    return written


def _rebuild_width(width: int, source_width: int | None, dialect: str) -> Any:
    """INSERT the `width` buckets, grouped from snapshots (None) or a narrower rollup."""
    if source_width is None:
        source = select(
            SNAPSHOTS.c.agent_id, SNAPSHOTS.c.slot, SNAPSHOTS.c.total_value, SNAPSHOTS.c.total_pnl
        ).subquery("source")
    else:
        source = (
            select(ROLLUPS.c.agent_id, ROLLUPS.c.slot, ROLLUPS.c.total_value, ROLLUPS.c.total_pnl)
            .where(ROLLUPS.c.width == source_width)
            .subquery("source")
        )
    bucket = epoch_bucket(source.c.slot, width, dialect)
    last = (
        select(source.c.agent_id, bucket.label("bucket"), func.max(source.c.slot).label("slot"))
        .group_by(source.c.agent_id, bucket)
        .subquery("last")
    )
    rows = select(
        last.c.agent_id,
        literal(width, Integer),
        last.c.bucket,
        last.c.slot,
        source.c.total_value,
        source.c.total_pnl,
    ).join(source, and_(source.c.agent_id == last.c.agent_id, source.c.slot == last.c.slot))
    return insert(ROLLUPS).from_select(list(_COLUMNS), rows)
