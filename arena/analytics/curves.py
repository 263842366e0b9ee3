"""Portfolio value over time per family, bucketed in SQL so a chart never loads every snapshot.

Why server-side: an agent writes a snapshot every 10 minutes (52,560 a year, times agents,
times cohorts); the browser needs a few hundred points. The database groups the snapshots of
the chosen range into time buckets and returns each agent's LAST snapshot per bucket (the
value at the bucket's end), so only agents × buckets rows leave the database.

Per family the agents' values are summed per bucket. An agent keeps its last value until its
next snapshot (carry-forward), including after its cohort completed and stopped snapshotting —
otherwise a family's P/L "summed over cohorts" would drop a finished cohort's result. An agent
counts only from its first snapshot on (a cohort that has not started adds no capital yet).

The range is measured back from the latest snapshot in scope, not from the wall clock, so a
demo season from another year and a live database behave the same.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import BigInteger, func, select, type_coerce
from sqlalchemy.engine import Engine

from arena.analytics.cohorts import (
    AGENTS,
    COHORTS,
    FAMILIES,
    FLOAT,
    INT,
    MONEY,
    SNAPSHOTS,
    TEXT,
    TIME,
    agent_ids,
    fetch,
    newest_snapshots,
    raw_rows,
    typed_frame,
)
from arena.engine.rollups import WIDTHS
from arena.errors import InputError
from arena.sqltime import epoch_bucket
from arena.tables import PORTFOLIO_ROLLUPS as ROLLUPS

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR

# Range → (how far back from the latest snapshot, bucket width in seconds). ALL picks its
# width from BUCKET_LADDER so the whole span fits in about MAX_POINTS buckets.
RANGES: dict[str, tuple[timedelta | None, int]] = {
    "10M": (timedelta(minutes=10), 10 * MINUTE),
    "1H": (timedelta(hours=1), 10 * MINUTE),
    "1D": (timedelta(days=1), 10 * MINUTE),
    "1W": (timedelta(weeks=1), HOUR),
    "1M": (timedelta(days=30), 4 * HOUR),
    "3M": (timedelta(days=90), 12 * HOUR),
    "ALL": (None, 0),
}
BUCKET_LADDER = (10 * MINUTE, 30 * MINUTE, HOUR, 4 * HOUR, 12 * HOUR, DAY, 7 * DAY)
MAX_POINTS = 300
UNITS = ("$", "%")

CURVE_COLUMNS: dict[str, str] = {
    "family_id": TEXT,
    "display_name": TEXT,
    "kind": TEXT,
    "at": TIME,
    "total_value": MONEY,
    "total_pnl": MONEY,
    "capital": MONEY,
    "return_pct": FLOAT,
    "agents": INT,
}


@dataclass(frozen=True)
class Window:
    """The instants a range covers and the bucket width used (for captions and tests)."""

    start: datetime | None
    end: datetime | None
    bucket_seconds: int


def bucket_width(range_key: str, span: timedelta | None) -> int:
    """Bucket width in seconds for a range; for ALL the smallest ladder step that keeps the
    span under `MAX_POINTS` buckets."""
    if range_key not in RANGES:
        raise InputError(f"unknown range {range_key!r}", f"choose one of {', '.join(RANGES)}")
    width = RANGES[range_key][1]
    if width:
        return width
    seconds = span.total_seconds() if span is not None else 0.0
    for step in BUCKET_LADDER:
        if seconds / step <= MAX_POINTS:
            return step
    return BUCKET_LADDER[-1]


def _scope(query: Any, cohort: int | None, family: str | None) -> Any:
    if cohort is not None:
        query = query.where(COHORTS.c.number == cohort)
    if family is not None:
        query = query.where(AGENTS.c.family_id == family)
    return query


def _per_agent(aggregate: Any) -> Any:
    """Scalar subquery: `aggregate` over the snapshots of the enclosing query's agent."""
    return (
        select(aggregate)
        .where(SNAPSHOTS.c.agent_id == AGENTS.c.id)
        .correlate(AGENTS)
        .scalar_subquery()
    )


def curve_window(
    engine: Engine, range_key: str = "ALL", *, cohort: int | None = None, family: str | None = None
) -> Window:
    """The window `portfolio_curves` uses for these arguments (None ends: no snapshot yet)."""
    # Per agent, min and max are index seeks on (agent_id, slot): no scan of the snapshots.
    ends = _scope(
        select(
            _per_agent(func.min(SNAPSHOTS.c.slot)).label("first"),
            _per_agent(func.max(SNAPSHOTS.c.slot)).label("last"),
        )
        .select_from(AGENTS)
        .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id),
        cohort,
        family,
    ).subquery("ends")
    query = select(func.min(ends.c.first), func.max(ends.c.last))
    with engine.connect() as conn:
        first, last = conn.execute(query).one()
    if last is None:
        return Window(None, None, bucket_width(range_key, None))
    back = RANGES[range_key][0] if range_key in RANGES else None
    start = last - back if back is not None else first
    start = max(start, first)
    return Window(start, last, bucket_width(range_key, last - start))


def portfolio_curves(
    engine: Engine,
    range_key: str = "ALL",
    *,
    cohort: int | None = None,
    family: str | None = None,
) -> pd.DataFrame:
    """Portfolio value per family over time for one range (10M, 1H, 1D, 1W, 1M, 3M, ALL).

    Scope: every cohort, or cohort number `cohort`; every family, or `family`. One row per
    family × bucket, ordered by family then time. Columns:

    - ``family_id``, ``display_name``, ``kind`` (llm | baseline)
    - ``at``: the bucket's start (UTC); buckets are aligned to multiples of their width
    - ``total_value`` ($): the family's agents' portfolio values summed, each agent's latest
      snapshot at or before the bucket's end (carried forward); ``total_pnl`` ($): the same
      for P/L — the leaderboard's "summed over cohorts" P/L as a curve
    - ``capital`` ($): the starting balances of the agents counted; ``return_pct``:
      total_pnl / capital × 100
    - ``agents``: how many agents the bucket sums (it grows when a new cohort starts)
    """
    window = curve_window(engine, range_key, cohort=cohort, family=family)
    if window.end is None or window.start is None:
        return typed_frame([], CURVE_COLUMNS)
    width = window.bucket_seconds
    agent_scope = agent_ids(cohort, family)
    first_bucket = int(window.start.timestamp()) // width * width
    if width in WIDTHS:  # one pre-computed row per agent × bucket
        in_range = select(
            ROLLUPS.c.agent_id,
            ROLLUPS.c.bucket,
            _units(ROLLUPS.c.total_value),
            _units(ROLLUPS.c.total_pnl),
        ).where(
            ROLLUPS.c.width == width,
            ROLLUPS.c.bucket >= first_bucket,
            ROLLUPS.c.agent_id.in_(agent_scope),
        )
    else:  # sub-hour buckets span at most days: group the snapshots of the range
        in_range = _snapshots_in_range(window.start, width, agent_scope, engine.dialect.name)
    # Each agent's last value before the range: the carry-forward seed of the first bucket.
    newest = newest_snapshots(before=window.start, agents=agent_scope)
    seeds = select(
        newest.c.agent_id, _units(SNAPSHOTS.c.total_value), _units(SNAPSHOTS.c.total_pnl)
    ).join(SNAPSHOTS, SNAPSHOTS.c.id == newest.c.snapshot_id)
    agents = _scope(
        select(
            AGENTS.c.id.label("agent_id"),
            AGENTS.c.family_id,
            func.coalesce(FAMILIES.c.display_name, AGENTS.c.display_name).label("display_name"),
            func.coalesce(FAMILIES.c.kind, "llm").label("kind"),
            AGENTS.c.starting_balance,
        )
        .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id),
        cohort,
        family,
    )
    with engine.connect() as conn:
        points = raw_rows(conn, in_range)
        seed_rows = raw_rows(conn, seeds)
        agent_rows = fetch(conn, agents)
    columns = ("agent_id", "bucket", "total_value", "total_pnl")
    rows = [row for row in points if row[1] is not None]
    rows += [(agent, first_bucket - width, value, pnl) for agent, value, pnl in seed_rows]
    frame = _last_per_bucket(pd.DataFrame.from_records(rows, columns=columns))
    return _family_sums(frame, agent_rows, first_bucket, width)


UNITS_PER_DOLLAR = 1e6  # Fixed(6) money is stored as integer micro-dollars


def _units(column: Any) -> Any:
    """A money column read as its stored integer micro-dollars (a chart needs floats, and
    tens of thousands of Decimals cost more than the query)."""
    return type_coerce(column, BigInteger).label(column.name)


def _snapshots_in_range(start: datetime, width: int, agent_scope: Any, dialect: str) -> Any:
    """The snapshots from `start` on with their bucket, in (agent, slot) order.

    Sub-hour buckets hold at most three 10-minute slots (one at the snapshot cadence), so
    every row comes back and `_last_per_bucket` keeps each agent's last one per bucket: a
    range scan of the (agent_id, slot) index, no GROUP BY and self-join in SQL.
    """
    return (
        select(
            SNAPSHOTS.c.agent_id,
            epoch_bucket(SNAPSHOTS.c.slot, width, dialect).label("bucket"),
            _units(SNAPSHOTS.c.total_value),
            _units(SNAPSHOTS.c.total_pnl),
        )
        .where(SNAPSHOTS.c.slot >= start, SNAPSHOTS.c.agent_id.in_(agent_scope))
        .order_by(SNAPSHOTS.c.agent_id, SNAPSHOTS.c.slot)
    )


def _last_per_bucket(frame: pd.DataFrame) -> pd.DataFrame:
    """Each agent's last row per bucket: snapshot rows arrive in (agent, slot) order; rollup
    rows and carry-forward seeds are one per agent × bucket already."""
    return frame.drop_duplicates(["agent_id", "bucket"], keep="last").reset_index(drop=True)


def _family_sums(
    frame: pd.DataFrame, agent_rows: list[dict[str, Any]], first: int, width: int
) -> pd.DataFrame:
    """Carry each agent's value forward across buckets, then sum per family and bucket.

    `frame`: one row per agent × bucket (agent_id, bucket, total_value and total_pnl in
    integer micro-dollars).
    """
    if frame.empty:
        return typed_frame([], CURVE_COLUMNS)
    frame["bucket"] = frame["bucket"].astype("int64")
    frame["total_value"] = frame["total_value"].astype("float64") / UNITS_PER_DOLLAR
    frame["total_pnl"] = frame["total_pnl"].astype("float64") / UNITS_PER_DOLLAR
    last = int(frame["bucket"].max())
    buckets = np.arange(first - width, last + width, width, dtype=np.int64)
    values = frame.pivot(index="bucket", columns="agent_id", values="total_value")
    pnls = frame.pivot(index="bucket", columns="agent_id", values="total_pnl")
    values = values.reindex(buckets).ffill()
    pnls = pnls.reindex(buckets).ffill()
    info = pd.DataFrame(agent_rows).set_index("agent_id")
    info["starting_balance"] = info["starting_balance"].map(float)
    present = values.notna()
    starting = info["starting_balance"].reindex(values.columns).to_numpy()
    capital = present.to_numpy() * starting
    out: list[pd.DataFrame] = []
    for family_id, group in info.loc[info.index.isin(values.columns)].groupby("family_id"):
        ids = list(group.index)
        cols = [values.columns.get_loc(agent) for agent in ids]
        counted = present[ids].sum(axis=1)
        part = pd.DataFrame(
            {
                "family_id": family_id,
                "display_name": group["display_name"].iloc[0],
                "kind": group["kind"].iloc[0],
                "bucket": buckets,
                "total_value": values[ids].sum(axis=1, min_count=1).to_numpy(),
                "total_pnl": pnls[ids].sum(axis=1, min_count=1).to_numpy(),
                "capital": capital[:, cols].sum(axis=1),
                "agents": counted.to_numpy(),
            }
        )
        out.append(part[(part["bucket"] >= first) & (part["agents"] > 0)])
    result = pd.concat(out, ignore_index=True) if out else pd.DataFrame()
    if result.empty:
        return typed_frame([], CURVE_COLUMNS)
    result["at"] = pd.to_datetime(result["bucket"], unit="s", utc=True)
    result["return_pct"] = result["total_pnl"] / result["capital"] * 100.0
    result = result.sort_values(["family_id", "at"], kind="stable").reset_index(drop=True)
    return typed_frame(result.to_dict("records"), CURVE_COLUMNS)
