"""A market's taker-fee schedule, as Gamma publishes it (extension `book_execution`).

Gamma's market objects carry `feesEnabled`, `feeType` and, on a fee-enabled market, a
`feeSchedule` such as `{"exponent": 1, "rate": 0.04, "takerOnly": true, "rebateRate": 0.25}`
(a recorded real one is in tests/fixtures/gamma/recorded/market_resolved.raw.json). The
schedule is stored on the market (`markets.fee_schedule`, JSON with decimals as text, so a
stored record reads back exactly) and read by the book-walk executor; a market with fees off
stores None and pays none.

The fee on a taker fill (`taker_fee`) is Polymarket's documented platform fee
(https://docs.polymarket.com/trading/fees; the exponent as NautilusTrader's `compute_commission`
and py-clob-client-v2's `adjust_market_buy_amount` apply it): `fee = C × rate × (p × (1 − p))
^ exponent` for C shares filled at price p. The exponent may be any positive number (Polymarket
types it `int | float`); a non-integral power is computed in a 60-digit context, which Python's
`decimal` rounds correctly, far past the 5 places a fee keeps.

Rounding: the fee page says fees are "rounded to 5 decimal places. The smallest fee charged is
0.00001 USDC. Anything smaller rounds to zero", i.e. a part of a unit is not charged, so the
fee is floored (ROUND_DOWN) to 5 places of USDC. NautilusTrader's `compute_commission` floors
too ("matching the venue charge"); py-clob-client-v2 does not round the fee at all (its
`adjust_market_buy_amount` is float arithmetic; its order builder rounds the principal down to
cents). docs/book-execution.md "Fees" cites each source.

In which asset a buy pays (`FeeCharged`, stamped on the cohort as `fee_charged`): Polymarket's
CLOB V2 charges a market buy's fee in USDC on top of the principal, and its client fits the two
within the amount (`usdc_on_top`, every new `book_execution` cohort); `in_shares` takes the fee
from the shares bought, the convention a `book_execution` stamp without the key ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal, localcontext
from typing import Any, Final, Literal

from arena.core.money import ZERO, to_decimal

FEE_PLACES = 5  # the venue charges whole 0.00001 USDC; smaller remainders are not charged
FEE_Q = Decimal(1).scaleb(-FEE_PLACES)
# Digits of the fee curve: a whole power of a 4-decimal price's p(1 − p) is exact well within
# them, and a fractional one is correctly rounded 50 places past the fee's 5.
CURVE_DIGITS = 60

FeeCharged = Literal["usdc_on_top", "in_shares"]
FEE_USDC_ON_TOP: Final = "usdc_on_top"  # CLOB V2: a buy's fee in USDC, within its amount
FEE_IN_SHARES: Final = "in_shares"  # the fee taken from the shares a buy receives
FEE_CONVENTIONS: tuple[FeeCharged, ...] = (FEE_USDC_ON_TOP, FEE_IN_SHARES)


@dataclass(frozen=True)
class FeeSchedule:
    """One fee-enabled market's schedule: `rate` and `exponent` of the fee curve, whether
    only takers pay, the makers' rebate share, and Gamma's `feeType` label. A whole exponent
    may be given as an int; it is held as a Decimal."""

    rate: Decimal
    exponent: Decimal | int
    taker_only: bool = True
    rebate_rate: Decimal = Decimal(0)
    fee_type: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "exponent", to_decimal(self.exponent))

    def to_json(self) -> dict[str, Any]:
        """The stored form: decimals as text, so it reads back exactly; a whole exponent as a
        JSON integer, as every stored schedule has it."""
        return {
            "rate": format(self.rate, "f"),
            "exponent": _exponent_json(Decimal(self.exponent)),
            "taker_only": self.taker_only,
            "rebate_rate": format(self.rebate_rate, "f"),
            "fee_type": self.fee_type,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FeeSchedule:
        """A stored schedule (`to_json`'s form) read back."""
        return cls(
            rate=Decimal(str(raw["rate"])),
            exponent=to_decimal(raw["exponent"]),
            taker_only=bool(raw.get("taker_only", True)),
            rebate_rate=Decimal(str(raw.get("rebate_rate", "0"))),
            fee_type=raw.get("fee_type"),
        )


def _exponent_json(exponent: Decimal) -> int | str:
    return int(exponent) if exponent == exponent.to_integral_value() else format(exponent, "f")


def fee_per_share(price: Decimal, schedule: FeeSchedule | None) -> Decimal:
    """`rate × (p × (1 − p)) ^ exponent`: the USDC fee one share filled at `price` owes, before
    any rounding (to CURVE_DIGITS significant digits; 0 when fees are off).

    Raises ValueError for a price outside [0, 1] or a schedule whose curve is not a fee
    (a rate outside [0, 1], an exponent that is not positive).
    """
    if not 0 <= price <= 1:
        raise ValueError(f"a fee at price {price}: a price is in [0, 1]")
    if schedule is None:
        return ZERO
    exponent = Decimal(schedule.exponent)
    if not 0 <= schedule.rate <= 1 or exponent <= 0:
        raise ValueError(
            f"fee schedule rate {schedule.rate}, exponent {exponent}: "
            "a rate in [0, 1] and a positive exponent are expected"
        )
    with localcontext() as context:
        context.prec = CURVE_DIGITS
        base = price * (1 - price)
        whole = exponent == exponent.to_integral_value()
        curve = base ** int(exponent) if whole else base**exponent
        return schedule.rate * curve


def taker_fee(shares: Decimal, price: Decimal, schedule: FeeSchedule | None) -> Decimal:
    """USDC fee a taker pays for `shares` filled at `price` (0 when fees are off), floored to
    whole 0.00001 units (module docstring: the fee page's rounding, in its direction).

    The arena is always the taker (it crosses the book), so `taker_only` never exempts it.
    Raises ValueError for a negative share count and as `fee_per_share` does.
    """
    if shares < 0:
        raise ValueError(f"a fee on {shares} shares: the share count is negative")
    owed = fee_per_share(price, schedule)
    with localcontext() as context:
        context.prec = CURVE_DIGITS
        return (shares * owed).quantize(FEE_Q, rounding=ROUND_DOWN)
