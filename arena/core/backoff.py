"""Retry timing shared by every HTTP client (Gamma, the LLM endpoint): pure functions."""

import email.utils
import random
from datetime import UTC, datetime


def backoff_delay(
    attempt: int, retry_after: float | None, base: float, cap: float, rng: random.Random
) -> float:
    """Retry-After when the server gave one, else full-jitter exponential backoff; capped.

    Full jitter (a uniform draw up to base × 2^(attempt−1)) spreads retries of many clients
    instead of synchronising them.
    """
    if retry_after is not None:
        return min(retry_after, cap)
    ceiling = min(cap, base * 2 ** (attempt - 1))
    return rng.uniform(0, ceiling)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None if unusable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)
