"""The Polymarket CLOB's read responses as Pydantic models, and the per-token results built on them.

What the API sends (checked against the recorded real responses in tests/fixtures/clob/ and
Polymarket's own docs):

- **Order book** (`GET /book?token_id=`; `POST /books` with a body `[{"token_id": ...}, ...]`
  answers a JSON list of them): `market` (condition id), `asset_id` (the token, a decimal
  string of up to 78 digits), `timestamp` (milliseconds since the epoch, as a string), `hash`
  (SHA-1 of the book as sent with `hash` blanked), `bids`/`asks` as lists of
  `{"price": "0.48", "size": "100.5"}` strings, and since 2025 `min_order_size`, `tick_size`,
  `neg_risk`, later also `last_trade_price`. Older books lack the later fields; all are optional.
- **Level order.** The server sends bids ascending and asks descending, so the best price is
  the LAST of each list. `parse_book` sorts both best-first (bids descending, asks ascending)
  whatever order arrives, so `bids[0]`/`asks[0]` are the touch.
- **One book type.** A parsed book is the core's `Book` (`arena.core.order_book`: its levels,
  tick and minimum size, its best bid and ask) with the wire's own fields beside it
  (`OrderBook`), so the executor, the stored books and the prices read the same object.
- **Midpoints.** `GET /midpoint` answers `{"mid": "0.455"}` (newer docs spell it `mid_price`;
  both are read); `POST /midpoints` answers `{"<token_id>": "0.455", ...}`.
- **Price, spread, history.** `GET /price` → `{"price": ...}`, `GET /spread` → `{"spread": ...}`,
  `GET /prices-history` → `{"history": [{"t": <unix s>, "p": <number>}, ...]}`.
- **Errors.** A JSON object with an `error` text, e.g. 404 `{"error": "No orderbook exists for
  the requested token id"}` or 400 `{"error": "Invalid token id"}`.

Numbers arrive as strings or JSON numbers; both become exact Decimals (floats through their
shortest repr), each read from at most 32 characters of text (`arena.markets.wire_rules`).
An unreadable number, a midpoint outside [0, 1], or a book that breaks a rule below makes the
payload malformed (`ClobParseError`): a price is never guessed from a broken payload.

What a book must be (`parse_book`; each bound's reason is in `arena.core.order_book`):

- **Levels.** Each price strictly inside (0, 1) and on the book's tick grid (`tick_size`, at
  least Polymarket's finest 0.0001 and a whole fraction of 1; a book without one is held to
  the 0.0001 grid); each size finite, at least 0 and at most a billion shares; a side at most
  ten billion shares and at most one level per tick (999 at 0.001), counted on the raw list
  before a single Decimal is built. One level off any of these refuses the whole book (reason
  `malformed`, naming the level): a book that lies about one level is not trustworthy about
  the others, and a walk that skipped the bad level would fill at prices nobody quoted.
- **Texts.** Every text kept or stored has a width and characters: `asset_id` 1-96 of
  `[0-9A-Za-z_-]` (`decision_books.token_id`), `market` up to 128 of them, `timestamp` up to
  20 digits (milliseconds; `book_timestamp` is String(32)), `hash` up to 64 of
  `[0-9A-Za-z]` (String(64)). A book over one is refused, not cut: a cut hash is a false one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainValidator, ValidationError

from arena.core.errors import ArenaError
from arena.core.money import ONE, ZERO
from arena.core.order_book import (
    MAX_LEVEL_SIZE,
    MAX_SIDE_SIZE,
    MIN_TICK,
    Book,
    Level,
    levels_allowed,
)
from arena.markets.wire_rules import DIGITS, WORD_ID, bounded_decimal, bounded_text

# Why a token has no CLOB price (stored as the price's fallback reason).
NoPriceReason = Literal[
    "no_token",  # the market names no CLOB token for the outcome
    "unknown_token",  # the CLOB has no order book for it (404) or calls the id invalid (400)
    "clob_unavailable",  # no useful answer after the retries (5xx, 429 storm, timeouts)
    "malformed",  # an answer that does not parse, or a price outside [0, 1]
    "empty_book",  # a book without bids or asks
    "one_sided_book",  # a book with bids only or asks only
    "crossed_book",  # best bid >= best ask
]


TOKEN_CHARS = 96  # `decision_books.token_id`; a real token id is a decimal of up to 78 digits
ALNUM = re.compile(r"[0-9A-Za-z]+")


class ClobParseError(ArenaError):
    """A CLOB payload cannot be understood; `token_id` names the token when it is known."""

    def __init__(self, reason: str, token_id: str | None = None) -> None:
        where = f"CLOB token {token_id}" if token_id else "CLOB payload"
        super().__init__(f"{where}: {reason}")
        self.reason = reason
        self.token_id = token_id


def _decimal(value: object) -> Decimal:
    """An exact Decimal from a string or JSON number of bounded text (ValueError else)."""
    return bounded_decimal(value)


def _probability(value: object) -> Decimal:
    """A midpoint, price or spread: a Decimal in [0, 1]."""
    number = _decimal(value)
    if not ZERO <= number <= ONE:
        raise ValueError(f"price {number} is outside [0, 1]")
    return number


def _level_price(value: object) -> Decimal:
    """A level's price: strictly inside (0, 1), where the CLOB's tick range lies."""
    number = _decimal(value)
    if not ZERO < number < ONE:
        raise ValueError(f"price {number} is outside (0, 1)")
    return number


def _size(value: object) -> Decimal:
    number = _decimal(value)
    if number < ZERO:
        raise ValueError(f"size {number} is negative")
    if number > MAX_LEVEL_SIZE:
        raise ValueError(f"size {number} is over {MAX_LEVEL_SIZE} shares")
    return number


def _optional_decimal(value: object) -> Decimal | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _decimal(value)


def _optional_probability(value: object) -> Decimal | None:
    return None if _optional_decimal(value) is None else _probability(value)


def _optional_size(value: object) -> Decimal | None:
    return None if _optional_decimal(value) is None else _size(value)


def _tick(value: object) -> Decimal | None:
    """A tick size: at least Polymarket's finest (0.0001), below 1, a whole fraction of 1."""
    tick = _optional_decimal(value)
    if tick is None:
        return None
    if not MIN_TICK <= tick < ONE or ONE % tick != ZERO:
        raise ValueError(f"tick {tick} is not a tick of [{MIN_TICK}, 1) dividing 1")
    return tick


def _rule(what: str, max_chars: int, pattern: re.Pattern[str]) -> BeforeValidator:
    """A text field's rule (`bounded_text`): its width and characters."""
    return BeforeValidator(lambda value: bounded_text(value, what, max_chars, pattern))


def _token_id(value: object) -> str:
    text = bounded_text(value, "asset_id", TOKEN_CHARS, WORD_ID)
    if text is None:
        raise ValueError("no asset_id")
    return text


def _levels(value: object) -> list[Level]:
    """A side as sent: a list of `{"price", "size"}` objects, each an exact `Level`."""
    if not isinstance(value, list | tuple):
        raise ValueError(f"levels must be a list, got {type(value).__name__}")
    if len(value) > levels_allowed(None):
        raise ValueError(f"{len(value)} levels, more than a book holds")
    levels = []
    total = ZERO
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise ValueError(f"level {index} must be an object")
        try:
            level = Level(_level_price(item.get("price")), _size(item.get("size")))
        except ValueError as exc:
            raise ValueError(f"level {index}: {exc}") from None
        total += level.size
        if total > MAX_SIDE_SIZE:
            raise ValueError(f"more than {MAX_SIDE_SIZE} shares on one side")
        levels.append(level)
    return levels


def _bids(value: object) -> tuple[Level, ...]:
    return tuple(sorted(_levels(value), key=lambda level: -level.price))


def _asks(value: object) -> tuple[Level, ...]:
    return tuple(sorted(_levels(value), key=lambda level: level.price))


Bids = Annotated[tuple[Level, ...], PlainValidator(_bids)]
Asks = Annotated[tuple[Level, ...], PlainValidator(_asks)]
OptionalPrice = Annotated[Decimal | None, BeforeValidator(_optional_probability)]
OptionalSize = Annotated[Decimal | None, BeforeValidator(_optional_size)]
Tick = Annotated[Decimal | None, BeforeValidator(_tick)]
TokenId = Annotated[str, BeforeValidator(_token_id)]
ConditionId = Annotated[str | None, _rule("market", 128, WORD_ID)]
Millis = Annotated[str | None, _rule("timestamp", 20, DIGITS)]
Hash = Annotated[str | None, _rule("hash", 64, ALNUM)]


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderBook(Book):
    """One token's order book summary as the CLOB sent it: a core `Book` (levels best-first,
    tick and minimum size) and the wire's own fields."""

    asset_id: str
    market: str | None = None
    timestamp: str | None = None
    hash: str | None = None
    neg_risk: bool | None = None
    last_trade_price: Decimal | None = None

    @property
    def timestamp_ms(self) -> int | None:
        """The server's timestamp in milliseconds, when it is a readable integer."""
        text = (self.timestamp or "").strip()
        return int(text) if text.isdigit() else None


class _WireBook(BaseModel):
    """What `parse_book` validates an order book payload against (fields in `OrderBook`)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    asset_id: TokenId
    market: ConditionId = None
    timestamp: Millis = None
    hash: Hash = None
    bids: Bids = ()
    asks: Asks = ()
    min_order_size: OptionalSize = None
    tick_size: Tick = None
    neg_risk: bool | None = None
    last_trade_price: OptionalPrice = None


def to_core_book(book: Book) -> Book:
    """The plain core `Book` of a wire book, its wire fields dropped (a stored book's equal)."""
    return Book(book.bids, book.asks, book.tick_size, book.min_order_size)


@dataclass(frozen=True)
class PricePoint:
    """One point of `/prices-history`: unix seconds and the price then."""

    t: int
    p: Decimal


@dataclass(frozen=True)
class ClobQuote:
    """The CLOB's answer for one token: a midpoint, or the reason there is none.

    `mid` and `reason` are never both set and never both None. `detail` says more for the
    log (the server's error text, the offending value).
    """

    token_id: str
    mid: Decimal | None = None
    reason: NoPriceReason | None = None
    detail: str | None = None
    book: OrderBook | None = None

    def __post_init__(self) -> None:
        if (self.mid is None) == (self.reason is None):
            raise ValueError("a ClobQuote has either a midpoint or a reason, not both or neither")

    @property
    def ok(self) -> bool:
        return self.mid is not None


# --------------------------------------------------------------------------------------------
# Parsers (pure; each raises ClobParseError for a payload it cannot read)
# --------------------------------------------------------------------------------------------


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error.get("loc", ())) or "payload"
    return f"{where}: {error.get('msg', 'invalid')}"


def parse_book(raw: object) -> OrderBook:
    """One order book summary; ClobParseError names the token when it can.

    The level counts are checked on the raw lists first (`_too_many_levels`), so a book of
    50,000 levels a side is refused before one Decimal is built; the tick grid last, once
    every price and the tick have been read (`_off_tick`)."""
    if not isinstance(raw, Mapping):
        raise ClobParseError(f"an order book must be an object, got {type(raw).__name__}")
    token_id = _named_token(raw.get("asset_id"))
    try:
        too_many = _too_many_levels(raw)
        if too_many is not None:
            raise ClobParseError(too_many, token_id)
        wire = _WireBook.model_validate(raw)
    except ValidationError as exc:
        raise ClobParseError(f"unreadable order book ({_first_error(exc)})", token_id) from None
    book = OrderBook(**dict(wire))
    off = _off_tick(book)
    if off is not None:
        raise ClobParseError(off, token_id)
    return book


def _named_token(value: object) -> str | None:
    """The token a payload names, for its error, when it is a readable one."""
    try:
        return bounded_text(value, "asset_id", TOKEN_CHARS, WORD_ID)
    except ValueError:
        return None


def _too_many_levels(raw: Mapping[str, Any]) -> str | None:
    """Why a raw book holds more levels than its tick allows (one per tick inside (0, 1)),
    from the lists' lengths alone; an unreadable tick is left to the model's own error."""
    try:
        allowed = levels_allowed(_tick(raw.get("tick_size")))
    except ValueError:
        allowed = levels_allowed(None)
    for side in ("bids", "asks"):
        levels = raw.get(side)
        if isinstance(levels, list | tuple) and len(levels) > allowed:
            return f"{side}: {len(levels)} levels, more than the {allowed} its tick allows"
    return None


def _off_tick(book: Book) -> str | None:
    """The first level whose price is off the book's tick grid (the 0.0001 grid without a
    tick), named by side and price; None when every level is on it."""
    grid = book.tick_size or MIN_TICK
    for side, levels in (("bids", book.bids), ("asks", book.asks)):
        for level in levels:
            if level.price % grid != ZERO:
                return f"{side} level at {level.price} is off the book's {grid} tick"
    return None


def parse_books(raw: object) -> list[OrderBook | ClobParseError]:
    """`POST /books`: each entry's book, or the error that entry gave (the rest still parse)."""
    if not isinstance(raw, list):
        raise ClobParseError(f"/books must answer a list, got {type(raw).__name__}")
    results: list[OrderBook | ClobParseError] = []
    for item in raw:
        try:
            results.append(parse_book(item))
        except ClobParseError as exc:
            results.append(exc)
    return results


def parse_midpoint(raw: object, token_id: str | None = None) -> Decimal:
    """`GET /midpoint`: `{"mid": "0.455"}` (or `mid_price`) as a price in [0, 1]."""
    if not isinstance(raw, Mapping):
        raise ClobParseError("a midpoint answer must be an object", token_id)
    value = raw.get("mid", raw.get("mid_price"))
    try:
        return _probability(value)
    except ValueError as exc:
        raise ClobParseError(f"unreadable midpoint ({exc})", token_id) from None


def parse_midpoints(raw: object) -> dict[str, Decimal | ClobParseError]:
    """`POST /midpoints`: `{"<token>": "0.455", ...}`, each value a price or its error."""
    if not isinstance(raw, Mapping):
        raise ClobParseError(f"/midpoints must answer an object, got {type(raw).__name__}")
    if "error" in raw and isinstance(raw.get("error"), str):
        raise ClobParseError(f"/midpoints answered an error: {str(raw['error'])[:200]}")
    results: dict[str, Decimal | ClobParseError] = {}
    for token, value in raw.items():
        try:
            results[str(token)] = _probability(value)
        except ValueError as exc:
            results[str(token)] = ClobParseError(f"unreadable midpoint ({exc})", str(token))
    return results


def parse_price(raw: object, field: Literal["price", "spread"] = "price") -> Decimal:
    """`GET /price` (`{"price": ...}`) or `GET /spread` (`{"spread": ...}`) as a Decimal."""
    if not isinstance(raw, Mapping):
        raise ClobParseError(f"a {field} answer must be an object")
    try:
        return _probability(raw.get(field))
    except ValueError as exc:
        raise ClobParseError(f"unreadable {field} ({exc})") from None


def parse_price_history(raw: object) -> list[PricePoint]:
    """`GET /prices-history`: `{"history": [{"t": ..., "p": ...}]}`, in time order."""
    history = raw.get("history") if isinstance(raw, Mapping) else None
    if not isinstance(history, list):
        raise ClobParseError("/prices-history must answer an object with a history list")
    points: list[PricePoint] = []
    for item in history:
        if not isinstance(item, Mapping):
            raise ClobParseError("a history point must be an object")
        stamp = item.get("t")
        if isinstance(stamp, bool) or not isinstance(stamp, int | float | str):
            raise ClobParseError(f"unreadable history time {stamp!r}")
        try:
            points.append(PricePoint(int(_decimal(stamp)), _probability(item.get("p"))))
        except ValueError as exc:
            raise ClobParseError(f"unreadable history point ({exc})") from None
    return sorted(points, key=lambda point: point.t)


def error_text(raw: object) -> str | None:
    """The `error` text of a CLOB error body, if it is one."""
    if isinstance(raw, Mapping) and isinstance(raw.get("error"), str):
        return str(raw["error"])[:200]
    return None


def book_hash(raw: Mapping[str, Any]) -> str:
    """The server's book hash: SHA-1 of the compact JSON of the book as sent, `hash` blanked.

    Key order is the payload's own (the server's has changed over the years), so only a book
    whose keys and values are exactly as sent reproduces its `hash`: the recorded fixtures'
    proof of being unaltered.
    """
    blanked = {key: ("" if key == "hash" else value) for key, value in raw.items()}
    text = json.dumps(blanked, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha1(text.encode()).hexdigest()  # the server's checksum, not security
