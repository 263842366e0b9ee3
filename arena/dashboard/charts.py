"""Every Altair chart the dashboard draws, one named function each, beside the read models.

A chart function takes a read model's DataFrame (as `arena.analytics` returns it, or as the
page filtered it for its table and CSV) and a few parameters, and returns the chart spec; the
page only shows it (``st.altair_chart(chart, width="stretch")``). Nothing here reads the
database or touches Streamlit, so each spec can be built and checked (``chart.to_dict()``) in a
unit test, empty frames included.

Shared interaction: where there are several series, clicking a legend entry isolates one
(`_legend_pick`); time axes pan on drag and zoom on the wheel (`_zoom_x`, double-click resets).
"""

import altair as alt
import pandas as pd

# Series not picked in the legend fade to this opacity.
FADED = 0.12


def _legend_pick(field: str) -> alt.Parameter:
    """A point selection on `field`, bound to the legend (click an entry to isolate it)."""
    return alt.selection_point(fields=[field], bind="legend")


def _zoom_x() -> alt.Parameter:
    """An interval selection bound to the x scale: drag to pan, wheel to zoom."""
    return alt.selection_interval(bind="scales", encodings=["x"])


# --------------------------------------------------------------------------------------------
# Portfolio curves (Leaderboard, Cohorts, Agent): arena.analytics.curves.portfolio_curves


def portfolio_curves(
    frame: pd.DataFrame, field: str, title: str, *, height: int = 380
) -> alt.Chart:
    """Portfolio value, P/L or return per family over time; baselines dashed."""
    pick = _legend_pick("display_name")
    value_format = "$,.2f" if field in ("total_value", "total_pnl") else "+.2f"
    return (
        alt.Chart(frame)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X(
                "at:T",
                title="Time (UTC)",
                scale=alt.Scale(type="utc"),
                axis=alt.Axis(format="%b %d %H:%M", labelAngle=0, labelOverlap=True),
            ),
            y=alt.Y(f"{field}:Q", title=title, scale=alt.Scale(zero=False)),
            color=alt.Color("display_name:N", title="Family (click to isolate)"),
            strokeDash=alt.StrokeDash(
                "kind:N",
                title="Kind",
                scale=alt.Scale(domain=["llm", "baseline"], range=[[1, 0], [5, 4]]),
            ),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(FADED)),
            tooltip=[
                alt.Tooltip("display_name:N", title="Family"),
                alt.Tooltip("at:T", title="Bucket start (UTC)", format="%Y-%m-%d %H:%M"),
                alt.Tooltip(f"{field}:Q", title=title, format=value_format),
                alt.Tooltip("agents:Q", title="Agents summed"),
            ],
        )
        .add_params(pick, _zoom_x())
        .properties(height=height)
    )


# --------------------------------------------------------------------------------------------
# Calibration: arena.analytics.calibration (calibration_summary, reliability, brier_over_time)


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
# Markets: arena.analytics.markets.price_path


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
# Operations: arena.analytics.operations.api_spend


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
