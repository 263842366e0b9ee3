"""methodology v2 names its rule set: the `v2` row of methodology_versions now describes v2 as
the original's code runs it (`rule_set: source-7c78b0c`, one malformed-answer retry)

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-08

The row describes what a new v2 cohort is stamped with. Cohorts already stamped keep their own
stamps (a v2 stamp without `rule_set` ran `frozen-quotes`), so no cohort changes here. The
constants are written out, not imported, as in 0010.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

V2_CONSTANTS_BEFORE = {
    "version": "v2",
    "starting_balance": "10000",
    "min_bet": "50",
    "max_bet_fraction": "0.25",
    "snapshot_interval_minutes": 10,
    "decision_window_weeks": 5,
    "malformed_retries": 2,
    "transport_attempts": 3,
    "market_universe_size": 500,
    "prices": "clob_mid",
    "bet_cap": "decision_total",
    "is_default": True,
}
V2_CONSTANTS = {
    **{k: v for k, v in V2_CONSTANTS_BEFORE.items() if k != "is_default"},
    "malformed_retries": 1,
    "rule_set": "source-7c78b0c",
    "is_default": True,
}

_VERSIONS = sa.table(
    "methodology_versions",
    sa.column("version", sa.String()),
    sa.column("constants", sa.JSON()),
)


def _set(constants: dict[str, object]) -> None:
    op.execute(
        _VERSIONS.update()
        .where(_VERSIONS.c.version == "v2")
        .values(constants=sa.bindparam("constants", constants, type_=sa.JSON()))
    )


def upgrade() -> None:
    _set(V2_CONSTANTS)


def downgrade() -> None:
    _set(V2_CONSTANTS_BEFORE)
