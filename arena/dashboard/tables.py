"""Tables and downloads: `table` shows a DataFrame (times as UTC, gaps as "—", baselines
tinted), `download_csv` offers exactly the DataFrame shown, as CSV with the export's cell rules
(ISO UTC times, formula-looking text neutralised). Untrusted text is shown in dataframes, which
render no Markdown."""

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler
from streamlit.dataframe_util import convert_anything_to_arrow_bytes

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


# Chart specs kept: a page draws at most four charts, a person tries a few ranges and scopes.
CHART_CACHE_ENTRIES = 256


@st.cache_data(show_spinner=False, max_entries=CHART_CACHE_ENTRIES)
def _chart_spec(
    name: str, args: tuple[Any, ...], kwargs: tuple[Any, ...], _build: Callable[..., Any]
) -> dict[str, Any]:
    """`_build(*args, **kwargs)`'s Vega-Lite dict, its datasets already Arrow IPC bytes.

    Cached by `name` and the content of the arguments (Streamlit hashes a DataFrame by its
    values), so a rerun over the same reads — a widget click, in-session navigation, another
    visitor within the reads' TTL — skips Altair's construction (0.1–0.7 s a chart under
    load) and the frames' Arrow conversion; new data is a new key."""
    spec = vega_lite(_build(*args, **dict(kwargs)))
    spec["datasets"] = {
        key: convert_anything_to_arrow_bytes(frame) if isinstance(frame, pd.DataFrame) else frame
        for key, frame in spec.get("datasets", {}).items()
    }
    return spec


def chart(build: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Show the `arena.dashboard.charts` chart `build(*args, **kwargs)` at the page's full
    width, as the Vega-Lite dict `charts.spec.vega_lite` makes of it (no schema validation on
    each run: the tests validate it), built once per content of its arguments (`_chart_spec`)."""
    name = f"{build.__module__}.{build.__qualname__}"
    spec = _chart_spec(name, args, tuple(sorted(kwargs.items())), build)
    st.vega_lite_chart(spec, width="stretch")


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


def _typed(given: Any, typed: Mapping[str, Any]) -> dict[str, Any]:
    """The page's column config `given` (label, width, help…) with `typed`'s type and format."""
    base = dict(given) if isinstance(given, dict) else {}
    if isinstance(given, str):
        base["label"] = given
    return {**typed, **{k: v for k, v in base.items() if v is not None and k != "type_config"}}


def _grid_columns(
    frame: pd.DataFrame, formats: dict[str, Any], config: dict[str, Any]
) -> tuple[pd.DataFrame, dict[str, Any]] | None:
    """`frame` and `config` with `formats` drawn by the grid (`fmt.GRID_FORMATS`): number
    columns get their printf format, text columns are written here (as a Styler would). None
    when a number column's writer has no grid format (the caller falls back to a Styler)."""
    shown, config = frame, dict(config)
    for column, writer in formats.items():
        if column not in frame.columns:
            continue
        values = frame[column]
        grid = fmt.grid_format(writer)
        moment = fmt.GRID_TIME_FORMATS.get(writer) if not isinstance(writer, str) else None
        if moment is not None and pd.api.types.is_datetime64_any_dtype(values):
            config[column] = _typed(
                config.get(column),
                st.column_config.DatetimeColumn(format=moment, timezone="UTC"),
            )
            continue
        if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            write = fmt.pattern_writer(writer) if isinstance(writer, str) else writer
            shown = shown.assign(**{column: [write(v) for v in values]})
            continue
        if grid is None:
            return None
        if grid.scale != 1.0 or grid.zero_missing:
            numbers = values.astype("float64") * grid.scale
            shown = shown.assign(
                **{column: numbers.where(values != 0) if grid.zero_missing else numbers}
            )
        config[column] = _typed(
            config.get(column), st.column_config.NumberColumn(format=grid.printf)
        )
    return shown, config


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
    """Show `frame` (times as ``YYYY-MM-DD HH:mm`` UTC, gaps as "—"); with `select`, one row
    can be picked and its position is returned (empty list: nothing selected).

    `formats` maps columns to `fmt` writers or format strings: the grid draws them in the
    browser (`fmt.GRID_FORMATS`, the numbers stay numbers). `reference` rows are tinted and
    `grey` rows greyed, which only a pandas Styler can do: such a table (or one with a writer
    the grid has no format for) renders through `style_rows`, every cell written in Python —
    keep those to short tables (a leaderboard, a cohort's standings).
    """
    times = [c for c in frame.columns if pd.api.types.is_datetime64_any_dtype(frame[c])]
    config: dict[str, Any] = dict(column_config or {})
    data: pd.DataFrame | Styler = frame
    grid = None
    if reference is None and grey is None:
        grid = _grid_columns(frame, formats or {}, config)
    if grid is not None:
        data, config = grid
        for column in (c for c in times if c not in (formats or {})):
            config[column] = _typed(
                config.get(column),
                st.column_config.DatetimeColumn(format=TIME_FORMAT, timezone="UTC"),
            )
    else:
        # Text columns with gaps would show "None": write them as "—" (numbers keep their dtype).
        gaps = [
            c
            for c in frame.columns
            if frame[c].dtype == object and c not in (formats or {}) and frame[c].isna().any()
        ]
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
    if not select:
        st.dataframe(data, hide_index=True, key=key, column_config=config, placeholder=fmt.DASH)
        return []
    event = st.dataframe(
        data,
        hide_index=True,
        key=key,
        column_config=config,
        placeholder=fmt.DASH,  # an empty cell reads "—", never "None"
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
