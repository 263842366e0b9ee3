"""The parsed market every source produces (Gamma or simulated) and the engine consumes."""

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
