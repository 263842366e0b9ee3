"""How the dashboard writes a number for a person: money, percentages, probabilities, intervals.

Why one module: a researcher compares figures across pages, so `$10,756.54`, `+12.5%
[−3.1, +27.9]` and `0.245 [0.201, 0.290]` must read the same everywhere, and a missing value is
always "—" (never `None` or `nan`). Negative numbers use the minus sign (−), not a hyphen.
These are for display only: tables keep raw numbers for sorting and every CSV keeps raw
numbers; pages format through `st.column_config` (`GRID_FORMATS`: the same formats, drawn by
the browser) / a Styler, never by rewriting the data. Pure functions, no Streamlit.
"""

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

DASH = "—"
MINUS = "−"


def missing(value: Any) -> bool:
    """True for None, NaN, NaT and pandas' NA (what a table would show as None/nan)."""
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or array cell is not "missing"
        return False


def _signed(number: float, text: str) -> str:
    """`text` (the absolute value, written) with a minus when `number` is below zero as shown."""
    return f"{MINUS}{text}" if number < 0 and round(abs(number), 2) != 0 else text


def money(value: Any) -> str:
    """$10,756.54 / −$1,234.56."""
    if missing(value):
        return DASH
    number = float(value)
    return _signed(number, f"${abs(number):,.2f}")


def signed_money(value: Any) -> str:
    """+$756.54 / −$1,234.56 (a P/L)."""
    if missing(value):
        return DASH
    number = float(value)
    text = f"${abs(number):,.2f}"
    return _signed(number, text) if number < 0 else f"+{text}"


def cost(value: Any) -> str:
    """An API cost in dollars: cents are too coarse for one call ($0.0123)."""
    if missing(value):
        return DASH
    number = float(value)
    return f"${number:,.2f}" if abs(number) >= 100 else f"${number:,.4f}"


def _pct_number(number: float, places: int) -> str:
    text = f"{abs(number):,.{places}f}"
    if number < 0 and float(text.replace(",", "")) != 0:
        return f"{MINUS}{text}"
    return f"+{text}"


def signed_pct(value: Any, places: int = 1) -> str:
    """+12.5% / −3.1% (a return in percent)."""
    return DASH if missing(value) else f"{_pct_number(float(value), places)}%"


def pct_interval(value: Any, low: Any, high: Any, places: int = 1) -> str:
    """+12.5% [−3.1, +27.9]: a return with its interval (the point alone when no interval)."""
    if missing(value):
        return DASH
    point = signed_pct(value, places)
    if missing(low) or missing(high):
        return point
    return f"{point} [{_pct_number(float(low), places)}, {_pct_number(float(high), places)}]"


def replicate_range(count: Any, low: Any, high: Any, places: int = 1) -> str:
    """A family's replicate spread: "3 × +5.0% … +51.7%" (its lowest and highest replicate's
    return); "—" with one agent per cohort."""
    if missing(count) or int(count) <= 1 or missing(low) or missing(high):
        return DASH
    return f"{int(count)} × {signed_pct(low, places)} … {signed_pct(high, places)}"


def prob(value: Any, places: int = 3) -> str:
    """0.245: a probability or a Brier score."""
    return DASH if missing(value) else f"{float(value):.{places}f}"


def signed_prob(value: Any, places: int = 3) -> str:
    """+0.012 / −0.034: a difference of probabilities or Brier scores."""
    if missing(value):
        return DASH
    number = float(value)
    text = f"{abs(number):.{places}f}"
    if number < 0 and float(text) != 0:
        return f"{MINUS}{text}"
    return f"+{text}"


def prob_interval(value: Any, low: Any, high: Any, places: int = 3, *, signed: bool = False) -> str:
    """0.245 [0.201, 0.290] (with `signed`, +0.012 [−0.004, +0.030])."""
    one = signed_prob if signed else prob
    if missing(value):
        return DASH
    if missing(low) or missing(high):
        return one(value, places)
    return f"{one(value, places)} [{one(low, places)}, {one(high, places)}]"


def _significant_places(numbers: list[float], digits: int) -> int:
    """Decimals that give the largest of `numbers` `digits` significant digits (0 to 8)."""
    largest = max((abs(n) for n in numbers if math.isfinite(n)), default=0.0)
    if largest == 0:
        return digits - 1
    return min(8, max(0, digits - 1 - math.floor(math.log10(largest))))


def rate_interval(value: Any, low: Any, high: Any, digits: int = 3) -> str:
    """+2.15 [+0.51, +4.02] / −0.00154 [−0.00310, +0.00002]: a signed rate of any scale (a
    statistic per dollar spent, whose size depends on how much was spent) with its interval,
    all three with the decimals that give the largest `digits` significant digits. The unit
    goes in the column's name."""
    if missing(value):
        return DASH
    bounds = [] if missing(low) or missing(high) else [float(low), float(high)]
    places = _significant_places([float(value), *bounds], digits)
    written = [signed_prob(number, places) for number in (float(value), *bounds)]
    return written[0] if not bounds else f"{written[0]} [{written[1]}, {written[2]}]"


def share(value: Any, places: int = 0) -> str:
    """78%: a 0–1 share as a percentage."""
    return DASH if missing(value) else f"{float(value):.{places}%}"


def realised_split(resolved_share: Any, marked_share: Any) -> str:
    """62% resolved · 38% marked: how much of the stakes has resolved against how much is still
    at a mark (`arena.analytics.views.realised`); "—" without a stake. Whole percents, except
    that a share strictly between 0 and 1 never shows as 0% or 100% ("<1%", ">99%"): a reader
    must see that some of it is still marked."""
    if missing(resolved_share) or missing(marked_share):
        return DASH
    return (
        f"{_never_all_or_none(resolved_share)} resolved · {_never_all_or_none(marked_share)} marked"
    )


def _never_all_or_none(value: Any) -> str:
    """A share as a whole percent (`share`), but "<1%" / ">99%" for one strictly between 0
    and 1 that would round to 0% or 100%."""
    number = float(value)
    if 0 < number < 0.005:
        return "<1%"
    if 0.995 < number < 1:
        return ">99%"
    return share(number)


def share_interval(value: Any, low: Any, high: Any, places: int = 0) -> str:
    """54% [41, 66]: a 0–1 share with its interval, in percent."""
    if missing(value):
        return DASH
    if missing(low) or missing(high):
        return share(value, places)
    low_pct, high_pct = float(low) * 100, float(high) * 100
    return f"{share(value, places)} [{low_pct:.{places}f}, {high_pct:.{places}f}]"


def rank_interval(rank: Any, low: Any, high: Any) -> str:
    """2 [1, 4]: a rank and its 95% interval ("1" alone when the interval is one rank)."""
    if missing(rank):
        return DASH
    if missing(low) or missing(high):
        return f"{int(rank)}"
    if int(low) == int(high) == int(rank):
        return f"{int(rank)}"
    return f"{int(rank)} [{int(low)}, {int(high)}]"


def count(value: Any) -> str:
    """1,234."""
    if missing(value):
        return DASH
    number = float(value)
    return f"{int(number):,}" if math.isfinite(number) else DASH


def data_size(value: Any) -> str:
    """31.6 kB / 2.4 MB / 512 bytes: a size in bytes, in decimal units (1 kB = 1,000 bytes)."""
    if missing(value):
        return DASH
    number = float(value)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if number >= scale:
            return f"{number / scale:,.1f} {unit}"
    return f"{int(number):,} bytes" if int(number) != 1 else "1 byte"


def percentile(value: Any) -> str:
    """93rd: a percentile (0–100) as an ordinal."""
    if missing(value):
        return DASH
    number = round(float(value))
    suffix = (
        "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"


def text(value: Any) -> str:
    """Any cell as text, "—" when missing."""
    return DASH if missing(value) else str(value)


def money_interval(value: Any, low: Any, high: Any) -> str:
    """+$235.91 [+$96.57, +$375.25]: a signed amount (a P/L difference) with its interval."""
    if missing(value):
        return DASH
    if missing(low) or missing(high):
        return signed_money(value)
    return f"{signed_money(value)} [{signed_money(low)}, {signed_money(high)}]"


def p_value(value: Any) -> str:
    """0.031 / < 0.001: a test's p-value (three decimals; below that, a bound)."""
    if missing(value):
        return DASH
    number = float(value)
    return "< 0.001" if number < 0.001 else f"{number:.3f}"


def price(value: Any) -> str:
    """0.62 / 0.021 / 1.00: a market price (two decimals, a third when it has one)."""
    if missing(value):
        return DASH
    try:
        written = f"{float(value):.3f}"
    except (TypeError, ValueError):
        return DASH
    return written[:-1] if written.endswith("0") else written


NOT_STATED = "not stated"


def stated_probability(p: Any, paid: Any) -> str:
    """stated p 0.62 vs price 0.55 (+0.07): the probability a model stated that the side it
    bought wins, beside the price it paid and, in brackets, p − price (positive: it judged
    the side underpriced); "not stated" when it stated none (missing is never filled in)."""
    if missing(p):
        return NOT_STATED
    text = f"stated p {price(p)}"
    if missing(paid):
        return text
    edge = float(p) - float(paid)
    written = price(abs(edge))
    sign = MINUS if edge < 0 and written.strip("0.") else "+"
    return f"{text} vs price {price(paid)} ({sign}{written})"


def outcome_prices(outcomes: Any, prices: Any, most: int = 3) -> str:
    """Yes 0.62 · No 0.38: a market's outcomes with their prices, from the lists or their
    JSON text as stored. With more than `most` outcomes, the `most` highest-priced come first
    and the rest are counted ("· +3 more"); the market's page lists them all."""
    import json

    def listed(value: Any) -> list[Any]:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return []
        return list(value) if isinstance(value, list | tuple) else []

    names, values = listed(outcomes), listed(prices)
    if not names:
        return DASH
    pairs = list(zip(names, values + [None] * (len(names) - len(values)), strict=False))
    if len(pairs) > most:

        def order(pair: tuple[Any, Any]) -> float:
            try:
                return -float(pair[1])
            except (TypeError, ValueError):
                return 1.0

        shown = sorted(pairs, key=order)[:most]
        rest = f" · +{len(pairs) - most} more"
    else:
        shown, rest = pairs, ""
    return " · ".join(f"{name} {price(value)}" for name, value in shown) + rest


def instant(value: Any) -> str:
    """2026-03-08 00:05 UTC: a point in time (aware or naive UTC), to the minute."""
    if missing(value):
        return DASH
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return f"{stamp:%Y-%m-%d %H:%M} UTC"


def seconds(value: Any) -> str:
    """0.4 s / 12 s / 3 min 05 s: a duration given in seconds."""
    if missing(value):
        return DASH
    number = float(value)
    if number < 10:
        return f"{number:.1f} s"
    if number < 60:
        return f"{number:.0f} s"
    minutes, rest = divmod(round(number), 60)
    return f"{minutes} min {rest:02d} s"


# Every character Markdown (GitHub's, with Streamlit's directives), HTML or LaTeX reads as
# syntax: links and images ([ ] ( ) !), emphasis, code, headings (# and a "===" underline),
# lists, tables, HTML tags and entities (< > &), formulas ($), `:material/…:` icons and
# `:red[…]` colours (:); "=", "&" and "@" too (a setext underline, an entity, an e-mail).
_MARKDOWN_SPECIALS = set("\\`*_{}[]()<>#+-.!|$~:=&@")


# Streamlit also turns a bare "https://…", "www.…" or "name@host.tld" into a link, and it
# finds them in the text AFTER the escapes are read (GitHub-flavoured Markdown's autolink
# literals: a backslash before the ":" or "." does not stop it, checked in Chromium with
# Streamlit 1.67). An invisible WORD JOINER (U+2060) after the scheme, the "www" and the "@"
# does: the text reads the same and is never a link.
WORD_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(https?|ftp|mailto|xmpp|www)(?=[:.])|(@)", re.IGNORECASE)


def escaped(value: Any) -> str:
    """Untrusted text (a URL's value, a market's question, a model's or provider's words, a
    display name) for any element that renders Markdown — st.markdown, st.caption,
    st.warning / st.info / st.error, st.metric, st.subheader, expander and page-link labels:
    every Markdown, HTML and LaTeX character backslash-escaped and every autolink broken, so
    it shows literally and can never turn into a link, an image that the viewer's browser
    fetches, markup or a formula."""
    unlinked = _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, text(value))
    return "".join(f"\\{c}" if c in _MARKDOWN_SPECIALS else c for c in unlinked)


def signed_points(value: Any, places: int = 1) -> str:
    """+2.1 pp / −0.4 pp: a difference of two percentages, in percentage points."""
    return DASH if missing(value) else f"{_pct_number(float(value), places)} pp"


def points(value: Any, places: int = 1) -> str:
    """4.1 pp: a size in percentage points with no direction (a spread, a gap)."""
    return DASH if missing(value) else f"{abs(float(value)):,.{places}f} pp"


def drawdown(value: Any, places: int = 1) -> str:
    """−8.4%: a max drawdown (given in percent of the peak, ≥ 0) written as the fall it is;
    0.0% for a curve that never fell."""
    if missing(value):
        return DASH
    number = abs(float(value))
    text = f"{number:,.{places}f}%"
    return f"{MINUS}{text}" if float(text[:-1].replace(",", "")) != 0 else text


def sharpe(value: Any, se: Any = None, places: int = 2) -> str:
    """0.42 ± 0.18: a Sharpe ratio with its standard error (without one, the ratio alone)."""
    if missing(value):
        return DASH
    number = float(value)
    text = _signed(number, f"{abs(number):.{places}f}")
    return text if missing(se) else f"{text} ± {float(se):.{places}f}"


def rank_of(rank: Any, total: Any) -> str:
    """2 of 6: a rank among `total` ("—" when either is missing, or the rank is 0: unranked)."""
    if missing(rank) or missing(total) or int(rank) < 1:
        return DASH
    return f"{int(rank)} of {int(total)}"


def json_text(value: Any) -> str:
    """A JSON object as a line a person reads, never raw JSON: ``{"rows_written": 11,
    "statuses": {"ok": 11}, "missing": []}`` → ``rows written: 11 · statuses: (ok: 11) ·
    missing: none``. Accepts the decoded value or its JSON text; other text is kept as is."""
    import json

    if missing(value):
        return DASH
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value

    def written(item: Any, nested: bool) -> str:
        if isinstance(item, dict):
            parts = [f"{str(k).replace('_', ' ')}: {written(v, True)}" for k, v in item.items()]
            if not parts:
                return "none"
            return f"({', '.join(parts)})" if nested else " · ".join(parts)
        if isinstance(item, list | tuple):
            return ", ".join(written(v, True) for v in item) or "none"
        if isinstance(item, bool):
            return "yes" if item else "no"
        return DASH if item is None else str(item)

    return written(value, False) if not (isinstance(value, dict) and not value) else DASH


def time(value: Any) -> str:
    """2026-01-04 00:05: a UTC time, to the minute."""
    return DASH if missing(value) else f"{value:%Y-%m-%d %H:%M}"


def day(value: Any) -> str:
    """2026-01-04: a UTC date."""
    return DASH if missing(value) else f"{value:%Y-%m-%d}"


def pattern_writer(pattern: str) -> Any:
    """A writer for a format string ("{:,.2f}"): "—" when missing."""
    return lambda value: DASH if missing(value) else pattern.format(value)


def readable(frame: pd.DataFrame, formats: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """`frame` for a table a person reads, and the formats still to apply to it.

    Streamlit's grid draws a missing cell as "None" whatever a Styler writes for it, so each
    column with a gap becomes text here: written by its writer in `formats` (a function or
    a format string such as ``"{:,.2f}"``), else `time` for a time column, else `text`.
    Columns without gaps keep their raw values and their format (the table's Styler writes
    them; the grid still sorts numbers as numbers). The CSV is never built from this frame.
    """
    out, rest = frame.copy(), dict(formats)
    for column in frame.columns:
        values = frame[column]
        if not values.isna().any():
            continue
        writer = formats.get(column)
        if isinstance(writer, str):
            writer = pattern_writer(writer)
        elif not callable(writer):
            writer = time if pd.api.types.is_datetime64_any_dtype(values) else text
        out[column] = pd.Series([writer(v) for v in values], index=frame.index, dtype=object)
        rest.pop(column, None)
    return out, rest


@dataclass(frozen=True)
class GridFormat:
    """How Streamlit's grid writes a column of raw numbers so each cell reads as `writer`
    writes it: a printf format (sprintf-js, drawn by the browser: no Python per cell), after
    multiplying by `scale`; with `zero_missing`, 0 reads "—" too (an id that is not there).

    Why: a pandas Styler writes every cell in Python on every run (0.3–0.65 s a page of
    ledgers under load); the grid's own formats cost nothing on the server, and the cells
    keep their numbers, so they still sort as numbers. `printf` may also name one of the
    grid's own formats: dollars are drawn as "dollar" (the browser's en-US currency: "$1,234.57",
    "-$12.40"), because sprintf would put the sign after the "$" ("$-12.40"). The text
    differs only in form: a hyphen-minus for "−", no "+" on a gain in dollars, and fixed
    decimals ("0.620" for "0.62")."""

    printf: str
    scale: float = 1.0
    zero_missing: bool = False


def milliseconds(value: Any) -> str:
    """1.2 s: a duration given in milliseconds (`seconds` of it)."""
    return DASH if missing(value) else seconds(float(value) / 1000)


def reference_id(value: Any) -> str:
    """1234: a row's id; "—" when missing or 0 (no such row)."""
    return DASH if missing(value) or int(value) == 0 else str(int(value))


GRID_FORMATS: dict[Callable[..., str], GridFormat] = {
    money: GridFormat("dollar"),
    signed_money: GridFormat("dollar"),
    cost: GridFormat("$%,.4f"),
    signed_pct: GridFormat("%+.1f%%"),
    signed_points: GridFormat("%+.1f pp"),
    share: GridFormat("%.0f%%", scale=100),
    prob: GridFormat("%.3f"),
    signed_prob: GridFormat("%+.3f"),
    price: GridFormat("%.3f"),
    count: GridFormat("%,d"),
    milliseconds: GridFormat("%.1f s", scale=0.001),
    reference_id: GridFormat("%d", zero_missing=True),
}
# Time writers and the grid's (moment.js) format for a time column, shown in UTC.
GRID_TIME_FORMATS: dict[Callable[..., str], str] = {time: "YYYY-MM-DD HH:mm", day: "YYYY-MM-DD"}
# Python format strings a page may give (`readable`'s patterns), and their printf.
_PATTERNS = {"{:,.2f}": "%,.2f", "{:,.0f}": "%,.0f", "{:.2f}": "%.2f", "{:.3f}": "%.3f"}


def grid_format(writer: Any) -> GridFormat | None:
    """`writer`'s (a `fmt` function or a format string) `GridFormat`; None when the grid has
    no equivalent (the table then writes the column in Python)."""
    if isinstance(writer, str):
        printf = _PATTERNS.get(writer)
        return GridFormat(printf) if printf else None
    return GRID_FORMATS.get(writer)
