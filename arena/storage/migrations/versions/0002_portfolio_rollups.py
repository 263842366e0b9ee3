"""portfolio rollups: each agent's last snapshot per curve bucket; no redundant snapshot index

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from arena.storage.dbtypes import Fixed, UTCDateTime

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # (agent_id, slot) is unique and indexed already; a second index on agent_id alone only
    # cost every snapshot write (and millions of entries after a year).
    op.drop_index("ix_portfolio_snapshots_agent_id", table_name="portfolio_snapshots")
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
    op.create_index(
        "ix_portfolio_snapshots_agent_id", "portfolio_snapshots", ["agent_id"], unique=False
    )
