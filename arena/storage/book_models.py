"""The books a decision run read: one row per (frozen universe, token), levels kept compactly.

Why its own module: `arena.storage.models` is at the project's line limit; it imports this one
so the table is in the metadata wherever the schema is. Why stored: the execution-sensitivity
view re-executes every cohort's decisions against the books its run saw, whatever
the cohort's version; a book read later is a different book.

Each side is one text column, best-first, `price:size` pairs joined by `;`, each number the
CLOB's decimal text (`arena.core.book_text.encode_levels`): "" is a side with no levels, NULL
a token with no book at all (its `status` says why). See arena/engine/books.py.
"""

from sqlalchemy import CheckConstraint, Column, ForeignKey, String, Text
from sqlmodel import Field, SQLModel

BOOK_STATUSES = (
    "ok",
    "empty_book",
    "one_sided_book",
    "crossed_book",
    "unknown_token",
    "clob_unavailable",
    "malformed",
    "no_token",
)
STATUS_CHECK = "status IN ({})".format(", ".join(repr(status) for status in BOOK_STATUSES))


class DecisionBook(SQLModel, table=True):
    """One token's book as a decision run read it (the top `BOOK_DEPTH` levels a side).

    The primary key (snapshot, token) is the unique constraint that makes a retried store a
    no-op: a run can never store a token's book twice."""

    __tablename__ = "decision_books"
    __table_args__ = (CheckConstraint(STATUS_CHECK, name="ck_decision_books_status"),)

    snapshot_id: int = Field(
        sa_column_args=[ForeignKey("market_snapshots.id", ondelete="CASCADE")], primary_key=True
    )
    token_id: str = Field(primary_key=True, max_length=96)
    market_id: str = Field(sa_column_args=[ForeignKey("markets.id")], max_length=64)
    outcome: str = Field(sa_type=Text)
    status: str = Field(max_length=16)  # "ok" or the NoPriceReason of the read
    bids: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    asks: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    tick_size: str | None = Field(default=None, sa_column=Column(String(32), nullable=True))
    min_order_size: str | None = Field(default=None, sa_column=Column(String(32), nullable=True))
    book_timestamp: str | None = Field(default=None, sa_column=Column(String(32), nullable=True))
    book_hash: str | None = Field(default=None, sa_column=Column(String(64), nullable=True))
