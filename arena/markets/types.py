"""The parsed market every source produces (Gamma or simulated) and the engine consumes."""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from arena.core.fees import FeeSchedule

MarketType = Literal["binary", "named"]


class ParsedMarket(BaseModel):
    """One market, source-independent.

    `prices[i]` is the price of `outcomes[i]`; outcome order is the source's (not always
    Yes-first). `prices` is None when the source gave no usable prices. Optional fields are
    None when the source did not send them; a sync never overwrites a known value with None.
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    question: str
    market_type: MarketType
    outcomes: list[str]
    prices: list[Decimal] | None = None
    slug: str | None = None
    description: str | None = None
    event_id: str | None = None
    event_slug: str | None = None
    event_title: str | None = None
    group_item_title: str | None = None
    category: str | None = None
    volume: float | None = None
    liquidity: float | None = None
    end_date: datetime | None = None
    active: bool = True
    closed: bool = False
    neg_risk: bool = False
    uma_resolution_status: str | None = None
    closed_time: datetime | None = None
    updated_at: datetime | None = None
    source: Literal["gamma", "simulated"] = "gamma"
    # The CLOB token of each outcome (`clob_token_ids[i]` trades `outcomes[i]`), the key the
    # order book is read by; None when the source sent no usable list of the outcomes' length.
    clob_token_ids: list[str] | None = None
    # The taker-fee schedule of a fee-enabled market (`feesEnabled` and `feeSchedule`); None
    # when fees are off or the source sent none (extension `book_execution` pays none then).
    fee_schedule: FeeSchedule | None = None


def classify_outcomes(outcomes: list[str]) -> MarketType:
    """Binary iff the outcomes are exactly Yes and No (any case, any order)."""
    normalised = sorted(outcome.strip().casefold() for outcome in outcomes)
    return "binary" if normalised == ["no", "yes"] else "named"


@dataclass(frozen=True, slots=True)
class EndWindow:
    """An end-date window for a top-markets query: the markets whose end date is set and falls
    within [`earliest`, `latest`] (both ends included, as Gamma's `end_date_min` / `end_date_max`
    are). The live sync asks it for the short-dated universe of the extension `horizon`."""

    earliest: datetime
    latest: datetime

    def __post_init__(self) -> None:
        if self.earliest.tzinfo is None or self.latest.tzinfo is None:
            raise ValueError("an end-date window needs timezone-aware instants")
        if self.latest < self.earliest:
            raise ValueError(f"an end-date window ends before it starts: {self}")

    def holds(self, end_date: datetime | None) -> bool:
        """Whether a market ending at `end_date` is in the window (no end date: never)."""
        return end_date is not None and self.earliest <= end_date <= self.latest
