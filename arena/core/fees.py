"""A market's taker-fee schedule, as Gamma publishes it (extension `book_execution`).

Gamma's market objects carry `feesEnabled`, `feeType` and, on a fee-enabled market, a
`feeSchedule` such as `{"exponent": 1, "rate": 0.04, "takerOnly": true, "rebateRate": 0.25}`
(a recorded real one is in tests/fixtures/gamma/recorded/market_resolved.raw.json). The
schedule is stored on the market (`markets.fee_schedule`, JSON with decimals as text, so a
stored record reads back exactly) and read by the book-walk executor; a market with fees off
stores None and pays none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any


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
