"""A market's taker-fee schedule, as Gamma publishes it (extension `book_execution`).

Gamma's market objects carry `feesEnabled`, `feeType` and, on a fee-enabled market, a
`feeSchedule` such as `{"exponent": 1, "rate": 0.04, "takerOnly": true, "rebateRate": 0.25}`
(a recorded real one is in tests/fixtures/gamma/recorded/market_resolved.raw.json). The
schedule is stored on the market (`markets.fee_schedule`, JSON with decimals as text, so a
stored record reads back exactly) and read by the book-walk executor; a market with fees off
stores None and pays none.

The fee on a taker fill (`taker_fee`) is Polymarket's documented platform fee
(https://docs.polymarket.com/trading/fees, as NautilusTrader's `compute_commission` restates
it): `fee = C × rate × (p × (1 − p)) ^ exponent` for C shares filled at price p, floored to
5 decimal places of USDC. docs/book-execution.md "Fees" says where each figure comes from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from typing import Any

FEE_PLACES = 5  # the venue charges whole 0.00001 USDC; smaller remainders are not charged
FEE_Q = Decimal(1).scaleb(-FEE_PLACES)


@dataclass(frozen=True)
class FeeSchedule:
    """One fee-enabled market's schedule: `rate` and `exponent` of the fee curve, whether
    only takers pay, the makers' rebate share, and Gamma's `feeType` label."""

    rate: Decimal
    exponent: int
    taker_only: bool = True
    rebate_rate: Decimal = Decimal(0)
    fee_type: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The stored form: decimals as text, so it reads back exactly."""
        return {
            "rate": format(self.rate, "f"),
            "exponent": self.exponent,
            "taker_only": self.taker_only,
            "rebate_rate": format(self.rebate_rate, "f"),
            "fee_type": self.fee_type,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FeeSchedule:
        """A stored schedule (`to_json`'s form) read back."""
        return cls(
            rate=Decimal(str(raw["rate"])),
            exponent=int(raw["exponent"]),
            taker_only=bool(raw.get("taker_only", True)),
            rebate_rate=Decimal(str(raw.get("rebate_rate", "0"))),
            fee_type=raw.get("fee_type"),
        )


def taker_fee(shares: Decimal, price: Decimal, schedule: FeeSchedule | None) -> Decimal:
    """USDC fee a taker pays for `shares` filled at `price` (0 when fees are off).

    Why floored: the venue charges whole 0.00001 USDC units and does not round a remainder up
    (NautilusTrader: "floored to 5 decimal places, matching the venue charge"). The arena is
    always the taker (it crosses the book), so `taker_only` never exempts it. Raises
    ValueError for a negative share count, a price outside [0, 1], or a schedule whose curve
    is not a fee (negative rate, rate above 1, exponent below 1).
    """
    if shares < 0:
        raise ValueError(f"a fee on {shares} shares: the share count is negative")
    if not 0 <= price <= 1:
        raise ValueError(f"a fee at price {price}: a price is in [0, 1]")
    if schedule is None:
        return Decimal(0).quantize(FEE_Q)
    if not 0 <= schedule.rate <= 1 or schedule.exponent < 1:
        raise ValueError(
            f"fee schedule rate {schedule.rate}, exponent {schedule.exponent}: "
            "a rate in [0, 1] and a whole exponent of at least 1 are expected"
        )
    curve = (price * (1 - price)) ** schedule.exponent
    return (shares * schedule.rate * curve).quantize(FEE_Q, rounding=ROUND_DOWN)
