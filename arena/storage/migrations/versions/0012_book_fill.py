"""book execution: `trades.book_fill`, the book walk of a `book_execution` cohort's
trade (requested, spent, shares, VWAP, fee, partial, the levels taken) as JSON; NULL on every
v1 and v2 trade and on settlements

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("trades", sa.Column("book_fill", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    # Plain ALTER TABLE … DROP COLUMN (as 0010, 0011): a batch rebuild of trades would drop a
    # table others reference, which foreign keys refuse.
    op.drop_column("trades", "book_fill")
