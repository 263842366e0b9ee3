"""Exact money: every amount is a Decimal quantised to a fixed number of places.

Cash, amounts, cost basis and proceeds are dollars with 6 decimal places (micro-dollars);
shares have 6 decimal places; prices 6 decimal places. The database stores each as an
integer count of the smallest unit (see `arena.storage.dbtypes.Fixed`), so nothing drifts through
float rounding on SQLite or PostgreSQL. Rounding always favours the house: shares bought
and proceeds received round down, so the books can never create money.
"""

from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal, InvalidOperation

MONEY_PLACES = 6
SHARE_PLACES = 6
PRICE_PLACES = 6

MONEY_Q = Decimal(1).scaleb(-MONEY_PLACES)
SHARE_Q = Decimal(1).scaleb(-SHARE_PLACES)
PRICE_Q = Decimal(1).scaleb(-PRICE_PLACES)

ZERO = Decimal(0)
ONE = Decimal(1)


def to_decimal(value: object) -> Decimal:
    """A finite Decimal from an int, str, float or Decimal (floats via their shortest repr)."""
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    elif isinstance(value, int | str):
        try:
            result = Decimal(str(value).strip())
        except InvalidOperation as exc:
            raise ValueError(f"not a number: {value!r}") from exc
    elif isinstance(value, float):
        result = Decimal(repr(value))
    else:
        raise ValueError(f"not a number: {value!r}")
    if not result.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return result


def money(value: object, rounding: str = ROUND_HALF_EVEN) -> Decimal:
    """Dollars at micro-dollar precision."""
    return to_decimal(value).quantize(MONEY_Q, rounding=rounding)


def shares(value: object, rounding: str = ROUND_DOWN) -> Decimal:
    """Shares at micro-share precision, rounded down by default (never over-credit)."""
    return to_decimal(value).quantize(SHARE_Q, rounding=rounding)


def price(value: object) -> Decimal:
    """A probability price at 6 decimal places."""
    return to_decimal(value).quantize(PRICE_Q, rounding=ROUND_HALF_EVEN)
