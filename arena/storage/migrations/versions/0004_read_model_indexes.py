"""read-model indexes: job runs by slot / status / job, log sources, covered spend sums,
rollups by width and bucket

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (name, table, columns): what the Operations page and the curves read, so a year of job
# runs, log lines, decisions with inline prompts and rollups costs index seeks instead of
# whole-table reads.
INDEXES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("ix_job_runs_slot", "job_runs", ("slot", "id")),
    ("ix_job_runs_status_slot", "job_runs", ("status", "slot")),
    ("ix_job_runs_job_status_slot", "job_runs", ("job", "status", "slot")),
    ("ix_system_logs_source_at", "system_logs", ("source", "at")),
    (
        "ix_decisions_spend",
        "decisions",
        (
            "cohort_id",
            "decision_week",
            "agent_id",
            "status",
            "attempts",
            "tokens_in",
            "tokens_out",
            "cost_usd",
        ),
    ),
    ("ix_portfolio_rollups_width_bucket", "portfolio_rollups", ("width", "bucket")),
)


def upgrade() -> None:
    for name, table, columns in INDEXES:
        op.create_index(name, table, list(columns))


def downgrade() -> None:
    for name, table, _columns in reversed(INDEXES):
        op.drop_index(name, table_name=table)
