"""Rows of a select → a typed DataFrame, a column at a time.

Why column-wise: a list read model returns thousands of rows of a dozen or more columns, and
converting them value by value (SQLAlchemy's per-row type processing, then a dict per row,
then a Python call per value) cost several times the query itself. Here the driver's tuples
are transposed once, each column gets its type's processing once, and the conversion to the
documented dtype is a numpy / pandas call on the whole column.

The two column types of our own are handled without a Python call per value: a `Fixed`
column's integer units become float dollars by one division (exactly the float of the stored
Decimal: both round the same exact quotient once), and a `UTCDateTime` column's driver values
(naive UTC text on SQLite, UTC datetimes on PostgreSQL) are parsed by numpy or pandas in one
call.
"""

import json
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import numpy as np
import pandas as pd
import pyarrow as pa
from sqlalchemy import ColumnElement, Select, Text, cast, func
from sqlalchemy.engine import Connection, Dialect, Result
from sqlalchemy.types import TypeEngine

from arena.storage.dbtypes import Fixed, UTCDateTime

# Column kinds: how each documented column is converted.
MONEY, FLOAT, INT, NULLABLE_INT, TIME, TEXT, BOOL, OBJECT = (
    "money",
    "float",
    "int",
    "nullable_int",
    "time",
    "text",
    "bool",
    "object",
)
Kinds = Mapping[str, str]
# One column's values: Python values, or an array a caller or `_processor` already built (a
# pandas array is one too, typed Any: pandas ships no type information here).
Values: TypeAlias = Sequence[Any] | np.ndarray


def _floats(values: Sequence[Any]) -> np.ndarray:
    """float64 of numbers, Decimals and None (→ NaN)."""
    return np.array(values, dtype="float64")


def _ints(values: Sequence[Any]) -> np.ndarray:
    """int64 of counts; a missing count (None) is 0."""
    try:
        return np.array(values, dtype="int64")
    except TypeError:  # a None among them
        return np.array([int(v or 0) for v in values], dtype="int64")


def _times(values: Sequence[Any]) -> Any:
    """UTC timestamps (microseconds) of datetimes or of SQLite's naive-UTC text.

    The text goes through numpy's ISO parser in one call (a few times faster than pandas'
    per-format parser, and it takes text with and without a fraction alike); anything it
    refuses, such as aware datetimes or an offset, goes to `pd.to_datetime`.
    """
    first = next((v for v in values if v is not None), None)
    if first is None:  # no rows, or all NULL (e.g. runs still running): no parser needed
        blank = np.full(len(values), np.datetime64("NaT"), dtype="datetime64[us]")
        return pd.DatetimeIndex(blank).tz_localize("UTC").array
    if type(first) is str:  # SQLite: a UTCDateTime column comes back as text throughout
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # numpy only warns on an offset it would drop
                naive = np.array(values, dtype="datetime64[us]")
            return pd.DatetimeIndex(naive).tz_localize("UTC").array
        except (ValueError, Warning):
            pass
    parsed = pd.to_datetime(pd.Series(values, dtype="object"), utc=True, format="ISO8601")
    return parsed.dt.as_unit("us").array


def epoch_times(seconds: Any) -> Any:
    """UTC timestamps (microseconds, a TIME column's dtype) of whole epoch seconds."""
    micros = np.asarray(seconds, dtype=np.int64) * 1_000_000
    return pd.DatetimeIndex(micros.astype("datetime64[us]")).tz_localize("UTC").array


def _texts(values: Sequence[Any]) -> Any:
    """A "string" array; pyarrow builds it from Python strings in one call."""
    try:
        return pd.array(pa.array(values, type=pa.large_string()), dtype="string")
    except (pa.ArrowException, TypeError):  # a non-text value: pandas converts it
        return pd.array(values, dtype="string")


def column_array(values: Values, kind: str) -> Any:
    """One column of Python values as an array of the dtype of `kind` (an array already,
    as a caller built it, is taken as it is): what `columns_frame` makes of each column,
    for a caller that reorders or repeats the typed values (`take`) before building it."""
    if isinstance(values, np.ndarray | pd.api.extensions.ExtensionArray):
        return values
    if kind in (MONEY, FLOAT):
        return _floats(values)
    if kind == INT:
        return _ints(values)
    if kind == NULLABLE_INT:
        return pd.array([None if v is None else int(v) for v in values], "Int64")
    if kind == TIME:
        return _times(values)
    if kind == TEXT:
        return _texts(values)
    if kind == BOOL:
        return np.array([bool(v) for v in values], dtype="bool")
    array = np.empty(len(values), dtype="object")
    array[:] = values
    return array


def convert(values: Sequence[Any], kind: str) -> pd.Series:
    """One column of Python values as a Series of the dtype of `kind`."""
    return pd.Series(column_array(values, kind))


def columns_frame(columns: Mapping[str, Values], kinds: Kinds, rows: int) -> pd.DataFrame:
    """A frame with exactly the columns of `kinds`, in that order; a column missing from
    `columns` is all None (then 0, NaN, NaT or <NA> by its kind). A column given as a numpy
    or pandas array must already have its kind's dtype."""
    blank: Values = [None] * rows
    data = {name: column_array(columns.get(name, blank), kind) for name, kind in kinds.items()}
    return pd.DataFrame(data, columns=list(kinds), copy=False)


def _processor(
    typ: TypeEngine[Any], kind: str | None, dialect: Dialect, coltype: Any
) -> Callable[[list[Any]], Values]:
    """How one driver column becomes the values `convert` expects: a `Fixed` money column
    by one division of its integer units, a `UTCDateTime` column as the driver gives it (for
    `_times` to parse in one call), with no Python call per value (see the module
    docstring); any other column through its type's result processor."""
    if isinstance(typ, Fixed) and kind in (MONEY, FLOAT):
        scale = float(10**typ.places)
        return lambda values: _floats(values) / scale
    if isinstance(typ, UTCDateTime) and kind == TIME:
        return lambda values: values
    process = typ.dialect_impl(dialect).result_processor(dialect, coltype)
    if process is None:
        return lambda values: values
    return lambda values: [None if v is None else process(v) for v in values]


def query_columns(
    conn: Connection, query: Select[Any], kinds: Kinds
) -> tuple[dict[str, Values], int]:
    """Run `query`: its columns by label, each column's values processed for its kind, and
    the row count (for a caller that adds columns before `columns_frame`)."""
    result = conn.execute(query)
    try:
        labels = list(result.keys())
        description = result.cursor.description or ()
        raw = result.cursor.fetchall()
    finally:
        result.close()
    types = [column.type for column in query.selected_columns]
    transposed = list(zip(*raw, strict=True)) if raw else [() for _ in labels]
    columns = {
        label: _processor(typ, kinds.get(label), conn.dialect, desc[1])(list(values))
        for label, typ, desc, values in zip(labels, types, description, transposed, strict=True)
    }
    return columns, len(raw)


def query_frame(conn: Connection, query: Select[Any], kinds: Kinds) -> pd.DataFrame:
    """Run `query` and return its rows typed by `kinds` (matched by column label), built
    column-wise from the driver's tuples (see the module docstring)."""
    columns, rows = query_columns(conn, query, kinds)
    return columns_frame(columns, kinds, rows)


def raw_rows(conn: Connection, query: Select[Any]) -> list[tuple[Any, ...]]:
    """The driver's own rows (tuples for sqlite3 and psycopg) of a select of plain integer
    or text columns (no column type to process): SQLAlchemy's per-row Row objects cost more
    than the query when a curve reads tens of thousands of (agent, bucket, units) rows."""
    result = conn.execute(query)
    try:
        return list(result.cursor.fetchall())
    finally:
        result.close()


def result_frame(result: Result[Any]) -> pd.DataFrame:
    """A DataFrame of a result's rows, built from plain tuples: handed Row objects, pandas
    probes each for namedtuple fields (seconds on a hundred thousand rows)."""
    return pd.DataFrame([tuple(row) for row in result.all()], columns=list(result.keys()))


# A non-empty list of strings exactly as `json.dumps` writes it when no character needs
# escaping (an empty list still goes through `empty`).
_PLAIN_LIST = re.compile(r'\["[^"\\\x00-\x1f]*"(?:, "[^"\\\x00-\x1f]*")*\]')


def json_as_stored(column: Any, empty: str | None = None) -> Any:
    """SQL: a JSON column's text exactly as stored, labelled as the column; with `empty`, a
    JSON or SQL null reads as `empty`.

    Its writer is SQLAlchemy's JSON type, `json.dumps` with default options, and
    PostgreSQL's `json` type keeps the text verbatim: so this is the same text on both
    backends, keys in the order written, and no driver decodes it only to be encoded again.
    """
    text: ColumnElement[Any] = cast(column, Text)
    if empty is not None:
        text = func.coalesce(func.nullif(text, "null"), empty)
    return text.label(column.key)


def json_texts(values: Iterable[Any], empty: Any, **dumps: Any) -> pd.Series:
    """A JSON column (decoded values, or JSON text) as canonical JSON text: exactly
    `json.dumps(value or empty, **dumps)`.

    Text that already is that (a list of strings none of which needs escaping, as a market's
    outcomes and prices almost always are) is kept as it is: checking costs a fraction of
    decoding and encoding it again. Any other text is decoded and encoded once more.
    """
    encode = json.JSONEncoder(**dumps).encode
    ascii_only = dumps.get("ensure_ascii", True)
    texts = []
    for value in values:
        if isinstance(value, str):
            if _PLAIN_LIST.fullmatch(value) and (value.isascii() or not ascii_only):
                texts.append(value)
                continue
            value = json.loads(value)
        texts.append(encode(value or empty))
    return pd.Series(_texts(texts))
