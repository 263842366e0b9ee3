"""Replicates (ARENA_REPLICATES): arena.analytics.stats.replicates (replicate_agents,
replicate_analysis)."""

import altair as alt
import pandas as pd

from arena.dashboard.charts.style import REFERENCE_COLOR, family_color_scale

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
