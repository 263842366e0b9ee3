"""Pure scoring of methodology v1 §11: implied confidence, Brier, cumulative Brier, return."""

from collections.abc import Iterable
from decimal import Decimal


def implied_confidence(amount: Decimal, cash_before: Decimal, max_bet_fraction: Decimal) -> float:
    """amount / (max_bet_fraction × cash just before the leg), capped at 1 (§11.2, contract §5)."""
    ceiling = cash_before * max_bet_fraction
    if ceiling <= 0:
        return 1.0
    return float(min(Decimal(1), amount / ceiling))


def brier(forecast_probability: float, won: bool) -> float:
    """(forecast − outcome)², outcome 1 when the traded side won (§11.1)."""
    if not 0.0 <= forecast_probability <= 1.0:
        raise ValueError(f"forecast {forecast_probability} is not a probability")
    outcome = 1.0 if won else 0.0
    return (forecast_probability - outcome) ** 2


def cumulative_brier(scores: Iterable[float]) -> float | None:
    """The mean Brier over an agent's resolved trades; None before the first resolution."""
    values = list(scores)
    return sum(values) / len(values) if values else None


def return_pct(total_value: Decimal, starting_balance: Decimal) -> float:
    """(total − start) / start × 100 (§11.3)."""
    return float((total_value - starting_balance) / starting_balance * 100)
