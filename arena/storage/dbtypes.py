"""Column types that behave the same on SQLite and PostgreSQL.

- `UTCDateTime`: always hands back timezone-aware UTC datetimes; refuses naive ones on write,
  so no local time can sneak in.
- `Fixed(places)`: an exact Decimal stored as a BIGINT count of 10**-places units
  (micro-dollars for money), since SQLite has no exact decimal type.
"""

from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from sqlalchemy import BigInteger, DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is UTC on the way in and aware UTC on the way out."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def from_units(value: int, places: int = 6) -> Decimal:
    """The Decimal a `Fixed(places)` column stores as the integer `value` (raw reads)."""
    # an integer has exponent 0, so scaleb gives exactly `places` decimals: no quantize
    return Decimal(int(value)).scaleb(-places)


class Fixed(TypeDecorator[Decimal]):
    """Exact decimal with `places` digits after the point, stored as an integer."""

    impl = BigInteger
    cache_ok = True

    def __init__(self, places: int = 6, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.places = places
        self._unit = Decimal(1).scaleb(-places)

    def process_bind_param(self, value: Any, dialect: Dialect) -> int | None:
        if value is None:
            return None
        if not isinstance(value, Decimal):
            value = Decimal(str(value))
        return int(value.quantize(self._unit, rounding=ROUND_HALF_EVEN).scaleb(self.places))

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        return from_units(value, self.places)

    def copy(self, **kwargs: Any) -> "Fixed":
        return Fixed(self.places)

    def __repr__(self) -> str:
        return f"Fixed({self.places})"
