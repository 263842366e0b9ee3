"""late entry: a late entrant's shadow cohort replays a finished live cohort for one
family. `cohorts.late_entry_of` (the live cohort replayed) and `late_entry_family`, NULL on every
live cohort; the week-start and number uniques hold among live cohorts only (partial unique
indexes), and a shadow is unique per original × family; `late_entry_resolutions`, a market's
resolution asked of the source for a late entrant, kept apart from `markets`; and the
`market_holdings` triggers (0006) count live agents' positions only

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

from arena.storage.dbtypes import UTCDateTime

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LIVE = sa.text("late_entry_of IS NULL")

# 0006's recount of one market's holdings, over live agents' positions only: a late entrant
# changes no live figure, and the Markets list orders and counts by these. The shadows' agents
# are few, so the NOT IN list is read once per recount, beside 0006's index walk.
_SHADOW_AGENTS = (
    "SELECT a.id FROM agents a JOIN cohorts c ON c.id = a.cohort_id "
    "WHERE c.late_entry_of IS NOT NULL"
)
_RECOUNT = """
UPDATE market_holdings SET
    position_count = (SELECT count(*) FROM positions p WHERE p.market_id = {m}{live}),
    open_position_count = (SELECT count(*) FROM positions p
                           WHERE p.market_id = {m} AND p.status = 'open'{live}),
    holder_count = (SELECT count(DISTINCT p.agent_id) FROM positions p
                    WHERE p.market_id = {m}{live})
WHERE market_id = {m};
"""
_CHANGED = " OR ".join(f"OLD.{c} {{differs}} NEW.{c}" for c in ("status", "market_id", "agent_id"))


def _recount(m: str, live: bool) -> str:
    return _RECOUNT.format(m=m, live=f" AND p.agent_id NOT IN ({_SHADOW_AGENTS})" if live else "")


def _sqlite_triggers(live: bool) -> tuple[str, ...]:
    def recount(m: str) -> str:
        return f"INSERT OR IGNORE INTO market_holdings (market_id) VALUES ({m});" + _recount(
            m, live
        )

    return (
        "CREATE TRIGGER trg_positions_holdings_insert AFTER INSERT ON positions"
        f" BEGIN {recount('NEW.market_id')} END",
        "CREATE TRIGGER trg_positions_holdings_delete AFTER DELETE ON positions"
        f" BEGIN {recount('OLD.market_id')} END",
        "CREATE TRIGGER trg_positions_holdings_update"
        " AFTER UPDATE OF status, market_id, agent_id ON positions"
        f" WHEN {_CHANGED.format(differs='IS NOT')}"
        f" BEGIN {recount('OLD.market_id')} {recount('NEW.market_id')} END",
    )


def _postgresql_recount(live: bool) -> str:
    return f"""
CREATE OR REPLACE FUNCTION market_holdings_recount(m text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO market_holdings (market_id) VALUES (m) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM market_holdings WHERE market_id = m FOR NO KEY UPDATE;
    {_recount("m", live)}
END
$$
"""


def _holdings_triggers(live: bool) -> None:
    """Replace 0006's holdings recount by the live-only one (`live`), or back."""
    if op.get_bind().dialect.name == "sqlite":
        for name in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER trg_positions_holdings_{name}")
        for statement in _sqlite_triggers(live):
            op.execute(statement)
    else:
        op.execute(_postgresql_recount(live))


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
    op.create_table(
        "late_entry_resolutions",
        sa.Column("market_id", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("asked_at", UTCDateTime(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("resolution_outcome", sa.String(length=256), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.Column("uma_resolution_status", sa.String(), nullable=True),
        sa.Column("prices", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.CheckConstraint("state IN ('resolved', 'cancelled')", name="ck_late_resolutions_state"),
        sa.ForeignKeyConstraint(["market_id"], ["markets.id"]),
        sa.PrimaryKeyConstraint("market_id"),
    )
    _holdings_triggers(live=True)  # no shadow exists yet: every count stays what it is


def downgrade() -> None:
    # Refused by the database, not silently merged, while a late entrant's shadow exists.
    _holdings_triggers(live=False)
    op.drop_table("late_entry_resolutions")
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
