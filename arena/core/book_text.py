"""A stored book side's text, decoded: pure, so the read side decodes what the engine stored.

Why in core: the engine stores decision books (`arena.engine.books`) and the execution
sensitivity view (`arena.analytics.stats.execution`) re-executes against them; the read side
may not import the engine (tests/test_layers.py), so the pure codec lives below both.

One text a side, best-first, `price:size` pairs joined by `;`, each number its exact decimal
text ("" is a side with no levels). A number whose fixed-point text would be longer than
`MAX_NUMBER_CHARS` is refused (`BookTextError`), never written: `1E+999999` is a megabyte in
fixed point. The CLOB's parser refuses such books first; this is the store's own guard.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from arena.core.money import to_decimal
from arena.core.order_book import Book, Level

MAX_NUMBER_CHARS = 32  # the widest stored number column (`decision_books.tick_size`)


class BookTextError(ValueError):
    """A stored side's text that does not decode (hand-edited or truncated), or a level too
    wide to encode: never guessed."""


def fixed_width(number: Decimal) -> int:
    """The length of `format(number, "f")` for a finite number, from its digits and exponent
    (never written out)."""
    sign, digits, exponent = number.as_tuple()
    if not isinstance(exponent, int):
        raise BookTextError(f"{number} is not a finite number")
    whole = max(len(digits) + exponent, 1)
    places = max(-exponent, 0)
    return sign + whole + (places + 1 if places else 0)


def _text(value: Decimal) -> str:
    if fixed_width(value) > MAX_NUMBER_CHARS:
        raise BookTextError(f"a book number of {fixed_width(value)} digits is not stored")
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
