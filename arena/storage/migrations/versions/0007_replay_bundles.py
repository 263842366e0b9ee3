"""replay bundles: each finished cohort's bundle, built once by the scheduler and kept

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from arena.storage.dbtypes import UTCDateTime

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "replay_bundles",
        sa.Column("cohort_id", sa.Integer(), nullable=False),
        sa.Column("bundle_hash", sa.String(length=64), nullable=False),
        sa.Column("project_version", sa.String(length=32), nullable=False),
        sa.Column("file_count", sa.Integer(), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("zip", sa.LargeBinary(), nullable=False),
        sa.Column("built_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["cohort_id"], ["cohorts.id"]),
        sa.PrimaryKeyConstraint("cohort_id"),
    )


def downgrade() -> None:
    op.drop_table("replay_bundles")
