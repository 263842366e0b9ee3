"""A read-only client for Polymarket's CLOB: midpoints, order books, prices and history.

Why not Polymarket's own `py-clob-client-v2` (1.2.1, inspected 2026): its read methods return
raw dicts (no book types on the way in), it raises `PolyApiException` on any non-200, retries
nothing on GET (one 30 ms retry on POST), ignores Retry-After and uses one module-global
`httpx.Client(http2=True)` with no timeout or transport to inject. Installing it pulls the
signing stack: eth-account, eth-abi, eth-utils, py-order-utils, poly-eip712-structs,
pycryptodome, ckzg, cytoolz, bitarray, py-ecc, regex, h2 (about 7.9 MB of wheels beyond what
we already have, and `pytest` as a runtime dependency of two of them). Its `host` can be a
loopback URL, but nothing else fits read-only use; so this is the thin client instead.

Behaviour:

- **Batches.** `midpoints` and `books` POST `/midpoints` and `/books` in chunks of
  `batch_size` tokens. A chunk that fails (after the shared retries of
  `arena.markets.retrying`) or answers something unreadable is read again one `GET` per
  token; a token a good batch answer leaves out is read alone as well.
- **No invented prices.** Every token gets a `ClobQuote`: a midpoint, or the reason there is
  none (`unknown_token` for a 404/400, `clob_unavailable` after the retries, `malformed`, and
  for books `empty_book`, `one_sided_book`, `crossed_book`). Each is logged once at WARNING
  on logger `arena.markets.clob`, naming the token and, when the caller passed one, the market.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal, TypeVar

import httpx

from arena.core.errors import ArenaError
from arena.markets.bounded_http import MIB, ReadLimits
from arena.markets.clob_wire import (
    ClobParseError,
    ClobQuote,
    NoPriceReason,
    PricePoint,
    error_text,
    parse_book,
    parse_books,
    parse_midpoint,
    parse_midpoints,
    parse_price,
    parse_price_history,
)
from arena.markets.http_client import OwnsHttpClient, json_http_client
from arena.markets.price_source import quote_from_book
from arena.markets.retrying import RequestFailed, Retrier, RetryPolicy

__all__ = ["BATCH_SIZE", "CLOB_URL", "ClobClient", "ClobQuote", "ClobUnavailable"]

logger = logging.getLogger("arena.markets.clob")
_T = TypeVar("_T")

CLOB_URL = "https://clob.polymarket.com"
BATCH_SIZE = 100  # tokens per POST; well under what the API takes, small enough to retry cheaply
# A real batch of 100 books is at most about 10 MB (999 levels a side at a 0.001 tick); a
# read that takes longer than 30 s in all is an outage, not a slow answer.
CLOB_LIMITS = ReadLimits(max_bytes=16 * MIB, deadline=30.0)
NOT_FOUND_STATUSES = frozenset({400, 404})  # "Invalid token id" / "No orderbook exists ..."


class ClobUnavailable(ArenaError):
    """The CLOB could not answer a request whose answer is not a per-token price (history)."""

    def __init__(self, message: str, *, path: str, status: int | None = None) -> None:
        super().__init__(message, "check ARENA_CLOB_URL and the network, then run the job again")
        self.path = path
        self.status = status


def _chunks(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _unique(token_ids: Iterable[str]) -> list[str]:
    """Token ids in first-seen order, blanks dropped."""
    seen: dict[str, None] = {}
    for token in token_ids:
        text = str(token).strip()
        if text:
            seen.setdefault(text, None)
    return list(seen)


class ClobClient(OwnsHttpClient):
    """Reads the public CLOB (no key needed) through the shared retrying transport."""

    def __init__(
        self,
        base_url: str = CLOB_URL,
        *,
        timeout: float = 15.0,
        max_attempts: int = 4,
        backoff_base: float = 0.5,
        max_backoff: float = 30.0,
        min_interval: float = 0.1,
        batch_size: int = BATCH_SIZE,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.BaseTransport | None = None,
        limits: ReadLimits = CLOB_LIMITS,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        policy = RetryPolicy(max_attempts, backoff_base, max_backoff, min_interval, limits)
        self.batch_size = batch_size
        self._client = json_http_client(
            base_url=base_url.rstrip("/"), timeout=timeout, transport=transport
        )
        self._retrier = Retrier(
            self._client, policy, label="CLOB", logger=logger, sleep=sleep, rng=rng, clock=clock
        )

    # ---- midpoints ---------------------------------------------------------------------------

    def midpoints(
        self, token_ids: Iterable[str], market_ids: Mapping[str, str] | None = None
    ) -> dict[str, ClobQuote]:
        """Each token's midpoint (or why none), batched; `market_ids` maps token → market id
        for the log lines."""
        return self._batched(token_ids, market_ids, self._midpoint_batch, self.midpoint)

    def _midpoint_batch(self, chunk: list[str]) -> dict[str, ClobQuote]:
        """One POST /midpoints: the tokens it priced. A token it left out or gave an unreadable
        value for, or every token when the batch failed, is then read alone."""
        parsed = self._post_batch("/midpoints", chunk, parse_midpoints)
        if parsed is None:
            return {}
        quotes: dict[str, ClobQuote] = {}
        for token in chunk:
            value = parsed.get(token)
            if isinstance(value, Decimal):
                quotes[token] = ClobQuote(token, mid=value)
            elif isinstance(value, ClobParseError):
                logger.warning("CLOB POST /midpoints: %s; reading it alone", value.message)
        return quotes

    def _post_batch(self, path: str, chunk: list[str], parse: Callable[[Any], _T]) -> _T | None:
        """One batched POST of `chunk`'s tokens to `path`, parsed; None (logged) when the
        request or the parse failed, so the caller reads each token alone."""
        try:
            raw = self._retrier.request_json(
                "POST", path, json_body=[{"token_id": token} for token in chunk]
            )
            return parse(raw)
        except (RequestFailed, ClobParseError) as exc:
            unsent = isinstance(exc, RequestFailed) and exc.circuit_open
            logger.log(
                logging.DEBUG if unsent else logging.WARNING,
                "CLOB POST %s for %d token(s) failed (%s); reading each alone",
                path,
                len(chunk),
                _describe(exc),
            )
            return None

    def midpoint(self, token_id: str, market_id: str | None = None) -> ClobQuote:
        """One token's midpoint from `GET /midpoint`, or why there is none (logged)."""
        try:
            raw = self._retrier.request_json("GET", "/midpoint", params={"token_id": token_id})
            quote = ClobQuote(token_id, mid=parse_midpoint(raw, token_id))
        except RequestFailed as exc:
            return _logged(self._failed(token_id, exc), market_id, quiet=exc.circuit_open)
        except ClobParseError as exc:
            quote = ClobQuote(token_id, reason="malformed", detail=exc.reason)
        return _logged(quote, market_id)

    # ---- books -------------------------------------------------------------------------------

    def books(
        self, token_ids: Iterable[str], market_ids: Mapping[str, str] | None = None
    ) -> dict[str, ClobQuote]:
        """Each token's book and its midpoint (or why none), batched through POST /books."""
        return self._batched(token_ids, market_ids, self._book_batch, self.book)

    def _batched(
        self,
        token_ids: Iterable[str],
        market_ids: Mapping[str, str] | None,
        batch: Callable[[list[str]], dict[str, ClobQuote]],
        alone: Callable[[str, str | None], ClobQuote],
    ) -> dict[str, ClobQuote]:
        """Each token through `batch` in chunks; a token a batch did not answer is read
        `alone`. A batch answer without a price (an empty or crossed book) is logged too."""
        results: dict[str, ClobQuote] = {}
        for chunk in _chunks(_unique(token_ids), self.batch_size):
            answered = batch(chunk)
            for token in chunk:
                market = _market(market_ids, token)
                found = answered.get(token)
                results[token] = alone(token, market) if found is None else _logged(found, market)
        return results

    def _book_batch(self, chunk: list[str]) -> dict[str, ClobQuote]:
        """One POST /books as quotes by token (a readable book, even an empty or crossed one,
        is an answer); a token left out or unreadable, or all when the batch failed, is read
        alone."""
        parsed = self._post_batch("/books", chunk, parse_books)
        if parsed is None:
            return {}
        wanted = set(chunk)
        quotes: dict[str, ClobQuote] = {}
        for entry in parsed:
            if isinstance(entry, ClobParseError):
                logger.warning("CLOB POST /books: %s; reading it alone", entry.message)
            elif entry.asset_id in wanted:
                quotes[entry.asset_id] = quote_from_book(entry)
        return quotes

    def book(self, token_id: str, market_id: str | None = None) -> ClobQuote:
        """One token's book from `GET /book` with its midpoint, or why there is none (logged)."""
        try:
            raw = self._retrier.request_json("GET", "/book", params={"token_id": token_id})
            book = parse_book(raw)
        except RequestFailed as exc:
            return _logged(self._failed(token_id, exc), market_id, quiet=exc.circuit_open)
        except ClobParseError as exc:
            return _logged(ClobQuote(token_id, reason="malformed", detail=exc.reason), market_id)
        if book.asset_id != token_id:
            detail = f"asked for {token_id}, the book is for {book.asset_id}"
            return _logged(ClobQuote(token_id, reason="malformed", detail=detail), market_id)
        return _logged(quote_from_book(book), market_id)

    # ---- single prices and history ------------------------------------------------------------

    def price(self, token_id: str, side: Literal["BUY", "SELL"]) -> Decimal | None:
        """`GET /price?side=`: the best price on that side, or None (logged)."""
        return self._single("/price", {"token_id": token_id, "side": side}, "price", token_id)

    def spread(self, token_id: str) -> Decimal | None:
        """`GET /spread`: best ask − best bid, or None (logged)."""
        return self._single("/spread", {"token_id": token_id}, "spread", token_id)

    def _single(
        self, path: str, params: dict[str, str], field: Literal["price", "spread"], token: str
    ) -> Decimal | None:
        try:
            return parse_price(self._retrier.request_json("GET", path, params=params), field)
        except (RequestFailed, ClobParseError) as exc:
            logger.warning("CLOB token %s: no %s (%s)", token, field, _describe(exc))
            return None

    def price_history(
        self, token_id: str, *, start_ts: int, end_ts: int, fidelity: int = 60
    ) -> list[PricePoint]:
        """`GET /prices-history` between two unix times, `fidelity` minutes apart; raises
        ClobUnavailable when the CLOB cannot answer and ClobParseError for a broken answer."""
        params = {
            "market": token_id,
            "startTs": str(start_ts),
            "endTs": str(end_ts),
            "fidelity": str(fidelity),
        }
        try:
            raw = self._retrier.request_json("GET", "/prices-history", params=params)
        except RequestFailed as exc:
            raise ClobUnavailable(exc.message, path=exc.path, status=exc.status) from exc
        return parse_price_history(raw)

    # ---- failures ----------------------------------------------------------------------------

    @staticmethod
    def _failed(token_id: str, exc: RequestFailed) -> ClobQuote:
        """A failed request as a reason: 404/400 mean the CLOB does not know the token."""
        reason: NoPriceReason = (
            "unknown_token" if exc.status in NOT_FOUND_STATUSES else "clob_unavailable"
        )
        return ClobQuote(token_id, reason=reason, detail=_describe(exc))


def _market(market_ids: Mapping[str, str] | None, token: str) -> str | None:
    return market_ids.get(token) if market_ids else None


def _describe(exc: RequestFailed | ClobParseError) -> str:
    """A short cause for a log line: the server's error text when it sent one."""
    if isinstance(exc, RequestFailed):
        server = error_text(exc.body)
        return f"HTTP {exc.status}: {server}" if server and exc.status else exc.message
    return exc.reason


def _logged(quote: ClobQuote, market_id: str | None, *, quiet: bool = False) -> ClobQuote:
    """Log a quote without a price (token, market, reason, detail); pass it on unchanged.

    `quiet`: a read not sent because the endpoint's breaker is open, logged at DEBUG; the
    breaker said why once, at ERROR, and a thousand tokens need not repeat it."""
    if quote.mid is None:
        where = f" (market {market_id})" if market_id else ""
        logger.log(
            logging.DEBUG if quiet else logging.WARNING,
            "CLOB token %s%s: no price, %s (%s)",
            quote.token_id,
            where,
            quote.reason,
            quote.detail,
        )
    return quote
