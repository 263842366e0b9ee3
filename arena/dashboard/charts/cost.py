"""What skill costs: the edge over the market by API cost per decision and the Pareto front
(Leaderboard, arena.analytics.stats.cost.cost_frame); API spend per week (Operations,
arena.analytics.views.operations.api_spend)."""

from typing import Literal

import altair as alt
import pandas as pd

from arena.dashboard.charts.style import REFERENCE_COLOR, family_color_scale

FRONT_COLOR = "#1f2937"  # the Pareto front's step line and the rings of its points
COST_HEIGHT = 420
LABEL_GAP_PX = 15  # labels closer than this (vertically, near in x) are moved apart
LABEL_NEAR_X = 0.14  # "near in x": within this share of the x range
LABEL_RIGHT = 0.7  # labels of points beyond this share of the x range sit left of them
# A name's alignment (`label_align`) and its offset from the point, in px.
LABEL_SIDES: tuple[tuple[Literal["left", "right"], int], ...] = (("left", 13), ("right", -13))


def cost_labels(drawn: pd.DataFrame, height: int = COST_HEIGHT) -> pd.DataFrame:
    """`drawn` with where each family's name is written: ``label_y`` (in edge units) moved
    down from its point, a line at a time, while it would overlap a label already placed
    near it (Vega-Lite places text without avoiding collisions, and baselines share $0), and
    ``label_align`` ("right": written left of the point, for points near the right edge, so
    names are never cut; else "left")."""
    if drawn.empty:
        return drawn.assign(label_y=pd.Series(dtype="float64"), label_align=pd.Series(dtype=str))
    ends = drawn[["edge_over_market", "edge_over_market_ci_low", "edge_over_market_ci_high"]]
    edges = [0.0, *(float(v) for v in ends.to_numpy().ravel() if pd.notna(v))]
    unit = (max(edges) - min(edges) or 1.0) / height * LABEL_GAP_PX  # one label's height
    widest = float(drawn["cost_per_decision"].max()) or 1.0
    placed: list[tuple[float, float]] = []
    label_y: dict[object, float] = {}
    by_height = drawn.sort_values(
        ["cost_per_decision", "edge_over_market"], ascending=[True, False]
    )
    for index, row in by_height.iterrows():
        at, cost = float(row["edge_over_market"]), float(row["cost_per_decision"])
        while any(abs(cost - x) <= LABEL_NEAR_X * widest and abs(at - y) < unit for x, y in placed):
            at -= unit  # down the axis: the name moves below its neighbour's
        placed.append((cost, at))
        label_y[index] = at
    right = drawn["cost_per_decision"] > LABEL_RIGHT * widest
    return drawn.assign(
        label_y=pd.Series(label_y), label_align=["right" if r else "left" for r in right]
    )


def cost_pareto(frame: pd.DataFrame) -> alt.LayerChart:
    """The edge over the market (95% interval as an error bar) by API cost per decision, one
    point per family with both numbers, named beside it (`cost_labels`), the Pareto front
    (`pareto`) as a step line through ringed points, and the market's own level (0) as a
    dashed rule (unlabelled: the page's caption names it).

    The edge is −(skill vs market), the market's Brier minus the family's: up is better on a
    plain axis, as on every table, so the front is the upper-left edge. Baselines spend
    nothing: grey points at $0, never on the front.
    """
    drawn = frame[frame["edge_over_market"].notna() & frame["cost_per_decision"].notna()].assign(
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
        """The shared edge axis (every layer gives the same title, so none is appended)."""
        return alt.Y(
            f"{field}:Q",
            title="Edge over market, 95% CI (↑ better)",
            axis=alt.Axis(format="+.2~f"),
            scale=alt.Scale(zero=True, nice=True),
        )

    color = alt.Color("display_name:N", scale=family_color_scale(drawn), legend=None)
    tooltip = [
        alt.Tooltip("display_name:N", title="Family"),
        alt.Tooltip("cost_per_decision:Q", title="Cost per decision", format="$,.4f"),
        alt.Tooltip("api_cost_usd:Q", title="API spend", format="$,.2f"),
        alt.Tooltip("edge_over_market:Q", title="Edge over market", format="+.3f"),
        alt.Tooltip("edge_over_market_ci_low:Q", title="95% low", format="+.3f"),
        alt.Tooltip("edge_over_market_ci_high:Q", title="95% high", format="+.3f"),
        alt.Tooltip("resolved_bets:Q", title="Resolved bets", format=","),
        alt.Tooltip("front:N", title="Pareto"),
    ]
    # Unlabelled (the page's caption names it): a label on the rule would sit on the points
    # near 0 at one end or the other.
    market = (
        alt.Chart(pd.DataFrame({"edge_over_market": [0.0]}))
        .mark_rule(color=REFERENCE_COLOR, strokeDash=[6, 4], strokeWidth=1.2)
        .encode(y=y("edge_over_market"))
    )
    front = (
        alt.Chart(on_front)
        .mark_line(interpolate="step-after", color=FRONT_COLOR, strokeWidth=1.5, opacity=0.7)
        .encode(x=x, y=y("edge_over_market"), order="cost_per_decision:Q")
    )
    rings = (
        alt.Chart(on_front)
        .mark_point(shape="circle", size=260, color=FRONT_COLOR, strokeWidth=1.5)
        .encode(x=x, y=y("edge_over_market"))
    )
    base = alt.Chart(drawn).encode(x=x, color=color, tooltip=tooltip)
    bars = base.mark_rule(strokeWidth=2, opacity=0.8).encode(
        y=y("edge_over_market_ci_low"), y2="edge_over_market_ci_high:Q"
    )
    points = base.mark_point(filled=True, size=90, opacity=1).encode(y=y("edge_over_market"))
    labels = [
        alt.Chart(drawn[drawn["label_align"] == align])
        .mark_text(align=align, baseline="middle", dx=dx, fontSize=12)
        .encode(x=x, y=y("label_y"), text="display_name:N", color=color)
        for align, dx in LABEL_SIDES
    ]
    return alt.LayerChart(layer=[market, front, bars, rings, points, *labels], height=COST_HEIGHT)


def api_spend_by_week(by_week: pd.DataFrame) -> alt.Chart:
    """API cost per decision week, stacked by family."""
    return (
        alt.Chart(by_week)
        .mark_bar()
        .encode(
            x=alt.X("yearmonthdate(week_start):O", title="Week starting (UTC)"),
            y=alt.Y("sum(cost_usd):Q", title="API cost, $"),
            color=alt.Color(
                "family_id:N", title="Family", scale=family_color_scale(by_week, "family_id")
            ),
            tooltip=[
                "family_id:N",
                "week_start:T",
                "decisions:Q",
                alt.Tooltip("cost_usd:Q", format="$.4f"),
            ],
        )
        .properties(height=260)
    )
