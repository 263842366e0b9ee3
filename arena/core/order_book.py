"""An order book as the book-walk executor reads it (extension `book_execution`): pure values.

Why its own type in the core: the executor (`arena.core.book_walk`), the engine that stores
the books of each decision run, and a replay bundle's verifier must walk the same levels to
the cent, with no database and no HTTP. It is the one book type: the CLOB's wire book
(`arena.markets.clob_wire.OrderBook`) and the simulated CLOB's (`arena.sim.books.SimBook`) are
Books with their own fields beside, and a stored book decodes to one (`arena.core.book_text`).

Levels are best-first: bids descending, asks ascending. Prices and sizes are exact Decimals.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

BOOK_DEPTH = 20  # levels per side a decision run stores; a walk past them is partial
# What a real book can hold, so the CLOB's parser refuses the rest and the walk's arithmetic
# (28 significant digits) is exact on whatever passes. Polymarket's finest tick is 0.0001, and
# a side has at most one level per tick strictly inside (0, 1): 1/tick − 1 levels (999 at a
# 0.001 tick, 9,999 at the finest). No market has a billion shares resting at one price, nor
# ten billion on one side (the largest market ever traded a few billion dollars in its life).
MIN_TICK = Decimal("0.0001")
MAX_LEVELS = 9_999
MAX_LEVEL_SIZE = Decimal(10**9)
MAX_SIDE_SIZE = Decimal(10**10)
# Why a book gives no midpoint (each is also a CLOB price's fallback reason, methodology v2).
NoMidReason = Literal["empty_book", "one_sided_book", "crossed_book"]


@dataclass(frozen=True, slots=True)
class Level:
    """`size` shares resting at `price`."""

    price: Decimal
    size: Decimal


@dataclass(frozen=True, slots=True)
class Book:
    """One token's book at one instant, levels best-first; `tick_size` when the CLOB sent it."""

    bids: tuple[Level, ...]
    asks: tuple[Level, ...]
    tick_size: Decimal | None = None
    min_order_size: Decimal | None = None

    @property
    def best_bid(self) -> Decimal | None:
        return self.bids[0].price if self.bids else None

    @property
    def best_ask(self) -> Decimal | None:
        return self.asks[0].price if self.asks else None

    @property
    def crossed(self) -> bool:
        """Best bid at or above best ask: no trader could fill at such a book's prices."""
        bid, ask = self.best_bid, self.best_ask
        return bid is not None and ask is not None and bid >= ask

    def top(self, depth: int = BOOK_DEPTH) -> Book:
        """The book cut to its best `depth` levels a side (what a decision run stores)."""
        return Book(self.bids[:depth], self.asks[:depth], self.tick_size, self.min_order_size)


def levels_allowed(tick: Decimal | None) -> int:
    """How many levels a side can hold: one per tick strictly inside (0, 1), at most
    `MAX_LEVELS` (a book without a tick is held to the finest one, `MIN_TICK`)."""
    finest = max(tick if tick is not None else MIN_TICK, MIN_TICK)
    return min(int(1 / finest) - 1, MAX_LEVELS)


def midpoint(bid: Decimal | None, ask: Decimal | None) -> tuple[Decimal | None, NoMidReason | None]:
    """(best bid + best ask) / 2, or why a book has no midpoint: no levels, one side only, or
    crossed (bid >= ask). One rule for v2's prices from a CLOB book and the execution-
    sensitivity view's mid from a stored one."""
    if bid is None and ask is None:
        return None, "empty_book"
    if bid is None or ask is None:
        return None, "one_sided_book"
    if bid >= ask:
        return None, "crossed_book"
    return (bid + ask) / 2, None
