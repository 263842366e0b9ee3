"""Tables and downloads: `table` shows a DataFrame (times as UTC, gaps as "—", baselines
tinted), `download_csv` offers exactly the DataFrame shown, as CSV with the export's cell rules
(ISO UTC times, formula-looking text neutralised). Untrusted text is shown in dataframes, which
render no Markdown."""

from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from arena.core.csvsafe import cell
from arena.dashboard import fmt
from arena.dashboard.charts.spec import vega_lite
from arena.dashboard.links import set_link

# Reference rows (baselines) and "too early" rows in tables.
REFERENCE_STYLE = "background-color: #eef2f7; font-style: italic"


GREY_STYLE = "color: #9aa4b2"


def column(label: str, width: Any = None, help: str | None = None, **kwargs: Any) -> Any:
    """A dataframe column's label, width (pixels or "small"/"medium"/"large") and help."""
    return st.column_config.Column(label, width=width, help=help, **kwargs)


def fitted(values: pd.Series, low: int = 60, high: int = 240) -> int:
    """A text column's width in pixels for its longest value (so a side is never cut)."""
    longest = max((len(str(v)) for v in values if not fmt.missing(v)), default=0)
    return max(low, min(high, 8 * longest + 24))


def csv_text(frame: pd.DataFrame) -> str:
    """`frame` as CSV with the export's cell rules (no index)."""
    out = pd.DataFrame(index=frame.index)
    for column in frame.columns:
        series = frame[column]
        if pd.api.types.is_datetime64_any_dtype(series):
            out[column] = [v.isoformat() if not pd.isna(v) else "" for v in series]
        elif pd.api.types.is_bool_dtype(series):
            out[column] = ["true" if v else "false" for v in series]
        elif pd.api.types.is_numeric_dtype(series):
            out[column] = series
        else:
            out[column] = ["" if fmt.missing(v) else cell(v) for v in series]
    return out.to_csv(index=False, lineterminator="\n")


def download_csv(frame: pd.DataFrame, name: str, *, label: str = "Download CSV") -> None:
    """A download button for exactly `frame` as ``forecaster-arena-{name}.csv``.

    The CSV is written when the button is clicked, not on every run (Streamlit's deferred
    download): a page offers several and most runs download none (0.1–0.3 s each at a season's
    curve)."""
    st.download_button(
        label,
        data=lambda: csv_text(frame),
        file_name=f"forecaster-arena-{name}.csv",
        mime="text/csv",
        on_click="ignore",
        key=f"download:{name}",
    )


def chart(spec: Any) -> None:
    """Show an `arena.dashboard.charts` chart at the page's full width, as the Vega-Lite dict
    `charts.spec.vega_lite` builds (no schema validation on each run: the tests validate it)."""
    st.vega_lite_chart(vega_lite(spec), width="stretch")


def style_rows(
    frame: pd.DataFrame,
    *,
    reference: pd.Series | None = None,
    grey: pd.Series | None = None,
    formats: dict[str, Any] | None = None,
) -> Styler:
    """A Styler: `reference` rows (baselines) tinted and italic, `grey` rows greyed, and
    number `formats` (``{column: "{:,.2f}"}``) applied; missing values shown as "—"."""

    def row_style(row: pd.Series) -> list[str]:
        parts = []
        if reference is not None and bool(reference.loc[row.name]):
            parts.append(REFERENCE_STYLE)
        if grey is not None and bool(grey.loc[row.name]):
            parts.append(GREY_STYLE)
        return ["; ".join(parts)] * len(row)

    styler = frame.style.apply(row_style, axis=1)
    if formats:
        usable = {k: v for k, v in formats.items() if k in frame.columns}
        styler = styler.format(usable, na_rep="—")
    return styler


TIME_FORMAT = "YYYY-MM-DD HH:mm"


def _time_text(value: Any) -> str:
    return "—" if fmt.missing(value) else f"{value:%Y-%m-%d %H:%M}"


def table(
    frame: pd.DataFrame,
    *,
    key: str,
    reference: pd.Series | None = None,
    grey: pd.Series | None = None,
    formats: dict[str, Any] | None = None,
    select: bool = False,
    column_config: dict[str, Any] | None = None,
) -> list[int]:
    """Show `frame` (times as ``YYYY-MM-DD HH:mm`` UTC); with `select`, one row can be picked
    and its position is returned (empty list: nothing selected).

    `reference` rows are tinted, `grey` rows greyed, `formats` maps columns to format strings
    or functions — any of these renders through a pandas Styler (`style_rows`).
    """
    times = [c for c in frame.columns if pd.api.types.is_datetime64_any_dtype(frame[c])]
    # Text columns with gaps would show "None": write them as "—" (numbers keep their dtype).
    gaps = [
        c
        for c in frame.columns
        if frame[c].dtype == object and c not in (formats or {}) and frame[c].isna().any()
    ]
    config: dict[str, Any] = dict(column_config or {})
    data: pd.DataFrame | Styler = frame
    if reference is not None or grey is not None or formats or gaps:
        data = style_rows(
            frame,
            reference=reference,
            grey=grey,
            formats={
                **dict.fromkeys(times, _time_text),
                **dict.fromkeys(gaps, fmt.text),
                **(formats or {}),
            },
        )
    else:
        for column in times:
            config.setdefault(
                column, st.column_config.DatetimeColumn(column, format=TIME_FORMAT, timezone="UTC")
            )
    if not select:
        st.dataframe(data, hide_index=True, key=key, column_config=config, placeholder=fmt.DASH)
        return []
    event = st.dataframe(
        data,
        hide_index=True,
        key=key,
        column_config=config,
        placeholder=fmt.DASH,  # an empty number cell reads "—", never "None"
        on_select="rerun",
        selection_mode="single-row",
    )
    return list(event.selection.rows) if event is not None else []


def pick_link(frame: pd.DataFrame, *, key: str, link: str, column: str, **table_kwargs: Any) -> Any:
    """A row-selectable `table` whose selection drives link `link` (the row's `column`).

    Selecting a row writes the link; clearing the selection removes it. Returns the selected
    row's `column` value, or None.
    """
    rows = table(frame, key=key, select=True, **table_kwargs)
    state = f"_picked:{key}"
    before = st.session_state.get(state)
    chosen = frame.iloc[rows[0]][column] if rows else None
    if rows and rows != before:
        set_link(link, chosen)
    elif not rows and before:
        set_link(link, None)
    st.session_state[state] = rows
    return chosen
