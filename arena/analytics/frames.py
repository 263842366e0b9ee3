"""Rows of a select → a typed DataFrame, a column at a time.

Why column-wise: a list read model returns thousands of rows of a dozen or more columns, and
converting them value by value (SQLAlchemy's per-row type processing, then a dict per row,
then a Python call per value) cost several times the query itself. Here the driver's tuples
are transposed once, each column gets its type's processing once, and the conversion to the
documented dtype is a numpy / pandas call on the whole column.

The two column types of our own are handled without a Python call per value: a `Fixed`
column's integer units become float dollars by one division (exactly the float of the stored
Decimal: both round the same exact quotient once), and a `UTCDateTime` column's driver values
(naive UTC text on SQLite, aware datetimes on PostgreSQL) go straight to `pd.to_datetime`.
"""

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Select
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.types import TypeEngine

from arena.dbtypes import Fixed, UTCDateTime

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


def _floats(values: Sequence[Any]) -> np.ndarray:
    """float64 of numbers, Decimals and None (→ NaN)."""
    return np.array(values, dtype="float64")


def _ints(values: Sequence[Any]) -> np.ndarray:
    """int64 of counts; a missing count (None) is 0."""
    try:
        return np.array(values, dtype="int64")
    except TypeError:  # a None among them
        return np.array([int(v or 0) for v in values], dtype="int64")


def convert(values: Sequence[Any], kind: str) -> pd.Series:
    """One column of Python values as the dtype of `kind`."""
    if kind in (MONEY, FLOAT):
        return pd.Series(_floats(values), dtype="float64")
    if kind == INT:
        return pd.Series(_ints(values), dtype="int64")
    if kind == NULLABLE_INT:
        return pd.Series(pd.array([None if v is None else int(v) for v in values], "Int64"))
    if kind == TIME:
        return pd.to_datetime(pd.Series(values, dtype="object"), utc=True)
    if kind == TEXT:
        return pd.Series(values, dtype="string")
    if kind == BOOL:
        return pd.Series([bool(v) for v in values], dtype="bool")
    return pd.Series(values, dtype="object")


def columns_frame(columns: Mapping[str, Sequence[Any]], kinds: Kinds, rows: int) -> pd.DataFrame:
    """A frame with exactly the columns of `kinds`, in that order; a column missing from
    `columns` is all None (then 0, NaN, NaT or <NA> by its kind)."""
    blank: Sequence[Any] = [None] * rows
    data = {name: convert(columns.get(name, blank), kind) for name, kind in kinds.items()}
    return pd.DataFrame(data, columns=list(kinds))


def _processor(
    typ: TypeEngine[Any], kind: str | None, dialect: Dialect, coltype: Any
) -> Callable[[list[Any]], Sequence[Any]]:
    """How one driver column becomes the values `convert` expects."""
    if isinstance(typ, Fixed) and kind in (MONEY, FLOAT):
        scale = float(10**typ.places)
        return lambda values: _floats(values) / scale
    if isinstance(typ, UTCDateTime) and kind == TIME:
        return lambda values: values
    process = typ.dialect_impl(dialect).result_processor(dialect, coltype)
    if process is None:
        return lambda values: values
    return lambda values: [None if v is None else process(v) for v in values]


def query_frame(conn: Connection, query: Select[Any], kinds: Kinds) -> pd.DataFrame:
    """Run `query` and return its rows typed by `kinds` (matched by column label), built
    column-wise from the driver's tuples (see the module docstring)."""
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
    return columns_frame(columns, kinds, len(raw))


def json_texts(values: Iterable[Any], empty: Any, **dumps: Any) -> pd.Series:
    """A JSON column (decoded values) as canonical JSON text, `empty` standing in for None:
    the same text on both backends, whatever the driver handed back."""
    return pd.Series([json.dumps(v or empty, **dumps) for v in values], dtype="string")
