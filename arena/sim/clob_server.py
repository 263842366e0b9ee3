"""A simulated Polymarket CLOB: the world's order books behind the real CLOB read API.

What it is: a real HTTP server on a loopback port speaking the public, key-less read endpoints
of `clob.polymarket.com` in their recorded shapes, so the project's CLOB client is exercised
offline exactly as against the exchange:

* `GET /book?token_id=` → one book; `POST /books` (a JSON list of `{"token_id": ...}`) → a
  list of books. A book is `{"market", "asset_id", "timestamp", "hash", "bids", "asks",
  "min_order_size", "tick_size", "neg_risk", "last_trade_price"}`, prices and sizes as decimal
  strings; bids are listed ascending and asks descending, i.e. the best price LAST on both
  sides, as the real CLOB sends them (Polymarket's docs; recorded books in
  `tests/fixtures/clob/`). `hash` is the SHA-1 of the book's compact JSON with `hash` blanked,
  the real server's formula.
* `GET /midpoint?token_id=` → `{"mid": "0.455"}`; `POST /midpoints` → `{"<token>": "0.455"}`.
* `GET /price?token_id=&side=BUY|SELL` → `{"price": ...}`: BUY answers the best bid and SELL
  the best ask, as the live CLOB does (the side is the resting orders', not the taker's).
* `GET /spread?token_id=` → `{"spread": ...}` (best ask − best bid).

Errors are the CLOB's: `{"error": "Invalid token id"}` (400) without a token, `{"error": "No
orderbook exists for the requested token id"}` (404) for an unknown token, a market that is
not trading, or a `missing` fault; `{"error": "Invalid payload"}` (400) for a malformed POST
body, `{"error": "Payload exceeds the limit"}` (400) beyond `BATCH_LIMIT` tokens, `{"error":
"Invalid side"}` (400). A batch leaves out the tokens that have no book (or no midpoint).

Faulted books (`arena.sim.books`): an `empty` book is served with no levels, and its midpoint,
price and spread are 404s. A `one_sided` or `crossed` book gets the real CLOB's arithmetic,
as far as public reports tell it: the missing side counts as 0 (a one-sided book's midpoint is
half its best price), and a crossed book's midpoint is still the mean of its best bid and ask
(its spread negative). A client must notice these, not trust them.

The simulated instant: a request's `X-Arena-At` header (ISO-8601, as the model server reads
it) wins; without it, the server's clock `server.at` (settable at any time; the real CLOB
client sends no such header). With neither, every book route answers 400.

Use: `with ClobServer(world, at=instant) as server:` then point a client at `server.origin`;
`server.log` holds one `ClobCall` per request. From the shell: `arena clob-server`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from arena.markets.clob_wire import book_hash
from arena.sim.books import (
    MIN_ORDER_SIZE,
    BookSource,
    Centre,
    Level,
    SimBook,
    WorldBooks,
    WorldLike,
    book_for,
    decimal_text,
)
from arena.sim.clock import micros
from arena.sim.loopback import LoopbackServer, Reply
from arena.sim.model_server import AT_HEADER

__all__ = [
    "BATCH_LIMIT",
    "INVALID_PAYLOAD",
    "INVALID_TOKEN",
    "NO_ORDERBOOK",
    "ClobCall",
    "ClobServer",
    "book_json",
]

NO_ORDERBOOK = "No orderbook exists for the requested token id"
INVALID_TOKEN = "Invalid token id"
INVALID_PAYLOAD = "Invalid payload"
BATCH_LIMIT = 500  # tokens per POST /books or /midpoints (the real API's documented maximum)
NO_INSTANT = f"no simulated instant: send {AT_HEADER} or set the server's clock"

Answer = tuple[int, Any]


@dataclass(frozen=True)
class ClobCall:
    """One request as served: lets tests count batches and fallbacks."""

    seq: int
    method: str
    route: str
    tokens: int  # token ids asked about (1 for a single-token route, 0 if none)
    status: int


def book_json(book: SimBook) -> dict[str, Any]:
    """The CLOB's JSON for a book: its key order, best price last, and its SHA-1 `hash`
    (`clob_wire.book_hash`, the formula the client checks recorded books by)."""
    body: dict[str, Any] = {
        "market": book.market,
        "asset_id": book.token,
        "timestamp": str(micros(book.at) // 1000),
        "hash": "",
        "bids": [_level(level) for level in reversed(book.bids)],
        "asks": [_level(level) for level in reversed(book.asks)],
        "min_order_size": decimal_text(book.min_order_size or MIN_ORDER_SIZE),
        "tick_size": decimal_text(book.tick),
        "neg_risk": book.neg_risk,
        "last_trade_price": decimal_text(book.last_trade),
    }
    body["hash"] = book_hash(body)
    return body


def _level(level: Level) -> dict[str, str]:
    return {"price": decimal_text(level.price), "size": decimal_text(level.size)}


class ClobServer(LoopbackServer):
    """The world's order books behind a real CLOB-shaped HTTP server on a loopback port.

    Give a world (`SimulatedWorld`; books from `WorldBooks(world, centre=centre)`) or any
    `BookSource`. `at` starts the clock; `port=0` lets the OS choose.
    """

    server_version = "ArenaSimulatedClob/1"
    json_separators = (",", ":")  # compact, as the real CLOB writes it

    def __init__(
        self,
        world: WorldLike | None = None,
        *,
        source: BookSource | None = None,
        centre: Centre = "quoted",
        at: datetime | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if source is None:
            if world is None:
                raise ValueError("give a world or a book source")
            source = WorldBooks(world, centre=centre)
        self.source: BookSource = source
        self.at: datetime | None = at
        self.log: list[ClobCall] = []
        self._lock = threading.Lock()
        super().__init__(host, port)

    # --- request handling ------------------------------------------------------------------

    def reply(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Reply:
        status, answer = self.handle(method, target, headers, body)
        return Reply(status, answer)

    def handle(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Answer:
        """The status and JSON body for one request (pure but for the clock and the log)."""
        parts = urlsplit(target)
        route = parts.path.rstrip("/") or "/"
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        status, payload, tokens = self._route(method, route, query, headers, body)
        with self._lock:
            self.log.append(ClobCall(len(self.log), method, route, tokens, status))
        return status, payload

    def _instant(self, headers: Mapping[str, str]) -> datetime | None:
        """The header's instant if it parses, else the server's clock."""
        value = next((v for k, v in headers.items() if k.lower() == AT_HEADER.lower()), "")
        if value.strip():
            try:
                parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            except ValueError:
                parsed = None
            if parsed is not None:
                return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed
        return self.at

    def _route(
        self,
        method: str,
        route: str,
        query: Mapping[str, str],
        headers: Mapping[str, str],
        body: bytes,
    ) -> tuple[int, Any, int]:
        singles = {"/book", "/midpoint", "/price", "/spread"}
        batches = {"/books", "/midpoints"}
        if not (method == "GET" and route in singles) and not (
            method == "POST" and route in batches
        ):
            return 404, {"error": f"no route {method} {route}"}, 0
        at = self._instant(headers)
        if route in batches:
            tokens = _batch_tokens(body)
            if isinstance(tokens, str):
                return 400, {"error": tokens}, 0
            if at is None:
                return 400, {"error": NO_INSTANT}, len(tokens)
            return 200, self._batch(route, tokens, at), len(tokens)
        token = query.get("token_id", "").strip()
        if not token:
            return 400, {"error": INVALID_TOKEN}, 0
        side = query.get("side", "").upper()
        if route == "/price" and side not in ("BUY", "SELL"):
            return 400, {"error": "Invalid side"}, 1
        if at is None:
            return 400, {"error": NO_INSTANT}, 1
        status, payload = self._single(route, token, side, at)
        return status, payload, 1

    def _single(self, route: str, token: str, side: str, at: datetime) -> Answer:
        book = book_for(self.source, token, at)
        if book is None:
            return 404, {"error": NO_ORDERBOOK}
        if route == "/book":
            return 200, book_json(book)
        if route == "/midpoint":
            value = book.midpoint()
            key = "mid"
        elif route == "/spread":
            value = book.spread()
            key = "spread"
        else:
            value = book.price("BUY" if side == "BUY" else "SELL")
            key = "price"
        if value is None:
            return 404, {"error": NO_ORDERBOOK}
        return 200, {key: decimal_text(value)}

    def _batch(self, route: str, tokens: list[str], at: datetime) -> Any:
        books = [book_for(self.source, token, at) for token in tokens]
        if route == "/books":
            return [book_json(book) for book in books if book is not None]
        mids: dict[str, str] = {}
        for token, book in zip(tokens, books, strict=True):
            mid = book.midpoint() if book is not None else None
            if mid is not None:
                mids[token] = decimal_text(mid)
        return mids


def _batch_tokens(body: bytes) -> list[str] | str:
    """The token ids of a batch body, or the CLOB's error text for a bad one."""
    try:
        items = json.loads(body)
    except ValueError:
        return INVALID_PAYLOAD
    if not isinstance(items, list) or not items:
        return INVALID_PAYLOAD
    tokens: list[str] = []
    for item in items:
        token = item.get("token_id") if isinstance(item, dict) else None
        if not isinstance(token, str) or not token.strip():
            return INVALID_PAYLOAD
        tokens.append(token.strip())
    if len(tokens) > BATCH_LIMIT:
        return "Payload exceeds the limit"
    return tokens
