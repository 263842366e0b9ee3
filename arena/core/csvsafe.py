"""CSV cell rendering shared by every export: stable text, and no spreadsheet formulas."""

import json
from datetime import datetime
from decimal import Decimal
from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise(text: str) -> str:
    """Prefix a text cell that a spreadsheet would run as a formula with a single quote.

    Only text cells are touched: numbers (a negative P/L such as -12.5) stay numbers.
    """
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
