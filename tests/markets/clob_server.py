"""A real loopback HTTP server speaking the CLOB's read API, with scripted faults, recording
every request (body included).

By default it answers from `books` (token id → a raw book as the CLOB sends it, best price
LAST): `GET /book`, `POST /books`, `GET /midpoint`, `POST /midpoints`, `GET /price`,
`GET /spread`, and `GET /prices-history` from `history`. A token without a book gets the real
404 `{"error": "No orderbook exists for the requested token id"}` (`POST /midpoints` and
`POST /books` leave it out). A midpoint is only served for a two-sided, uncrossed book.
`script(method, path, *replies)` overrides a route: replies play in order, the last repeats.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.loopback import LoopbackServer, Reply

__all__ = ["NO_BOOK", "ClobServer", "Recorded", "Reply", "serve"]

NO_BOOK = {"error": "No orderbook exists for the requested token id"}


@dataclass(frozen=True)
class Recorded:
    """A request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    body: Any


@dataclass
class _Script:
    replies: list[Reply]
    served: int = 0

    def next_reply(self) -> Reply:
        reply = self.replies[min(self.served, len(self.replies) - 1)]
        self.served += 1
        return reply


@dataclass
class ClobServer(LoopbackServer):
    """The CLOB's read routes on 127.0.0.1, answering from `books` unless scripted."""

    books: dict[str, dict[str, Any]] = field(default_factory=dict)
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__()
        self._scripts: dict[tuple[str, str], _Script] = {}
        self.requests: list[Recorded] = []

    @property
    def url(self) -> str:
        return self.origin

    def add_book(self, raw: dict[str, Any]) -> str:
        """Serve `raw` as its token's book; returns the token id."""
        token = str(raw["asset_id"])
        with self._lock:
            self.books[token] = raw
        return token

    def script(self, method: str, path: str, *replies: Reply) -> None:
        if not replies:
            raise ValueError("script at least one reply")
        with self._lock:
            self._scripts[(method, path)] = _Script(list(replies))

    def requests_to(self, method: str, path: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.method == method and r.path == path]

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        parts = urlsplit(target)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        try:
            decoded = json.loads(body) if body else None
        except ValueError:
            decoded = body.decode(errors="replace")
        with self._lock:
            self.requests.append(Recorded(method, parts.path, query, decoded))
            scripted = self._scripts.get((method, parts.path))
            if scripted is not None:
                return scripted.next_reply()
            return self._serve(method, parts.path, query, decoded)

    # ---- the default answers (from `books`) -----------------------------------------------

    def _serve(self, method: str, path: str, query: dict[str, str], body: Any) -> Reply:
        token = query.get("token_id", "")
        if (method, path) == ("GET", "/book"):
            return Reply(body=self.books[token]) if token in self.books else Reply(404, NO_BOOK)
        if (method, path) == ("POST", "/books"):
            return Reply(body=[self.books[t] for t in _tokens(body) if t in self.books])
        if (method, path) == ("GET", "/midpoint"):
            mid = self._mid(token)
            return Reply(404, NO_BOOK) if mid is None else Reply(body={"mid": mid})
        if (method, path) == ("POST", "/midpoints"):
            mids = {t: self._mid(t) for t in _tokens(body)}
            return Reply(body={t: mid for t, mid in mids.items() if mid is not None})
        if (method, path) == ("GET", "/price"):
            side = _best(self.books.get(token), "bids" if query.get("side") == "SELL" else "asks")
            return Reply(404, NO_BOOK) if side is None else Reply(body={"price": str(side)})
        if (method, path) == ("GET", "/spread"):
            bid, ask = _best(self.books.get(token), "bids"), _best(self.books.get(token), "asks")
            if bid is None or ask is None:
                return Reply(404, NO_BOOK)
            return Reply(body={"spread": str(ask - bid)})
        if (method, path) == ("GET", "/prices-history"):
            return Reply(body={"history": self.history.get(query.get("market", ""), [])})
        return Reply(404, {"error": "not found"})

    def _mid(self, token: str) -> str | None:
        bid, ask = _best(self.books.get(token), "bids"), _best(self.books.get(token), "asks")
        if bid is None or ask is None or bid >= ask:
            return None
        return str((bid + ask) / 2)


def _tokens(body: Any) -> list[str]:
    if not isinstance(body, list):
        return []
    return [str(item.get("token_id")) for item in body if isinstance(item, dict)]


def _best(book: dict[str, Any] | None, side: str) -> Decimal | None:
    """The best price of one side of a raw book (bids: highest, asks: lowest)."""
    if book is None or not book.get(side):
        return None
    prices = [Decimal(str(level["price"])) for level in book[side]]
    return max(prices) if side == "bids" else min(prices)


@contextmanager
def serve(*books: dict[str, Any]) -> Iterator[ClobServer]:
    """A started ClobServer holding `books`, stopped on exit."""
    server = ClobServer()
    for raw in books:
        server.add_book(raw)
    server.start()
    try:
        yield server
    finally:
        server.stop()
