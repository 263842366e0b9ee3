"""stated probability (protocol extension): the probability a BUY leg's model stated that its
side wins, beside the trade; NULL on every v1 trade

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("trades", sa.Column("probability", sa.Float(), nullable=True))


def downgrade() -> None:
    # Plain ALTER TABLE … DROP COLUMN (SQLite ≥ 3.35): a batch rebuild would drop the table
    # that brier_scores references, which foreign keys refuse.
    op.drop_column("trades", "probability")
