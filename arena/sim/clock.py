"""Integer-microsecond time for the simulated world.

Why: the world indexes hourly price paths by instant; exact integer arithmetic (never float
seconds) keeps every hour boundary, and so every seed's world, reproducible.
"""

from datetime import UTC, datetime, timedelta

__all__ = ["DAY_US", "HOUR_US", "ceil_to", "instant", "micros"]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
HOUR_US = 3_600_000_000
DAY_US = 24 * HOUR_US


def micros(at: datetime) -> int:
    """Integer microseconds since the epoch: exact arithmetic for hour indexing."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"instant {at!r} must be timezone-aware (UTC)")
    return (at - EPOCH) // _US


def instant(micros: int) -> datetime:
    """The aware UTC datetime for integer epoch microseconds."""
    return EPOCH + timedelta(microseconds=micros)


def ceil_to(micros: int, step: int) -> int:
    """Round up to a multiple of `step` microseconds (hour or midnight ends, like Gamma's)."""
    return -(-micros // step) * step
