"""Order books of the simulated world: what Polymarket's CLOB would show for each outcome token.

Why: methodology v2 executes and values at CLOB midpoints, so the offline demo needs books that
behave like the real ones: a spread that is wide for long shots and thin markets, depth that
follows liquidity, the 0.01 tick turning to 0.001 near the edges, and the occasional broken
book a client must survive without inventing a price. Everything here is pure: a book is a
function of (seed, token, hour) and the world's price at that hour; faults are a function of
(seed, token, UTC day), so a replay serves byte-identical books.

The model, in short:

* Each outcome has a CLOB token id (`clob_token_id`: a 70-78 digit decimal string, like the
  real uint256 ids), and each market a condition id (`condition_id`: `0x` + 64 hex).
* A book is drawn around a *centre* probability (`TokenQuote.centre`; `WorldBooks` uses the
  price the world quotes, i.e. Gamma's display price, by default). The half-spread is
  `HALF_SPREAD_MIN + HALF_SPREAD_THIN * thinness` with `thinness = 1 / (1 + liquidity /
  THIN_LIQUIDITY)`, widened by `1 + EDGE_WIDENING * (1 - 4p(1-p))` toward 0 and 1 and capped
  at `EDGE_CAP` times the cheaper side's price, then jittered per side and rounded to the
  nearest tick (the ask at least a tick above the bid). So relative to the price (what a
  long-shot buyer pays above the display price) the spread widens toward 0 and 1, and it
  widens in thin markets.
* Each side holds `LEVELS_MIN`..`LEVELS_MAX` levels (more when liquid) a tick or two apart;
  each side's notional is about `DEPTH_SHARE` times the market's liquidity.
* A binary market's No book is the mirror of its Yes book (price 1 − p, bids ↔ asks), as on
  Polymarket where one order book backs both tokens; both share the Yes token's draws and
  faults. A named market's outcomes each get their own book.
* Faults, at the named rates per token and UTC day: `missing` (no book: the CLOB's 404),
  `empty` (no levels), `one_sided` (bids or asks only) and `crossed` (a stale bid above the
  best ask).

`SimBook` is the core's `Book` (`arena.core.order_book`: levels best-first, bids descending and
asks ascending; its tick and minimum order size; its best bid and ask) with what the simulated
CLOB serves beside it. The server writes it in the CLOB's wire order (bids ascending, asks
descending: best price last).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Literal, Protocol

from arena.core.order_book import Book, Level
from arena.markets.types import ParsedMarket
from arena.sim.clock import DAY_US, HOUR_US, micros

__all__ = [
    "CROSSED_RATE",
    "EMPTY_RATE",
    "MISSING_RATE",
    "ONE_SIDED_RATE",
    "BookSource",
    "Centre",
    "Fault",
    "Level",
    "SimBook",
    "TokenQuote",
    "WorldBooks",
    "WorldLike",
    "book_for",
    "clob_token_id",
    "clob_token_ids",
    "condition_id",
    "decimal_text",
    "draw_book",
    "fault_for",
    "half_spread",
    "tick_for",
]

Fault = Literal["missing", "empty", "one_sided", "crossed"]
Centre = Literal["quoted", "hidden"]

# Token ids: sha256 as a decimal integer has up to 78 digits; the floor keeps at least 70.
_TOKEN_FLOOR = 10**69

# The CLOB's tick: 0.01, and 0.001 once the price is below 0.04 or above 0.96.
TICK = Decimal("0.01")
FINE_TICK = Decimal("0.001")
FINE_BELOW = 0.04
FINE_ABOVE = 0.96
MIN_ORDER_SIZE = Decimal("5")
_MILLS = 1000
_PRICES: tuple[Decimal, ...] = tuple(Decimal(k).scaleb(-3) for k in range(_MILLS + 1))
_MIN_SIZE_CENTS = 500  # MIN_ORDER_SIZE in cents of a share
_ONE = Decimal(1)
_ZERO = Decimal(0)

# Spread (half of it, in probability) and depth. Calibrated so that the cost of buying at the
# best ask above the display price, over the demo world's binary markets, comes out near what
# real Gamma payloads show: median about +44% for YES under 5¢, +6% at 5-20¢, +1.5% at
# 20-80¢ (real: +44%, +5.6%, +1.0%).
HALF_SPREAD_MIN = 0.002  # a deep market at 50¢: a one-tick spread
HALF_SPREAD_THIN = 0.015  # added in full for a market with no liquidity
THIN_LIQUIDITY = 500.0  # liquidity at which a market counts as half thin
EDGE_WIDENING = 1.0  # the half-spread is up to 2x wider at the edges ...
EDGE_CAP = 0.35  # ... but at most 35% of the cheaper side's price
SIDE_JITTER = 0.25  # each side's half-spread varies ±25% from hour to hour
DEPTH_SHARE = 0.5  # notional per side, as a share of the market's liquidity
LEVELS_MIN = 3
LEVELS_MAX = 12
WIDE_GAP_RATE = 0.35  # chance that the next level sits two ticks further rather than one
BUCKET_US = HOUR_US  # a book holds for an hour, like the world's price path

# Faults, per token and UTC day (a binary's pair shares its Yes token's fault).
MISSING_RATE = 0.01
EMPTY_RATE = 0.005
ONE_SIDED_RATE = 0.01
CROSSED_RATE = 0.005
_FAULT_RATES: tuple[tuple[Fault, float], ...] = (
    ("missing", MISSING_RATE),
    ("empty", EMPTY_RATE),
    ("one_sided", ONE_SIDED_RATE),
    ("crossed", CROSSED_RATE),
)


# --------------------------------------------------------------------------------------------
# Identifiers


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def clob_token_id(seed: int, market_id: str, outcome: str) -> str:
    """The CLOB token of one outcome: a 70-78 digit decimal, fixed by (seed, market, outcome)."""
    value = int.from_bytes(_digest(f"forecaster-arena-sim-token:{seed}:{market_id}:{outcome}"))
    return str(value if value >= _TOKEN_FLOOR else value + _TOKEN_FLOOR)


def clob_token_ids(seed: int, market_id: str, outcomes: Sequence[str]) -> list[str]:
    """Each outcome's token, aligned to `outcomes` (what `ParsedMarket.clob_token_ids` holds)."""
    return [clob_token_id(seed, market_id, outcome) for outcome in outcomes]


def condition_id(seed: int, market_id: str) -> str:
    """The market's condition id, the book's `market` field: `0x` + 64 hex."""
    return "0x" + _digest(f"forecaster-arena-sim-condition:{seed}:{market_id}").hex()


# --------------------------------------------------------------------------------------------
# Value types


@dataclass(frozen=True, slots=True)
class TokenQuote:
    """What a book is drawn from: the token's market and the anchor token's price and depth.

    `anchor` is the token whose book is drawn (a binary's Yes token, else the token itself);
    `mirrored` says the asked token is a binary's No, served as the mirror of the anchor's
    book. `centre` is the anchor's probability at the instant asked.
    """

    market_id: str
    condition: str
    anchor: str
    mirrored: bool
    centre: float
    liquidity: float
    neg_risk: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SimBook(Book):
    """One token's book at an instant: a core `Book` and what the simulated CLOB serves with it."""

    token: str
    market: str  # the condition id
    at: datetime
    last_trade: Decimal
    neg_risk: bool
    fault: Fault | None  # never "missing": a missing book is not built

    @property
    def tick(self) -> Decimal:
        """The book's tick: every simulated book has one (`tick_for`)."""
        assert self.tick_size is not None
        return self.tick_size

    def midpoint(self) -> Decimal | None:
        """The CLOB's midpoint: the mean of best bid and best ask, a missing side counting as
        0 (as the real CLOB is reported to do); None for a book with no levels at all. A
        crossed book gets the same arithmetic."""
        if not self.bids and not self.asks:
            return None
        return ((self.best_bid or _ZERO) + (self.best_ask or _ZERO)) / 2

    def spread(self) -> Decimal | None:
        """Best ask − best bid under the same rule (negative for a crossed book)."""
        if not self.bids and not self.asks:
            return None
        return (self.best_ask or _ZERO) - (self.best_bid or _ZERO)

    def price(self, side: Literal["BUY", "SELL"]) -> Decimal | None:
        """The CLOB's `/price`: BUY is the best bid, SELL the best ask (a missing side 0)."""
        if not self.bids and not self.asks:
            return None
        best = self.best_bid if side == "BUY" else self.best_ask
        return best or _ZERO


def decimal_text(value: Decimal) -> str:
    """A price or size as the CLOB writes it: plain decimal, no trailing zeros ("0.5")."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


# --------------------------------------------------------------------------------------------
# Drawing a book (pure)


def tick_for(probability: float) -> Decimal:
    """0.01, or 0.001 below 0.04 and above 0.96 (the CLOB's finer tick near the edges)."""
    return FINE_TICK if probability < FINE_BELOW or probability > FINE_ABOVE else TICK


def half_spread(probability: float, liquidity: float) -> float:
    """The half-spread before jitter: wider in thin markets and toward 0 and 1."""
    thinness = 1.0 / (1.0 + max(liquidity, 0.0) / THIN_LIQUIDITY)
    edge = 1.0 - 4.0 * probability * (1.0 - probability)
    wanted = (HALF_SPREAD_MIN + HALF_SPREAD_THIN * thinness) * (1.0 + EDGE_WIDENING * edge)
    return min(wanted, EDGE_CAP * min(probability, 1.0 - probability))


def fault_for(seed: int, anchor: str, at: datetime) -> Fault | None:
    """The anchor token's fault on `at`'s UTC day, or None (most days): a replay sees the same."""
    rng = random.Random(f"forecaster-arena-sim-book-fault:{seed}:{anchor}:{micros(at) // DAY_US}")
    draw = rng.random()
    for fault, rate in _FAULT_RATES:
        if draw < rate:
            return fault
        draw -= rate
    return None


def _ticks(value: float, tick_m: int) -> int:
    """`value` (a probability) in thousandths, rounded to the nearest tick of `tick_m`."""
    return math.floor(value * _MILLS / tick_m + 0.5) * tick_m


def _side(
    rng: random.Random, top_m: int, step: int, count: int, notional: float, tick_m: int
) -> tuple[Level, ...]:
    """`count` levels from `top_m` outward, a tick or two apart, sizes growing away from the top."""
    prices: list[int] = []
    price = top_m
    while len(prices) < count and tick_m <= price <= _MILLS - tick_m:
        prices.append(price)
        price += step * (2 if rng.random() < WIDE_GAP_RATE else 1) * tick_m
    weights = [(1 + i) ** 0.6 * rng.uniform(0.5, 1.5) for i in range(len(prices))]
    per_weight = notional * _MILLS * 100 / sum(weights)  # cents of shares per weight·price
    return tuple(
        Level(_PRICES[price], _cents(max(round(per_weight * weight / price), _MIN_SIZE_CENTS)))
        for price, weight in zip(prices, weights, strict=True)
    )


def _cents(cents: int) -> Decimal:
    return Decimal(cents).scaleb(-2)


def _anchor_book(seed: int, quote: TokenQuote, at: datetime) -> SimBook:
    """The anchor token's book (before any fault), drawn from (seed, anchor, hour)."""
    rng = random.Random(
        f"forecaster-arena-sim-book:{seed}:{quote.anchor}:{micros(at) // BUCKET_US}"
    )
    p = min(max(quote.centre, 0.0), 1.0)
    tick = tick_for(p)
    tick_m = int(tick * _MILLS)
    half = half_spread(p, quote.liquidity)
    bid_half = half * rng.uniform(1 - SIDE_JITTER, 1 + SIDE_JITTER)
    ask_half = half * rng.uniform(1 - SIDE_JITTER, 1 + SIDE_JITTER)
    bid = min(max(_ticks(p - bid_half, tick_m), tick_m), _MILLS - 2 * tick_m)
    ask = max(min(_ticks(p + ask_half, tick_m), _MILLS - tick_m), bid + tick_m)
    depth = 1.0 - 1.0 / (1.0 + max(quote.liquidity, 0.0) / THIN_LIQUIDITY)
    count = LEVELS_MIN + round((LEVELS_MAX - LEVELS_MIN) * depth) + rng.randint(-1, 1)
    count = min(max(count, LEVELS_MIN), LEVELS_MAX)
    notional = max(quote.liquidity, 0.0) * DEPTH_SHARE
    bids = _side(rng, bid, -1, count, notional * rng.uniform(0.7, 1.3), tick_m)
    asks = _side(rng, ask, +1, count, notional * rng.uniform(0.7, 1.3), tick_m)
    last = min(max(_ticks(p, tick_m), tick_m), _MILLS - tick_m)
    return SimBook(
        bids=bids,
        asks=asks,
        tick_size=tick,
        min_order_size=MIN_ORDER_SIZE,
        token=quote.anchor,
        market=quote.condition,
        at=at,
        last_trade=_PRICES[last],
        neg_risk=quote.neg_risk,
        fault=None,
    )


def _with_fault(seed: int, book: SimBook, fault: Fault | None) -> SimBook:
    """The book as the fault leaves it: emptied, one side dropped, or a stale crossing bid."""
    if fault is None or fault == "missing":
        return book
    bids, asks = book.bids, book.asks
    if fault == "empty":
        bids, asks = (), ()
    elif fault == "one_sided":
        day = micros(book.at) // DAY_US
        side = random.Random(f"forecaster-arena-sim-book-side:{seed}:{book.token}:{day}")
        bids, asks = (bids, ()) if side.random() < 0.5 else ((), asks)
    elif asks and bids:
        if asks[0].price + book.tick <= _ONE - book.tick:
            bids = (Level(asks[0].price + book.tick, MIN_ORDER_SIZE), *bids)
        else:
            asks = (Level(bids[0].price - book.tick, MIN_ORDER_SIZE), *asks)
    return replace(book, bids=bids, asks=asks, fault=fault)


def _mirror(book: SimBook, token: str) -> SimBook:
    """A binary's No book from its Yes book: price 1 − p, the Yes asks become the No bids."""
    bids = tuple(Level(_ONE - level.price, level.size) for level in book.asks)
    asks = tuple(Level(_ONE - level.price, level.size) for level in book.bids)
    return replace(book, token=token, bids=bids, asks=asks, last_trade=_ONE - book.last_trade)


def draw_book(seed: int, quote: TokenQuote, token: str, at: datetime) -> SimBook | None:
    """The book of `token` at `at` given its quote; None when the day's fault is `missing`."""
    fault = fault_for(seed, quote.anchor, at)
    if fault == "missing":
        return None
    book = _with_fault(seed, _anchor_book(seed, quote, at), fault)
    return _mirror(book, token) if quote.mirrored else book


# --------------------------------------------------------------------------------------------
# The world's tokens


class BookSource(Protocol):
    """Where books come from: a seed, and each token's quote at an instant (None: no book)."""

    seed: int

    def quote(self, token: str, at: datetime) -> TokenQuote | None: ...


def book_for(source: BookSource, token: str, at: datetime) -> SimBook | None:
    """The book the CLOB serves for `token` at `at`; None for an unknown token, a market that
    is not trading (not yet created, or closed), or a `missing` fault (all the CLOB's 404)."""
    quote = source.quote(token, at)
    return None if quote is None else draw_book(source.seed, quote, token, at)


class _Schedule(Protocol):
    @property
    def created_at(self) -> datetime: ...


class WorldLike(Protocol):
    """The parts of `SimulatedWorld` the books read (its public API only)."""

    seed: int

    def market_ids(self) -> list[str]: ...

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None: ...

    def hidden_probability(
        self, market_id: str, outcome: str, at: datetime | None = None
    ) -> float: ...

    def schedule(self, market_id: str) -> _Schedule: ...


@dataclass(frozen=True, slots=True)
class _TokenEntry:
    market_id: str
    anchor: str
    anchor_index: int
    mirrored: bool
    anchor_outcome: str


class WorldBooks:
    """A `BookSource` over a simulated world: every outcome token of every market.

    `centre="quoted"` (the default) draws books around the price the world quotes at that hour,
    Gamma's display price, as on Polymarket where the display price is the book's midpoint;
    `"hidden"` draws them around the unbiased hidden posterior instead (which would hand every
    CLOB reader the oracle's knowledge). A market has no book before its creation or once
    closed (the real CLOB answers 404 for a resolved market's tokens).
    """

    def __init__(self, world: WorldLike, *, centre: Centre = "quoted") -> None:
        self.seed = world.seed
        self.world = world
        self.centre: Centre = centre
        self._tokens: dict[str, _TokenEntry] = {}
        for market_id in world.market_ids():
            market = world.get_market(market_id, world.schedule(market_id).created_at)
            if market is None or not market.clob_token_ids:
                continue
            self._index(market)

    def _index(self, market: ParsedMarket) -> None:
        tokens = market.clob_token_ids or []
        names = [name.casefold() for name in market.outcomes]
        anchor_index = names.index("yes") if market.market_type == "binary" else None
        for index, token in enumerate(tokens):
            anchor = index if anchor_index is None else anchor_index
            self._tokens[token] = _TokenEntry(
                market.id, tokens[anchor], anchor, index != anchor, market.outcomes[anchor]
            )

    def tokens(self) -> list[str]:
        """Every token of the world, in market order."""
        return list(self._tokens)

    def quote(self, token: str, at: datetime) -> TokenQuote | None:
        entry = self._tokens.get(token)
        if entry is None:
            return None
        market = self.world.get_market(entry.market_id, at)
        if market is None or market.closed or not market.prices:
            return None
        if self.centre == "hidden":
            centre = self.world.hidden_probability(entry.market_id, entry.anchor_outcome, at)
        else:
            centre = float(market.prices[entry.anchor_index])
        return TokenQuote(
            market_id=entry.market_id,
            condition=condition_id(self.seed, entry.market_id),
            anchor=entry.anchor,
            mirrored=entry.mirrored,
            centre=centre,
            liquidity=market.liquidity or 0.0,
            neg_risk=market.neg_risk,
        )
