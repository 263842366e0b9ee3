"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from arena.storage.dbtypes import Fixed, UTCDateTime

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "families",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("display_name", sa.String(), nullable=False),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("base_url", sa.String(), nullable=True),
        sa.Column("strategy", sa.String(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("kind IN ('llm', 'baseline')", name="ck_families_kind"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "job_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job", sa.String(length=32), nullable=False),
        sa.Column("slot", UTCDateTime(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("owner", sa.String(), nullable=True),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.CheckConstraint("status IN ('running', 'ok', 'failed')", name="ck_job_runs_status"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job", "slot", name="uq_job_runs_job_slot"),
    )
    op.create_table(
        "market_snapshots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("taken_at", UTCDateTime(), nullable=False),
        sa.Column("purpose", sa.String(length=32), nullable=False),
        sa.Column("market_count", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("market_snapshots", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_market_snapshots_taken_at"), ["taken_at"], unique=False
        )

    op.create_table(
        "markets",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("slug", sa.String(), nullable=True),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("event_id", sa.String(length=64), nullable=True),
        sa.Column("event_slug", sa.String(), nullable=True),
        sa.Column("event_title", sa.String(), nullable=True),
        sa.Column("group_item_title", sa.String(), nullable=True),
        sa.Column("category", sa.String(), nullable=True),
        sa.Column("market_type", sa.String(length=16), nullable=False),
        sa.Column("outcomes", sa.JSON(), nullable=False),
        sa.Column("prices", sa.JSON(), nullable=False),
        sa.Column("volume", sa.Float(), nullable=True),
        sa.Column("liquidity", sa.Float(), nullable=True),
        sa.Column("end_date", UTCDateTime(), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.Column("neg_risk", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("uma_resolution_status", sa.String(), nullable=True),
        sa.Column("resolution_outcome", sa.String(), nullable=True),
        sa.Column("resolved_at", UTCDateTime(), nullable=True),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("first_seen_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("market_type IN ('binary', 'named')", name="ck_markets_type"),
        sa.CheckConstraint(
            "status IN ('open', 'closed', 'resolved', 'cancelled')", name="ck_markets_status"
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("markets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_markets_event_id"), ["event_id"], unique=False)
        batch_op.create_index("ix_markets_status_volume", ["status", "volume"], unique=False)

    op.create_table(
        "methodology_versions",
        sa.Column("version", sa.String(length=16), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("constants", sa.JSON(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("version"),
    )
    op.create_table(
        "system_logs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("level", sa.String(length=8), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("context", sa.JSON(), nullable=False),
        sa.CheckConstraint(
            "level IN ('DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')",
            name="ck_system_logs_level",
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("system_logs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_system_logs_at"), ["at"], unique=False)

    op.create_table(
        "cohorts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("week_start", UTCDateTime(), nullable=False),
        sa.Column("methodology_version", sa.String(length=16), nullable=False),
        sa.Column("constants", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("completed_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint(
            "status IN ('deciding', 'tracking', 'completed')", name="ck_cohorts_status"
        ),
        sa.ForeignKeyConstraint(
            ["methodology_version"],
            ["methodology_versions.version"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("number", name="uq_cohorts_number"),
        sa.UniqueConstraint("week_start", name="uq_cohorts_week_start"),
    )
    op.create_table(
        "market_snapshot_items",
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("market_id", sa.String(length=64), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("market_type", sa.String(length=16), nullable=False),
        sa.Column("outcomes", sa.JSON(), nullable=False),
        sa.Column("prices", sa.JSON(), nullable=False),
        sa.Column("volume", sa.Float(), nullable=True),
        sa.Column("end_date", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["markets.id"],
        ),
        sa.ForeignKeyConstraint(["snapshot_id"], ["market_snapshots.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("snapshot_id", "market_id"),
    )
    with op.batch_alter_table("market_snapshot_items", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_market_snapshot_items_market_id"), ["market_id"], unique=False
        )

    op.create_table(
        "agents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.Integer(), nullable=False),
        sa.Column("family_id", sa.String(), nullable=False),
        sa.Column("model_id", sa.String(), nullable=False),
        sa.Column("display_name", sa.String(), nullable=False),
        sa.Column("starting_balance", Fixed(6), nullable=False),
        sa.Column("cash_balance", Fixed(6), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("cash_balance >= 0", name="ck_agents_cash_nonnegative"),
        sa.ForeignKeyConstraint(
            ["cohort_id"],
            ["cohorts.id"],
        ),
        sa.ForeignKeyConstraint(
            ["family_id"],
            ["families.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("cohort_id", "family_id", name="uq_agents_cohort_family"),
    )
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_agents_cohort_id"), ["cohort_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_agents_family_id"), ["family_id"], unique=False)

    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.Integer(), nullable=False),
        sa.Column("decision_week", sa.Integer(), nullable=False),
        sa.Column("market_snapshot_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("prompt_system", sa.Text(), nullable=True),
        sa.Column("prompt_user", sa.Text(), nullable=True),
        sa.Column("raw_response", sa.Text(), nullable=True),
        sa.Column("parsed_response", sa.JSON(), nullable=True),
        sa.Column("validation_errors", sa.JSON(), nullable=False),
        sa.Column("legs", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("tokens_in", sa.Integer(), nullable=False),
        sa.Column("tokens_out", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("served_model", sa.String(), nullable=True),
        sa.Column("provider", sa.String(), nullable=True),
        sa.Column("claim_token", sa.String(length=64), nullable=True),
        sa.Column("claimed_at", UTCDateTime(), nullable=True),
        sa.Column("decided_at", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "status IN ('in_progress', 'ok', 'fallback_hold', 'error', 'zero_trade')",
            name="ck_decisions_status",
        ),
        sa.CheckConstraint("decision_week >= 1", name="ck_decisions_week"),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
        ),
        sa.ForeignKeyConstraint(
            ["cohort_id"],
            ["cohorts.id"],
        ),
        sa.ForeignKeyConstraint(
            ["market_snapshot_id"],
            ["market_snapshots.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("agent_id", "decision_week", name="uq_decisions_agent_week"),
    )
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_decisions_agent_id"), ["agent_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_decisions_cohort_id"), ["cohort_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_decisions_market_snapshot_id"), ["market_snapshot_id"], unique=False
        )

    op.create_table(
        "portfolio_snapshots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("slot", UTCDateTime(), nullable=False),
        sa.Column("snapshot_timestamp", UTCDateTime(), nullable=False),
        sa.Column("cash_balance", Fixed(6), nullable=False),
        sa.Column("positions_value", Fixed(6), nullable=False),
        sa.Column("total_value", Fixed(6), nullable=False),
        sa.Column("total_pnl", Fixed(6), nullable=False),
        sa.Column("total_pnl_percent", sa.Float(), nullable=False),
        sa.Column("brier_score", sa.Float(), nullable=True),
        sa.Column("num_resolved_bets", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("agent_id", "slot", name="uq_snapshots_agent_slot"),
    )
    with op.batch_alter_table("portfolio_snapshots", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_portfolio_snapshots_agent_id"), ["agent_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_portfolio_snapshots_slot"), ["slot"], unique=False)

    op.create_table(
        "positions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("market_id", sa.String(), nullable=False),
        sa.Column("side", sa.String(length=256), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("shares", Fixed(6), nullable=False),
        sa.Column("cost_basis", Fixed(6), nullable=False),
        sa.Column("avg_entry_price", Fixed(6), nullable=False),
        sa.Column("realized_pnl", Fixed(6), nullable=False),
        sa.Column("mark_price", Fixed(6), nullable=True),
        sa.Column("marked_at", UTCDateTime(), nullable=True),
        sa.Column("opened_at", UTCDateTime(), nullable=False),
        sa.Column("closed_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint(
            "status IN ('open', 'sold', 'won', 'lost', 'cancelled')", name="ck_positions_status"
        ),
        sa.CheckConstraint("cost_basis >= 0", name="ck_positions_cost_nonnegative"),
        sa.CheckConstraint("shares >= 0", name="ck_positions_shares_nonnegative"),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
        ),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["markets.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("positions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_positions_agent_id"), ["agent_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_positions_market_id"), ["market_id"], unique=False)
        batch_op.create_index("ix_positions_status_market", ["status", "market_id"], unique=False)
        batch_op.create_index(
            "uq_positions_open_market_side",
            ["agent_id", "market_id", "side"],
            unique=True,
            sqlite_where=sa.text("status = 'open'"),
            postgresql_where=sa.text("status = 'open'"),
        )

    op.create_table(
        "decision_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("decision_id", sa.Integer(), nullable=False),
        sa.Column("attempt_no", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("raw_response", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("tokens_in", sa.Integer(), nullable=False),
        sa.Column("tokens_out", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("served_model", sa.String(), nullable=True),
        sa.Column("provider", sa.String(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["decision_id"], ["decisions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("decision_id", "attempt_no", name="uq_attempts_no"),
    )
    with op.batch_alter_table("decision_attempts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_decision_attempts_decision_id"), ["decision_id"], unique=False
        )

    op.create_table(
        "trades",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("decision_id", sa.Integer(), nullable=True),
        sa.Column("leg_index", sa.Integer(), nullable=True),
        sa.Column("position_id", sa.Integer(), nullable=False),
        sa.Column("market_id", sa.String(), nullable=False),
        sa.Column("trade_type", sa.String(length=8), nullable=False),
        sa.Column("side", sa.String(length=256), nullable=False),
        sa.Column("amount", Fixed(6), nullable=False),
        sa.Column("price", Fixed(6), nullable=True),
        sa.Column("shares", Fixed(6), nullable=False),
        sa.Column("cash_before", Fixed(6), nullable=False),
        sa.Column("implied_confidence", sa.Float(), nullable=True),
        sa.Column("realized_pnl", Fixed(6), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "trade_type IN ('BUY', 'SELL', 'SETTLE', 'REFUND')", name="ck_trades_type"
        ),
        sa.CheckConstraint("amount >= 0", name="ck_trades_amount_nonnegative"),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
        ),
        sa.ForeignKeyConstraint(
            ["decision_id"],
            ["decisions.id"],
        ),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["markets.id"],
        ),
        sa.ForeignKeyConstraint(
            ["position_id"],
            ["positions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("decision_id", "leg_index", name="uq_trades_decision_leg"),
    )
    with op.batch_alter_table("trades", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_trades_agent_id"), ["agent_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_trades_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_trades_decision_id"), ["decision_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_trades_market_id"), ["market_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_trades_position_id"), ["position_id"], unique=False)
        batch_op.create_index(
            "uq_trades_settlement",
            ["position_id"],
            unique=True,
            sqlite_where=sa.text("trade_type IN ('SETTLE', 'REFUND')"),
            postgresql_where=sa.text("trade_type IN ('SETTLE', 'REFUND')"),
        )

    op.create_table(
        "brier_scores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("trade_id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("market_id", sa.String(), nullable=False),
        sa.Column("side", sa.String(length=256), nullable=False),
        sa.Column("forecast_probability", sa.Float(), nullable=False),
        sa.Column("actual_outcome", sa.Integer(), nullable=False),
        sa.Column("brier_score", sa.Float(), nullable=False),
        sa.Column("market_price", sa.Float(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
        ),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["markets.id"],
        ),
        sa.ForeignKeyConstraint(
            ["trade_id"],
            ["trades.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("trade_id", name="uq_brier_trade"),
    )
    with op.batch_alter_table("brier_scores", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_brier_scores_agent_id"), ["agent_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_brier_scores_market_id"), ["market_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("brier_scores", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_brier_scores_market_id"))
        batch_op.drop_index(batch_op.f("ix_brier_scores_agent_id"))

    op.drop_table("brier_scores")
    with op.batch_alter_table("trades", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_trades_settlement",
            sqlite_where=sa.text("trade_type IN ('SETTLE', 'REFUND')"),
            postgresql_where=sa.text("trade_type IN ('SETTLE', 'REFUND')"),
        )
        batch_op.drop_index(batch_op.f("ix_trades_position_id"))
        batch_op.drop_index(batch_op.f("ix_trades_market_id"))
        batch_op.drop_index(batch_op.f("ix_trades_decision_id"))
        batch_op.drop_index(batch_op.f("ix_trades_created_at"))
        batch_op.drop_index(batch_op.f("ix_trades_agent_id"))

    op.drop_table("trades")
    with op.batch_alter_table("decision_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_decision_attempts_decision_id"))

    op.drop_table("decision_attempts")
    with op.batch_alter_table("positions", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_positions_open_market_side",
            sqlite_where=sa.text("status = 'open'"),
            postgresql_where=sa.text("status = 'open'"),
        )
        batch_op.drop_index("ix_positions_status_market")
        batch_op.drop_index(batch_op.f("ix_positions_market_id"))
        batch_op.drop_index(batch_op.f("ix_positions_agent_id"))

    op.drop_table("positions")
    with op.batch_alter_table("portfolio_snapshots", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_portfolio_snapshots_slot"))
        batch_op.drop_index(batch_op.f("ix_portfolio_snapshots_agent_id"))

    op.drop_table("portfolio_snapshots")
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_decisions_market_snapshot_id"))
        batch_op.drop_index(batch_op.f("ix_decisions_cohort_id"))
        batch_op.drop_index(batch_op.f("ix_decisions_agent_id"))

    op.drop_table("decisions")
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agents_family_id"))
        batch_op.drop_index(batch_op.f("ix_agents_cohort_id"))

    op.drop_table("agents")
    with op.batch_alter_table("market_snapshot_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_market_snapshot_items_market_id"))

    op.drop_table("market_snapshot_items")
    op.drop_table("cohorts")
    with op.batch_alter_table("system_logs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_system_logs_at"))

    op.drop_table("system_logs")
    op.drop_table("methodology_versions")
    with op.batch_alter_table("markets", schema=None) as batch_op:
        batch_op.drop_index("ix_markets_status_volume")
        batch_op.drop_index(batch_op.f("ix_markets_event_id"))

    op.drop_table("markets")
    with op.batch_alter_table("market_snapshots", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_market_snapshots_taken_at"))

    op.drop_table("market_snapshots")
    op.drop_table("job_runs")
    op.drop_table("families")
