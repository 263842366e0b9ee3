"""A bundle's files as the replay reads them, so that a damaged file is named.

`arena verify` reads files someone else made. A file can be valid JSON or CSV and still not
be the bundle's format: a key or a column missing, `NaN` or `1E+999999` where money is, a row
cut short. Deep in the replay such a file would raise a bare `KeyError: 'side'` or
`InvalidOperation`, naming no file. So every JSON object read is a `Row` that knows its file
and line, and a key it lacks raises `DamagedFile` naming both (a `KeyError` still, for code
that asks and catches); the numbers the replay computes with are checked as each file is
read (`NUMBERS`), and so are the CSV's header and cells. The one "bundle readable" line then
says where: `trades.jsonl line 3: amount 'NaN' is not a finite decimal number`.

What is checked is what the replay turns into a `Decimal`, an `int` or a `float` itself;
values it only compares with its recomputation (the leaderboard's, a trade's `book_fill`)
are mismatches when they differ, not damage.
"""

import csv
import io
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from arena.analytics.replay.format import FILES, PORTFOLIO_COLUMNS

# The JSON Lines files every replay reads (`marks.jsonl`, `books.jsonl`: some replays).
JSONL = tuple(name for name in FILES if name.endswith(".jsonl"))
# `portfolio_snapshots.csv`'s columns and the kind of cell of those the replay computes with.
PORTFOLIO_CELLS = {column: "" for column in PORTFOLIO_COLUMNS} | {
    "agent_id": "int",
    "cash_balance": "decimal",
    "positions_value": "decimal",
    "total_value": "decimal",
    "total_pnl": "decimal",
    "brier_score": "float",
    "num_resolved_bets": "int",
}
# Past any money, share count or price of a bundle by far; within the replay's 28 digits.
MAX_NUMBER = Decimal(10) ** 18
SHOWN_CHARS = 40  # of a bad value, in the line that names it


class DamagedFile(KeyError, ValueError):
    """A bundle file that reads as JSON or CSV but not as the bundle's format: `where` (the
    file, with its line or row) and what is wrong there. A KeyError for a missing key (code
    that catches one still does), a ValueError for a bad value (what the replay catches)."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where, self.problem = where, problem

    def __str__(self) -> str:  # KeyError's would quote the message
        return f"{self.where}: {self.problem}"


class Row(dict[str, Any]):
    """A JSON object of a bundle file that names its file and line when a key is missing."""

    __slots__ = ("where",)

    def __init__(self, where: str, items: Mapping[str, Any]) -> None:
        super().__init__(items)
        self.where = where

    def __missing__(self, key: str) -> Any:
        raise DamagedFile(self.where, f"no {key!r}")


class Members(dict[str, bytes]):
    """A bundle's files by path, naming the one the replay needs and the bundle lacks."""

    def __missing__(self, path: str) -> bytes:
        raise DamagedFile(path, "not in the bundle")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _decimal(value: Any) -> bool:
    """Decimal text, an int or a float the replay can compute with: finite, below 10^18."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return abs(value) < MAX_NUMBER  # floats are finite: `_finite` read them
    if not isinstance(value, str) or len(value) > 64:
        return False
    try:
        number = Decimal(value)
    except InvalidOperation:
        return False
    return number.is_finite() and abs(number) < MAX_NUMBER


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "decimal": (_decimal, "a finite decimal number"),
    "int": (_integer, "an integer"),
}

# Per file: (path of keys, kind). "*" is each element of a list; a missing key is left to
# the replay (it names it through `Row`); null is left to it too (a column may be empty).
NUMBERS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "cohort.json": (
        (("constants", "min_bet"), "decimal"),
        (("constants", "max_bet_fraction"), "decimal"),
        (("constants", "starting_balance"), "decimal"),
        (("constants", "snapshot_interval_minutes"), "int"),
    ),
    "lineup.jsonl": (
        (("agent_id",), "int"),
        (("starting_balance",), "decimal"),
        (("cash_balance",), "decimal"),
    ),
    "trades.jsonl": tuple(
        ((column,), "decimal")
        for column in ("amount", "price", "shares", "cash_before", "realized_pnl")
    ),
    "positions.jsonl": tuple(
        ((column,), "decimal")
        for column in ("shares", "cost_basis", "realized_pnl", "avg_entry_price", "mark_price")
    ),
    "markets.jsonl": ((("prices", "*"), "decimal"),),
    "market_snapshots.jsonl": ((("items", "*", "prices", "*"), "decimal"),),
    "attempts.jsonl": (
        (("tokens_in",), "int"),
        (("tokens_out",), "int"),
        (("latency_ms",), "int"),
        (("cost_usd",), "decimal"),
    ),
    "brier_scores.jsonl": ((("brier_score",), "decimal"),),
    "marks.jsonl": tuple(
        (("provenance", key), "decimal")
        for key in ("mark", "price", "bid_value", "clob_price", "gamma_price")
    ),
}


def _values(value: Any, path: Sequence[str]) -> Iterable[tuple[str, Any]]:
    """(dotted key, value) of every value at `path` under `value` (absent or null: none)."""
    if not path:
        yield "", value
        return
    head, rest = path[0], path[1:]
    if head == "*":
        items = enumerate(value) if isinstance(value, list) else ()
        for index, item in items:
            for key, found in _values(item, rest):
                yield f"[{index}]{key}", found
        return
    if isinstance(value, dict) and value.get(head) is not None:
        for key, found in _values(value[head], rest):
            yield f".{head}{key}", found


def check_numbers(name: str, where: str, row: Any) -> None:
    """Every number `NUMBERS` lists for the file `name` in `row`, or DamagedFile."""
    for path, kind in NUMBERS.get(name, ()):
        ok, wanted = KINDS[kind]
        if len(path) == 1:  # most: one top-level key, read without the walk
            value = row.get(path[0])
            if value is not None and not ok(value):
                raise DamagedFile(where, f"{path[0]} {_shown(value)} is not {wanted}")
            continue
        for key, value in _values(row, path):
            if value is not None and not ok(value):
                raise DamagedFile(where, f"{key.lstrip('.')} {_shown(value)} is not {wanted}")


def _constant(where: str) -> Callable[[str], Any]:
    def refuse(constant: str) -> Any:
        raise DamagedFile(where, f"{constant} is not a number a bundle holds (JSON has none)")

    return refuse


def _finite(where: str) -> Callable[[str], float]:
    def read(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise DamagedFile(where, f"{_shown(text)} is not a finite number")
        return value

    return read


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedFile(name, f"not UTF-8 text (byte {exc.start:,})") from None


def _object(name: str, where: str, text: str) -> Row:
    try:
        value = json.loads(
            text,
            object_hook=lambda items: Row(where, items),
            parse_constant=_constant(where),
            parse_float=_finite(where),
        )
    except json.JSONDecodeError as exc:
        raise DamagedFile(where, f"not JSON ({exc.msg})") from None
    except RecursionError:
        raise DamagedFile(where, "JSON nested deeper than the reader's stack") from None
    if not isinstance(value, Row):
        raise DamagedFile(where, "not a JSON object")
    check_numbers(name, where, value)
    return value


def read_document(name: str, data: bytes) -> dict[str, Any]:
    """A bundle's JSON file (`cohort.json`): one object, checked."""
    return _object(name, name, _text(name, data))


def read_rows(name: str, data: bytes) -> list[dict[str, Any]]:
    """A bundle's JSON Lines file: one checked object per non-blank line, each naming its
    file and line."""
    return [
        _object(name, f"{name} line {number}", line)
        for number, line in enumerate(_text(name, data).splitlines(), start=1)
        if line.strip()
    ]


# A CSV cell of each kind, as the builder writes it (`format.plain`: fixed-point decimals).
# The float's exponent has at most three digits: past 1e308 it reads as inf, which compares
# (a mismatch) but raises nothing.
CELLS: dict[str, tuple[re.Pattern[str], str]] = {
    "decimal": (re.compile(r"-?[0-9]{1,30}(?:\.[0-9]{1,30})?", re.ASCII), "a decimal number"),
    "int": (re.compile(r"[0-9]{1,18}", re.ASCII), "an integer"),
    "float": (
        re.compile(r"(?:-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]{1,3})?)?", re.ASCII),
        "a finite number or empty",
    ),
}


def read_table(
    name: str, data: bytes, columns: Mapping[str, str]
) -> tuple[list[str], list[list[str]], dict[str, int]]:
    """A bundle's CSV: its header (which must hold every one of `columns`), its rows (each
    as long as the header, each cell of a column of `columns` with a kind of that kind) and
    where each column is."""
    try:
        rows = list(csv.reader(io.StringIO(_text(name, data))))
    except csv.Error as exc:
        raise DamagedFile(name, f"not CSV ({exc})") from None
    header, body = (rows[0], rows[1:]) if rows else ([], [])
    missing = [column for column in columns if column not in header]
    if missing:
        raise DamagedFile(name, f"no column {', '.join(map(repr, missing))} in its header")
    at = {column: header.index(column) for column in columns}
    width = len(header)
    if any(len(row) != width for row in body):  # found, then named: the usual case is fast
        number, row = next((n, r) for n, r in enumerate(body, start=2) if len(r) != width)
        raise DamagedFile(f"{name} row {number}", f"{len(row)} cells, its header {width}")
    for column, kind in columns.items():
        if not kind:
            continue
        pattern, wanted = CELLS[kind]
        index = at[column]
        if not all(map(pattern.fullmatch, (row[index] for row in body))):
            number, cell = next(
                (n, r[index])
                for n, r in enumerate(body, start=2)
                if not pattern.fullmatch(r[index])
            )
            raise DamagedFile(f"{name} row {number}", f"{column} {_shown(cell)} is not {wanted}")
    return header, body, at
