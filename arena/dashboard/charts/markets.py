"""Markets: arena.analytics.views.markets.price_path."""

import altair as alt
import pandas as pd

from arena.dashboard.charts.style import legend_pick, zoom_x


def price_path(path: pd.DataFrame) -> alt.Chart:
    """A market's recorded price per outcome over time, shaped by who recorded each point."""
    pick = legend_pick("outcome")
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
        .add_params(pick, zoom_x())
        .properties(height=300)
    )
