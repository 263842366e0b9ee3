"""Methodology v2's prices: CLOB midpoints, validated, with the provenance of each one.

Why a module of its own: the decision run (the frozen universe, the trades) and the snapshot
pass (the marks) must price a market the same way, through one CLOB read per pass, and store
the same record of where each price came from.

- **One batched read.** Every token a pass needs is read in one `PriceReader.books` call
  (`arena.markets.clob.ClobClient`: `POST /books` in chunks, one `GET /book` per token when a
  chunk fails). The midpoint is computed from the book, so an empty, one-sided or crossed book
  is caught with its reason, where `/midpoints` would still answer a number for the last two.
- **The original's rule** (`arena.markets.price_source.price_market`): the CLOB midpoint,
  `accepted` or `accepted_with_gamma_disagreement` (> 0.05 from Gamma); without one, Gamma's
  price with the reason (`fallback_gamma`). A binary market reads YES; NO is 1 − YES.
- **Marks** keep the prior value when there is no CLOB price (`mark_quote`): the original's
  `current_value / shares`, i.e. the position's last mark (its entry price if never marked),
  recorded with status `prior_value` and the reason.

Provenance is stored as JSON: decimals as text, so a stored record reads back exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from arena.markets.clob_wire import ClobQuote
from arena.markets.price_source import PRIOR_VALUE, PriceQuote, price_market, tokens_to_read
from arena.markets.types import ParsedMarket

MARKET_CLOSED = "market_closed"  # why a closed-but-unresolved market's mark is kept


class PriceReader(Protocol):
    """What v2 needs of the CLOB: each token's book midpoint or the reason there is none."""

    def books(
        self, token_ids: Iterable[str], market_ids: Mapping[str, str] | None = None
    ) -> dict[str, ClobQuote]: ...


@dataclass(frozen=True)
class PricedMarket:
    """A stored market as v2 prices it: Gamma's prices (text, as stored) and its tokens."""

    market_id: str
    market_type: str
    outcomes: list[str]
    prices: list[str] | None
    clob_token_ids: list[str] | None


def _parsed(market: PricedMarket) -> ParsedMarket:
    """The market as `price_market` reads it (only the pricing fields matter)."""
    usable = market.prices is not None and len(market.prices) == len(market.outcomes)
    tokens = market.clob_token_ids
    return ParsedMarket(
        id=market.market_id,
        question="",
        market_type="binary" if market.market_type == "binary" else "named",
        outcomes=list(market.outcomes),
        prices=[Decimal(p) for p in market.prices or []] if usable else None,
        clob_token_ids=list(tokens) if tokens and len(tokens) == len(market.outcomes) else None,
    )


def quote_markets(
    reader: PriceReader, markets: Sequence[PricedMarket]
) -> dict[str, list[PriceQuote]]:
    """Each market's PriceQuote per outcome (in outcome order), from ONE batched CLOB read."""
    parsed = [_parsed(market) for market in markets]
    wanted = {token: market.id for market in parsed for token in tokens_to_read(market)}
    clob = reader.books(list(wanted), wanted) if wanted else {}
    return {market.id: price_market(market, clob) for market in parsed}


def quoted_prices(quotes: Sequence[PriceQuote], gamma: Sequence[str] | None) -> list[str]:
    """The price list v2 shows and executes at: each outcome's validated price as text; the
    stored Gamma list unchanged when an outcome has no price at all (never an invented one)."""
    texts = [_text(quote.price) for quote in quotes]
    if not texts or any(text is None for text in texts):
        return list(gamma or [])
    return [text for text in texts if text is not None]


def _text(value: Decimal | None) -> str | None:
    return None if value is None else format(value.normalize(), "f")


def quote_json(quote: PriceQuote) -> dict[str, Any]:
    """A PriceQuote as the JSON stored beside the price it gave."""
    return {
        "price": _text(quote.price),
        "source": quote.source,
        "status": quote.status,
        "gamma_price": _text(quote.gamma_price),
        "clob_price": _text(quote.clob_price),
        "disagreement": _text(quote.disagreement),
        "fallback_reason": quote.fallback_reason,
    }


def mark_quote(
    quote: PriceQuote | None, market_open: bool, live: Decimal | None, prior: Decimal
) -> tuple[Decimal, dict[str, Any]]:
    """A v2 mark and its provenance: the CLOB midpoint of the side when there is one and the
    market trades, else the prior value (`prior_value`, with the reason)."""
    if market_open and quote is not None and quote.clob_price is not None and live is not None:
        return live, {**quote_json(quote), "mark": _text(live)}
    if not market_open:
        reason: str | None = MARKET_CLOSED
    elif quote is None:
        reason = "not_read"
    else:
        reason = quote.fallback_reason or "clob_unavailable"
    record = {
        "price": _text(prior),
        "source": PRIOR_VALUE,
        "status": PRIOR_VALUE,
        "gamma_price": _text(quote.gamma_price) if quote else None,
        "clob_price": None,
        "disagreement": None,
        "fallback_reason": reason,
        "mark": _text(prior),
    }
    return prior, record
