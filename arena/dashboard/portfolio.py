"""The portfolio-value section the Leaderboard, Cohorts, Family and Agent pages share: range
and $/% controls bound to the link, the curve chart, its caption and CSV."""

from typing import Any

import pandas as pd
import streamlit as st

from arena.dashboard.links import choice_link, get_link, set_link
from arena.dashboard.notices import empty
from arena.dashboard.reads import read
from arena.dashboard.tables import chart, download_csv

NO_SNAPSHOTS = (
    "No portfolio snapshots yet: the scheduler values every portfolio each 10 minutes "
    "(`arena snapshot`), or build a demo season with `make demo`."
)


def curve_section(
    name: str,
    *,
    cohort: int | None = None,
    family: str | None = None,
    methodology: str | None = None,
) -> pd.DataFrame:
    """Range and $/% controls, the portfolio-value chart and its CSV; returns the frame shown.
    Across cohorts (`cohort` None) the curves sum `methodology`'s plain cohorts (None: v1's,
    read as before v2 existed; v1 and v2 never summed together).

    $ shows portfolio value within one cohort; across cohorts it shows P/L summed over the
    family's cohorts (a value sum would jump by the starting balance at each new cohort).
    The chart marks break-even (the starting capital, or 0) and each decision run. A short
    range (10M, 1H, 1D) in whose window no portfolio shown changed is not offered: the
    ranges count back from the latest snapshot, so once a season stops moving they would
    draw only flat lines (`curves.flat_ranges`); a link to such a range says so and shows ALL.
    """
    from arena.analytics.views.curves import (
        RANGES,
        UNITS,
        curve_window,
        decision_runs,
        flat_ranges,
        portfolio_curves,
    )
    from arena.dashboard.charts import curves as curve_charts

    scope: dict[str, Any] = {"cohort": cohort, "family": family}
    if methodology is not None:
        scope["methodology"] = methodology
    still = read(flat_ranges, **scope)
    asked = get_link("range")
    if asked in still.flat:
        st.info(
            f"Range {asked} is not offered here: no portfolio shown changed in it (it counts "
            "back from the latest snapshot). Showing ALL.",
            icon=":material/info:",
        )
        set_link("range", "ALL")
    offered = [key for key in RANGES if key not in still.flat]
    left, right = st.columns([3, 1])
    range_key = choice_link("Range", "range", offered, default="ALL", container=left)
    unit = choice_link("Show", "unit", list(UNITS), default="$", container=right)
    frame = read(portfolio_curves, range_key, **scope)
    if frame.empty:
        empty(NO_SNAPSHOTS)
        return frame
    break_even: float | None = 0.0
    if unit == "%":
        field, title = "return_pct", "Return, %"
    elif cohort is None:
        field, title = "total_pnl", "P/L, $ (summed over cohorts)"
    else:
        field, title = "total_value", "Portfolio value, $"
        capital = frame.sort_values("at").groupby("family_id")["capital"].last().unique()
        break_even = float(capital[0]) if len(capital) == 1 else None
    window = read(curve_window, range_key, **scope)
    # From one bucket before the first point: a cohort decides minutes before its first
    # snapshot, and that first decision belongs on its curve.
    since = window.start - pd.Timedelta(seconds=window.bucket_seconds) if window.start else None
    runs = read(decision_runs, start=since, end=window.end, **scope)
    chart(
        curve_charts.portfolio_curves,
        frame,
        field,
        title,
        break_even=break_even,
        decisions=runs,
    )
    if window.start is not None and window.end is not None:
        st.caption(
            f"{range_key}: {window.start:%Y-%m-%d %H:%M} → {window.end:%Y-%m-%d %H:%M} UTC "
            f"(back from the latest snapshot), one point per {_duration(window.bucket_seconds)}"
            " — each agent's last snapshot in the bucket, carried forward. "
            + _curve_legend(break_even, field, len(runs))
            + _hidden_ranges(still)
        )
    download_csv(frame, f"{name}-curve-{range_key.lower()}", label="Download curve CSV")
    return frame


def _curve_legend(break_even: float | None, field: str, runs: int) -> str:
    """What the chart's marks mean, in one or two sentences."""
    parts = ["Hover for every family's value at a time"]
    if break_even is not None:
        level = f"${break_even:,.0f} starting capital" if field == "total_value" else "0"
        parts.append(f"dashed line: break-even ({level})")
    if runs:
        parts.append(f"grey ticks: the {runs} decision run{'s' if runs != 1 else ''} shown")
    return "; ".join(parts) + "."


def _hidden_ranges(still: Any) -> str:
    """Which short ranges are not offered, and why (empty when all are)."""
    if not still.flat:
        return ""
    names = ", ".join(still.flat[:-1]) + (" and " if len(still.flat) > 1 else "") + still.flat[-1]
    since = (
        f"since {still.last_change:%Y-%m-%d %H:%M} UTC"
        if still.last_change is not None
        else "in the day before it"
    )
    verb = "are" if len(still.flat) > 1 else "is"
    return (
        f" {names} {verb} not offered: no portfolio shown has changed {since} (latest snapshot "
        f"{still.latest:%Y-%m-%d %H:%M} UTC), so {'they' if len(still.flat) > 1 else 'it'} "
        "would draw flat lines."
    )


def _duration(seconds: int) -> str:
    if seconds % 86400 == 0:
        days = seconds // 86400
        return "week" if days == 7 else ("day" if days == 1 else f"{days} days")
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return "hour" if hours == 1 else f"{hours} hours"
    return f"{seconds // 60} minutes"
