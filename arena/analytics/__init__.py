"""Read models for the dashboard, exports and the CLI: SQL → pandas DataFrames.

Pages never build SQL; they call these functions, show the DataFrame and offer it as CSV, so
what a user sees and what they download are the same rows. Each module documents its columns.
"""

from arena.analytics.overview import (
    OVERVIEW_COLUMNS,
    OVERVIEW_TABLES,
    backend_name,
    overview,
    row_count,
    schema_revision,
    sqlite_file_missing,
)

__all__ = [
    "OVERVIEW_COLUMNS",
    "OVERVIEW_TABLES",
    "backend_name",
    "overview",
    "row_count",
    "schema_revision",
    "sqlite_file_missing",
]

# The dashboard's read models (one module per subject; the functions named like their module —
# cohorts.cohorts, decisions.decisions, markets.markets — stay reachable through the module).
from arena.analytics.agents import agent_index as agent_index
from arena.analytics.agents import agent_summary as agent_summary
from arena.analytics.agents import positions as positions
from arena.analytics.agents import trades as trades
from arena.analytics.cohorts import cohort_numbers as cohort_numbers
from arena.analytics.cohorts import cohort_standings as cohort_standings
from arena.analytics.cohorts import decisions_by_week as decisions_by_week
from arena.analytics.curves import curve_window as curve_window
from arena.analytics.curves import portfolio_curves as portfolio_curves
from arena.analytics.decisions import decision_detail as decision_detail
from arena.analytics.decisions import snapshot_markets as snapshot_markets
from arena.analytics.markets import market_brier as market_brier
from arena.analytics.markets import market_detail as market_detail
from arena.analytics.markets import price_path as price_path
from arena.analytics.operations import api_spend as api_spend
from arena.analytics.operations import job_health as job_health
from arena.analytics.operations import job_runs as job_runs
from arena.analytics.operations import spend_by_family as spend_by_family
from arena.analytics.operations import spend_by_week as spend_by_week
from arena.analytics.operations import system_log as system_log
