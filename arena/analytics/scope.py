"""The scope of a statistical read: one cohort or all, and the UTC day of a timestamp.

Why its own module: the leaderboard's inputs, the random null, calibration and risk all turn
the cohort *number* a user typed into a filter the same way (unknown → InputError with a hint),
and must agree on which calendar day a stored timestamp falls on, on SQLite and PostgreSQL.
"""

from datetime import date, datetime
from typing import Any

from sqlalchemy import Date, Select, cast, func, literal_column, select
from sqlalchemy.engine import Connection

from arena.core.errors import InputError
from arena.storage.tables import AGENTS, COHORTS


def cohort_id_of(conn: Connection, cohort: int | None) -> int | None:
    """The database id of cohort number `cohort` (None: all cohorts); unknown → InputError."""
    if cohort is None:
        return None
    found = conn.execute(select(COHORTS.c.id).where(COHORTS.c.number == cohort)).scalar()
    if found is None:
        known = conn.execute(select(func.max(COHORTS.c.number))).scalar()
        hint = f"cohorts are numbered 1 to {known}" if known else "no cohort exists yet"
        raise InputError(f"cohort {cohort} does not exist", hint)
    return int(found)


def in_scope(query: Select[Any], cohort_id: int | None) -> Select[Any]:
    """Restrict a query that joins `agents` to one cohort (or leave it across all)."""
    return query if cohort_id is None else query.where(AGENTS.c.cohort_id == cohort_id)


def utc_date(column: Any, dialect: str) -> Any:
    """The UTC calendar date of a timestamp column, as SQL (GROUP BY-safe: no bound params).

    SQLite stores naive UTC text, so `date()` is the UTC date; PostgreSQL stores timestamptz,
    converted to UTC first so the session's time zone cannot shift a day.
    """
    if dialect == "postgresql":
        return cast(func.timezone(literal_column("'UTC'"), column), Date)
    return func.date(column)


def as_date(value: Any) -> date:
    """A `utc_date` result as a date (SQLite hands back text, PostgreSQL a date)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])
