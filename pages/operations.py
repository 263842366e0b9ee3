"""Operations (locked): job runs and failures, last success per job, the system log, API spend.

Locked unless ARENA_ADMIN_PASSWORD is set AND entered in this session; the comparison is
constant-time and repeated failures lock the page for a while (`arena.dashboard.admin.AdminGate`).
Nothing here shows the database URL or any key."""

import pandas as pd
import streamlit as st

from arena.analytics.operations import (
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
from arena.dashboard import admin, charts, ui
from arena.storage.models import JOB_STATUSES, LOG_LEVELS

ui.entry_guard()

st.title("Operations")
admin.require_unlock(get_settings().admin_password)

st.subheader("Jobs")
health: pd.DataFrame = ui.read(job_health)
if health.empty:
    ui.empty("No job has run yet: start the scheduler (`python scheduler.py`) or `make demo`.")
else:
    failing = health[health["last_status"] == "failed"]
    if not failing.empty:
        st.error("Last run failed: " + ", ".join(str(job) for job in failing["job"]))
    ui.table(health, key="ops-health")
    ui.download_csv(health, "job-health")

    failures: pd.DataFrame = ui.read(job_runs, status="failed", limit=20)
    if not failures.empty:
        st.markdown("**Recent failures**")
        ui.table(failures, key="ops-failures")
        ui.download_csv(failures, "job-failures")

stuck: pd.DataFrame = ui.read(settlement_failures)
if not stuck.empty:
    st.subheader("Markets that could not be settled")
    st.error(
        f"{len(stuck)} market(s) need a person: the resolve job logs each of them on every run "
        "and goes on with the others. Their open positions keep their last mark."
    )
    ui.table(stuck, key="ops-settlement-failures")
    ui.download_csv(stuck, "settlement-failures")

st.subheader("Job runs")
cols = st.columns(2)
job = cols[0].selectbox("Job", [ui.ALL, *health["job"].tolist()], key="ops-job")
run_status = cols[1].selectbox("Status", [ui.ALL, *JOB_STATUSES], key="ops-run-status")
runs: pd.DataFrame = ui.read(
    job_runs,
    job=None if job == ui.ALL else job,
    status=None if run_status == ui.ALL else run_status,
)
if runs.empty:
    st.text("No job run matches.")
else:
    st.caption(ui.listed(len(runs), DEFAULT_LIMIT, "run(s)", "newest slot first", exported=False))
    ui.table(runs, key="ops-runs")
    ui.download_csv(runs, "job-runs")

st.subheader("System log")
cols = st.columns(2)
minimum = cols[0].selectbox("Severity at least", list(LOG_LEVELS), index=1, key="ops-level")
source = cols[1].selectbox("Source", [ui.ALL, *ui.read(log_sources)], key="ops-source")
log: pd.DataFrame = ui.read(
    system_log, levels=levels_at_least(minimum), source=None if source == ui.ALL else source
)
if log.empty:
    st.text("No log line at this severity.")
else:
    st.caption(ui.listed(len(log), DEFAULT_LIMIT, "line(s)", "newest first", exported=False))
    ui.table(log, key="ops-log")
    ui.download_csv(log, "system-log")

st.subheader("API spend")
spend: ApiSpend = ui.read(api_spend)
by_family, by_week = spend.by_family, spend.by_week
if by_family.empty:
    st.text("No decision yet, so no spend.")
else:
    left, right = st.columns(2)
    with left:
        st.markdown("**Per family**")
        ui.table(by_family, key="ops-spend-family")
        ui.download_csv(by_family, "spend-by-family")
    with right:
        st.markdown("**Per week**")
        ui.chart(charts.api_spend_by_week(by_week))
        ui.download_csv(by_week, "spend-by-week")
