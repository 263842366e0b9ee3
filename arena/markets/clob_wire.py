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
shortest repr). A price outside [0, 1], a negative size, or an unreadable number makes the
payload malformed (`ClobParseError`): a price is never guessed from a broken payload.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainValidator, ValidationError

from arena.core.errors import ArenaError
from arena.core.money import ONE, ZERO, to_decimal
from arena.core.order_book import Book, Level

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


class ClobParseError(ArenaError):
    """A CLOB payload cannot be understood; `token_id` names the token when it is known."""

    def __init__(self, reason: str, token_id: str | None = None) -> None:
        where = f"CLOB token {token_id}" if token_id else "CLOB payload"
        super().__init__(f"{where}: {reason}")
        self.reason = reason
        self.token_id = token_id


def _decimal(value: object) -> Decimal:
    """An exact Decimal from a string or JSON number (ValueError for anything else)."""
    if value is None:
        raise ValueError("missing number")
    return to_decimal(value)


def _probability(value: object) -> Decimal:
    """A price: a Decimal in [0, 1]."""
    number = _decimal(value)
    if not ZERO <= number <= ONE:
        raise ValueError(f"price {number} is outside [0, 1]")
    return number


def _size(value: object) -> Decimal:
    number = _decimal(value)
    if number < ZERO:
        raise ValueError(f"size {number} is negative")
    return number


def _optional_decimal(value: object) -> Decimal | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _decimal(value)


def _optional_probability(value: object) -> Decimal | None:
    return None if _optional_decimal(value) is None else _probability(value)


def _optional_text(value: object) -> str | None:
    """A string field; numbers are taken as their text (a timestamp sent as a number)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError("a boolean is not text")
    if isinstance(value, int | str):
        return str(value)
    raise ValueError(f"expected text, got {type(value).__name__}")


def _token_id(value: object) -> str:
    text = _optional_text(value)
    if text is None or not text.strip():
        raise ValueError("no asset_id")
    return text.strip()


def _levels(value: object) -> list[Level]:
    """A side as sent: a list of `{"price", "size"}` objects, each an exact `Level`."""
    if not isinstance(value, list | tuple):
        raise ValueError(f"levels must be a list, got {type(value).__name__}")
    levels = []
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise ValueError(f"level {index} must be an object")
        try:
            levels.append(Level(_probability(item.get("price")), _size(item.get("size"))))
        except ValueError as exc:
            raise ValueError(f"level {index}: {exc}") from None
    return levels


def _bids(value: object) -> tuple[Level, ...]:
    return tuple(sorted(_levels(value), key=lambda level: -level.price))


def _asks(value: object) -> tuple[Level, ...]:
    return tuple(sorted(_levels(value), key=lambda level: level.price))


Bids = Annotated[tuple[Level, ...], PlainValidator(_bids)]
Asks = Annotated[tuple[Level, ...], PlainValidator(_asks)]
OptionalPrice = Annotated[Decimal | None, BeforeValidator(_optional_probability)]
OptionalDecimal = Annotated[Decimal | None, BeforeValidator(_optional_decimal)]
OptionalText = Annotated[str | None, BeforeValidator(_optional_text)]
TokenId = Annotated[str, BeforeValidator(_token_id)]


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
    market: OptionalText = None
    timestamp: OptionalText = None
    hash: OptionalText = None
    bids: Bids = ()
    asks: Asks = ()
    min_order_size: OptionalDecimal = None
    tick_size: OptionalDecimal = None
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
    """One order book summary; ClobParseError names the token when it can."""
    if not isinstance(raw, Mapping):
        raise ClobParseError(f"an order book must be an object, got {type(raw).__name__}")
    token = raw.get("asset_id")
    token_id = str(token) if isinstance(token, str | int) and not isinstance(token, bool) else None
    try:
        wire = _WireBook.model_validate(raw)
    except ValidationError as exc:
        raise ClobParseError(f"unreadable order book ({_first_error(exc)})", token_id) from None
    return OrderBook(**dict(wire))


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
