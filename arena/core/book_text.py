"""A stored book side's text, decoded: pure, so the read side decodes what the engine stored.

Why in core: the engine stores decision books (`arena.engine.books`) and the execution
sensitivity view (`arena.analytics.stats.execution`) re-executes against them; the read side
may not import the engine (tests/test_layers.py), so the pure codec lives below both.

One text a side, best-first, `price:size` pairs joined by `;`, each number its exact decimal
text ("" is a side with no levels).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from arena.core.money import to_decimal
from arena.core.order_book import Book, Level


class BookTextError(ValueError):
    """A stored side's text that does not decode (hand-edited or truncated): never guessed."""


def _text(value: Decimal) -> str:
    return format(value, "f")


def encode_levels(levels: Iterable[Level]) -> str:
    """One side as stored: `price:size;...` best-first, each number's exact decimal text."""
    return ";".join(f"{_text(level.price)}:{_text(level.size)}" for level in levels)


def decode_levels(text: str) -> tuple[Level, ...]:
    """A stored side back as levels (in stored order); BookTextError for text that is not one."""
    if text == "":
        return ()
    levels: list[Level] = []
    for pair in text.split(";"):
        price, sep, size = pair.partition(":")
        if not sep:
            raise BookTextError(f"book level {pair!r} is not price:size")
        try:
            levels.append(Level(to_decimal(price), to_decimal(size)))
        except ValueError as exc:
            raise BookTextError(f"book level {pair!r}: {exc}") from None
    return tuple(levels)


def decode_book(
    bids: str | None, asks: str | None, tick_size: str | None, min_order_size: str | None
) -> Book | None:
    """A stored row's book (None when the row stored no book: its status says why)."""
    if bids is None or asks is None:
        return None
    return Book(
        decode_levels(bids),
        decode_levels(asks),
        None if tick_size is None else to_decimal(tick_size),
        None if min_order_size is None else to_decimal(min_order_size),
    )
