"""Portfolio curves (Leaderboard, Cohorts, Family, Agent): arena.analytics.views.curves."""

import altair as alt
import pandas as pd

from arena.dashboard.charts.style import (
    FADED,
    REFERENCE_COLOR,
    family_color_scale,
    family_order,
    legend_pick,
    vega_field,
    zoom_x,
)

MONEY_FIELDS = ("total_value", "total_pnl")
DECISION_COLOR = "#9aa4b2"  # decision-run rules
DECISION_MARK = "#6b7585"  # and the triangles on top of them (hover for the cohorts)


def portfolio_curves(
    frame: pd.DataFrame,
    field: str,
    title: str,
    *,
    break_even: float | None = None,
    decisions: pd.DataFrame | None = None,
    height: int = 460,
) -> alt.LayerChart:
    """Portfolio value, P/L or return per family over time (`field` of a `portfolio_curves`
    frame), with what a reader needs to read it:

    - solid lines, one hue per LLM family, baselines in greys (`family_color_scale`); the
      legend sits under the chart in columns, names never cut (click one to isolate it);
    - a dashed reference rule at `break_even` (the starting capital, or 0 for P/L and
      return), labelled;
    - a thin vertical mark at each decision run of `decisions` (`curves.decision_runs`),
      its cohorts and weeks in the tooltip;
    - hovering anywhere picks the nearest time: a rule there, a dot on every line, and one
      tooltip with every family's value at that time;
    - y ticks as money ($10,000) or signed percent (+2.5%), never raw floats.
    """
    money = field in MONEY_FIELDS
    value_format = "$,.2f" if money else "+.2f"
    axis = (
        alt.Axis(format="$,.0f")
        if money
        else alt.Axis(format="+.1~f", labelExpr="datum.label + '%'")
    )
    pick = legend_pick("display_name")
    hover = alt.selection_point(
        name="hover", fields=["at"], nearest=True, on="pointerover", clear="pointerout", empty=False
    )
    x = alt.X(
        "at:T",
        title="Time (UTC)",
        scale=alt.Scale(type="utc"),
        axis=alt.Axis(labelAngle=0, labelOverlap=True),
    )
    color = alt.Color(
        "display_name:N",
        title="Family (click to isolate)",
        scale=family_color_scale(frame),
        legend=alt.Legend(
            orient="bottom",
            columns=4,
            labelLimit=320,
            symbolType="stroke",
            symbolStrokeWidth=3,
            titleLimit=400,
        ),
    )
    y = alt.Y(f"{field}:Q", title=title, axis=axis, scale=alt.Scale(zero=False))
    base = alt.Chart(frame).encode(x=x, y=y, color=color)
    lines = (
        base.mark_line(interpolate="step-after")
        .encode(
            strokeWidth=alt.StrokeWidth(
                "kind:N",
                scale=alt.Scale(domain=["llm", "baseline"], range=[2.2, 1.5]),
                legend=None,
            ),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(FADED)),
        )
        .add_params(pick, zoom_x())
    )
    dots = base.mark_point(filled=True, size=55).encode(
        opacity=alt.condition(hover, alt.value(1.0), alt.value(0.0))
    )
    names = family_order(frame)
    shown = alt.Chart(frame).transform_pivot("display_name", value=field, groupby=["at"])
    hover_rule = (
        shown.mark_rule(color="#7a8291")
        .encode(
            x="at:T",
            opacity=alt.condition(hover, alt.value(0.6), alt.value(0.0)),
            tooltip=[
                alt.Tooltip("at:T", title="Time (UTC)", format="%Y-%m-%d %H:%M"),
                *[
                    alt.Tooltip(
                        field=vega_field(name),
                        type="quantitative",
                        title=name,
                        format=value_format,
                    )
                    for name in names
                ],
            ],
        )
        .add_params(hover)
    )
    layers: list[alt.Chart] = []
    if decisions is not None:
        runs = alt.Chart(decisions)
        layers.append(
            runs.mark_rule(color=DECISION_COLOR, strokeWidth=1, opacity=0.7).encode(x="at:T")
        )
    if break_even is not None:
        label = "break-even " + (f"${break_even:,.0f}" if money else "0")
        reference = alt.Chart(
            pd.DataFrame({"y": [break_even], "at": [frame["at"].max()], "label": [label]})
        )
        layers.append(
            reference.mark_rule(color=REFERENCE_COLOR, strokeDash=[6, 4], strokeWidth=1.2).encode(
                y="y:Q"
            )
        )
        if not frame.empty:  # labelled at the right end, where the lines arrive
            layers.append(
                reference.mark_text(
                    align="right", baseline="bottom", dy=-3, color=REFERENCE_COLOR, fontSize=11
                ).encode(x="at:T", y="y:Q", text="label:N")
            )
    layers += [lines, dots, hover_rule]
    if decisions is not None:
        layers.append(
            alt.Chart(decisions)
            .mark_point(shape="triangle-down", filled=True, size=120, color=DECISION_MARK)
            .encode(
                x="at:T",
                y=alt.value(0),
                tooltip=[
                    alt.Tooltip("at:T", title="Decision run (UTC)", format="%Y-%m-%d %H:%M"),
                    alt.Tooltip("runs:N", title="Decided"),
                    alt.Tooltip("decisions:Q", title="Decisions"),
                ],
            )
        )
    return alt.LayerChart(layer=layers, height=height)
