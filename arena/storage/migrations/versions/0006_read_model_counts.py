"""read-model counts kept by triggers: each market's positions (ever / open) and distinct
holders; job runs per job and status; a category index

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Counting afresh, not adding deltas: a recount of one market is a short walk of the
# (market_id, agent_id, status) index, it cannot drift, and it does not depend on which rows
# of a multi-row statement a trigger can already see (SQLite fires after each row,
# PostgreSQL after the whole statement).
_RECOUNT = """
UPDATE market_holdings SET
    position_count = (SELECT count(*) FROM positions p WHERE p.market_id = {m}),
    open_position_count = (SELECT count(*) FROM positions p
                           WHERE p.market_id = {m} AND p.status = 'open'),
    holder_count = (SELECT count(DISTINCT p.agent_id) FROM positions p WHERE p.market_id = {m})
WHERE market_id = {m};
"""
_CHANGED = " OR ".join(f"OLD.{c} {{differs}} NEW.{c}" for c in ("status", "market_id", "agent_id"))


def _sqlite_recount(m: str) -> str:
    return f"INSERT OR IGNORE INTO market_holdings (market_id) VALUES ({m});" + _RECOUNT.format(m=m)


SQLITE_TRIGGERS: tuple[str, ...] = (
    "CREATE TRIGGER trg_positions_holdings_insert AFTER INSERT ON positions"
    f" BEGIN {_sqlite_recount('NEW.market_id')} END",
    "CREATE TRIGGER trg_positions_holdings_delete AFTER DELETE ON positions"
    f" BEGIN {_sqlite_recount('OLD.market_id')} END",
    "CREATE TRIGGER trg_positions_holdings_update"
    " AFTER UPDATE OF status, market_id, agent_id ON positions"
    f" WHEN {_CHANGED.format(differs='IS NOT')}"
    f" BEGIN {_sqlite_recount('OLD.market_id')} {_sqlite_recount('NEW.market_id')} END",
)

# PostgreSQL: before counting, wait for any other transaction counting the same market (the
# row lock), so that the count's fresh snapshot sees that transaction's positions. A recount
# under the lock is exact whatever the commit order; a delta would be, but the holder count
# cannot be kept by deltas when a statement's rows all show at once.
POSTGRESQL_TRIGGERS: tuple[str, ...] = (
    f"""
CREATE FUNCTION market_holdings_recount(m text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO market_holdings (market_id) VALUES (m) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM market_holdings WHERE market_id = m FOR NO KEY UPDATE;
    {_RECOUNT.format(m="m")}
END
$$
""",
    f"""
CREATE FUNCTION positions_holdings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NOT ({_CHANGED.format(differs="IS DISTINCT FROM")}) THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM market_holdings_recount(OLD.market_id);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.market_id <> OLD.market_id) THEN
        PERFORM market_holdings_recount(NEW.market_id);
    END IF;
    RETURN NULL;
END
$$
""",
    "CREATE TRIGGER trg_positions_holdings"
    " AFTER INSERT OR DELETE OR UPDATE OF status, market_id, agent_id ON positions"
    " FOR EACH ROW EXECUTE FUNCTION positions_holdings()",
)

# Job runs per (job, status): deltas (each row counts once under its status; commutative, so
# exact under concurrent writers and whichever rows a trigger sees). The same upsert works on
# both backends (SQLite ≥ 3.24).
_COUNT_RUN = """
INSERT INTO job_run_counts (job, status, runs) VALUES (NEW.job, NEW.status, 1)
ON CONFLICT (job, status) DO UPDATE SET runs = job_run_counts.runs + 1;
"""
_UNCOUNT_RUN = (
    "UPDATE job_run_counts SET runs = runs - 1 WHERE job = OLD.job AND status = OLD.status;"
)
_RUN_CHANGED = "OLD.job {differs} NEW.job OR OLD.status {differs} NEW.status"
SQLITE_RUN_TRIGGERS: tuple[str, ...] = (
    f"CREATE TRIGGER trg_job_runs_counts_insert AFTER INSERT ON job_runs BEGIN {_COUNT_RUN} END",
    f"CREATE TRIGGER trg_job_runs_counts_delete AFTER DELETE ON job_runs BEGIN {_UNCOUNT_RUN} END",
    "CREATE TRIGGER trg_job_runs_counts_update AFTER UPDATE OF job, status ON job_runs"
    f" WHEN {_RUN_CHANGED.format(differs='IS NOT')} BEGIN {_UNCOUNT_RUN} {_COUNT_RUN} END",
)
POSTGRESQL_RUN_TRIGGERS: tuple[str, ...] = (
    f"""
CREATE FUNCTION job_runs_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NOT ({_RUN_CHANGED.format(differs="IS DISTINCT FROM")}) THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN {_UNCOUNT_RUN} END IF;
    IF TG_OP <> 'DELETE' THEN {_COUNT_RUN} END IF;
    RETURN NULL;
END
$$
""",
    "CREATE TRIGGER trg_job_runs_counts AFTER INSERT OR DELETE OR UPDATE OF job, status"
    " ON job_runs FOR EACH ROW EXECUTE FUNCTION job_runs_counts()",
)

BACKFILL = """
INSERT INTO market_holdings (market_id, position_count, open_position_count, holder_count)
SELECT market_id, count(*),
       sum(CASE WHEN status = 'open' THEN 1 ELSE 0 END),
       count(DISTINCT agent_id)
FROM positions GROUP BY market_id
"""
RUNS_BACKFILL = """
INSERT INTO job_run_counts (job, status, runs)
SELECT job, status, count(*) FROM job_runs GROUP BY job, status
"""


def upgrade() -> None:
    counter = {"server_default": "0", "nullable": False}
    op.create_table(
        "market_holdings",
        sa.Column("market_id", sa.String(length=64), sa.ForeignKey("markets.id"), nullable=False),
        sa.Column("position_count", sa.Integer(), **counter),
        sa.Column("open_position_count", sa.Integer(), **counter),
        sa.Column("holder_count", sa.Integer(), **counter),
        sa.PrimaryKeyConstraint("market_id"),
    )
    op.create_table(
        "job_run_counts",
        sa.Column("job", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("runs", sa.Integer(), **counter),
        sa.PrimaryKeyConstraint("job", "status"),
    )
    op.execute(BACKFILL)
    op.execute(RUNS_BACKFILL)
    sqlite = op.get_bind().dialect.name == "sqlite"
    triggers = (
        (*SQLITE_TRIGGERS, *SQLITE_RUN_TRIGGERS)
        if sqlite
        else (*POSTGRESQL_TRIGGERS, *POSTGRESQL_RUN_TRIGGERS)
    )
    for statement in triggers:
        op.execute(statement)
    op.create_index("ix_markets_category", "markets", ["category"])


def downgrade() -> None:
    op.drop_index("ix_markets_category", table_name="markets")
    if op.get_bind().dialect.name == "sqlite":
        for name in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER trg_job_runs_counts_{name}")
            op.execute(f"DROP TRIGGER trg_positions_holdings_{name}")
    else:
        op.execute("DROP TRIGGER trg_job_runs_counts ON job_runs")
        op.execute("DROP FUNCTION job_runs_counts()")
        op.execute("DROP TRIGGER trg_positions_holdings ON positions")
        op.execute("DROP FUNCTION positions_holdings()")
        op.execute("DROP FUNCTION market_holdings_recount(text)")
    op.drop_table("job_run_counts")
    op.drop_table("market_holdings")
