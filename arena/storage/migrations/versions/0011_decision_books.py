"""book execution: the `decision_books` table (the top levels of every token's book
each decision run read, one row per snapshot and token) and `markets.fee_schedule` (a
fee-enabled market's taker-fee schedule as JSON, NULL when fees are off)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out, not imported: a migration records what the statuses were when it was added.
STATUS_CHECK = (
    "status IN ('ok', 'empty_book', 'one_sided_book', 'crossed_book', 'unknown_token', "
    "'clob_unavailable', 'malformed', 'no_token')"
)


def upgrade() -> None:
    op.add_column("markets", sa.Column("fee_schedule", sa.JSON(none_as_null=True), nullable=True))
    op.create_table(
        "decision_books",
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("token_id", sa.String(length=96), nullable=False),
        sa.Column("market_id", sa.String(length=64), nullable=False),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("bids", sa.Text(), nullable=True),
        sa.Column("asks", sa.Text(), nullable=True),
        sa.Column("tick_size", sa.String(length=32), nullable=True),
        sa.Column("min_order_size", sa.String(length=32), nullable=True),
        sa.Column("book_timestamp", sa.String(length=32), nullable=True),
        sa.Column("book_hash", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(["snapshot_id"], ["market_snapshots.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["market_id"], ["markets.id"]),
        # The unique key that makes a retried run's store a no-op (one book per token a run).
        sa.PrimaryKeyConstraint("snapshot_id", "token_id"),
        sa.CheckConstraint(STATUS_CHECK, name="ck_decision_books_status"),
    )


def downgrade() -> None:
    op.drop_table("decision_books")
    # Plain ALTER TABLE … DROP COLUMN (as 0010): a batch rebuild of markets would drop a table
    # others reference, which foreign keys refuse.
    op.drop_column("markets", "fee_schedule")
