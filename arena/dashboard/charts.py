"""Every Altair chart the dashboard draws, one named function each, beside the read models.

A chart function takes a read model's DataFrame (as `arena.analytics` returns it, or as the
page filtered it for its table and CSV) and a few parameters, and returns the chart spec; the
page only shows it (``st.altair_chart(chart, width="stretch")``). Nothing here reads the
database or touches Streamlit, so each spec can be built and checked (``chart.to_dict()``) in a
unit test, empty frames included.

Shared interaction: where there are several series, clicking a legend entry isolates one
(`_legend_pick`); time axes pan on drag and zoom on the wheel (`_zoom_x`, double-click resets).
"""

from typing import Literal

import altair as alt
import pandas as pd

from arena.analytics.stats.calibration import MARKET_SERIES

# Series not picked in the legend fade to this opacity.
FADED = 0.12


def _legend_pick(field: str) -> alt.Parameter:
    """A point selection on `field`, bound to the legend (click an entry to isolate it)."""
    return alt.selection_point(fields=[field], bind="legend")


def _zoom_x() -> alt.Parameter:
    """An interval selection bound to the x scale: drag to pan, wheel to zoom."""
    return alt.selection_interval(bind="scales", encodings=["x"])


# --------------------------------------------------------------------------------------------
# Portfolio curves (Leaderboard, Cohorts, Family, Agent): arena.analytics.views.curves

# Families get distinct hues (category10 without its grey, which would read as a baseline);
# baselines (and the oracle) are greys, so the eye goes to the models first.
FAMILY_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#17becf",
)
# Neighbours in the list differ most: the baselines sit next to each other in the legend.
BASELINE_GREYS = ("#4d4d4d", "#a3a3a3", "#737373", "#c4c4c4", "#5e5e5e")
MONEY_FIELDS = ("total_value", "total_pnl")
REFERENCE_COLOR = "#5b6472"  # the break-even rule and its label
DECISION_COLOR = "#9aa4b2"  # decision-run rules
DECISION_MARK = "#6b7585"  # and the triangles on top of them (hover for the cohorts)


def family_order(frame: pd.DataFrame) -> list[str]:
    """The display names of a frame's families: LLM families by name, then baselines by name
    (the legend's and the tooltip's order)."""
    kinds = frame.drop_duplicates("display_name").set_index("display_name")["kind"]
    llms = sorted(str(name) for name, kind in kinds.items() if kind != "baseline")
    return llms + sorted(str(name) for name, kind in kinds.items() if kind == "baseline")


def family_color_scale(frame: pd.DataFrame) -> alt.Scale:
    """A colour per display name (`family_order`): LLM families in distinct hues, baselines
    in greys."""
    order = family_order(frame)
    llms = set(frame.loc[frame["kind"] != "baseline", "display_name"].astype(str))
    colors, hue, grey = [], 0, 0
    for name in order:
        if name in llms:
            colors.append(FAMILY_COLORS[hue % len(FAMILY_COLORS)])
            hue += 1
        else:
            colors.append(BASELINE_GREYS[grey % len(BASELINE_GREYS)])
            grey += 1
    return alt.Scale(domain=order, range=colors)


def _vega_field(name: str) -> str:
    """`name` as a Vega-Lite field name: dots and brackets would be read as nested access."""
    for char in ("\\", ".", "[", "]"):
        name = name.replace(char, "\\" + char)
    return name


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
    pick = _legend_pick("display_name")
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
        .add_params(pick, _zoom_x())
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
                        field=_vega_field(name),
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


# --------------------------------------------------------------------------------------------
# Calibration: arena.analytics.stats.calibration (calibration_summary, reliability, brier_over_time)


def brier_intervals(summary: pd.DataFrame) -> alt.LayerChart:
    """Each family's Brier and the market price's on the same bets, with 95% intervals."""
    ci = ["brier", "brier_ci_low", "brier_ci_high"]
    long = pd.concat(
        [
            summary[["family_id", *ci]].assign(forecaster="family (implied confidence)"),
            summary[["family_id", "market_brier", "market_brier_ci_low", "market_brier_ci_high"]]
            .set_axis(["family_id", *ci], axis=1)
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
    return (bars + points).properties(height=70 + 45 * len(summary))


def reliability_points(
    implied: pd.DataFrame, market: pd.DataFrame, family: str | None
) -> pd.DataFrame:
    """The reliability diagram's non-empty bins (what it plots and its CSV offers): every
    family's implied confidence, or with `family` that family's against the market price."""
    points = pd.concat(
        [implied.assign(forecaster="implied confidence"), market.assign(forecaster="market price")],
        ignore_index=True,
    )
    if family is not None:
        points = points[points["family_id"] == family]
    else:
        points = points[points["forecaster"] == "implied confidence"]
    return points[points["count"] > 0].reset_index(drop=True)


def reliability_diagram(points: pd.DataFrame, *, by_forecaster: bool) -> alt.LayerChart:
    """Observed win rate against forecast per bin, sized and labelled by bets, over the
    diagonal; one series per family, or per forecaster (`by_forecaster`, one family)."""
    diagonal = (
        alt.Chart(pd.DataFrame({"x": [0.0, 1.0], "y": [0.0, 1.0]}))
        .mark_line(color="#9aa4b2", strokeDash=[4, 4])
        .encode(x="x:Q", y="y:Q")
    )
    series = "forecaster" if by_forecaster else "family_id"
    pick = _legend_pick(series)
    encoding = {
        "x": alt.X("mean_forecast:Q", title="Forecast (bin mean)", scale=alt.Scale(domain=[0, 1])),
        "y": alt.Y("observed_rate:Q", title="Observed win rate", scale=alt.Scale(domain=[0, 1])),
        "color": alt.Color(f"{series}:N", title="Forecaster" if by_forecaster else "Family"),
        "opacity": alt.condition(pick, alt.value(1.0), alt.value(FADED)),
    }
    lines = alt.Chart(points).mark_line(strokeWidth=1.5).encode(**encoding).add_params(pick)
    dots = (
        alt.Chart(points)
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
        alt.Chart(points)
        .mark_text(dy=-12, fontSize=10)
        .encode(
            x="mean_forecast:Q",
            y="observed_rate:Q",
            text="count:Q",
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.0)),
        )
    )
    return (diagonal + lines + dots + labels).properties(height=420)


def brier_over_time(frame: pd.DataFrame, *, with_market: bool) -> alt.Chart:
    """Cumulative Brier per family by date, and with `with_market` the market price's
    cumulative Brier on the same bets as a second (dashed) line."""
    lines = pd.concat(
        [
            frame[["family_id", "date", "cumulative_brier", "resolved_bets"]].assign(
                forecaster="family"
            ),
            frame[["family_id", "date", "cumulative_market_brier", "resolved_bets"]]
            .rename(columns={"cumulative_market_brier": "cumulative_brier"})
            .assign(forecaster="market price"),
        ],
        ignore_index=True,
    )
    if not with_market:
        lines = lines[lines["forecaster"] == "family"]
    lines = lines.assign(date=pd.to_datetime(lines["date"]))
    pick = _legend_pick("family_id")
    return (
        alt.Chart(lines)
        .mark_line(point=True, interpolate="step-after")
        .encode(
            x=alt.X("date:T", title="Date (UTC)", axis=alt.Axis(format="%b %d", labelAngle=0)),
            y=alt.Y("cumulative_brier:Q", title="Cumulative Brier", scale=alt.Scale(zero=True)),
            color=alt.Color("family_id:N", title="Family"),
            strokeDash=alt.StrokeDash("forecaster:N", title="Forecaster"),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(FADED)),
            tooltip=[
                "family_id:N",
                "forecaster:N",
                "date:T",
                "resolved_bets:Q",
                alt.Tooltip("cumulative_brier:Q", format=".3f"),
            ],
        )
        .add_params(pick, _zoom_x())
        .properties(height=320)
    )


# --------------------------------------------------------------------------------------------
# Markets: arena.analytics.views.markets.price_path


def price_path(path: pd.DataFrame) -> alt.Chart:
    """A market's recorded price per outcome over time, shaped by who recorded each point."""
    pick = _legend_pick("outcome")
    return (
        alt.Chart(path)
        .mark_line(point=True, interpolate="step-after")
        .encode(
            x=alt.X(
                "at:T",
                title="Time (UTC)",
                scale=alt.Scale(type="utc"),
                axis=alt.Axis(format="%b %d %H:%M", labelAngle=0),
            ),
            y=alt.Y("price:Q", title="Price", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("outcome:N", title="Outcome"),
            shape=alt.Shape("source:N", title="Recorded by"),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15)),
            tooltip=[
                "outcome:N",
                alt.Tooltip("at:T", format="%Y-%m-%d %H:%M"),
                "price:Q",
                "source:N",
                "snapshot_id:Q",
            ],
        )
        .add_params(pick, _zoom_x())
        .properties(height=300)
    )


# --------------------------------------------------------------------------------------------
# Operations: arena.analytics.views.operations.api_spend


def api_spend_by_week(by_week: pd.DataFrame) -> alt.Chart:
    """API cost per decision week, stacked by family."""
    return (
        alt.Chart(by_week)
        .mark_bar()
        .encode(
            x=alt.X("yearmonthdate(week_start):O", title="Week starting (UTC)"),
            y=alt.Y("sum(cost_usd):Q", title="API cost, $"),
            color=alt.Color("family_id:N", title="Family"),
            tooltip=[
                "family_id:N",
                "week_start:T",
                "decisions:Q",
                alt.Tooltip("cost_usd:Q", format="$.4f"),
            ],
        )
        .properties(height=260)
    )


# --------------------------------------------------------------------------------------------
# Calibration: arena.analytics.stats.calibration.reliability_diagram (families compared, Wilson
# intervals, bins under the minimum count left out by the page)

MARKET_GREY = "#6b7280"
SERIES_COLORS = ["#1f77b4", "#e45756", "#54a24b", "#b279a2", "#f58518", "#4c78a8"]


def reliability_intervals(points: pd.DataFrame, series: list[str] | None = None) -> alt.LayerChart:
    """Observed win rate against forecast per bin with its 95% Wilson interval (error bar)
    and the bets in the bin written beside it, over the diagonal; one colour per family, the
    market's price on the same bets in grey (dashed). `points`: the bins to draw; `series`:
    every series compared, in order (so a family keeps its colour, and its legend entry, when
    none of its bins is drawn), else those in `points`."""
    names = series or [str(s) for s in dict.fromkeys(points["series"])]
    families = [name for name in names if name != MARKET_SERIES]
    colors = [SERIES_COLORS[i % len(SERIES_COLORS)] for i in range(len(families))]
    color = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(domain=[*families, MARKET_SERIES], range=[*colors, MARKET_GREY]),
        legend=alt.Legend(orient="bottom", labelLimit=400, symbolStrokeWidth=3),
    )
    unit = alt.Scale(domain=[0, 1], nice=False)
    x = alt.X("mean_forecast:Q", title="Forecast (mean of the bin)", scale=unit)
    pick = _legend_pick("series")
    opacity = alt.condition(pick, alt.value(1.0), alt.value(FADED))
    tooltip = [
        alt.Tooltip("series:N", title="Forecaster"),
        alt.Tooltip("bin_text:N", title="Bin"),
        alt.Tooltip("count:Q", title="Bets"),
        alt.Tooltip("wins:Q", title="Won"),
        alt.Tooltip("mean_forecast:Q", title="Mean forecast", format=".3f"),
        alt.Tooltip("observed_rate:Q", title="Observed win rate", format=".3f"),
        alt.Tooltip("ci_low:Q", title="95% low (Wilson)", format=".3f"),
        alt.Tooltip("ci_high:Q", title="95% high (Wilson)", format=".3f"),
    ]
    base = alt.Chart(points).transform_calculate(
        bin_text="format(datum.bin_low, '.1f') + '–' + format(datum.bin_high, '.1f')"
    )
    diagonal = (
        alt.Chart(pd.DataFrame({"x": [0.0, 1.0], "y": [0.0, 1.0]}))
        .mark_line(color="#9aa4b2", strokeDash=[4, 4])
        .encode(x=alt.X("x:Q", scale=unit), y=alt.Y("y:Q", scale=unit))
    )
    dash = alt.StrokeDash(
        "forecaster:N",
        scale=alt.Scale(domain=["implied confidence", "market price"], range=[[1, 0], [5, 4]]),
        legend=None,
    )
    lines = base.mark_line(strokeWidth=1.5).encode(
        x=x, y="observed_rate:Q", color=color, strokeDash=dash, detail="series:N", opacity=opacity
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=x, y="ci_low:Q", y2="ci_high:Q", color=color, opacity=opacity, tooltip=tooltip
    )
    dots = (
        base.mark_point(filled=True, size=80)
        .encode(
            x=x,
            y=alt.Y("observed_rate:Q", title="Observed win rate (95% Wilson interval)", scale=unit),
            color=color,
            shape=alt.Shape(
                "forecaster:N",
                scale=alt.Scale(
                    domain=["implied confidence", "market price"], range=["circle", "diamond"]
                ),
                legend=None,
            ),
            opacity=opacity,
            tooltip=tooltip,
        )
        .add_params(pick)
    )
    labels = base.mark_text(dx=9, dy=-8, fontSize=11, align="left").encode(
        x=x,
        y="observed_rate:Q",
        text=alt.Text("count:Q", format=","),
        color=color,
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.0)),
    )
    return (diagonal + lines + bars + dots + labels).properties(height=460)


# --------------------------------------------------------------------------------------------
# Cost (Leaderboard): arena.analytics.stats.cost.cost_frame

FRONT_COLOR = "#1f2937"  # the Pareto front's step line and the rings of its points
COST_HEIGHT = 420
LABEL_GAP_PX = 15  # labels closer than this (vertically, near in x) are moved apart
LABEL_NEAR_X = 0.14  # "near in x": within this share of the x range
LABEL_RIGHT = 0.7  # labels of points beyond this share of the x range sit left of them
# A name's alignment (`label_align`) and its offset from the point, in px.
LABEL_SIDES: tuple[tuple[Literal["left", "right"], int], ...] = (("left", 13), ("right", -13))


def cost_labels(drawn: pd.DataFrame, height: int = COST_HEIGHT) -> pd.DataFrame:
    """`drawn` with where each family's name is written: ``label_y`` (in skill units) moved
    down from its point, a line at a time, while it would overlap a label already placed
    near it (Vega-Lite places text without avoiding collisions, and baselines share $0), and
    ``label_align`` ("right": written left of the point, for points near the right edge, so
    names are never cut; else "left")."""
    if drawn.empty:
        return drawn.assign(label_y=pd.Series(dtype="float64"), label_align=pd.Series(dtype=str))
    ends = drawn[["skill_vs_market", "skill_vs_market_ci_low", "skill_vs_market_ci_high"]]
    skills = [0.0, *(float(v) for v in ends.to_numpy().ravel() if pd.notna(v))]
    unit = (max(skills) - min(skills) or 1.0) / height * LABEL_GAP_PX  # one label's height
    widest = float(drawn["cost_per_decision"].max()) or 1.0
    placed: list[tuple[float, float]] = []
    label_y: dict[object, float] = {}
    for index, row in drawn.sort_values(["cost_per_decision", "skill_vs_market"]).iterrows():
        at, cost = float(row["skill_vs_market"]), float(row["cost_per_decision"])
        while any(abs(cost - x) <= LABEL_NEAR_X * widest and abs(at - y) < unit for x, y in placed):
            at += unit  # down the reversed axis: the name moves below its neighbour's
        placed.append((cost, at))
        label_y[index] = at
    right = drawn["cost_per_decision"] > LABEL_RIGHT * widest
    return drawn.assign(
        label_y=pd.Series(label_y), label_align=["right" if r else "left" for r in right]
    )


def cost_pareto(frame: pd.DataFrame) -> alt.LayerChart:
    """Skill against the market (95% interval as an error bar) by API cost per decision, one
    point per family with both numbers, named beside it (`cost_labels`), the Pareto front
    (`pareto`) as a step line through ringed points, and the market's own skill (0) as a
    dashed rule (unlabelled: the page's caption names it).

    The y axis runs upward to better skill (more negative Brier difference), so the front is
    the upper-left edge. Baselines spend nothing: grey points at $0, never on the front.
    """
    drawn = frame[frame["skill_vs_market"].notna() & frame["cost_per_decision"].notna()].assign(
        front=lambda f: ["on the front" if on else "off the front" for on in f["pareto"]]
    )
    drawn = cost_labels(drawn.reset_index(drop=True))
    on_front = drawn[drawn["pareto"]].sort_values("cost_per_decision", kind="stable")
    x = alt.X(
        "cost_per_decision:Q",
        title="API cost per decision, $",
        axis=alt.Axis(format="$,.4~f", labelOverlap=True, tickCount=8),
        scale=alt.Scale(zero=True, nice=True),
    )

    def y(field: str) -> alt.Y:
        """The shared skill axis (every layer gives the same title, so none is appended)."""
        return alt.Y(
            f"{field}:Q",
            title="Skill vs market, 95% CI (up is better)",
            axis=alt.Axis(format="+.2~f"),
            scale=alt.Scale(reverse=True, zero=True, nice=True),
        )

    color = alt.Color("display_name:N", scale=family_color_scale(drawn), legend=None)
    tooltip = [
        alt.Tooltip("display_name:N", title="Family"),
        alt.Tooltip("cost_per_decision:Q", title="Cost per decision", format="$,.4f"),
        alt.Tooltip("api_cost_usd:Q", title="API spend", format="$,.2f"),
        alt.Tooltip("skill_vs_market:Q", title="Skill vs market", format="+.3f"),
        alt.Tooltip("skill_vs_market_ci_low:Q", title="95% low", format="+.3f"),
        alt.Tooltip("skill_vs_market_ci_high:Q", title="95% high", format="+.3f"),
        alt.Tooltip("resolved_bets:Q", title="Resolved bets", format=","),
        alt.Tooltip("front:N", title="Pareto"),
    ]
    # Unlabelled (the page's caption names it): a label on the rule would sit on the points
    # near 0 at one end or the other.
    market = (
        alt.Chart(pd.DataFrame({"skill_vs_market": [0.0]}))
        .mark_rule(color=REFERENCE_COLOR, strokeDash=[6, 4], strokeWidth=1.2)
        .encode(y=y("skill_vs_market"))
    )
    front = (
        alt.Chart(on_front)
        .mark_line(interpolate="step-after", color=FRONT_COLOR, strokeWidth=1.5, opacity=0.7)
        .encode(x=x, y=y("skill_vs_market"), order="cost_per_decision:Q")
    )
    rings = (
        alt.Chart(on_front)
        .mark_point(shape="circle", size=260, color=FRONT_COLOR, strokeWidth=1.5)
        .encode(x=x, y=y("skill_vs_market"))
    )
    base = alt.Chart(drawn).encode(x=x, color=color, tooltip=tooltip)
    bars = base.mark_rule(strokeWidth=2, opacity=0.8).encode(
        y=y("skill_vs_market_ci_low"), y2="skill_vs_market_ci_high:Q"
    )
    points = base.mark_point(filled=True, size=90, opacity=1).encode(y=y("skill_vs_market"))
    labels = [
        alt.Chart(drawn[drawn["label_align"] == align])
        .mark_text(align=align, baseline="middle", dx=dx, fontSize=12)
        .encode(x=x, y=y("label_y"), text="display_name:N", color=color)
        for align, dx in LABEL_SIDES
    ]
    return alt.LayerChart(layer=[market, front, bars, rings, points, *labels], height=COST_HEIGHT)


# --------------------------------------------------------------------------------------------
# Stated probability (protocol extension): arena.analytics.stats.stated (stated_probability)

STATED_FORECASTERS = (
    ("stated_brier", "stated probability"),
    ("implied_brier", "implied confidence (v1)"),
    ("market_brier", "market price"),
)


def stated_brier_intervals(figures: pd.DataFrame) -> alt.LayerChart:
    """Per family, on the same resolved bets: the Brier of the stated probability, of v1's
    implied confidence and of the market price, each with its 95% interval. `figures` is the
    read model's frame with ``family_id`` holding what the axis shows (display names)."""
    parts = [
        figures[["family_id", name, f"{name}_ci_low", f"{name}_ci_high"]]
        .set_axis(["family_id", "brier", "brier_ci_low", "brier_ci_high"], axis=1)
        .assign(forecaster=label)
        for name, label in STATED_FORECASTERS
    ]
    long = pd.concat(parts, ignore_index=True)
    long = long[long["brier"].notna()]
    order = [label for _, label in STATED_FORECASTERS]
    base = alt.Chart(long).encode(
        y=alt.Y("family_id:N", title=None),
        yOffset=alt.YOffset("forecaster:N", sort=order),
        color=alt.Color(
            "forecaster:N",
            title="Forecast scored",
            sort=order,
            legend=alt.Legend(orient="bottom"),
        ),
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("brier_ci_low:Q", title="Brier (95% interval)", scale=alt.Scale(domain=[0, 1])),
        x2="brier_ci_high:Q",
    )
    points = base.mark_point(filled=True, size=70).encode(
        x="brier:Q",
        tooltip=[
            alt.Tooltip("family_id:N", title="family"),
            "forecaster:N",
            alt.Tooltip("brier:Q", format=".3f"),
            alt.Tooltip("brier_ci_low:Q", format=".3f", title="95% low"),
            alt.Tooltip("brier_ci_high:Q", format=".3f", title="95% high"),
        ],
    )
    families = long["family_id"].nunique()
    return (bars + points).properties(height=70 + 60 * families)


# --------------------------------------------------------------------------------------------
# Replicates (ARENA_REPLICATES): arena.analytics.stats.replicates (replicate_agents,
# replicate_analysis)

POOLED_COLOR = "#1f2937"  # the pooled return's bar across a family's replicate dots


def replicate_returns(
    agents: pd.DataFrame, families: pd.DataFrame, domain: tuple[float, float] | None = None
) -> alt.LayerChart:
    """Each family's replicates as dots at their return, one sub-row per cohort with a thin
    line from its lowest to its highest replicate there (the within-cohort spread the tables
    measure), and the family's pooled return as a bar across its row; families top to bottom
    in the order of `families` (best pooled return first), a dashed rule at break-even.
    `agents`: `replicate_agents` rows; `families`: the per-family frame (``display_name``,
    ``kind``, ``pooled_return_pct``). `domain`: the return axis's range (%), marks beyond it
    clipped (a zoom past an outlier such as the oracle); None fits every mark."""
    order = [str(name) for name in families["display_name"]]
    cohorts = int(agents["cohort_number"].nunique()) if len(agents) else 1
    band = min(120, 22 + 6 * cohorts)  # px per family: a sub-row per cohort
    y = alt.Y("display_name:N", title=None, sort=order, axis=alt.Axis(labelLimit=220))
    offset = alt.YOffset("cohort_number:O", title="cohort")
    scale = alt.Scale(domain=list(domain), nice=False) if domain else alt.Scale(zero=True)
    x = alt.X("return_pct:Q", title="Return (%)", scale=scale)
    colors = family_color_scale(families) if len(families) else alt.Scale()
    color = alt.Color("display_name:N", scale=colors, legend=None)
    clip = domain is not None
    spans = (
        agents.groupby(["display_name", "kind", "cohort_number"], as_index=False)["return_pct"]
        .agg(low="min", high="max")
        .astype({"display_name": "string", "kind": "string"})
    )
    lines = (
        alt.Chart(spans)
        .mark_rule(strokeWidth=1.5, opacity=0.55, clip=clip)
        .encode(
            y=y,
            yOffset=offset,
            x=alt.X("low:Q", scale=scale),
            x2="high:Q",
            color=color,
        )
    )
    dots = (
        alt.Chart(agents)
        .mark_circle(size=60, opacity=0.8, clip=clip)
        .encode(
            y=y,
            yOffset=offset,
            x=x,
            color=color,
            tooltip=[
                alt.Tooltip("display_name:N", title="family"),
                alt.Tooltip("cohort_number:Q", title="cohort"),
                alt.Tooltip("replicate:Q", title="replicate"),
                alt.Tooltip("return_pct:Q", format="+.2f", title="return (%)"),
                alt.Tooltip("pnl:Q", format="+,.2f", title="P/L ($)"),
            ],
        )
    )
    pooled = (
        alt.Chart(families)
        .mark_tick(thickness=3, size=band - 6, color=POOLED_COLOR, clip=clip)
        .encode(
            y=y,
            x=alt.X("pooled_return_pct:Q", scale=scale),
            tooltip=[
                alt.Tooltip("display_name:N", title="family"),
                alt.Tooltip("pooled_return_pct:Q", format="+.2f", title="pooled return (%)"),
            ],
        )
    )
    zero = (
        alt.Chart(pd.DataFrame({"x": [0.0]}))
        .mark_rule(color=REFERENCE_COLOR, strokeDash=[4, 3])
        .encode(x=alt.X("x:Q", scale=scale))
    )
    return (zero + lines + dots + pooled).properties(height=30 + band * max(len(order), 1))
