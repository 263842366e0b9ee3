"""CSV cell rendering shared by every export: stable text, no spreadsheet formulas, and no
bidi controls."""

import json
import re
from datetime import datetime
from decimal import Decimal
from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# Unicode's bidi controls: the embeddings and overrides (U+202A–U+202E), the isolates
# (U+2066–U+2069), the marks (U+200E, U+200F, U+061C). Any of them makes a cell read in
# another order than it is stored.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def bidi_escaped(text: str) -> str:
    """`text` with every bidi control written out as the six characters of its escape
    (U+202E becomes `\\u202e`), as `arena verify` and the terminal lines show it.

    Why an escape, not stripping or U+FFFD: a market question holding a RIGHT-TO-LEFT
    OVERRIDE displays reversed in a spreadsheet (`exe.txt` for `txt.exe`); stripped, the
    researcher would read a cell that is not what the market said without knowing it, and
    U+FFFD would not say which control it was. The escape shows that one was there and which.
    It is a pure function of the text, so a file built twice has the same bytes, and text
    without a bidi control is returned unchanged (a literal backslash stays as it is: text
    already spelling `\\u202e` reads the same as an escaped control, the price of leaving
    every clean cell alone).
    """
    return BIDI_CONTROLS.sub(_visible, text) if BIDI_CONTROLS.search(text) else text


def neutralise(text: str) -> str:
    """A text cell a spreadsheet shows as written: bidi controls escaped (`bidi_escaped`),
    then a cell it would run as a formula prefixed with a single quote.

    Only text cells are touched: numbers (a negative P/L such as -12.5) stay numbers.
    """
    text = bidi_escaped(text)
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def cell(value: Any) -> str | int | float:
    """One CSV cell: ISO-8601 UTC times, exact decimals, JSON for lists and objects."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return value
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | dict):
        return neutralise(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))
    return neutralise(str(value))
