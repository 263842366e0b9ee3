"""agent replicates (protocol extension): a family may field N independent agents in one
cohort, numbered by `replicate` (1 on every v1 agent); the natural key becomes cohort × family ×
replicate

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26

On SQLite a changed UNIQUE constraint means rebuilding `agents`, which decisions, positions,
trades and snapshots reference: `arena.storage.migrate` runs every SQLite migration with
foreign keys off and checks them before it commits (SQLite's documented procedure).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("replicate", sa.Integer(), nullable=False, server_default="1")
        )
        batch_op.drop_constraint("uq_agents_cohort_family", type_="unique")
        batch_op.create_unique_constraint(
            "uq_agents_cohort_family_replicate", ["cohort_id", "family_id", "replicate"]
        )


def downgrade() -> None:
    # Refused by the database, not silently merged, while a cohort has replicates.
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.drop_constraint("uq_agents_cohort_family_replicate", type_="unique")
        batch_op.create_unique_constraint("uq_agents_cohort_family", ["cohort_id", "family_id"])
        batch_op.drop_column("replicate")
