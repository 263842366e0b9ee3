"""The database as a whole: each main table's row count (`overview`, stored by the hourly
job) and what one of its rows is, the families' names, the schema revision and the backend.

Nothing here writes: the dashboard opens the database with a reader engine, and checks a
SQLite file exists before it opens one (`sqlite_file_missing`), since connecting would create
an empty file.
"""

from pathlib import Path

import pandas as pd
from sqlalchemy import Table, func, select
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError

from arena.storage.migrate import current_revision
from arena.storage.tables import (
    AGENTS,
    BRIER_SCORES,
    COHORTS,
    DECISIONS,
    FAMILIES,
    JOB_RUNS,
    MARKETS,
    PORTFOLIO_SNAPSHOTS,
    POSITIONS,
    TRADES,
)

# The tables the overview counts, in the order a reader follows the data: who competes, the
# weekly competitions, the markets, then what the engine wrote.
OVERVIEW_TABLES: tuple[Table, ...] = (
    FAMILIES,
    COHORTS,
    AGENTS,
    MARKETS,
    DECISIONS,
    TRADES,
    POSITIONS,
    PORTFOLIO_SNAPSHOTS,
    BRIER_SCORES,
    JOB_RUNS,
)

OVERVIEW_COLUMNS: tuple[str, ...] = ("table", "rows")

# What a person calls each counted table, and what one of its rows is (display only: the
# frame and its CSV keep the table names).
TABLE_LABELS: dict[str, tuple[str, str]] = {
    "families": ("Families", "a competing model or baseline, across cohorts"),
    "cohorts": ("Cohorts", "a weekly competition, stamped with its methodology"),
    "agents": ("Agents", "one family in one cohort, with its own $10,000"),
    "markets": ("Markets", "a Polymarket market the arena has synced"),
    "decisions": ("Decisions", "one agent's weekly answer (prompt, raw response, legs)"),
    "trades": ("Trades", "a BUY, SELL, settlement or refund"),
    "positions": ("Positions", "an agent's holding of one side of one market"),
    "portfolio_snapshots": ("Portfolio snapshots", "one agent's value at a 10-minute slot"),
    "brier_scores": ("Brier scores", "one resolved bet, scored"),
    "job_runs": ("Job runs", "one scheduled job for one slot"),
}


def table_label(table: str) -> str:
    """A table's name as a person reads it (the table name itself when unknown)."""
    return TABLE_LABELS.get(table, (table, ""))[0]


def table_meaning(table: str) -> str:
    """What one row of `table` is, in a few words ("" when unknown)."""
    return TABLE_LABELS.get(table, (table, ""))[1]


def overview(engine: Engine) -> pd.DataFrame:
    """Row counts of the main tables, one row per table.

    Columns: ``table`` (str, the database table name) and ``rows`` (int64, its row count),
    in the order of `OVERVIEW_TABLES`. All counts come from ONE select of scalar subqueries,
    so they are a consistent snapshot even while the scheduler writes.
    """
    counts = select(
        *(
            select(func.count()).select_from(table).scalar_subquery().label(table.name)
            for table in OVERVIEW_TABLES
        )
    )
    with engine.connect() as conn:
        row = conn.execute(counts).one()
    frame = pd.DataFrame(
        {
            "table": [table.name for table in OVERVIEW_TABLES],
            "rows": [int(value) for value in row],
        },
        columns=list(OVERVIEW_COLUMNS),
    )
    return frame.astype({"table": "string", "rows": "int64"})


def family_names(engine: Engine) -> dict[str, str]:
    """Every family's display name by id (for selectors that show names, keep ids)."""
    with engine.connect() as conn:
        rows = conn.execute(select(FAMILIES.c.id, FAMILIES.c.display_name).order_by(FAMILIES.c.id))
        return {str(family_id): str(name) for family_id, name in rows}


def row_count(frame: pd.DataFrame, table: str) -> int:
    """The count of `table` in an `overview` frame (0 if absent), for empty-state checks."""
    match = frame.loc[frame["table"] == table, "rows"]
    return int(match.iloc[0]) if len(match) else 0


def schema_revision(engine: Engine) -> str | None:
    """The Alembic revision the database is at, or None when it was never migrated."""
    return current_revision(engine)


def backend_name(url: str) -> str:
    """The database backend of `url` (``sqlite``, ``postgresql``) — safe to show, unlike the
    URL itself, which may hold a password. ``unknown`` if the URL cannot be parsed."""
    try:
        return make_url(url).get_backend_name()
    except ArgumentError:
        return "unknown"


def sqlite_file_missing(url: str) -> bool:
    """True when `url` names a SQLite file that does not exist yet.

    The dashboard checks this before opening an engine, because connecting would create an
    empty file (and its directory) — a read-only viewer must not leave one behind.
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        return False
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database:
        return False
    if database == ":memory:" or database.startswith("file:"):
        return False
    return not Path(database).expanduser().is_file()
