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
