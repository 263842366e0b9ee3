"""Decisions: filter the weekly decisions, select one, and audit it end to end — prompts,
every attempt's raw answer, the parsed payload, validation errors, executed and rejected legs,
usage and the frozen market snapshot it saw. Model output is shown as text, never rendered."""

import pandas as pd
import streamlit as st

from arena.analytics.agents import FilterOptions, filter_options
from arena.analytics.decisions import (
    DEFAULT_LIMIT,
    DecisionDetail,
    decision_detail,
    decision_weeks,
    decisions,
    response_parts,
)
from arena.dashboard import ui
from arena.storage.models import DECISION_ACTIONS, DECISION_STATUSES

ui.entry_guard()

NO_DECISION = (
    "No decision yet: the scheduler runs `arena decide` on Sundays at :05 UTC for every "
    "cohort in its decision window (or run `arena decide`, or `make demo`)."
)


def show_response(raw: str) -> None:
    """A raw answer as text; a reasoning model's thinking apart, collapsed, when it has one."""
    thinking, answer = response_parts(raw)
    if not thinking:
        st.code(raw, language=None, wrap_lines=True)
        return
    with st.expander(f"Model's thinking ({len(thinking):,} characters)"):
        st.code(thinking, language=None, wrap_lines=True)
    st.caption("Answer outside the thinking")
    st.code(answer or "(nothing outside the thinking)", language=None, wrap_lines=True)


st.title("Decisions")
options: FilterOptions = ui.read(filter_options)
if not options.cohorts:
    ui.empty(NO_DECISION)
    st.stop()
ui.simulated_notice()

cols = st.columns(5)
cohort = ui.select_link(
    "Cohort",
    "cohort",
    options.cohorts,
    format_func=lambda n: "All" if n == ui.ALL else f"Cohort {n}",
    container=cols[0],
)
family = ui.select_link("Family", "family", options.families, container=cols[1])
week_value = ui.select_link("Week", "week", ui.read(decision_weeks), container=cols[2])
action = ui.select_link("Action", "action", list(DECISION_ACTIONS), container=cols[3])
status = ui.select_link("Status", "status", list(DECISION_STATUSES), container=cols[4])

listing: pd.DataFrame = ui.read(
    decisions,
    cohort=cohort,
    family=family,
    week=week_value,
    action=action,
    status=status,
    limit=DEFAULT_LIMIT,
)
if listing.empty:
    ui.empty("No decision matches these filters: widen them (set a filter back to All).")
else:
    st.caption(
        ui.listed(len(listing), DEFAULT_LIMIT, "decision(s)", "newest first")
        + " Select a row to audit it."
    )
    ui.pick_link(
        listing,
        key=f"decisions-table:{cohort}:{family}:{week_value}:{action}:{status}",
        link="decision",
        column="decision_id",
        column_config={
            "amount": st.column_config.NumberColumn("amount", format="dollar"),
            "cost_usd": st.column_config.NumberColumn("cost_usd", format="$%.4f"),
        },
    )
    ui.download_csv(listing, "decisions")

decision_id = ui.link_int("decision")
if decision_id is None:
    st.stop()

detail: DecisionDetail | None = ui.read(decision_detail, decision_id)
if detail is None:
    ui.empty(f"There is no decision {decision_id}: pick one from the table.")
    st.stop()

st.divider()
st.header(f"Decision {detail.decision_id}")
st.text(
    f"{detail.display_name} ({detail.family_id}) — cohort {detail.cohort_number}, week "
    f"{detail.decision_week} — {detail.action or 'no action'} — status {detail.status}"
)
top = st.columns(4)
top[0].metric("Attempts (final run)", detail.attempts)
top[1].metric("Model calls logged", len(detail.attempt_log))
top[2].metric("Legs executed", f"{int(detail.legs['executed'].sum())} / {len(detail.legs)}")
top[3].metric("Latency", f"{detail.latency_ms:,} ms")
usage = st.columns(4)
usage[0].metric("Tokens in", f"{detail.tokens_in:,}")
usage[1].metric("Tokens out", f"{detail.tokens_out:,}")
usage[2].metric("Cost", f"${detail.cost_usd:,.4f}")
decided = f"{detail.decided_at:%Y-%m-%d %H:%M:%S} UTC" if detail.decided_at else "—"
st.text(
    f"Configured model: {detail.model_id}   Served model: {detail.served_model or '—'}   "
    f"Provider: {detail.provider or '—'}   Decided at: {decided}"
)
if detail.market_snapshot_id:
    taken = f"{detail.snapshot_taken_at:%Y-%m-%d %H:%M} UTC" if detail.snapshot_taken_at else ""
    st.page_link(
        "pages/markets.py",
        label=f"Market snapshot #{detail.market_snapshot_id} it saw ({detail.snapshot_markets} "
        f"markets, {taken})",
        icon=":material/show_chart:",
        query_params={"snapshot": str(detail.market_snapshot_id)},
    )
if detail.error:
    st.error("Error recorded on this decision:")
    st.code(detail.error, language=None, wrap_lines=True)

attempts_tab, legs_tab, parsed_tab, prompt_tab = st.tabs(
    ["Raw responses", "Legs", "Parsed payload", "Prompts"]
)
with attempts_tab:
    if detail.attempt_log.empty:
        st.text("No attempt was recorded (the decision may still be in progress).")
    for _, attempt in detail.attempt_log.iterrows():
        st.markdown(f"**Attempt {int(attempt['attempt_no'])} — {attempt['outcome']}**")
        st.text(
            f"tokens {int(attempt['tokens_in'])} in / {int(attempt['tokens_out'])} out, "
            f"${attempt['cost_usd']:.4f}, {int(attempt['latency_ms'])} ms, served by "
            f"{attempt['served_model'] if not pd.isna(attempt['served_model']) else '—'}"
        )
        if not pd.isna(attempt["error"]):
            st.text(f"error: {attempt['error']}")
        raw = attempt["raw_response"]
        if pd.isna(raw):
            st.text("(no response body)")
        else:
            show_response(str(raw))
    st.markdown("**Final raw response stored on the decision**")
    show_response(detail.raw_response or "")
    ui.download_csv(
        detail.attempt_log, f"decision-{decision_id}-attempts", label="Download attempts CSV"
    )
with legs_tab:
    if detail.legs.empty:
        st.text("No legs: a HOLD, or nothing parsed.")
    else:
        ui.table(detail.legs, key="decision-legs")
        ui.download_csv(detail.legs, f"decision-{decision_id}-legs", label="Download legs CSV")
with parsed_tab:
    if detail.validation_errors:
        st.markdown("**Validation errors (one per malformed attempt)**")
        for error in detail.validation_errors:
            st.text(f"• {error}")
    st.code(detail.parsed_json or "(nothing parsed)", language="json", wrap_lines=True)
with prompt_tab:
    st.markdown("**System prompt**")
    st.code(detail.prompt_system or "", language=None, wrap_lines=True, height=300)
    st.markdown("**User prompt**")
    st.code(detail.prompt_user or "", language=None, wrap_lines=True, height=500)
