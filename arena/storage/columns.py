"""Column helpers of the schema's tables: exact money, UTC timestamps, counters, foreign keys.

Why apart from `arena.storage.models`: the tables of more than one module use them
(`arena.storage.late_models` too), and `models` is at the project's line limit.
"""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, ForeignKey, Integer
from sqlmodel import Field

from arena.storage.dbtypes import Fixed, UTCDateTime

MONEY = Fixed(6)
# A JSON column whose Python None is SQL NULL (not the JSON text `null`): methodology v2's price
# provenance and the CLOB token ids, NULL on every v1 row (migration 0010).
JSON_OR_NULL = JSON(none_as_null=True)


def utcnow() -> datetime:
    """Only for audit columns (row created/updated); engine logic takes `at` instead."""
    return datetime.now(UTC)


def in_list(column: str, values: tuple[str, ...]) -> str:
    """A CHECK constraint's text: `column` is one of `values`."""
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def timestamp(nullable: bool = False, **kwargs: Any) -> Any:
    return Field(sa_type=UTCDateTime, nullable=nullable, **kwargs)


def money_column(nullable: bool = False, **kwargs: Any) -> Any:
    return Field(sa_type=MONEY, nullable=nullable, **kwargs)


def counter() -> Any:
    """A counter column the database maintains: 0 for a new row by the server's default, so
    inserts (bulk ones included) need not name it."""
    return Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))


def foreign_key(target: str, nullable: bool = False, ondelete: str | None = None) -> Any:
    return Field(
        sa_column_args=[ForeignKey(target, ondelete=ondelete)], nullable=nullable, index=True
    )
