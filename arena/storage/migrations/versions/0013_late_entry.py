"""late entry (issue 36): a late entrant's shadow cohort replays a finished live cohort for one
family. `cohorts.late_entry_of` (the live cohort replayed) and `late_entry_family`, NULL on every
live cohort; the week-start and number uniques hold among live cohorts only (partial unique
indexes), and a shadow is unique per original × family

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28

On SQLite dropping a UNIQUE constraint means rebuilding `cohorts`, which agents and decisions
reference: `arena.storage.migrate` runs every SQLite migration with foreign keys off and checks
them before it commits (as 0009).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LIVE = sa.text("late_entry_of IS NULL")


def upgrade() -> None:
    with op.batch_alter_table("cohorts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("late_entry_of", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("late_entry_family", sa.String(length=64), nullable=True))
        batch_op.create_foreign_key(
            "fk_cohorts_late_entry_of_cohorts", "cohorts", ["late_entry_of"], ["id"]
        )
        batch_op.drop_constraint("uq_cohorts_week_start", type_="unique")
        batch_op.drop_constraint("uq_cohorts_number", type_="unique")
        batch_op.create_unique_constraint(
            "uq_cohorts_late_entry", ["late_entry_of", "late_entry_family"]
        )
        batch_op.create_check_constraint(
            "ck_cohorts_late_entry", "(late_entry_of IS NULL) = (late_entry_family IS NULL)"
        )
    for name, column in (("uq_cohorts_week_start", "week_start"), ("uq_cohorts_number", "number")):
        op.create_index(
            name, "cohorts", [column], unique=True, sqlite_where=LIVE, postgresql_where=LIVE
        )


def downgrade() -> None:
    # Refused by the database, not silently merged, while a late entrant's shadow exists.
    op.drop_index("uq_cohorts_number", table_name="cohorts")
    op.drop_index("uq_cohorts_week_start", table_name="cohorts")
    with op.batch_alter_table("cohorts", schema=None) as batch_op:
        batch_op.drop_constraint("ck_cohorts_late_entry", type_="check")
        batch_op.drop_constraint("uq_cohorts_late_entry", type_="unique")
        batch_op.drop_constraint("fk_cohorts_late_entry_of_cohorts", type_="foreignkey")
        batch_op.create_unique_constraint("uq_cohorts_number", ["number"])
        batch_op.create_unique_constraint("uq_cohorts_week_start", ["week_start"])
        batch_op.drop_column("late_entry_family")
        batch_op.drop_column("late_entry_of")
