"""list read models: decision leg tallies (bets, sells, rejected legs, dollars bet) and the
Decisions list's covering index; covering indexes for per-agent decision stats and the Markets
list's holder counts

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from arena.storage.dbtypes import Fixed

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TALLIES: tuple[str, ...] = ("bets_executed", "sells_executed", "legs_rejected")

# Frozen copy of models.DECISION_LIST_COLUMNS at this revision.
LIST_COLUMNS: tuple[str, ...] = (
    "id",
    "cohort_id",
    "agent_id",
    "decision_week",
    "status",
    "action",
    "attempts",
    "bets_executed",
    "sells_executed",
    "legs_rejected",
    "amount_bet",
    "tokens_in",
    "tokens_out",
    "cost_usd",
    "latency_ms",
    "served_model",
    "market_snapshot_id",
    "decided_at",
    "created_at",
)

# Backfill from the record the tallies summarise: every executed leg wrote exactly one trade
# (BUY for a BET, SELL for a SELL; unique per decision and leg), and `legs` lists every leg,
# executed or rejected. Money is stored in integer micro-units on both sides.
_EXECUTED = "(SELECT count(*) FROM trades t WHERE t.decision_id = decisions.id AND {cond})"
BACKFILL = f"""
UPDATE decisions SET
    bets_executed = {_EXECUTED.format(cond="t.trade_type = 'BUY'")},
    sells_executed = {_EXECUTED.format(cond="t.trade_type = 'SELL'")},
    legs_rejected = json_array_length(legs)
        - {_EXECUTED.format(cond="t.trade_type IN ('BUY', 'SELL')")},
    amount_bet = (SELECT coalesce(sum(t.amount), 0) FROM trades t
                  WHERE t.decision_id = decisions.id AND t.trade_type = 'BUY')
WHERE json_array_length(legs) > 0
"""


def upgrade() -> None:
    for name in TALLIES:
        op.add_column(
            "decisions", sa.Column(name, sa.Integer(), server_default="0", nullable=False)
        )
    op.add_column(
        "decisions", sa.Column("amount_bet", Fixed(6), server_default="0", nullable=False)
    )
    op.execute(BACKFILL)
    op.create_index("ix_decisions_list", "decisions", list(LIST_COLUMNS))
    op.create_index("ix_decisions_agent_stats", "decisions", ["agent_id", "status", "cost_usd"])
    op.create_index("ix_positions_market_holders", "positions", ["market_id", "agent_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_positions_market_holders", table_name="positions")
    op.drop_index("ix_decisions_agent_stats", table_name="decisions")
    op.drop_index("ix_decisions_list", table_name="decisions")
    # Plain ALTER TABLE … DROP COLUMN (SQLite ≥ 3.35): a batch rebuild would drop the table
    # that trades and attempts reference, which foreign keys refuse.
    for name in ("amount_bet", *reversed(TALLIES)):
        op.drop_column("decisions", name)
