"""methodology v2: the `v2` row of methodology_versions, each market's CLOB token ids, and the
price provenance of every price v2 uses (frozen-universe items, trades, portfolio valuations);
every new column is NULL on v1 rows

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

The v2 row's constants are written out here, not imported: a migration records what the
version meant when it was added, whatever `arena.config` later says.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from arena.storage.dbtypes import UTCDateTime

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

V2_TITLE = "Forecaster Arena Methodology v2 (CLOB midpoints, total bet cap)"
V2_CONSTANTS = {
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

_NULLABLE_JSON = sa.JSON(none_as_null=True)
_COLUMNS: tuple[tuple[str, sa.Column], ...] = (
    ("markets", sa.Column("clob_token_ids", _NULLABLE_JSON, nullable=True)),
    ("market_snapshot_items", sa.Column("quotes", _NULLABLE_JSON, nullable=True)),
    ("trades", sa.Column("price_source", sa.String(length=16), nullable=True)),
    ("trades", sa.Column("price_quote", _NULLABLE_JSON, nullable=True)),
    ("portfolio_snapshots", sa.Column("price_provenance", _NULLABLE_JSON, nullable=True)),
)


def upgrade() -> None:
    for table, column in _COLUMNS:
        op.add_column(table, column)
    versions = sa.table(
        "methodology_versions",
        sa.column("version", sa.String()),
        sa.column("title", sa.String()),
        sa.column("constants", sa.JSON()),
        sa.column("created_at", UTCDateTime()),
    )
    op.bulk_insert(
        versions,
        [
            {
                "version": "v2",
                "title": V2_TITLE,
                "constants": V2_CONSTANTS,
                "created_at": datetime(2026, 11, 27, tzinfo=UTC),
            }
        ],
    )


def downgrade() -> None:
    # Refused by the foreign key while a cohort is stamped v2: its version cannot vanish.
    op.execute("DELETE FROM methodology_versions WHERE version = 'v2'")
    # Plain ALTER TABLE … DROP COLUMN (SQLite ≥ 3.35): a batch rebuild of trades or markets
    # would drop a table others reference, which foreign keys refuse.
    for table, column in reversed(_COLUMNS):
        op.drop_column(table, column.name)
