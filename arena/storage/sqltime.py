"""SQL expressions over UTC timestamps that read the same on SQLite and PostgreSQL."""

from typing import Any

from sqlalchemy import BigInteger, cast, extract, func, literal_column


def epoch_seconds(column: Any, dialect: str) -> Any:
    """SQL: `column`'s whole epoch second (SQLite keeps UTC timestamps as text)."""
    if dialect == "postgresql":
        return cast(func.floor(extract("epoch", column)), BigInteger)
    return cast(func.strftime(literal_column("'%s'"), column), BigInteger)


def epoch_bucket(column: Any, width: int | Any, dialect: str) -> Any:
    """SQL: the epoch second at which `column`'s bucket of `width` seconds starts.

    An int width renders as a literal, not a bound parameter: PostgreSQL must see the same
    expression in SELECT and GROUP BY, and two bound parameters never compare equal there.
    A column width (the rollup widths) is used as is. `.op("/")` is plain integer division on
    both backends (epochs are positive).
    """
    step = literal_column(str(int(width))) if isinstance(width, int) else width
    return epoch_seconds(column, dialect).op("/")(step) * step
