"""Parsing and normalising instants: everything in the engine is aware UTC."""

from datetime import UTC, datetime, timedelta

from arena.core.errors import InputError


def parse_instant(text: str, option: str = "--at") -> datetime:
    """An ISO-8601 instant as aware UTC; a date or naive time is taken as UTC."""
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise InputError(
            f"{option} {text!r} is not an ISO-8601 time", "use e.g. 2026-11-22T00:05:00Z"
        ) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def week_start(at: datetime) -> datetime:
    """The Sunday 00:00 UTC that begins the week containing `at` (methodology §3.2)."""
    at = at.astimezone(UTC)
    midnight = at.replace(hour=0, minute=0, second=0, microsecond=0)
    days_since_sunday = (midnight.weekday() + 1) % 7  # Monday=0 … Sunday=6
    return midnight - timedelta(days=days_since_sunday)


def slot_start(at: datetime, minutes: int) -> datetime:
    """The start of the `minutes`-long slot containing `at`, aligned to midnight UTC."""
    at = at.astimezone(UTC)
    midnight = at.replace(hour=0, minute=0, second=0, microsecond=0)
    elapsed = int((at - midnight).total_seconds() // 60)
    return midnight + timedelta(minutes=elapsed - elapsed % minutes)
