"""Calibration: is a family's v1 implied confidence a probability? Reliability with counts,
Brier per family with 95% intervals, Brier over time, and the market's own price for the side
bought as a reference forecaster on the very same bets."""

import altair as alt
import pandas as pd
import streamlit as st

from arena.analytics.cohorts import cohort_numbers
from arena.analytics.leaderboard import DEFAULT_MIN_RESOLVED
from arena.analytics.stored import current_or_live
from arena.dashboard import ui

ui.entry_guard()

NO_BRIER = (
    "No resolved bet yet: Brier rows appear when a market an agent bought into resolves "
    "(`arena resolve`, hourly in the scheduler). `make demo` builds a season that has them."
)
FORMATS = {
    column: ui.prob
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
    "v1 scores a bet's size as its confidence: implied confidence = amount / (25% of cash), "
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

long = pd.concat(
    [
        summary[["family_id", "brier", "brier_ci_low", "brier_ci_high"]].assign(
            forecaster="family (implied confidence)"
        ),
        summary[["family_id", "market_brier", "market_brier_ci_low", "market_brier_ci_high"]]
        .set_axis(["family_id", "brier", "brier_ci_low", "brier_ci_high"], axis=1)
        .assign(forecaster="market price, same bets"),
    ],
    ignore_index=True,
)
base = alt.Chart(long).encode(
    y=alt.Y("family_id:N", title=None),
    yOffset=alt.YOffset("forecaster:N"),
    color=alt.Color("forecaster:N", title="Forecaster", legend=alt.Legend(orient="bottom")),
)
bars = base.mark_rule(strokeWidth=2).encode(
    x=alt.X("brier_ci_low:Q", title="Brier (95% interval)", scale=alt.Scale(domain=[0, 1])),
    x2="brier_ci_high:Q",
)
points = base.mark_point(filled=True, size=70).encode(
    x="brier:Q",
    tooltip=[
        "family_id:N",
        "forecaster:N",
        alt.Tooltip("brier:Q", format=".3f"),
        alt.Tooltip("brier_ci_low:Q", format=".3f"),
        alt.Tooltip("brier_ci_high:Q", format=".3f"),
    ],
)
st.altair_chart((bars + points).properties(height=70 + 45 * len(summary)), width="stretch")

st.subheader("Reliability diagram")
implied, _ = ui.read(current_or_live, "reliability", cohort=cohort)
market, _ = ui.read(current_or_live, "reliability_market", cohort=cohort)
diagram = pd.concat(
    [implied.assign(forecaster="implied confidence"), market.assign(forecaster="market price")],
    ignore_index=True,
)
if family is not None:
    diagram = diagram[diagram["family_id"] == family]
else:
    diagram = diagram[diagram["forecaster"] == "implied confidence"]
diagram = diagram[diagram["count"] > 0].reset_index(drop=True)
diagonal = (
    alt.Chart(pd.DataFrame({"x": [0.0, 1.0], "y": [0.0, 1.0]}))
    .mark_line(color="#9aa4b2", strokeDash=[4, 4])
    .encode(x="x:Q", y="y:Q")
)
series = "forecaster" if family is not None else "family_id"
pick = alt.selection_point(fields=[series], bind="legend")
encoding = {
    "x": alt.X("mean_forecast:Q", title="Forecast (bin mean)", scale=alt.Scale(domain=[0, 1])),
    "y": alt.Y("observed_rate:Q", title="Observed win rate", scale=alt.Scale(domain=[0, 1])),
    "color": alt.Color(f"{series}:N", title="Family" if family is None else "Forecaster"),
    "opacity": alt.condition(pick, alt.value(1.0), alt.value(0.12)),
}
lines = alt.Chart(diagram).mark_line(strokeWidth=1.5).encode(**encoding).add_params(pick)
dots = (
    alt.Chart(diagram)
    .mark_circle()
    .encode(
        **encoding,
        size=alt.Size("count:Q", title="Bets in bin", scale=alt.Scale(range=[40, 600])),
        tooltip=[
            "family_id:N",
            "forecaster:N",
            "bin_low:Q",
            "bin_high:Q",
            "count:Q",
            alt.Tooltip("mean_forecast:Q", format=".3f"),
            alt.Tooltip("observed_rate:Q", format=".3f"),
        ],
    )
)
labels = (
    alt.Chart(diagram)
    .mark_text(dy=-12, fontSize=10)
    .encode(
        x="mean_forecast:Q",
        y="observed_rate:Q",
        text="count:Q",
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.0)),
    )
)
st.altair_chart((diagonal + lines + dots + labels).properties(height=420), width="stretch")
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
    lines = pd.concat(
        [
            shown[["family_id", "date", "cumulative_brier", "resolved_bets"]].assign(
                forecaster="family"
            ),
            shown[["family_id", "date", "cumulative_market_brier", "resolved_bets"]]
            .rename(columns={"cumulative_market_brier": "cumulative_brier"})
            .assign(forecaster="market price"),
        ],
        ignore_index=True,
    )
    if family is None:
        lines = lines[lines["forecaster"] == "family"]
    lines["date"] = pd.to_datetime(lines["date"])
    pick_family = alt.selection_point(fields=["family_id"], bind="legend")
    chart = (
        alt.Chart(lines)
        .mark_line(point=True, interpolate="step-after")
        .encode(
            x=alt.X("date:T", title="Date (UTC)", axis=alt.Axis(format="%b %d", labelAngle=0)),
            y=alt.Y("cumulative_brier:Q", title="Cumulative Brier", scale=alt.Scale(zero=True)),
            color=alt.Color("family_id:N", title="Family"),
            strokeDash=alt.StrokeDash("forecaster:N", title="Forecaster"),
            opacity=alt.condition(pick_family, alt.value(1.0), alt.value(0.12)),
            tooltip=[
                "family_id:N",
                "forecaster:N",
                "date:T",
                "resolved_bets:Q",
                alt.Tooltip("cumulative_brier:Q", format=".3f"),
            ],
        )
        .add_params(pick_family, alt.selection_interval(bind="scales", encodings=["x"]))
        .properties(height=320)
    )
    st.altair_chart(chart, width="stretch")
    ui.download_csv(shown, "brier-over-time")
