"""The schema's Core `Table` objects, named once, for set-based SQL (SQLAlchemy Core).

The ORM classes in `arena.storage.models` define the tables; engine jobs and read models that build
Core statements import the tables from here instead of each taking `Model.__table__` again.
"""

from typing import Any

from sqlalchemy import ColumnElement, Table

from arena.storage.models import (
    Agent,
    AnalysisResult,
    BrierScore,
    Cohort,
    Decision,
    DecisionAttempt,
    Family,
    JobRun,
    JobRunCount,
    LateEntryResolution,
    Market,
    MarketHolding,
    MarketSnapshot,
    MarketSnapshotItem,
    MethodologyVersion,
    PortfolioRollup,
    PortfolioSnapshot,
    Position,
    ReplayBundle,
    SystemLog,
    Trade,
)


def _table(model: type) -> Table:
    # SQLAlchemy's declarative mapping sets __table__ at class creation; SQLModel's types
    # don't declare it
    return model.__table__  # type: ignore[attr-defined]


AGENTS = _table(Agent)
ANALYSIS_RESULTS = _table(AnalysisResult)
BRIER_SCORES = _table(BrierScore)
COHORTS = _table(Cohort)
DECISIONS = _table(Decision)
DECISION_ATTEMPTS = _table(DecisionAttempt)
FAMILIES = _table(Family)
JOB_RUNS = _table(JobRun)
JOB_RUN_COUNTS = _table(JobRunCount)
LATE_ENTRY_RESOLUTIONS = _table(LateEntryResolution)
MARKETS = _table(Market)
MARKET_HOLDINGS = _table(MarketHolding)
MARKET_SNAPSHOTS = _table(MarketSnapshot)
MARKET_SNAPSHOT_ITEMS = _table(MarketSnapshotItem)
METHODOLOGY_VERSIONS = _table(MethodologyVersion)
PORTFOLIO_ROLLUPS = _table(PortfolioRollup)
PORTFOLIO_SNAPSHOTS = _table(PortfolioSnapshot)
POSITIONS = _table(Position)
REPLAY_BUNDLES = _table(ReplayBundle)
SYSTEM_LOGS = _table(SystemLog)
TRADES = _table(Trade)


def live_cohort(cohorts: Any = COHORTS) -> ColumnElement[bool]:
    """SQL: the `cohorts` row (the table or an alias) is a live cohort, not a late entrant's
    shadow (`cohorts.late_entry_of`): what every live job and live read keeps."""
    return cohorts.c.late_entry_of.is_(None)
