"""Small Streamlit helpers every dashboard page shares: cached reads, deep links, downloads.

Why one place:

- **Reads** go through `read(fn, ...)`: an `arena.analytics` read model on the READ-ONLY engine,
  cached for `CACHE_TTL_S` seconds per database and arguments, so a page refresh within the TTL
  costs nothing and a new snapshot shows up within a minute.
- **Deep links**: the selections worth sharing (`LINK_KEYS`: cohort, family, decision, market…)
  live in the URL's query string. The dashboard entry calls `restore_links(page)` before every
  page run and `drop_unused_links()` after it, so a link like
  ``/decisions?cohort=3&family=gpt-5.1&decision=42`` opens exactly that view, each page
  remembers its own selections (never another page's), and the address bar holds only the keys
  the page uses. A link naming something that does not exist gets a warning, never a silent
  fallback (`names_nothing`). Widgets are bound to a link key with `select_link` /
  `choice_link` / `text_link`: the URL is the source of truth; a widget change writes the URL
  in its on_change callback.
- **Downloads**: `download_csv` offers exactly the DataFrame shown, as CSV with the export's
  cell rules (ISO UTC times, formula-looking text neutralised).
- **Untrusted text** — anything from a URL, the database, a provider or Gamma (market
  questions and categories, model output and errors, served models, display names, a link's
  value) — never goes through Markdown or HTML unescaped: pages show it with `st.text`,
  `st.code`, in dataframes or selectbox options (which render no Markdown), and wherever it
  sits in a Markdown element (a caption, a warning, a metric, a subheader, a label) through
  `fmt.escaped`; never with `unsafe_allow_html`.
- **Errors**: `run_page` runs each page; an unexpected exception shows one line to the
  visitor and goes, with its traceback, to the server log (`client.showErrorDetails` is
  "none" in .streamlit/config.toml for anything that escapes it).
- **Documents**: `document` turns one of the project's own docs/ Markdown files into a title
  and a body for `st.markdown`, with its links made to work inside the dashboard.
"""

import logging
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler
from sqlalchemy.exc import SQLAlchemyError
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException, StopException

from arena.analytics.query.scope import excluded_cohorts
from arena.analytics.views.simulated import SERVED_BY, simulated_families
from arena.config import get_settings
from arena.core.csvsafe import cell
from arena.dashboard import fmt
from arena.storage.db import get_engine

CACHE_TTL_S = 20
LINK_KEYS: tuple[str, ...] = (
    "cohort",
    "family",
    "decision",
    "market",
    "snapshot",
    "week",
    "action",
    "status",
    "range",
    "unit",
    "search",
    "mstatus",
    "category",
    "mtype",
    "held",
    "sort",
    "versus",
)
_LINKS = "_arena_links"
_PAGE = "_arena_page"  # the url path of the page running now
_USED = "_arena_used_links"  # the link keys it has read so far
ALL = "All"
T = TypeVar("T")
LINK_INT_MAX = 2**63 - 1  # the largest id a database integer column holds
_ID_TEXT = re.compile(r"[0-9]{1,19}")
PAGE_FAILED = (
    "This page hit an unexpected error and could not be shown; it has been logged for the "
    "operator. Reload it, or open another page."
)
log = logging.getLogger(__name__)

# Reference rows (baselines) and "too early" rows in tables.
REFERENCE_STYLE = "background-color: #eef2f7; font-style: italic"
GREY_STYLE = "color: #9aa4b2"


# --------------------------------------------------------------------------------------------
# Entry


def first_line(exc: SQLAlchemyError) -> str:
    """The driver's first message line (no SQL, no parameters), or the exception's type."""
    lines = str(getattr(exc, "orig", None) or "").strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def run_page(run: Callable[[], Any]) -> None:
    """Run one page (`run`, the page's `run` method) the way the entry does for every page.

    Streamlit's control flow (`st.stop`, `st.rerun`, `st.switch_page`) passes through; a page
    that ran to its end or stopped early drops the link keys it did not read. Any other
    exception is the page's bug: the visitor sees one line (`PAGE_FAILED`), never a traceback
    with the server's file paths, and the traceback goes to the server log. A database error
    keeps its own one line (the database may be migrating).
    """
    try:
        run()
    except StopException:
        drop_unused_links()  # a page that stopped early (an empty state, a bad link)
        raise
    except ScriptControlException:
        raise  # st.rerun / st.switch_page: that run had not read every key yet
    except SQLAlchemyError as exc:
        log.exception("dashboard page %s could not read the database", _page_name())
        st.error(
            f"Cannot read the database ({fmt.escaped(first_line(exc))}) — it may be migrating; "
            "retry in a moment, or run `arena init-db`."
        )
    except Exception:
        log.exception("dashboard page %s failed", _page_name())
        st.error(PAGE_FAILED, icon=":material/error:")
    else:
        drop_unused_links()


def _page_name() -> str:
    return str(st.session_state.get(_PAGE, "")) or "(home)"


# --------------------------------------------------------------------------------------------
# Cached reads


def database_url() -> str:
    return get_settings().database_url


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False, max_entries=512)
def _cached(
    name: str, url: str, args: tuple[Any, ...], kwargs: tuple[Any, ...], _fn: Callable[..., T]
) -> T:
    return _fn(get_engine(url, role="reader"), *args, **dict(kwargs))


def read(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(reader_engine, *args, **kwargs)`, cached `CACHE_TTL_S` s per database and arguments."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    return _cached(name, database_url(), args, tuple(sorted(kwargs.items())), fn)


ANALYSES_AT = ":30 past each hour"  # when the scheduler's `analyses` job runs (engine.jobs)


def stored_or_offer(name: str, what: str, *, cohort: int | None = None) -> Any:
    """The hourly job's current stored frame of analysis `name`, or — when none is current —
    a note saying so, with when the job runs, and a button to compute it live on request.

    Returns (frame, stored) like `current_or_live`, or None when the person has not asked for
    the live computation yet (the caller stops or shows what it can without it). Why: at a
    year's scale the bootstrap behind these tables takes seconds; no page makes a person wait
    on it unasked (an imported database, the first hour after a restore).
    """
    from arena.analytics.stored import current_stored, live

    stored = read(current_stored, name, cohort)
    if stored is not None:
        return stored.frame, stored
    flag = f"_live:{name}:{cohort}"
    if not st.session_state.get(flag):
        offer = st.empty()  # cleared once the person asks, so the note goes with the click
        with offer.container():
            st.info(
                f"No current stored {what} for this scope: the scheduler's `arena analyses` "
                f"job computes it at {ANALYSES_AT} (a fresh or imported database has none until "
                "the job runs, or until `arena analyses` is run by hand). Computing it here "
                "takes a few seconds on a long season.",
                icon=":material/schedule:",
            )
            clicked = st.button(f"Compute the {what} now", key=f"live-button:{name}:{cohort}")
        if not clicked:
            return None
        offer.empty()
        st.session_state[flag] = True
    with st.spinner(f"Computing the {what}…"):
        frame = read(live, name, cohort=cohort)
    return frame, None


def stored_caption(stored: Any) -> None:
    """Say where a statistical table came from: the hourly job's stored frame, or live."""
    if stored is None:
        st.caption("Computed live on this page load (no current stored result).")
        return
    as_of = f", on snapshots up to {stored.data_as_of:%Y-%m-%d %H:%M}" if stored.data_as_of else ""
    st.caption(
        f"Computed {stored.computed_at:%Y-%m-%d %H:%M} UTC by the hourly `analyses` job{as_of}."
    )


# How a person sees a cohort an all-cohort view leaves out: (one cohort, several).
COHORT_FILTER = (
    "choose it in the cohort filter to see it",
    "choose one in the cohort filter to see it",
)


def left_out_text(numbers: Sequence[int], how: tuple[str, str] = COHORT_FILTER) -> str:
    """What an all-cohort view's v1 figures leave out: "2 extended cohorts (#3, #4) are left
    out of these v1 figures; choose one in the cohort filter to see it." ("" when none)."""
    if not numbers:
        return ""
    listed = ", ".join(f"#{n}" for n in numbers)
    if len(numbers) == 1:
        return f"1 extended cohort ({listed}) is left out of these v1 figures; {how[0]}."
    return f"{len(numbers)} extended cohorts ({listed}) are left out of these v1 figures; {how[1]}."


def left_out_note(cohort: int | None, how: tuple[str, str] = COHORT_FILTER) -> list[int]:
    """Under an all-cohort view (`cohort` None): a note naming the extended cohorts its v1
    figures leave out (`arena.analytics.query.scope.excluded_cohorts`; methodology §18). Nothing
    when a cohort is chosen or every cohort is v1. Returns the numbers left out."""
    if cohort is not None:
        return []
    numbers: list[int] = read(excluded_cohorts)
    left_out_caption(numbers, how)
    return numbers


def left_out_caption(numbers: Sequence[int], how: tuple[str, str] = COHORT_FILTER) -> None:
    """The note of `left_out_note` for these cohort numbers (nothing when there are none)."""
    if numbers:
        st.caption(f":material/filter_alt_off: {left_out_text(numbers, how)}")


def simulated_notice(family_ids: Sequence[str] | None = None, detail: str | None = None) -> None:
    """A badge when the shown families' results come from the simulated model server (the
    offline demo), so they are never mistaken for real models'. `None`: any family.
    `detail` replaces the closing sentence (what is simulated) where one thing matters most,
    such as the costs beside a cost chart."""
    simulated = read(simulated_families)
    if family_ids is not None:
        shown = set(family_ids)
        simulated = [family_id for family_id in simulated if family_id in shown]
    if simulated:
        closing = detail or "Personas, reasoning, tokens and costs are simulated."
        st.warning(
            f"**Simulated** — {fmt.escaped(', '.join(simulated))}: answered by the {SERVED_BY} "
            f"(`arena demo`), not by real models. {closing}",
            icon="🧪",
        )


# --------------------------------------------------------------------------------------------
# Deep links


def _memory() -> dict[str, dict[str, str]]:
    """This session's remembered selections, per page (url path → {link key: value})."""
    memory: dict[str, dict[str, str]] = st.session_state.setdefault(_LINKS, {})
    return memory


def _page_links() -> dict[str, str]:
    return _memory().setdefault(str(st.session_state.get(_PAGE, "")), {})


def _used() -> set[str]:
    used: set[str] = st.session_state.setdefault(_USED, set())
    return used


def restore_links(page: str) -> None:
    """Sync the URL and `page`'s remembered selections (call before each page run).

    A key in the URL wins (a shared link, or a `st.page_link` carrying its selection); a key
    missing from the URL but remembered for this page is put back, so coming back to a page
    finds it as it was left. Memory is per page: a cohort picked on the Agent page never
    filters the Leaderboard. (The sidebar's navigation clears the query string, checked in
    Chromium with Streamlit 1.67; `st.page_link(..., query_params=...)` carries its own.)
    """
    st.session_state[_PAGE] = page
    st.session_state[_USED] = set()
    mine = _page_links()
    params = st.query_params
    for key in LINK_KEYS:
        if key in params:
            mine[key] = params[key]
        elif key in mine:
            params[key] = mine[key]


def drop_unused_links() -> None:
    """After a page ran to its end: remove the link keys it never read from the URL (and its
    memory), so the address bar shows only what filters this page."""
    used, mine, params = _used(), _page_links(), st.query_params
    for key in LINK_KEYS:
        if key not in used:
            mine.pop(key, None)
            if key in params:
                del params[key]


def get_link(key: str) -> str | None:
    """The URL's value for link `key` (None when absent or empty)."""
    _used().add(key)
    value = st.query_params.get(key)
    return value or None


def set_link(key: str, value: Any) -> None:
    """Put `value` in the URL under `key` (None or "All" removes it) and remember it."""
    mine = _page_links()
    if value is None or value == ALL or value == "":
        mine.pop(key, None)
        if key in st.query_params:
            del st.query_params[key]
        return
    text = str(value)
    mine[key] = text
    if st.query_params.get(key) != text:
        st.query_params[key] = text


def names_nothing(label: str, key: str, value: str, hint: str = "") -> None:
    """A deep link whose `key` names nothing here: say so and stop (never a silent fallback)."""
    st.warning(
        f"This link's {key}={fmt.escaped(repr(value))} names no {label.lower()} in this database"
        + (f": {hint}" if hint else ".")
        + " Pick one above, or check the link.",
        icon="⚠️",
    )
    st.stop()


def link_int(key: str) -> int | None:
    """Link `key` as a database id: None when absent, not a number, or outside 1..2**63-1
    (an id no row can have; a larger one would overflow the database driver), so the page
    treats it like any other link naming nothing."""
    return id_value(get_link(key))


def id_value(value: str | None) -> int | None:
    """`value` as a positive 64-bit id, or None (pure: the rule of `link_int`)."""
    text = (value or "").strip()
    # Digits only, and at most 19 of them: int() would take "٣" or "1_000", and refuse a
    # 5,000-digit value with ValueError (Python's int-from-text limit).
    if not _ID_TEXT.fullmatch(text):
        return None
    number = int(text)
    return number if 1 <= number <= LINK_INT_MAX else None


def _bound(
    widget: Callable[..., Any],
    label: str,
    key: str,
    options: Sequence[Any],
    default: Any,
    **kwargs: Any,
) -> Any:
    """Render `widget` over `options` with its value taken from, and written to, link `key`."""
    state_key = f"link-widget:{key}:{label}"
    by_text = {str(option): option for option in options}
    current = get_link(key)
    unknown = current is not None and current not in by_text
    wanted = default if current is None or unknown else by_text[current]
    # Always (re)seed from the URL: a same-keyed widget on another page may have left a value
    # that the new widget would not adopt, and a link followed in-session must win.
    st.session_state[state_key] = wanted

    def changed() -> None:
        set_link(key, st.session_state.get(state_key))

    value = widget(label, options, key=state_key, on_change=changed, **kwargs)
    if unknown:
        names_nothing(label, key, str(current))
    return value


def select_link(
    label: str,
    key: str,
    options: Sequence[Any],
    *,
    default: Any = ALL,
    format_func: Callable[[Any], str] = str,
    container: Any = None,
    **kwargs: Any,
) -> Any:
    """A selectbox bound to link `key` ("All" first unless `default` is an option itself)."""
    where = container or st
    choices = list(options) if default in options else [default, *options]
    value = _bound(where.selectbox, label, key, choices, default, format_func=format_func, **kwargs)
    return None if value == ALL else value


def extension_cohort_link(numbers: Sequence[int], all_label: str) -> int | None:
    """The cohort filter of a protocol extension's page: its cohorts (`numbers`) or all of
    them (`all_label`), bound to link ``cohort``, a quarter of the width."""
    left, _ = st.columns([1, 3])
    chosen: int | None = select_link(
        "Cohort",
        "cohort",
        numbers,
        format_func=lambda n: all_label if n == ALL else f"Cohort {n}",
        container=left,
    )
    return chosen


def choice_link(
    label: str,
    key: str,
    options: Sequence[str],
    *,
    default: str,
    container: Any = None,
    **kwargs: Any,
) -> str:
    """A segmented control (always one option selected) bound to link `key`."""
    where = container or st
    value = _bound(
        where.segmented_control,
        label,
        key,
        list(options),
        default,
        required=True,
        **kwargs,
    )
    return str(value) if value is not None else default


def text_link(label: str, key: str, *, container: Any = None, **kwargs: Any) -> str:
    """A text input bound to link `key` (empty: no link)."""
    where = container or st
    state_key = f"link-widget:{key}:{label}"
    st.session_state[state_key] = get_link(key) or ""

    def changed() -> None:
        set_link(key, (st.session_state.get(state_key) or "").strip() or None)

    return str(where.text_input(label, key=state_key, on_change=changed, **kwargs)).strip()


# --------------------------------------------------------------------------------------------
# Tables, downloads, empty states


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
    """A download button for exactly `frame` as ``forecaster-arena-{name}.csv``."""
    st.download_button(
        label,
        data=csv_text(frame),
        file_name=f"forecaster-arena-{name}.csv",
        mime="text/csv",
        on_click="ignore",
        key=f"download:{name}",
    )


def chart(spec: Any) -> None:
    """Show an `arena.dashboard.charts` chart at the page's full width."""
    st.altair_chart(spec, width="stretch")


def empty(message: str) -> None:
    """The empty state: what is missing and what to do about it."""
    st.info(message)


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


def listed(count: int, cap: int, noun: str, order: str, *, exported: bool = True) -> str:
    """A list's caption: how many rows and in which order, and, when the list reached its cap,
    that it may not be everything (a silently cut list reads as complete). `exported`: the
    table is one of the Exports page's, where every row can be downloaded."""
    text = f"{count:,} {noun}, {order}."
    if count >= cap:
        text += f" That is this list's cap of {cap:,}: more may match. Narrow it with the filters"
        text += ", or download every row from Exports." if exported else "."
    return text


# --------------------------------------------------------------------------------------------
# Portfolio curves (Leaderboard, Cohorts, Agent)

NO_SNAPSHOTS = (
    "No portfolio snapshots yet: the scheduler values every portfolio each 10 minutes "
    "(`arena snapshot`), or build a demo season with `make demo`."
)


def curve_section(
    name: str,
    *,
    cohort: int | None = None,
    family: str | None = None,
) -> pd.DataFrame:
    """Range and $/% controls, the portfolio-value chart and its CSV; returns the frame shown.

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

    still = read(flat_ranges, cohort=cohort, family=family)
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
    frame = read(portfolio_curves, range_key, cohort=cohort, family=family)
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
    window = read(curve_window, range_key, cohort=cohort, family=family)
    # From one bucket before the first point: a cohort decides minutes before its first
    # snapshot, and that first decision belongs on its curve.
    since = window.start - pd.Timedelta(seconds=window.bucket_seconds) if window.start else None
    runs = read(decision_runs, cohort=cohort, family=family, start=since, end=window.end)
    chart(curve_charts.portfolio_curves(frame, field, title, break_even=break_even, decisions=runs))
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


# --------------------------------------------------------------------------------------------
# Documents (the Methodology page)

DOCS_PAGE = "methodology"  # the url path of the page that shows docs/*.md
_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_CODE = re.compile(r"^```.*?^```[^\n]*$|`[^`\n]+`", re.MULTILINE | re.DOTALL)


def doc_link(name: str, anchor: str = "") -> str:
    """The dashboard URL (relative, so it works under any base path) of docs/`name`.md at
    `anchor` (a heading's slug, without "#"): e.g. ``methodology#12-snapshot-methodology``."""
    query = "" if name == DOCS_PAGE else f"?doc={name}"
    return f"{DOCS_PAGE}{query}" + (f"#{anchor}" if anchor else "")


def document(text: str, shown: Sequence[str]) -> tuple[str, str]:
    """(title, body) of a docs/ Markdown file for the Methodology page.

    The title is the file's first ``# `` heading; the body is the rest. Links are rewritten
    for the dashboard: one to a document the page shows (`shown`: names without ``.md``)
    opens it there (`doc_link`); an in-page anchor stays; any other relative link (a source
    file, the README) cannot open in the dashboard, so its text is kept with the file's
    repository path after it. A dollar sign outside code is escaped: st.markdown would read
    text between two of them ("$50 … $100") as LaTeX.
    """
    title, body = "", text
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith("# "):
            title = line[2:].strip()
            body = "".join(lines[:index] + lines[index + 1 :]).lstrip("\n")
            break

    def rewrite(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        if target.startswith("#") or _SCHEME.match(target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        name = posixpath.basename(path).removesuffix(".md")
        if posixpath.dirname(path) == "" and path.endswith(".md") and name in shown:
            return f"[{label}]({doc_link(name, anchor)})"
        where = posixpath.normpath(posixpath.join("docs", path))
        if label.strip("`") in (where, posixpath.basename(where)):
            return f"`{where}`"
        return f"{label} (`{where}`)"

    body = _MD_LINK.sub(rewrite, body)
    parts, at = [], 0
    for code in _CODE.finditer(body):
        parts += [body[at : code.start()].replace("$", "\\$"), code.group(0)]
        at = code.end()
    return title, "".join([*parts, body[at:].replace("$", "\\$")])
