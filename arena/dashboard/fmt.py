"""How the dashboard writes a number for a person: money, percentages, probabilities, intervals.

Why one module: a researcher compares figures across pages, so `$10,756.54`, `+12.5%
[−3.1, +27.9]` and `0.245 [0.201, 0.290]` must read the same everywhere, and a missing value is
always "—" (never `None` or `nan`). Negative numbers use the minus sign (−), not a hyphen.
These are for display only: tables keep raw numbers for sorting and every CSV keeps raw
numbers; pages format through `st.column_config` / a Styler, never by rewriting the data.
Pure functions, no Streamlit.
"""

import math
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


def share(value: Any, places: int = 0) -> str:
    """78%: a 0–1 share as a percentage."""
    return DASH if missing(value) else f"{float(value):.{places}%}"


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
