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

A CLOB that misbehaves never blocks a decision run. The wire parser refuses a book that breaks
its rules (`malformed`, its reason in one `system_logs` line per run), and the rows are
inserted under a savepoint: a row the database still refuses (a value no rule foresaw) is
stored as `malformed` without its levels and logged with the database's one-line reason, and
the run's snapshot, its other books and its decisions go on (`_insert_isolated`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import insert
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session, col, select

from arena.core.book_text import BookTextError, decode_book, encode_levels
from arena.core.order_book import BOOK_DEPTH, Book
from arena.engine.logs import log_event
from arena.markets.clob_wire import ClobQuote
from arena.storage.book_models import DecisionBook
from arena.storage.db import bulk_execute
from arena.storage.models import MarketSnapshot

OK = "ok"
NOT_READ = "clob_unavailable"  # a token the read did not answer for
MALFORMED = "malformed"
REASON_CHARS = 200  # a logged reason's length (a database error can quote a whole row)
_NO_BOOK = {
    "bids": None,
    "asks": None,
    "tick_size": None,
    "min_order_size": None,
    "book_timestamp": None,
    "book_hash": None,
}
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
        **_NO_BOOK,
    }
    book = quote.book if quote is not None else None
    if book is not None:
        top = book.top(BOOK_DEPTH)  # the wire's book is a core Book
        try:
            row.update(
                bids=encode_levels(top.bids),
                asks=encode_levels(top.asks),
                tick_size=_optional(book.tick_size),
                min_order_size=_optional(book.min_order_size),
                book_timestamp=book.timestamp,
                book_hash=book.hash,
            )
        except BookTextError:  # a level too wide to store: the book is not one to keep
            row.update(status=MALFORMED, **_NO_BOOK)
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
    failed = _insert_isolated(session, list(rows.values()))
    refused = {
        token: _one_line(quote.detail or quote.reason or "")
        for token, quote in clob.items()
        if token in rows and quote.reason == MALFORMED
    }
    _log_failures(session, snapshot_id, refused, failed)
    return len(rows)


def _insert_isolated(session: Session, rows: list[dict[str, Any]]) -> dict[str, str]:
    """Insert `rows` under a savepoint; when the database refuses the batch, each row alone,
    a refused one stored as `malformed` without its levels. Returns each refused row's token
    and the database's reason; the caller's transaction (the snapshot, the run) is untouched."""
    if _inserted(session, rows) is None:
        return {}
    failed: dict[str, str] = {}
    for row in rows:
        error = _inserted(session, [row])
        if error is None:
            continue
        failed[row["token_id"]] = error
        if _inserted(session, [{**row, "status": MALFORMED, **_NO_BOOK}]) is not None:
            failed[row["token_id"]] += " (no row stored)"
    return failed


def _inserted(session: Session, rows: list[dict[str, Any]]) -> str | None:
    """Insert `rows` in a savepoint: None when stored, else the database's one-line reason
    (the savepoint rolled back, the transaction still usable)."""
    try:
        with session.begin_nested():
            bulk_execute(session.connection(), _INSERT, rows)
    except (SQLAlchemyError, ValueError) as exc:
        return _one_line(str(getattr(exc, "orig", None) or exc))
    return None


def _one_line(text: str) -> str:
    """A reason as one short line (a database error spans lines and may quote a whole row)."""
    line = " ".join(text.split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"


def _log_failures(
    session: Session, snapshot_id: int, refused: dict[str, str], failed: dict[str, str]
) -> None:
    """One WARNING in `system_logs` for the books the parser refused, one for the rows the
    database did: the first token and reason in the message, every one in the context."""
    snapshot = session.get(MarketSnapshot, snapshot_id)
    if snapshot is None or not (refused or failed):
        return
    for reasons, what in ((refused, "refused by the CLOB parser"), (failed, "not stored")):
        if reasons:
            token, reason = next(iter(reasons.items()))
            more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
            message = f"{len(reasons)} book(s) {what}, recorded as malformed: token {token}: "
            log_event(
                session,
                snapshot.taken_at,
                "WARNING",
                "decision-books",
                message + reason + more,
                snapshot_id=snapshot_id,
                books=reasons,
            )


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
