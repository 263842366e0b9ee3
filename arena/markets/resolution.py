"""What Gamma's data says about a market's outcome: a pure decision, no I/O (contract §5, §13).

Gamma has no `resolved` boolean and no `tokens[].winner`. The only reliable signal is
`closed == true` together with `umaResolutionStatus == "resolved"`; the winner is then the
outcome whose price is exactly 1 while every other is exactly 0. Closed markets routinely keep
leftover trading prices (0.9995, or ~4e-8 / 0.99999996 on old AMM markets) with no UMA
resolution: those are NOT resolutions, so positions stay open. A market UMA calls resolved
whose prices do not name exactly one winner (a 0.5/0.5 void, missing or odd prices) is
CANCELLED: every position is refunded (methodology §13.3, the conservative choice).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from arena.core.money import ONE, ZERO
from arena.markets.types import ParsedMarket

VerdictState = Literal["unresolved", "resolved", "cancelled"]
RESOLVED_STATUS = "resolved"
VOID_PRICE = Decimal("0.5")


@dataclass(frozen=True)
class Verdict:
    """The settlement decision for one market; `winner` is the exact outcome name if resolved."""

    state: VerdictState
    winner: str | None
    reason: str


def resolution_verdict(market: ParsedMarket) -> Verdict:
    """Unresolved, resolved with a winner, or cancelled (refund) — from Gamma's fields alone."""
    if not market.closed:
        return Verdict("unresolved", None, "the market is still open")
    status = (market.uma_resolution_status or "").strip().casefold()
    if status != RESOLVED_STATUS:
        shown = status or "absent"
        return Verdict(
            "unresolved",
            None,
            f"closed but umaResolutionStatus is {shown}; prices alone are not a resolution",
        )
    return _settle_by_prices(market)


def _settle_by_prices(market: ParsedMarket) -> Verdict:
    """The verdict for a UMA-resolved market: one outcome at exactly 1, the rest at 0."""
    prices = market.prices
    if prices is None or len(prices) != len(market.outcomes):
        return Verdict("cancelled", None, "resolved but Gamma gave no usable prices")
    if all(price == VOID_PRICE for price in prices):
        return Verdict("cancelled", None, "resolved as void (every outcome priced 0.5)")
    winners = [name for name, price in zip(market.outcomes, prices, strict=True) if price == ONE]
    losers = sum(1 for price in prices if price == ZERO)
    if len(winners) == 1 and losers == len(prices) - 1:
        return Verdict("resolved", winners[0], f"resolved: {winners[0]!r} priced 1")
    shown = ", ".join(str(price) for price in prices)
    return Verdict(
        "cancelled", None, f"resolved but no single outcome priced exactly 1 (prices {shown})"
    )
