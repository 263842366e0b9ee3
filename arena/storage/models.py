"""The schema: SQLModel tables and the natural unique keys that make the engine idempotent.

Money and shares are `Fixed` (exact Decimals stored as integers), timestamps `UTCDateTime`.
Natural keys, each a database constraint rather than a promise in process memory:
live cohort per week start and per number, late entrant per original cohort × family; agent
per cohort × family × replicate; decision per agent × week; one open position per agent ×
market × side; a decision leg executes once; a position settles once; portfolio snapshot per
agent × slot; Brier row per trade; job run per job × slot.
"""

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Text,
    UniqueConstraint,
    text,
)
from sqlmodel import Field, SQLModel

import arena.storage.book_models  # noqa: F401  (decision_books, in the metadata with the rest)
from arena.storage.columns import (
    JSON_OR_NULL,
    MONEY,
    foreign_key,
    in_list,
    money_column,
    timestamp,
    utcnow,
)
from arena.storage.count_models import JobRunCount, MarketHolding
from arena.storage.late_models import LateEntryResolution

COHORT_STATUSES = ("deciding", "tracking", "completed")
MARKET_TYPES = ("binary", "named")
MARKET_STATUSES = ("open", "closed", "resolved", "cancelled")
FINAL_STATUSES = ("resolved", "cancelled")  # a settled market: never checked or traded again
DECISION_STATUSES = ("in_progress", "ok", "fallback_hold", "error", "zero_trade")
DECISION_ACTIONS = ("BET", "SELL", "HOLD")
POSITION_STATUSES = ("open", "sold", "won", "lost", "cancelled")
TRADE_TYPES = ("BUY", "SELL", "SETTLE", "REFUND")
JOB_STATUSES = ("running", "ok", "failed")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class MethodologyVersion(SQLModel, table=True):
    """A benchmark protocol version (v1 …) and its reference constants."""

    __tablename__ = "methodology_versions"

    version: str = Field(primary_key=True, max_length=16)
    title: str
    constants: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    created_at: datetime = timestamp(default_factory=utcnow)


class Family(SQLModel, table=True):
    """A competing family: stable id for joins, display name for presentation (§4)."""

    __tablename__ = "families"
    __table_args__ = (CheckConstraint("kind IN ('llm', 'baseline')", name="ck_families_kind"),)

    id: str = Field(primary_key=True, max_length=64)
    display_name: str
    provider: str
    model: str
    kind: str = Field(max_length=16)
    base_url: str | None = None
    strategy: str | None = None
    enabled: bool = True
    created_at: datetime = timestamp(default_factory=utcnow)
    updated_at: datetime = timestamp(default_factory=utcnow)


# A live cohort's row: not a late entrant's shadow (migration 0013). The partial unique indexes
# below and every live job and read filter on it.
LIVE_COHORT_SQL = "late_entry_of IS NULL"


def _unique_among_live(column: str) -> Index:
    """`cohorts.<column>` unique among live cohorts (a shadow repeats its original's)."""
    live = text(LIVE_COHORT_SQL)
    return Index(
        f"uq_cohorts_{column}", column, unique=True, sqlite_where=live, postgresql_where=live
    )


class Cohort(SQLModel, table=True):
    """One weekly competition (§3): unique week start, unique number, constants stamped.

    A *late entrant's shadow* (`late_entry_of` set, methodology §20) replays a finished live
    cohort for one family: it shares its original's number and week start (the uniques hold
    among live cohorts only) and is unique per original × family, so a second
    `arena late-entry` finds it instead of starting another.
    """

    __tablename__ = "cohorts"
    __table_args__ = (
        _unique_among_live("week_start"),
        _unique_among_live("number"),
        UniqueConstraint("late_entry_of", "late_entry_family", name="uq_cohorts_late_entry"),
        CheckConstraint(in_list("status", COHORT_STATUSES), name="ck_cohorts_status"),
        CheckConstraint(
            "(late_entry_of IS NULL) = (late_entry_family IS NULL)", name="ck_cohorts_late_entry"
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    number: int
    week_start: datetime = timestamp()
    methodology_version: str = Field(
        sa_column_args=[ForeignKey("methodology_versions.version")], max_length=16
    )
    constants: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    status: str = Field(default="deciding", max_length=16)
    created_at: datetime = timestamp(default_factory=utcnow)
    completed_at: datetime | None = timestamp(nullable=True, default=None)
    # A late entrant's shadow: the live cohort it replays and the family it plays; NULL on
    # every live cohort.
    late_entry_of: int | None = Field(
        default=None, sa_column_args=[ForeignKey("cohorts.id")], nullable=True
    )
    late_entry_family: str | None = Field(default=None, max_length=64, nullable=True)


class Agent(SQLModel, table=True):
    """A family's entry in one cohort, with the model id actually configured at the time.

    `replicate` numbers a family's independent agents in one cohort (1…N, `ARENA_REPLICATES`,
    methodology §18): a v1 cohort has replicate 1 only.
    """

    __tablename__ = "agents"
    __table_args__ = (
        UniqueConstraint(
            "cohort_id", "family_id", "replicate", name="uq_agents_cohort_family_replicate"
        ),
        CheckConstraint("cash_balance >= 0", name="ck_agents_cash_nonnegative"),
    )

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: int = foreign_key("cohorts.id")
    family_id: str = foreign_key("families.id")
    replicate: int = Field(default=1, sa_column=Column(Integer, nullable=False, server_default="1"))
    model_id: str
    display_name: str
    starting_balance: Decimal = money_column()
    cash_balance: Decimal = money_column()
    created_at: datetime = timestamp(default_factory=utcnow)


class Market(SQLModel, table=True):
    """A Polymarket market (or a simulated one) as last synced."""

    __tablename__ = "markets"
    __table_args__ = (
        CheckConstraint(in_list("market_type", MARKET_TYPES), name="ck_markets_type"),
        CheckConstraint(in_list("status", MARKET_STATUSES), name="ck_markets_status"),
        Index("ix_markets_status_volume", "status", "volume"),
        Index("ix_markets_category", "category"),
    )

    id: str = Field(primary_key=True, max_length=64)
    slug: str | None = None
    question: str = Field(sa_type=Text)
    description: str | None = Field(default=None, sa_type=Text)
    event_id: str | None = Field(default=None, index=True, max_length=64)
    event_slug: str | None = None
    event_title: str | None = None
    group_item_title: str | None = None
    category: str | None = None
    market_type: str = Field(max_length=16)
    outcomes: list[str] = Field(default_factory=list, sa_type=JSON)
    prices: list[str] = Field(default_factory=list, sa_type=JSON)
    volume: float | None = None
    liquidity: float | None = None
    end_date: datetime | None = timestamp(nullable=True, default=None)
    active: bool = True
    closed: bool = False
    neg_risk: bool = False
    status: str = Field(default="open", max_length=16)
    uma_resolution_status: str | None = None
    resolution_outcome: str | None = None
    resolved_at: datetime | None = timestamp(nullable=True, default=None)
    source: str = Field(default="gamma", max_length=16)
    # Each outcome's CLOB token (`clob_token_ids[i]` trades `outcomes[i]`); NULL until synced.
    clob_token_ids: list[str] | None = Field(default=None, sa_type=JSON_OR_NULL)
    fee_schedule: dict[str, Any] | None = Field(default=None, sa_type=JSON_OR_NULL)  # FeeSchedule
    first_seen_at: datetime = timestamp(default_factory=utcnow)
    updated_at: datetime = timestamp(default_factory=utcnow)


class MarketSnapshot(SQLModel, table=True):
    """A frozen market universe: what one decision run showed every agent."""

    __tablename__ = "market_snapshots"

    id: int | None = Field(default=None, primary_key=True)
    taken_at: datetime = timestamp(index=True)
    purpose: str = Field(default="decision", max_length=32)
    market_count: int = 0
    created_at: datetime = timestamp(default_factory=utcnow)


class MarketSnapshotItem(SQLModel, table=True):
    """One market of a frozen universe, with its prices exactly as shown."""

    __tablename__ = "market_snapshot_items"

    snapshot_id: int = Field(
        sa_column_args=[ForeignKey("market_snapshots.id", ondelete="CASCADE")], primary_key=True
    )
    market_id: str = Field(
        sa_column_args=[ForeignKey("markets.id")], primary_key=True, max_length=64, index=True
    )
    rank: int
    question: str = Field(sa_type=Text)
    market_type: str = Field(max_length=16)
    outcomes: list[str] = Field(default_factory=list, sa_type=JSON)
    prices: list[str] = Field(default_factory=list, sa_type=JSON)
    volume: float | None = None
    end_date: datetime | None = timestamp(nullable=True, default=None)
    # Methodology v2: each outcome's PriceQuote as JSON (`arena.engine.provenance`); NULL in v1.
    quotes: list[dict[str, Any]] | None = Field(default=None, sa_type=JSON_OR_NULL)


# Every column the Decisions list reads, in its covering index's order (id first: newest first).
_LIST_COLUMNS = (
    "id cohort_id agent_id decision_week status action attempts bets_executed sells_executed "
    "legs_rejected amount_bet tokens_in tokens_out cost_usd latency_ms served_model "
    "market_snapshot_id decided_at created_at"
)
DECISION_LIST_COLUMNS: tuple[str, ...] = tuple(_LIST_COLUMNS.split())


class Decision(SQLModel, table=True):
    """The claimed decision of one agent in one decision week (claim-before-call, §9.2)."""

    __tablename__ = "decisions"
    __table_args__ = (
        UniqueConstraint("agent_id", "decision_week", name="uq_decisions_agent_week"),
        CheckConstraint(in_list("status", DECISION_STATUSES), name="ck_decisions_status"),
        CheckConstraint("decision_week >= 1", name="ck_decisions_week"),
        # Covers spend sums (Operations, leaderboard): without it every row is read, and on
        # SQLite a row's spend columns sit behind its inline prompts (overflow pages).
        Index(
            "ix_decisions_spend",
            "cohort_id",
            "decision_week",
            "agent_id",
            "status",
            "attempts",
            "tokens_in",
            "tokens_out",
            "cost_usd",
        ),
        # Covers the Decisions list (newest first, any filter): the same overflow pages
        # made a year's list cost a second from a cold disk.
        Index("ix_decisions_list", *DECISION_LIST_COLUMNS),
        # Covers the per-agent decision stats (agent and cohort pages, the cohort list).
        Index("ix_decisions_agent_stats", "agent_id", "status", "cost_usd"),
    )

    id: int | None = Field(default=None, primary_key=True)
    agent_id: int = foreign_key("agents.id")
    cohort_id: int = foreign_key("cohorts.id")
    decision_week: int
    market_snapshot_id: int | None = foreign_key("market_snapshots.id", nullable=True)
    status: str = Field(default="in_progress", max_length=16)
    action: str | None = Field(default=None, max_length=8)
    attempts: int = 0
    prompt_system: str | None = Field(default=None, sa_type=Text)
    prompt_user: str | None = Field(default=None, sa_type=Text)
    raw_response: str | None = Field(default=None, sa_type=Text)
    parsed_response: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    validation_errors: list[str] = Field(default_factory=list, sa_type=JSON)
    legs: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON)
    # The legs' tallies, written with `legs` (the Decisions list reads them from a covering
    # index instead of decoding every decision's JSON and aggregating its trades).
    bets_executed: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    sells_executed: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    legs_rejected: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    amount_bet: Decimal = money_column(default=Decimal(0), sa_column_kwargs={"server_default": "0"})
    error: str | None = Field(default=None, sa_type=Text)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_ms: int = 0
    served_model: str | None = None
    provider: str | None = None
    claim_token: str | None = Field(default=None, max_length=64)
    claimed_at: datetime | None = timestamp(nullable=True, default=None)
    decided_at: datetime | None = timestamp(nullable=True, default=None)
    created_at: datetime = timestamp(default_factory=utcnow)
    updated_at: datetime = timestamp(default_factory=utcnow)


class DecisionAttempt(SQLModel, table=True):
    """One model call of a decision: its raw answer, usage and cost, kept even when malformed."""

    __tablename__ = "decision_attempts"
    __table_args__ = (UniqueConstraint("decision_id", "attempt_no", name="uq_attempts_no"),)

    id: int | None = Field(default=None, primary_key=True)
    decision_id: int = foreign_key("decisions.id", ondelete="CASCADE")
    attempt_no: int
    outcome: str = Field(max_length=16)
    raw_response: str | None = Field(default=None, sa_type=Text)
    error: str | None = Field(default=None, sa_type=Text)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_ms: int = 0
    served_model: str | None = None
    provider: str | None = None
    created_at: datetime = timestamp(default_factory=utcnow)


class Position(SQLModel, table=True):
    """One agent's holding of one side of one market (one open per market × side, §5)."""

    __tablename__ = "positions"
    __table_args__ = (
        CheckConstraint(in_list("status", POSITION_STATUSES), name="ck_positions_status"),
        CheckConstraint("shares >= 0", name="ck_positions_shares_nonnegative"),
        CheckConstraint("cost_basis >= 0", name="ck_positions_cost_nonnegative"),
        Index(
            "uq_positions_open_market_side",
            "agent_id",
            "market_id",
            "side",
            unique=True,
            sqlite_where=text("status = 'open'"),
            postgresql_where=text("status = 'open'"),
        ),
        Index("ix_positions_status_market", "status", "market_id"),
        # Covers the Markets list's per-market holder counts (a walk in market order).
        Index("ix_positions_market_holders", "market_id", "agent_id", "status"),
    )

    id: int | None = Field(default=None, primary_key=True)
    agent_id: int = foreign_key("agents.id")
    market_id: str = foreign_key("markets.id")
    side: str = Field(max_length=256)
    status: str = Field(default="open", max_length=16)
    shares: Decimal = money_column()
    cost_basis: Decimal = money_column()
    avg_entry_price: Decimal = money_column()
    realized_pnl: Decimal = money_column(default=Decimal(0))
    mark_price: Decimal | None = money_column(nullable=True, default=None)
    marked_at: datetime | None = timestamp(nullable=True, default=None)
    opened_at: datetime = timestamp()
    closed_at: datetime | None = timestamp(nullable=True, default=None)


class Trade(SQLModel, table=True):
    """A cash movement: BUY and SELL from decisions, SETTLE and REFUND from resolution."""

    __tablename__ = "trades"
    __table_args__ = (
        CheckConstraint(in_list("trade_type", TRADE_TYPES), name="ck_trades_type"),
        CheckConstraint("amount >= 0", name="ck_trades_amount_nonnegative"),
        UniqueConstraint("decision_id", "leg_index", name="uq_trades_decision_leg"),
        Index(
            "uq_trades_settlement",
            "position_id",
            unique=True,
            sqlite_where=text("trade_type IN ('SETTLE', 'REFUND')"),
            postgresql_where=text("trade_type IN ('SETTLE', 'REFUND')"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    agent_id: int = foreign_key("agents.id")
    decision_id: int | None = foreign_key("decisions.id", nullable=True)
    leg_index: int | None = None
    position_id: int = foreign_key("positions.id")
    market_id: str = foreign_key("markets.id")
    trade_type: str = Field(max_length=8)
    side: str = Field(max_length=256)
    amount: Decimal = money_column()
    price: Decimal | None = money_column(nullable=True, default=None)
    shares: Decimal = money_column()
    cash_before: Decimal = money_column()
    implied_confidence: float | None = None
    realized_pnl: Decimal = money_column(default=Decimal(0))
    created_at: datetime = timestamp(index=True)
    # Extension stated_probability (0008): the BUY leg's stated P(its side wins), else NULL.
    probability: float | None = None
    # v2 (0010): the fill price's source (clob_mid / gamma; book_walk: extension book_execution,
    # whose walk is book_fill, 0012) and the outcome's PriceQuote; NULL on v1 trades, settlements.
    price_source: str | None = Field(default=None, max_length=16)
    price_quote: dict[str, Any] | None = Field(default=None, sa_type=JSON_OR_NULL)
    book_fill: dict[str, Any] | None = Field(default=None, sa_type=JSON_OR_NULL)


class PortfolioSnapshot(SQLModel, table=True):
    """An agent's valuation in one 10-minute slot (§12)."""

    __tablename__ = "portfolio_snapshots"
    __table_args__ = (UniqueConstraint("agent_id", "slot", name="uq_snapshots_agent_slot"),)

    id: int | None = Field(default=None, primary_key=True)
    # no index of its own: the (agent_id, slot) unique index leads with it (8M rows a year)
    agent_id: int = Field(sa_column_args=[ForeignKey("agents.id")], nullable=False)
    slot: datetime = timestamp(index=True)
    snapshot_timestamp: datetime = timestamp()
    cash_balance: Decimal = money_column()
    positions_value: Decimal = money_column()
    total_value: Decimal = money_column()
    total_pnl: Decimal = money_column()
    total_pnl_percent: float
    brier_score: float | None = None
    num_resolved_bets: int = 0
    # Methodology v2: each open position's mark and its provenance, by position id; NULL in v1.
    price_provenance: dict[str, Any] | None = Field(default=None, sa_type=JSON_OR_NULL)


ROLLUP_HOUR = 3600
ROLLUP_DAY = 24 * ROLLUP_HOUR
# The bucket widths kept in `portfolio_rollups`, in seconds; each divides the next.
ROLLUP_WIDTHS = (ROLLUP_HOUR, 4 * ROLLUP_HOUR, 12 * ROLLUP_HOUR, ROLLUP_DAY, 7 * ROLLUP_DAY)


class PortfolioRollup(SQLModel, table=True):
    """An agent's last snapshot in each time bucket of a fixed width (derived; dashboard curves).

    Kept current by the snapshot job and rebuildable from `portfolio_snapshots` at any time
    (`arena.engine.rollups`), so a year of curves reads thousands of rows, not millions.
    `bucket` is the bucket's start in epoch seconds, a multiple of `width` (seconds).
    """

    __tablename__ = "portfolio_rollups"
    # A curve reads one width from a start bucket on: a range scan, not every width's rows.
    __table_args__ = (Index("ix_portfolio_rollups_width_bucket", "width", "bucket"),)

    agent_id: int = Field(
        sa_column_args=[ForeignKey("agents.id")], primary_key=True, nullable=False
    )
    width: int = Field(primary_key=True)
    bucket: int = Field(sa_type=BigInteger, primary_key=True)
    slot: datetime = timestamp()
    total_value: Decimal = money_column()
    total_pnl: Decimal = money_column()


class AnalysisResult(SQLModel, table=True):
    """A statistical read model computed by the hourly `analyses` job (derived; dashboard).

    The leaderboard's and calibration's bootstrap takes seconds at a year's scale; the job
    stores each scope's frame (Parquet bytes, dtypes exact) so a page reads it in
    milliseconds. `data_as_of` is the newest snapshot slot the computation saw.
    """

    __tablename__ = "analysis_results"

    name: str = Field(primary_key=True, max_length=64)
    scope: str = Field(primary_key=True, max_length=64)
    computed_at: datetime = timestamp()
    data_as_of: datetime | None = timestamp(nullable=True, default=None)
    frame: bytes = Field(sa_type=LargeBinary)


class ReplayBundle(SQLModel, table=True):
    """A finished cohort's replay bundle (`arena.analytics.replay.bundle`), built once.

    The cohort is the key, so a second builder's INSERT fails and the first bundle is kept:
    a published hash never changes. `zip` is the bundle's deterministic zip (what the
    dashboard offers); `bundle_hash` the SHA-256 of its manifest.
    """

    __tablename__ = "replay_bundles"

    cohort_id: int = Field(
        sa_column=Column(Integer, ForeignKey("cohorts.id"), primary_key=True, nullable=False)
    )
    bundle_hash: str = Field(max_length=64)
    project_version: str = Field(max_length=32)
    file_count: int
    size_bytes: int = Field(sa_type=BigInteger)
    zip: bytes = Field(sa_type=LargeBinary)
    built_at: datetime = timestamp()


class BrierScore(SQLModel, table=True):
    """The Brier score of one resolved BUY trade (§11.1); one per trade."""

    __tablename__ = "brier_scores"
    __table_args__ = (UniqueConstraint("trade_id", name="uq_brier_trade"),)

    id: int | None = Field(default=None, primary_key=True)
    trade_id: int = Field(sa_column_args=[ForeignKey("trades.id")])
    agent_id: int = foreign_key("agents.id")
    market_id: str = foreign_key("markets.id")
    side: str = Field(max_length=256)
    forecast_probability: float
    actual_outcome: int
    brier_score: float
    market_price: float | None = None
    created_at: datetime = timestamp()


class JobRun(SQLModel, table=True):
    """A claimed run of a job for one slot: a slot is done at most once across processes."""

    __tablename__ = "job_runs"
    __table_args__ = (
        UniqueConstraint("job", "slot", name="uq_job_runs_job_slot"),
        CheckConstraint(in_list("status", JOB_STATUSES), name="ck_job_runs_status"),
        # The Operations page: newest runs first, per status, and per job × status counts.
        Index("ix_job_runs_slot", "slot", "id"),
        Index("ix_job_runs_status_slot", "status", "slot"),
        Index("ix_job_runs_job_status_slot", "job", "status", "slot"),
    )

    id: int | None = Field(default=None, primary_key=True)
    job: str = Field(max_length=32)
    slot: datetime = timestamp()
    status: str = Field(default="running", max_length=16)
    owner: str | None = None
    started_at: datetime = timestamp()
    finished_at: datetime | None = timestamp(nullable=True, default=None)
    counts: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    error: str | None = Field(default=None, sa_type=Text)


class SystemLog(SQLModel, table=True):
    """An operational event worth keeping for audit (§14)."""

    __tablename__ = "system_logs"
    __table_args__ = (
        CheckConstraint(in_list("level", LOG_LEVELS), name="ck_system_logs_level"),
        # The source filter, newest first, and the list of sources (a loose index scan).
        Index("ix_system_logs_source_at", "source", "at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = timestamp(index=True)
    level: str = Field(default="INFO", max_length=8)
    source: str = Field(max_length=64)
    message: str = Field(sa_type=Text)
    context: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)


__all__ = [
    "JSON_OR_NULL",
    "MONEY",
    "Agent",
    "AnalysisResult",
    "BrierScore",
    "Cohort",
    "Decision",
    "DecisionAttempt",
    "Family",
    "JobRun",
    "JobRunCount",
    "LateEntryResolution",
    "Market",
    "MarketHolding",
    "MarketSnapshot",
    "MarketSnapshotItem",
    "MethodologyVersion",
    "PortfolioRollup",
    "PortfolioSnapshot",
    "Position",
    "SystemLog",
    "Trade",
    "utcnow",
]
