"""Where a price comes from: the original arena's CLOB validation rule, as pure functions.

The rule (the original arena, May 2026): an outcome is priced at its CLOB midpoint when one
exists. The price is `accepted`, or `accepted_with_gamma_disagreement` when it differs from
Gamma's display price by more than `GAMMA_DISAGREEMENT` (0.05). With no CLOB midpoint the
price falls back to Gamma's, and the reason is recorded (`fallback_gamma`). With neither
there is no price at all (`unpriced`): nothing is ever invented.

Which token prices which outcome:

- **Binary (Yes/No) markets** read the YES token only, as the original does; NO is priced
  1 − YES, and the NO quote carries YES's status, source and disagreement (the market is
  validated once, on YES). When YES falls back, NO falls back to Gamma's own NO price.
- **Named-outcome markets** read each outcome's own token, validated one by one.

`book_midpoint` is the same midpoint computed from an order book (for `clob_book` sources and
for checking `/midpoint` against `/book`), with the reason when a book has no usable one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from arena.core.money import ONE
from arena.core.order_book import midpoint
from arena.markets.clob_wire import ClobQuote, NoPriceReason, OrderBook
from arena.markets.types import ParsedMarket

# |Gamma − CLOB| above this marks a price accepted_with_gamma_disagreement (the original's 0.05).
GAMMA_DISAGREEMENT = Decimal("0.05")

PriceSourceName = Literal["gamma", "clob_mid", "clob_book"]
PriceStatus = Literal["accepted", "accepted_with_gamma_disagreement", "fallback_gamma", "unpriced"]
# The statuses of a price that is the CLOB's own.
CLOB_STATUSES: tuple[PriceStatus, ...] = ("accepted", "accepted_with_gamma_disagreement")
# A v2 mark with no CLOB price keeps the position's prior value (source and status both this).
PRIOR_VALUE = "prior_value"


@dataclass(frozen=True)
class PriceQuote:
    """One outcome's price and its provenance.

    `price` is what the engine may use (None only when `status` is `unpriced`); `gamma_price`
    and `clob_price` are what each source said (None when it said nothing); `disagreement` is
    |gamma − clob| when both spoke; `fallback_reason` says why the CLOB price was not used.
    """

    price: Decimal | None
    source: PriceSourceName
    status: PriceStatus
    gamma_price: Decimal | None
    clob_price: Decimal | None
    disagreement: Decimal | None
    fallback_reason: NoPriceReason | None


@dataclass(frozen=True)
class BookMidpoint:
    """A book's midpoint, or the reason it has none (`mid` and `reason`: exactly one is set)."""

    mid: Decimal | None
    reason: NoPriceReason | None
    best_bid: Decimal | None = None
    best_ask: Decimal | None = None


def book_midpoint(book: OrderBook) -> BookMidpoint:
    """(best bid + best ask) / 2, or why not: empty, one-sided or crossed (bid >= ask)."""
    bid, ask = book.best_bid, book.best_ask
    mid, reason = midpoint(bid, ask)
    return BookMidpoint(mid, reason, bid, ask)


def quote_from_book(book: OrderBook) -> ClobQuote:
    """A ClobQuote from a book's own midpoint (the reason when it has none)."""
    result = book_midpoint(book)
    if result.mid is not None:
        return ClobQuote(book.asset_id, mid=result.mid, book=book)
    detail = f"best bid {result.best_bid}, best ask {result.best_ask}"
    return ClobQuote(book.asset_id, reason=result.reason, detail=detail, book=book)


def validate_price(
    gamma_price: Decimal | None,
    clob: ClobQuote | None,
    *,
    source: PriceSourceName = "clob_mid",
) -> PriceQuote:
    """The original's rule for one outcome: CLOB midpoint if any (flagging a > 0.05 gap from
    Gamma), else Gamma's price with the reason; `clob=None` means the outcome has no token."""
    if clob is not None and clob.mid is not None:
        gap = abs(gamma_price - clob.mid) if gamma_price is not None else None
        status: PriceStatus = (
            "accepted_with_gamma_disagreement"
            if gap is not None and gap > GAMMA_DISAGREEMENT
            else "accepted"
        )
        return PriceQuote(clob.mid, source, status, gamma_price, clob.mid, gap, None)
    reason: NoPriceReason = "no_token" if clob is None else (clob.reason or "clob_unavailable")
    return PriceQuote(
        gamma_price,
        "gamma",
        "fallback_gamma" if gamma_price is not None else "unpriced",
        gamma_price,
        None,
        None,
        reason,
    )


def _complement(yes: PriceQuote, gamma_no: Decimal | None) -> PriceQuote:
    """NO's quote from YES's: 1 − YES from the CLOB, with YES's status and disagreement."""
    assert yes.clob_price is not None and yes.price is not None
    return PriceQuote(
        ONE - yes.price,
        yes.source,
        yes.status,
        gamma_no,
        ONE - yes.clob_price,
        yes.disagreement,
        None,
    )


def yes_index(market: ParsedMarket) -> int | None:
    """The YES outcome's position in a binary market (outcome order is the source's)."""
    if market.market_type != "binary":
        return None
    for index, outcome in enumerate(market.outcomes):
        if outcome.strip().casefold() == "yes":
            return index
    return None


def tokens_to_read(market: ParsedMarket) -> list[str]:
    """The CLOB tokens whose midpoints price this market: YES for a binary, all for named."""
    tokens = market.clob_token_ids
    if not tokens:
        return []
    index = yes_index(market)
    if index is not None:
        return [tokens[index]]
    return list(tokens)


def price_market(
    market: ParsedMarket,
    clob: Mapping[str, ClobQuote],
    *,
    source: PriceSourceName = "clob_mid",
) -> list[PriceQuote]:
    """One PriceQuote per outcome, in the market's outcome order, from the CLOB results
    (keyed by token id). A token the caller did not fetch counts as `clob_unavailable`."""
    gamma = list(market.prices) if market.prices is not None else [None] * len(market.outcomes)
    tokens = market.clob_token_ids

    def quote_for(index: int) -> PriceQuote:
        if not tokens:
            return validate_price(gamma[index], None, source=source)
        token = tokens[index]
        found = clob.get(token) or ClobQuote(token, reason="clob_unavailable", detail="not read")
        return validate_price(gamma[index], found, source=source)

    yes = yes_index(market)
    if yes is None:
        return [quote_for(index) for index in range(len(market.outcomes))]
    yes_quote = quote_for(yes)
    quotes: list[PriceQuote] = []
    for index in range(len(market.outcomes)):
        if index == yes:
            quotes.append(yes_quote)
        elif yes_quote.clob_price is not None:
            quotes.append(_complement(yes_quote, gamma[index]))
        else:
            quotes.append(
                PriceQuote(
                    gamma[index],
                    "gamma",
                    "fallback_gamma" if gamma[index] is not None else "unpriced",
                    gamma[index],
                    None,
                    None,
                    yes_quote.fallback_reason,
                )
            )
    return quotes
