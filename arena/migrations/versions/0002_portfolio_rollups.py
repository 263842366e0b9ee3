"""portfolio rollups: each agent's last snapshot per curve bucket

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from arena.dbtypes import Fixed, UTCDateTime

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "portfolio_rollups",
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("bucket", sa.BigInteger(), nullable=False),
        sa.Column("slot", UTCDateTime(), nullable=False),
        sa.Column("total_value", Fixed(6), nullable=False),
        sa.Column("total_pnl", Fixed(6), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"]),
        sa.PrimaryKeyConstraint("agent_id", "width", "bucket"),
    )
    # Backfill from the snapshots already recorded. The rollups are derived data, so the
    # engine's own rebuild (the code that keeps them current) is the right definition here.
    from arena.engine.rollups import rebuild_rollups

    rebuild_rollups(op.get_bind())


def downgrade() -> None:
    op.drop_table("portfolio_rollups")
