"""Calibration: is a family's v1 implied confidence a probability? Reliability with counts,
Brier per family with 95% intervals, Brier over time, and the market's own price for the side
bought as a reference forecaster on the very same bets."""

import streamlit as st

from arena.analytics.cohorts import cohort_numbers
from arena.analytics.leaderboard import DEFAULT_MIN_RESOLVED
from arena.analytics.stored import current_or_live
from arena.dashboard import charts, fmt, ui

ui.entry_guard()

NO_BRIER = (
    "No resolved bet yet: Brier rows appear when a market an agent bought into resolves "
    "(`arena resolve`, hourly in the scheduler). `make demo` builds a season that has them."
)
FORMATS = {
    column: fmt.prob
    for column in (
        "brier",
        "brier_ci_low",
        "brier_ci_high",
        "ece",
        "reliability",
        "resolution",
        "uncertainty",
        "residual",
        "market_brier",
        "market_brier_ci_low",
        "market_brier_ci_high",
        "skill_vs_market",
        "skill_vs_market_ci_low",
        "skill_vs_market_ci_high",
        "market_ece",
    )
}

st.title("Calibration")
st.caption(
    "v1 scores a bet's size as its confidence "
    f"([methodology §11]({ui.doc_link('methodology', '11-scoring')})): "
    "implied confidence = amount / (25% of cash), "
    "Brier = (confidence − outcome)², lower is better. The market's price for the side bought "
    "is scored on the same bets as a reference forecaster; skill vs market = family Brier − "
    "market Brier (negative: better than the market). Intervals: 95% cluster bootstrap. "
    f"Families with fewer than {DEFAULT_MIN_RESOLVED} resolved bets are greyed (too early)."
)

numbers = ui.read(cohort_numbers)
if not numbers:
    ui.empty("No cohort yet: run `arena start-cohort` or `make demo`.")
    st.stop()
left, right = st.columns(2)
cohort = ui.select_link(
    "Cohort",
    "cohort",
    numbers,
    format_func=lambda n: "All cohorts" if n == ui.ALL else f"Cohort {n}",
    container=left,
)
summary, stored = ui.read(current_or_live, "calibration_summary", cohort=cohort)
if summary.empty:
    ui.empty(NO_BRIER)
    st.stop()
ui.stored_caption(stored)
families = [str(f) for f in summary["family_id"]]
family = ui.select_link(
    "Family (reliability against the market's price)",
    "family",
    families,
    container=right,
    format_func=lambda f: "All families" if f == ui.ALL else f,
)

st.subheader("Brier per family")
ui.table(
    summary,
    key="calibration-summary",
    reference=summary["kind"] == "baseline",
    grey=summary["resolved_bets"] < DEFAULT_MIN_RESOLVED,
    formats=FORMATS,
)
ui.download_csv(summary, "calibration-summary")

ui.chart(charts.brier_intervals(summary))

st.subheader("Reliability diagram")
implied, _ = ui.read(current_or_live, "reliability", cohort=cohort)
market, _ = ui.read(current_or_live, "reliability_market", cohort=cohort)
diagram = charts.reliability_points(implied, market, family)
ui.chart(charts.reliability_diagram(diagram, by_forecaster=family is not None))
st.caption(
    "Equal-width bins of the forecast; point size and label = bets in the bin (a bin of 3 "
    "says little). "
    + (
        f"{family}: its implied confidence against the market's price on the same bets."
        if family is not None
        else "Pick a family above to compare it with the market's price on the same bets."
    )
)
ui.download_csv(diagram, "reliability")

st.subheader("Brier over time")
over_time, _ = ui.read(current_or_live, "brier_over_time", cohort=cohort)
if over_time.empty:
    st.text("No resolved bet yet.")
else:
    shown = over_time if family is None else over_time[over_time["family_id"] == family]
    ui.chart(charts.brier_over_time(shown, with_market=family is not None))
    ui.download_csv(shown, "brier-over-time")
