"""Operations (locked): job runs and failures, last success per job, the system log, API spend.

Locked unless ARENA_ADMIN_PASSWORD is set AND entered in this session; the comparison is
constant-time, repeated failures lock that browser session for a while, and wrong guesses from
all sessions are answered slowly (`arena.dashboard.admin.AdminGate`).
Nothing here shows the database URL or any key."""

from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.views.operations import (
    DEFAULT_LIMIT,
    ApiSpend,
    api_spend,
    job_health,
    job_runs,
    levels_at_least,
    log_sources,
    settlement_failures,
    system_log,
)
from arena.config import get_settings
from arena.dashboard import admin, fmt, links, notices, reads, tables
from arena.dashboard.charts import cost as cost_charts
from arena.storage.models import JOB_STATUSES, LOG_LEVELS

Spec = dict[str, tuple[str, Any]]  # column → (label, display writer or None)
HEALTH: Spec = {
    "job": ("Job", None),
    "last_status": ("Last status", fmt.text),
    "last_run": ("Last run", None),
    "last_success": ("Last success", None),
    "last_failure": ("Last failure", None),
    "runs": ("Runs", fmt.count),
    "ok": ("OK", fmt.count),
    "failed": ("Failed", fmt.count),
    "running": ("Running", fmt.count),
    "last_error": ("Last error", fmt.text),
}
RUNS: Spec = {
    "run_id": ("Run", None),
    "job": ("Job", None),
    "slot": ("Slot", None),
    "status": ("Status", None),
    "started_at": ("Started", None),
    "duration_s": ("Took", fmt.seconds),
    "error": ("Error", fmt.text),
    "counts": ("What it did", fmt.json_text),
    "owner": ("Claimed by", fmt.text),
}
STUCK: Spec = {
    "question": ("Market", fmt.text),
    "failures": ("Failed runs", fmt.count),
    "first_failure": ("First failure", None),
    "last_failure": ("Last failure", None),
    "last_error": ("Last error", fmt.text),
    "market_id": ("Market id", None),
}
LOG: Spec = {
    "at": ("At", None),
    "level": ("Level", None),
    "source": ("Source", None),
    "message": ("Message", fmt.text),
    "context": ("Context", fmt.json_text),
}
SPEND: Spec = {
    "display_name": ("Family", fmt.text),
    "kind": ("Kind", None),
    "decisions": ("Decisions", fmt.count),
    "attempts": ("Model answers", fmt.count),
    "tokens_in": ("Tokens in", fmt.count),
    "tokens_out": ("Tokens out", fmt.count),
    "cost_usd": ("Cost", fmt.cost),
    "cost_per_decision": ("Per decision", fmt.cost),
}


def when(value: Any) -> str:
    return fmt.DASH if fmt.missing(value) else f"{value:%Y-%m-%d %H:%M}"


def show(frame: pd.DataFrame, key: str, spec: Spec) -> None:
    """`frame`'s `spec` columns under their labels, written by their writers. A number column
    without gaps keeps its raw values (it sorts as numbers; the writer only formats it); text
    (JSON counts, log context), times (``YYYY-MM-DD HH:mm`` UTC, which sorts as written) and
    any column with gaps are shown as their written text, since the grid draws a missing cell
    as "None" whatever a format says. The CSV is `frame`, raw."""
    shown = frame[list(spec)].copy()
    formats: dict[str, Any] = {}
    for column, (_, writer) in spec.items():
        values = shown[column]
        is_time = pd.api.types.is_datetime64_any_dtype(values)
        is_number = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        writer = writer or (when if is_time else None)
        if writer is None:
            continue
        if is_number and not values.isna().any():
            formats[column] = writer
        else:
            shown[column] = pd.Series([writer(v) for v in values], index=shown.index, dtype=object)
    tables.table(
        shown,
        key=key,
        formats=formats,
        column_config={
            column: st.column_config.Column(label) for column, (label, _) in spec.items()
        },
    )


st.title("Operations")
admin.require_unlock(get_settings().admin_password)

st.subheader("Jobs")
health: pd.DataFrame = reads.read(job_health)
if health.empty:
    notices.empty("No job has run yet: start the scheduler (`python scheduler.py`) or `make demo`.")
else:
    failing = health[health["last_status"] == "failed"]
    if not failing.empty:
        st.error("Last run failed: " + fmt.escaped(", ".join(str(job) for job in failing["job"])))
    show(health, "ops-health", HEALTH)
    tables.download_csv(health, "job-health")

    failures: pd.DataFrame = reads.read(job_runs, status="failed", limit=20)
    if not failures.empty:
        st.markdown("**Recent failures**")
        show(failures, "ops-failures", RUNS)
        tables.download_csv(failures, "job-failures")

stuck: pd.DataFrame = reads.read(settlement_failures)
if not stuck.empty:
    st.subheader("Markets that could not be settled")
    st.error(
        f"{len(stuck)} market(s) need a person: the resolve job logs each of them on every run "
        "and goes on with the others. Their open positions keep their last mark."
    )
    show(stuck, "ops-settlement-failures", STUCK)
    tables.download_csv(stuck, "settlement-failures")

st.subheader("Job runs")
cols = st.columns(2)
job = cols[0].selectbox("Job", [links.ALL, *health["job"].tolist()], key="ops-job")
run_status = cols[1].selectbox("Status", [links.ALL, *JOB_STATUSES], key="ops-run-status")
runs: pd.DataFrame = reads.read(
    job_runs,
    job=None if job == links.ALL else job,
    status=None if run_status == links.ALL else run_status,
)
if runs.empty:
    st.text("No job run matches.")
else:
    st.caption(
        notices.listed(len(runs), DEFAULT_LIMIT, "run(s)", "newest slot first", exported=False)
    )
    show(runs, "ops-runs", RUNS)
    tables.download_csv(runs, "job-runs")

st.subheader("System log")
cols = st.columns(2)
minimum = cols[0].selectbox("Severity at least", list(LOG_LEVELS), index=1, key="ops-level")
source = cols[1].selectbox("Source", [links.ALL, *reads.read(log_sources)], key="ops-source")
log: pd.DataFrame = reads.read(
    system_log, levels=levels_at_least(minimum), source=None if source == links.ALL else source
)
if log.empty:
    st.text("No log line at this severity.")
else:
    st.caption(notices.listed(len(log), DEFAULT_LIMIT, "line(s)", "newest first", exported=False))
    show(log, "ops-log", LOG)
    tables.download_csv(log, "system-log")

st.subheader("API spend")
spend: ApiSpend = reads.read(api_spend)
by_family, by_week = spend.by_family, spend.by_week
if by_family.empty:
    st.text("No decision yet, so no spend.")
else:
    st.markdown("**Per family**, over all cohorts, most expensive first")
    show(by_family, "ops-spend-family", SPEND)
    tables.download_csv(by_family, "spend-by-family")
    st.markdown("**Per week**")
    tables.chart(cost_charts.api_spend_by_week, by_week)
    tables.download_csv(by_week, "spend-by-week")
