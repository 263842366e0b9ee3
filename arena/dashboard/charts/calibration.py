"""Calibration charts: arena.analytics.stats.calibration (calibration_summary, reliability,
brier_over_time, reliability_diagram: families compared, Wilson intervals, bins under the
minimum count left out by the page) and the stated probability's Brier
(arena.analytics.stats.stated, a protocol extension)."""

import altair as alt
import pandas as pd

from arena.analytics.stats.calibration import MARKET_SERIES
from arena.dashboard.charts.style import FADED, family_color_scale, legend_pick, zoom_x
from arena.dashboard.palette import family_colors


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
    pick = legend_pick(series)
    encoding = {
        "x": alt.X("mean_forecast:Q", title="Forecast (bin mean)", scale=alt.Scale(domain=[0, 1])),
        "y": alt.Y("observed_rate:Q", title="Observed win rate", scale=alt.Scale(domain=[0, 1])),
        "color": (
            alt.Color("forecaster:N", title="Forecaster")
            if by_forecaster
            else alt.Color(
                "family_id:N", title="Family", scale=family_color_scale(points, "family_id")
            )
        ),
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
    pick = legend_pick("family_id")
    return (
        alt.Chart(lines)
        .mark_line(point=True, interpolate="step-after")
        .encode(
            x=alt.X("date:T", title="Date (UTC)", axis=alt.Axis(format="%b %d", labelAngle=0)),
            y=alt.Y("cumulative_brier:Q", title="Cumulative Brier", scale=alt.Scale(zero=True)),
            color=alt.Color(
                "family_id:N", title="Family", scale=family_color_scale(lines, "family_id")
            ),
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
        .add_params(pick, zoom_x())
        .properties(height=320)
    )


MARKET_GREY = "#6b7280"


def reliability_intervals(points: pd.DataFrame, series: list[str] | None = None) -> alt.LayerChart:
    """Observed win rate against forecast per bin with its 95% Wilson interval (error bar)
    and the bets in the bin written beside it, over the diagonal; one colour per family, the
    market's price on the same bets in grey (dashed); a family's colour is its colour on every
    chart (`arena.dashboard.palette`). `points`: the bins to draw; `series`: every series
    compared, in order (so a family keeps its legend entry when none of its bins is drawn),
    else those in `points`."""
    names = series or [str(s) for s in dict.fromkeys(points["series"])]
    families = [name for name in names if name != MARKET_SERIES]
    colors = family_colors(families)
    color = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(domain=[*families, MARKET_SERIES], range=[*colors, MARKET_GREY]),
        legend=alt.Legend(orient="bottom", labelLimit=400, symbolStrokeWidth=3),
    )
    unit = alt.Scale(domain=[0, 1], nice=False)
    x = alt.X("mean_forecast:Q", title="Forecast (mean of the bin)", scale=unit)
    pick = legend_pick("series")
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
