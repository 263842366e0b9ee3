"""analysis results: stored leaderboard and calibration frames

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from arena.storage.dbtypes import UTCDateTime

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "analysis_results",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("computed_at", UTCDateTime(), nullable=False),
        sa.Column("data_as_of", UTCDateTime(), nullable=True),
        sa.Column("frame", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("name", "scope"),
    )


def downgrade() -> None:
    op.drop_table("analysis_results")
