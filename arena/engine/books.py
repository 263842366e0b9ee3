"""The books of a decision run: stored from the run's one batched CLOB read, loaded back exact.

Why: the execution-sensitivity view re-executes every cohort's decisions against the book
each token had when its run decided, whatever the cohort's version, and a `book_execution`
cohort's legs walk it (as its late entrant's replay does, `decision_inputs.load_run_books`);
a book read later is a different book. So every decision run stores the top `BOOK_DEPTH`
levels a side of every token of its frozen universe (`decision_books`, migration 0011), from
the same read v2 prices by (v1 runs read it only to store it: their prices and prompts are
untouched).

Encoding (pure, `arena.core.book_text`, where the read side decodes it too): one text a
side, best-first, `price:size` pairs joined by `;`, each number its exact decimal text, e.g.
`0.61:454511.68;0.6:81506.92`. "" is a side with no levels; NULL (`None`) a token with no
book at all (unknown, unreadable, the CLOB unavailable), whose `status` says why. An empty,
one-sided or crossed book IS stored with its levels and its reason as `status`: the executor
refuses it later with that reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import insert
from sqlmodel import Session, col, select

from arena.core.book_text import decode_book, encode_levels
from arena.core.order_book import BOOK_DEPTH, Book
from arena.markets.clob_wire import ClobQuote
from arena.storage.book_models import DecisionBook
from arena.storage.db import bulk_execute

OK = "ok"
NOT_READ = "clob_unavailable"  # a token the read did not answer for
_INSERT = insert(DecisionBook.__table__)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class BookToken:
    """One token of a frozen universe: the market and outcome it trades."""

    token_id: str
    market_id: str
    outcome: str


def universe_tokens(
    markets: Iterable[tuple[str, Sequence[str], Sequence[str] | None]],
) -> list[BookToken]:
    """Every token of (market id, outcomes, CLOB token ids) triples, in order; a market whose
    token list does not name one token per outcome has none (no token, nothing to read)."""
    tokens: list[BookToken] = []
    for market_id, outcomes, token_ids in markets:
        if token_ids and len(token_ids) == len(outcomes):
            tokens.extend(
                BookToken(t, market_id, o) for t, o in zip(token_ids, outcomes, strict=True)
            )
    return tokens


def book_row(snapshot_id: int, token: BookToken, quote: ClobQuote | None) -> dict[str, Any]:
    """The stored row of one token's read: its top levels a side and `ok` or the reason."""
    row: dict[str, Any] = {
        "snapshot_id": snapshot_id,
        "token_id": token.token_id,
        "market_id": token.market_id,
        "outcome": token.outcome,
        "status": NOT_READ if quote is None else (quote.reason or OK),
        "bids": None,
        "asks": None,
        "tick_size": None,
        "min_order_size": None,
        "book_timestamp": None,
        "book_hash": None,
    }
    book = quote.book if quote is not None else None
    if book is not None:
        top = book.top(BOOK_DEPTH)  # the wire's book is a core Book
        row.update(
            bids=encode_levels(top.bids),
            asks=encode_levels(top.asks),
            tick_size=_optional(book.tick_size),
            min_order_size=_optional(book.min_order_size),
            book_timestamp=book.timestamp,
            book_hash=book.hash,
        )
    return row


def _optional(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


def store_books(
    session: Session,
    snapshot_id: int,
    tokens: Sequence[BookToken],
    clob: Mapping[str, ClobQuote],
) -> int:
    """Store each token's book of the run's read under its snapshot; returns rows written.

    A token already stored for the snapshot is left alone (a retried store writes nothing),
    and the primary key (snapshot, token) refuses a second copy whatever the caller does."""
    stored = set(
        session.exec(select(DecisionBook.token_id).where(DecisionBook.snapshot_id == snapshot_id))
    )
    rows: dict[str, dict[str, Any]] = {}
    for token in tokens:
        if token.token_id not in stored and token.token_id not in rows:
            rows[token.token_id] = book_row(snapshot_id, token, clob.get(token.token_id))
    bulk_execute(session.connection(), _INSERT, list(rows.values()))
    return len(rows)


@dataclass(frozen=True)
class StoredBook:
    """One token's stored read: `book` None when the CLOB gave no book (`status` says why)."""

    token_id: str
    market_id: str
    outcome: str
    status: str
    book: Book | None
    timestamp: str | None = None
    hash: str | None = None


def stored_book(row: DecisionBook) -> StoredBook:
    """A stored row decoded (BookTextError for a side that does not decode)."""
    book = decode_book(row.bids, row.asks, row.tick_size, row.min_order_size)
    return StoredBook(
        row.token_id,
        row.market_id,
        row.outcome,
        row.status,
        book,
        row.book_timestamp,
        row.book_hash,
    )


def load_books(session: Session, snapshot_id: int) -> dict[str, StoredBook]:
    """A run's stored books by token id ({} for a run that stored none: decided before books
    were stored, or with recording off or the CLOB silent)."""
    query = select(DecisionBook).where(DecisionBook.snapshot_id == snapshot_id)
    rows = session.exec(query.order_by(col(DecisionBook.token_id)))
    return {row.token_id: stored_book(row) for row in rows}
