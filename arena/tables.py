"""The schema's Core `Table` objects, named once, for set-based SQL (SQLAlchemy Core).

The ORM classes in `arena.models` define the tables; engine jobs and read models that build
Core statements import the tables from here instead of each taking `Model.__table__` again.
"""

from sqlalchemy import Table

from arena.models import (
    Agent,
    AnalysisResult,
    BrierScore,
    Cohort,
    Decision,
    DecisionAttempt,
    Family,
    JobRun,
    Market,
    MarketSnapshot,
    MarketSnapshotItem,
    MethodologyVersion,
    PortfolioRollup,
    PortfolioSnapshot,
    Position,
    SystemLog,
    Trade,
)


def _table(model: type) -> Table:
    return model.__table__  # type: ignore[attr-defined, no-any-return]


AGENTS = _table(Agent)
ANALYSIS_RESULTS = _table(AnalysisResult)
BRIER_SCORES = _table(BrierScore)
COHORTS = _table(Cohort)
DECISIONS = _table(Decision)
DECISION_ATTEMPTS = _table(DecisionAttempt)
FAMILIES = _table(Family)
JOB_RUNS = _table(JobRun)
MARKETS = _table(Market)
MARKET_SNAPSHOTS = _table(MarketSnapshot)
MARKET_SNAPSHOT_ITEMS = _table(MarketSnapshotItem)
METHODOLOGY_VERSIONS = _table(MethodologyVersion)
PORTFOLIO_ROLLUPS = _table(PortfolioRollup)
PORTFOLIO_SNAPSHOTS = _table(PortfolioSnapshot)
POSITIONS = _table(Position)
SYSTEM_LOGS = _table(SystemLog)
TRADES = _table(Trade)
