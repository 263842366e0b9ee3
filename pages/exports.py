"""Exports: pick tables, cohort, family and a time range; download a zip of CSVs with a README.

The zip is written by `arena.analytics.export_bundle.build_bundle`, which calls the code behind
`arena export TABLE` for every table, so the files match the CLI's output byte for byte."""

from datetime import UTC, date, datetime, time

import pandas as pd
import streamlit as st

from arena.analytics.agents import FilterOptions, filter_options
from arena.analytics.export import EXPORT_DESCRIPTIONS, EXPORTS, ExportFilters
from arena.analytics.export_bundle import build_bundle, bundle_name
from arena.analytics.overview import family_names
from arena.config import get_settings
from arena.dashboard import fmt, ui
from arena.storage.db import get_engine

ui.entry_guard()

PLAN_LABELS = {
    "file": st.column_config.TextColumn("File", width="small"),
    "rows_are": st.column_config.TextColumn("One row is", width="large"),
    "columns": st.column_config.TextColumn("Columns", width="large"),
}

st.title("Exports")
st.caption(
    "A bounded slice of the benchmark's tables as CSV, zipped with a README that records the "
    "methodology version and constants, the export time and the filters. Each CSV is exactly "
    "what `arena export TABLE --cohort N --family ID --since T --until T` prints; its columns "
    f"are fixed by [the export contract]({ui.doc_link('contract', '6-export-columns')})."
)

options: FilterOptions = ui.read(filter_options)
names: dict[str, str] = ui.read(family_names)
tables = st.multiselect(
    "Tables",
    list(EXPORTS),
    default=list(EXPORTS),
    format_func=lambda table: table.replace("_", " ").capitalize(),
    key="export-tables",
)
cols = st.columns(4)
cohort = ui.select_link(
    "Cohort",
    "cohort",
    options.cohorts,
    format_func=lambda n: "All" if n == ui.ALL else f"Cohort {n}",
    container=cols[0],
)
family = ui.select_link(
    "Family",
    "family",
    options.families,
    format_func=lambda f: "All" if f == ui.ALL else names.get(f, f),
    container=cols[1],
)
since_day: date | None = cols[2].date_input("From (UTC, inclusive)", value=None, key="since")
until_day: date | None = cols[3].date_input("Until (UTC, exclusive)", value=None, key="until")
settings = get_settings()
cap = int(
    st.number_input(
        "Row cap per table", min_value=1, value=settings.export_row_cap, step=1000, key="cap"
    )
)


def _instant(day: date | None) -> datetime | None:
    return datetime.combine(day, time(0), tzinfo=UTC) if day is not None else None


filters = ExportFilters(
    cohort=cohort, family=family, since=_instant(since_day), until=_instant(until_day)
)
if filters.since and filters.until and filters.since >= filters.until:
    st.error("'From' must be before 'Until': swap or widen the range.")
    st.stop()
if not tables:
    ui.empty("Pick at least one table to export.")
    st.stop()

plan = pd.DataFrame(
    {
        "file": [f"{table}.csv" for table in tables],
        "rows_are": [EXPORT_DESCRIPTIONS.get(table, "") for table in tables],
        "columns": [", ".join(EXPORTS[table].columns) for table in tables],
    }
)
ui.table(plan, key="export-plan", column_config=PLAN_LABELS)
scope = [
    f"Cohort {cohort}" if cohort is not None else "Every cohort",
    f"family {names.get(family, family)}" if family is not None else "every family",
]
if filters.since is not None:
    scope.append(f"from {fmt.instant(filters.since)}")
if filters.until is not None:
    scope.append(f"until {fmt.instant(filters.until)}")
recorded = ", ".join(f"{k}={v}" for k, v in filters.describe().items()) or "none"
st.caption(
    f"{fmt.escaped('; '.join(scope))}; at most {cap:,} rows per table (the README "
    f"says when a table was cut). The README records the filters as `{recorded}`."
)
url = ui.database_url()
chosen = tuple(tables)


def make_zip() -> bytes:
    """Runs only when the button is clicked (deferred), on the read-only engine."""
    engine = get_engine(url, role="reader")
    return build_bundle(
        engine,
        chosen,
        filters,
        cap=cap,
        exported_at=datetime.now(UTC),
        methodology=settings.methodology,
    ).data


st.download_button(
    "Download zip",
    data=make_zip,
    file_name=bundle_name(filters),
    mime="application/zip",
    on_click="ignore",
    type="primary",
    key="export-zip",
)
ui.download_csv(plan, "export-plan", label="Download this list as CSV")
