"""Portfolio value over time per family, bucketed in SQL so a chart never loads every snapshot.

Why server-side: an agent writes a snapshot every 10 minutes (52,560 a year, times agents,
times cohorts); the browser needs a few hundred points. The database groups the snapshots of
the chosen range into time buckets and returns each agent's LAST snapshot per bucket (the
value at the bucket's end), so only agents × buckets rows leave the database.

Per family the agents' values are summed per bucket. An agent keeps its last value until its
next snapshot (carry-forward), including after its cohort completed and stopped snapshotting —
otherwise a family's P/L "summed over cohorts" would drop a finished cohort's result. An agent
counts only from its first snapshot on (a cohort that has not started adds no capital yet).

Across cohorts (no cohort chosen) the curves sum one methodology version's plain cohorts, as
the leaderboard's P/L does (`arena.analytics.query.scope`): v1's by default, v2's with
``methodology="v2"``, never both; a protocol group's cohorts with its key (``v1+horizon-14d``);
an extended cohort's agents are drawn when it is chosen. A late entrant's shadow never is.

The range is measured back from the latest snapshot in scope, not from the wall clock, so a
demo season from another year and a live database behave the same. After a season stops
moving (every market settled, or marks that no longer change) the short ranges would draw
only flat lines: `flat_ranges` says which, so the dashboard hides them (`SHORT_RANGES`).

`decision_runs` gives the instants agents decided (the weekly decision runs), which the
charts mark on the time axis.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import BigInteger, Select, func, select, type_coerce
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.frames import (
    FLOAT,
    INT,
    MONEY,
    TEXT,
    TIME,
    columns_frame,
    epoch_times,
    raw_rows,
)
from arena.analytics.query.scope import (
    cohort_id_of,
    cohort_in_scope,
    excluded_cohorts,
    late_entries_present,
    live_cohort_of,
)
from arena.analytics.query.selects import agent_ids, fetch, newest_snapshots, typed_frame
from arena.config import METHODOLOGY_VERSION
from arena.core.errors import InputError
from arena.storage.models import ROLLUP_WIDTHS as WIDTHS
from arena.storage.sqltime import epoch_bucket
from arena.storage.tables import AGENTS, COHORTS, DECISIONS, FAMILIES
from arena.storage.tables import PORTFOLIO_ROLLUPS as ROLLUPS
from arena.storage.tables import PORTFOLIO_SNAPSHOTS as SNAPSHOTS

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
# The ranges drawn from the raw 10-minute snapshots (the rest come from rollups): the ones a
# still portfolio turns into flat lines, checked by `flat_ranges`.
SHORT_RANGES = ("10M", "1H", "1D")

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


# What an all-cohort curve sums: "v1" (its plain cohorts: `cohort_in_scope`'s None), or
# another version's plain cohorts' or a protocol group's ids (`cohort_id_of`); None: no agent
# left out.
Pool = str | tuple[int, ...] | None


def _pool(conn: Connection, cohort: int | None, methodology: str) -> Pool:
    """The version whose plain cohorts an all-cohort curve sums (`cohort` None), or the ids of
    the protocol group `methodology` names, or None when no agent needs leaving out: a cohort
    is chosen, or v1 on a database of v1 cohorts alone (its SQL then is what it was before
    extensions and v2 existed). An unknown version or group → InputError."""
    scope = cohort_id_of(conn, None, methodology)
    if cohort is not None:
        return None
    if scope is None:
        left_out = excluded_cohorts(conn) or late_entries_present(conn)
        return METHODOLOGY_VERSION if left_out else None
    assert not isinstance(scope, int)  # an all-cohort scope is never one cohort's id
    return scope


def curve_window(
    engine: Engine,
    range_key: str = "ALL",
    *,
    cohort: int | None = None,
    family: str | None = None,
    methodology: str = METHODOLOGY_VERSION,
) -> Window:
    """The window `portfolio_curves` uses for these arguments (None ends: no snapshot yet)."""
    with engine.connect() as conn:
        pool = _pool(conn, cohort, methodology)
        first, last = conn.execute(_first_and_last_slot(cohort, family, pool)).one()
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
    methodology: str = METHODOLOGY_VERSION,
) -> pd.DataFrame:
    """Portfolio value per family over time for one range (10M, 1H, 1D, 1W, 1M, 3M, ALL).

    Scope: every plain cohort of version `methodology` (v1 by default; extended cohorts and
    other versions' are left out: `arena.analytics.query.scope`), or cohort number `cohort`,
    extended or not, of whatever version; every family, or `family`. One row per family ×
    bucket, ordered by family then time. Columns:

    - ``family_id``, ``display_name``, ``kind`` (llm | baseline)
    - ``at``: the bucket's start (UTC); buckets are aligned to multiples of their width
    - ``total_value`` ($): the family's agents' portfolio values summed, each agent's latest
      snapshot at or before the bucket's end (carried forward); ``total_pnl`` ($): the same
      for P/L — the leaderboard's "summed over cohorts" P/L as a curve
    - ``capital`` ($): the starting balances of the agents counted; ``return_pct``:
      total_pnl / capital × 100
    - ``agents``: how many agents the bucket sums (it grows when a new cohort starts)
    """
    window = curve_window(engine, range_key, cohort=cohort, family=family, methodology=methodology)
    if window.end is None or window.start is None:
        return typed_frame([], CURVE_COLUMNS)
    width = window.bucket_seconds
    first_bucket = int(window.start.timestamp()) // width * width
    with engine.connect() as conn:
        pool = _pool(conn, cohort, methodology)
        agent_scope = _agent_scope(cohort, family, pool)  # None: all, no filter to join
        if width in WIDTHS:  # one pre-computed row per agent × bucket
            in_range = _rollups_in_range(width, first_bucket, agent_scope)
        else:  # sub-hour buckets span at most days: the snapshots of the range
            in_range = _snapshots_in_range(window.start, width, agent_scope, engine.dialect.name)
        points = _int_rows(conn, in_range)
        seeds = _int_rows(conn, _values_before(window.start, agent_scope))
        agent_rows = fetch(conn, _agents(cohort, family, pool))
    # Each agent's last value before the range seeds the carry-forward into the first bucket.
    seeded = _in_bucket(seeds, first_bucket - width)
    return family_curves(np.concatenate([points, seeded]), agent_rows, first_bucket, width)


def _agent_scope(cohort: int | None, family: str | None, pool: Pool) -> Any:
    """Select of the ids of the agents in scope, or None when every agent is (no cohort and
    no family chosen, and no cohort to leave out)."""
    if cohort is None and family is None and pool is None:
        return None
    return _scope(agent_ids(cohort, family), None, None, pool)


def _scope(query: Any, cohort: int | None, family: str | None, pool: Pool) -> Any:
    """`query` (joining agents and cohorts) restricted to cohort number `cohort` and
    `family`, either optional; `pool`: to the agents of that version's plain cohorts (v1's
    scope is `cohort_in_scope`'s None, exactly the SQL it was before v2)."""
    if cohort is not None:
        query = query.where(COHORTS.c.number == cohort)
    if family is not None:
        query = query.where(AGENTS.c.family_id == family)
    if pool is not None:
        scope = None if isinstance(pool, str) else pool  # "v1": its SQL as before v2
        query = query.where(cohort_in_scope(AGENTS.c.cohort_id, scope))
    return query


def _agents(cohort: int | None, family: str | None, pool: Pool) -> Any:
    """The agents in scope: id, family, the family's name and kind, and the starting
    balance (in micro-dollars, `_units`)."""
    return _scope(
        select(
            AGENTS.c.id.label("agent_id"),
            AGENTS.c.family_id,
            func.coalesce(FAMILIES.c.display_name, AGENTS.c.display_name).label("display_name"),
            func.coalesce(FAMILIES.c.kind, "llm").label("kind"),
            _units(AGENTS.c.starting_balance),
        )
        .join(COHORTS, live_cohort_of(AGENTS.c.cohort_id))
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id),
        cohort,
        family,
        pool,
    )


def _first_and_last_slot(cohort: int | None, family: str | None, pool: Pool) -> Any:
    """SQL: the first and last snapshot slot in scope, by index seeks alone: for every
    snapshot, two seeks on the slot index; for a scope, per agent a min and a max seek on
    (agent_id, slot), then the min and max of those."""
    if cohort is None and family is None and pool is None:
        return select(
            select(func.min(SNAPSHOTS.c.slot)).scalar_subquery(),
            select(func.max(SNAPSHOTS.c.slot)).scalar_subquery(),
        )
    ends = _scope(
        select(
            _per_agent(func.min(SNAPSHOTS.c.slot)).label("first"),
            _per_agent(func.max(SNAPSHOTS.c.slot)).label("last"),
        )
        .select_from(AGENTS)
        .join(COHORTS, live_cohort_of(AGENTS.c.cohort_id)),
        cohort,
        family,
        pool,
    ).subquery("ends")
    return select(func.min(ends.c.first), func.max(ends.c.last))


def _per_agent(aggregate: Any) -> Any:
    """Scalar subquery: `aggregate` over the snapshots of the enclosing query's agent."""
    return (
        select(aggregate)
        .where(SNAPSHOTS.c.agent_id == AGENTS.c.id)
        .correlate(AGENTS)
        .scalar_subquery()
    )


def _rollups_in_range(width: int, first_bucket: int, agent_scope: Any) -> Any:
    """The rollup rows (agent_id, bucket, total_value, total_pnl) of `width` from
    `first_bucket` on, for the agents of `agent_scope` (None: all).

    By agent even when all are in scope: SQLite then seeks the (agent_id, width, bucket) key
    per agent, a fifth faster than the (width, bucket) index.
    """
    agents = agent_scope if agent_scope is not None else agent_ids()
    return select(
        ROLLUPS.c.agent_id,
        ROLLUPS.c.bucket,
        _units(ROLLUPS.c.total_value),
        _units(ROLLUPS.c.total_pnl),
    ).where(
        ROLLUPS.c.width == width,
        ROLLUPS.c.bucket >= first_bucket,
        ROLLUPS.c.agent_id.in_(agents),
    )


def _snapshots_in_range(start: datetime, width: int, agent_scope: Any, dialect: str) -> Any:
    """The snapshots from `start` on with their bucket, each agent's in slot order.

    Sub-hour buckets hold at most three 10-minute slots (one at the snapshot cadence), so
    every row comes back and `family_curves` keeps each agent's last one per bucket: a range
    scan of the (agent_id, slot) index for the agents in scope, or of the slot index for all
    of them (no sort, no join), and no GROUP BY and self-join in SQL.
    """
    query = select(
        SNAPSHOTS.c.agent_id,
        epoch_bucket(SNAPSHOTS.c.slot, width, dialect).label("bucket"),
        _units(SNAPSHOTS.c.total_value),
        _units(SNAPSHOTS.c.total_pnl),
    ).where(SNAPSHOTS.c.slot >= start)
    if agent_scope is None:
        return query.order_by(SNAPSHOTS.c.slot)
    return query.where(SNAPSHOTS.c.agent_id.in_(agent_scope)).order_by(
        SNAPSHOTS.c.agent_id, SNAPSHOTS.c.slot
    )


def _values_before(start: datetime, agent_scope: Any) -> Any:
    """Each agent's last (agent_id, total_value, total_pnl) before `start`, for the agents
    of `agent_scope` (None: all)."""
    newest = newest_snapshots(before=start, agents=agent_scope)
    return select(
        newest.c.agent_id, _units(SNAPSHOTS.c.total_value), _units(SNAPSHOTS.c.total_pnl)
    ).join(SNAPSHOTS, SNAPSHOTS.c.id == newest.c.snapshot_id)


UNITS_PER_DOLLAR = 1e6  # Fixed(6) money is stored as integer micro-dollars


def _units(column: Any) -> Any:
    """A money column read as its stored integer micro-dollars (a chart needs floats, and
    tens of thousands of Decimals cost more than the query)."""
    return type_coerce(column, BigInteger).label(column.name)


def _int_rows(conn: Connection, query: Select[Any]) -> np.ndarray:
    """The rows of a select of integer columns as one int64 array of its shape: the driver's
    tuples (`raw_rows`) through one `np.fromiter`, half the time `np.array` takes on a list
    of tuples."""
    rows = raw_rows(conn, query)
    width = len(rows[0]) if rows else len(query.selected_columns)
    flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=len(rows) * width)
    return flat.reshape(-1, width)


def _in_bucket(rows: np.ndarray, bucket: int) -> np.ndarray:
    """(agent_id, total_value, total_pnl) rows as data rows of `family_curves`, all in
    `bucket`."""
    at = np.full(len(rows), bucket, dtype=np.int64)
    return np.column_stack([rows[:, 0], at, rows[:, 1:]])


def family_curves(
    data: np.ndarray,
    agent_rows: list[dict[str, Any]],
    first: int,
    width: int,
) -> pd.DataFrame:
    """Carry each agent's value forward across buckets, then sum per family and bucket.

    `data`: int64 rows (agent_id, bucket, total_value, total_pnl), money in micro-dollars,
    each agent's snapshot rows in slot order, so the LAST row of an agent × bucket is its
    value at the bucket's end; seeds sit in the bucket before `first`. `agent_rows`: the
    agents in scope (agent_id, family_id, display_name, kind, starting_balance in
    micro-dollars).
    """
    info = {int(row["agent_id"]): row for row in agent_rows}
    data = data[np.isin(data[:, 0], list(info))]
    if not len(data):
        return typed_frame([], CURVE_COLUMNS)
    origin = first - width  # grid row 0: the seeds, before the range
    grid = _carried_forward(data, origin, width)
    agents = [info[int(agent)] for agent in grid.agents]
    families = _FamilySums.of([str(agent["family_id"]) for agent in agents])
    starting = np.array([agent["starting_balance"] for agent in agents], np.int64)
    counted = families.sum(grid.present.astype(np.int64))
    keep = counted > 0
    keep[:, 0] = False  # the seeds' bucket is before the range
    family_at, bucket_at = np.nonzero(keep)  # family-major, then time: the documented order
    values = families.sum(grid.values)[keep]
    pnls = families.sum(grid.pnls)[keep]
    capital = families.sum(grid.present * starting)[keep]
    # A family's name and kind as its first agent has them (the same for all of its agents).
    shown = [agents[column] for column in families.first_columns]
    columns: dict[str, Any] = {
        "family_id": [families.names[i] for i in family_at],
        "display_name": [shown[i]["display_name"] for i in family_at],
        "kind": [shown[i]["kind"] for i in family_at],
        "at": epoch_times(origin + bucket_at.astype(np.int64) * width),
        "total_value": values / UNITS_PER_DOLLAR,
        "total_pnl": pnls / UNITS_PER_DOLLAR,
        "capital": capital / UNITS_PER_DOLLAR,
        "return_pct": pnls / capital * 100.0,
        "agents": counted[keep],
    }
    return columns_frame(columns, CURVE_COLUMNS, len(family_at))


@dataclass(frozen=True)
class _Grid:
    """Buckets × agents: whether the agent counts yet, and its carried value and P/L."""

    agents: np.ndarray  # the agent id of each column, ascending
    present: np.ndarray
    values: np.ndarray
    pnls: np.ndarray


def _carried_forward(data: np.ndarray, origin: int, width: int) -> _Grid:
    """`data` rows (agent, bucket, value, pnl) on a grid whose row 0 is bucket `origin`.

    A cell holds the agent's last row in that bucket (rows of one agent × bucket arrive in
    slot order), else the agent's latest cell before it; before its first row an agent is
    absent (its cells are 0 and not present).

    Why arrays, not a pivot per family: one grid of buckets × agents, filled forward once
    and summed per family in integers (`_FamilySums`), costs a few milliseconds where the
    pandas pivots cost a hundred at a year.
    """
    agents, column = np.unique(data[:, 0], return_inverse=True)
    row = (data[:, 1] - origin) // width
    shape = (int(row.max()) + 1, len(agents))
    cell = row * len(agents) + column
    last = len(cell) - 1 - np.unique(cell[::-1], return_index=True)[1]
    source = np.full(shape, -1, dtype=np.int64)  # the data row each cell holds
    source[row[last], column[last]] = last
    filled = np.where(source >= 0, np.arange(shape[0])[:, None], -1)
    np.maximum.accumulate(filled, axis=0, out=filled)  # the latest filled row at or before
    present = filled >= 0
    source = np.where(present, source[np.maximum(filled, 0), np.arange(shape[1])], 0)
    values = np.where(present, data[source, 2], 0)
    pnls = np.where(present, data[source, 3], 0)
    return _Grid(agents, present, values, pnls)


@dataclass(frozen=True)
class _FamilySums:
    """A grid's agent columns grouped by family, for sums per family and bucket.

    One `np.add.reduceat` over the columns reordered family by family sums every family at
    once, in integers: exact (dollars come from one division at the end).
    """

    names: list[str]  # the family ids, ascending
    order: list[int]  # the grid's columns, family by family
    starts: np.ndarray  # where each family's columns start in `order`

    @classmethod
    def of(cls, families: list[str]) -> "_FamilySums":
        """Grouping of grid columns whose agents belong to `families` (one per column)."""
        order = sorted(range(len(families)), key=families.__getitem__)
        names = sorted(set(families))
        starts = np.searchsorted([families[i] for i in order], names)
        return cls(names, order, starts)

    @property
    def first_columns(self) -> list[int]:
        """Each family's first grid column."""
        return [self.order[start] for start in self.starts]

    def sum(self, cells: np.ndarray) -> np.ndarray:
        """(families, buckets) sums of buckets × agents `cells` over each family's agents."""
        return np.add.reduceat(cells[:, self.order], self.starts, axis=1).T


# --------------------------------------------------------------------------------------------
# Which short ranges show a change


@dataclass(frozen=True)
class Stillness:
    """Which short ranges (`SHORT_RANGES`) would draw only flat lines, and since when.

    ``latest``: the latest snapshot in scope (None: no snapshot yet); ``last_change``: the
    start of the 10-minute bucket in which a portfolio in scope last changed, within the day
    before ``latest`` (None: none changed in that day); ``flat``: the short ranges whose
    window, back from ``latest``, holds no change.
    """

    latest: datetime | None
    last_change: datetime | None
    flat: tuple[str, ...]


def flat_ranges(
    engine: Engine,
    *,
    cohort: int | None = None,
    family: str | None = None,
    methodology: str = METHODOLOGY_VERSION,
) -> Stillness:
    """Which short ranges show no change for this scope (see `Stillness`).

    Why: the short ranges count back from the latest snapshot; once a season stops moving
    (positions settled, marks frozen) they draw flat lines that say nothing. One read of the
    1D curve (10-minute buckets, the same buckets as 10M and 1H) finds the last bucket in
    which any family's value, P/L or agent count moved; a range is flat when that bucket is
    not after its first bucket (the chart starts there, so a change up to it is not drawn).
    """
    scope: dict[str, Any] = {"cohort": cohort, "family": family, "methodology": methodology}
    window = curve_window(engine, "1D", **scope)
    if window.start is None or window.end is None:
        return Stillness(None, None, ())
    last = last_change(portfolio_curves(engine, "1D", **scope))
    width = window.bucket_seconds
    flat = []
    for key in SHORT_RANGES:
        back = RANGES[key][0]
        start = max(window.end - back, window.start) if back is not None else window.start
        first = int(start.timestamp()) // width * width
        if last is None or last.timestamp() <= first:
            flat.append(key)
    return Stillness(window.end, last, tuple(flat))


def last_change(frame: pd.DataFrame) -> datetime | None:
    """The latest bucket (`at`) of a `portfolio_curves` frame in which some family's value,
    P/L or agent count differs from its previous bucket, or a family's line begins after the
    frame's first bucket; None when no line moves."""
    if frame.empty:
        return None
    ordered = frame.sort_values(["family_id", "at"], kind="stable")
    measures = ordered[["total_value", "total_pnl", "agents"]]
    same_family = ordered["family_id"].eq(ordered["family_id"].shift())
    moved = measures.ne(measures.shift()).any(axis=1)
    begins = ~same_family & (ordered["at"] > ordered["at"].min())
    changes = ordered.loc[(same_family & moved) | begins, "at"]
    return None if changes.empty else changes.max().to_pydatetime()


# --------------------------------------------------------------------------------------------
# Decision runs (marked on the curves)

DECISION_RUN_COLUMNS: dict[str, str] = {"at": TIME, "runs": TEXT, "decisions": INT}
RUN_GAP = timedelta(hours=1)  # decisions of one weekly run, across cohorts, fall within this


def decision_runs(
    engine: Engine,
    *,
    cohort: int | None = None,
    family: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    methodology: str = METHODOLOGY_VERSION,
) -> pd.DataFrame:
    """The instants agents in scope decided: one row per weekly decision run, oldest first.
    Scope as `portfolio_curves`'s.

    A run is the decisions of one or more cohorts' decision weeks that began within
    `RUN_GAP` of each other (the scheduler decides for every deciding cohort in one run).
    Columns: ``at`` (the run's first claimed decision, UTC), ``runs`` (which cohort and
    decision week, e.g. ``cohort 3 week 2, cohort 4 week 1``), ``decisions`` (how many).
    Only runs with `start` <= at <= `end` (either optional).
    """
    # Read off the covering decision-list index, newest first (id, cohort, week, claimed at),
    # and grouped here: a GROUP BY in SQL takes the spend index instead and opens every row
    # (a year: 60 ms against 2 ms).
    query = select(
        DECISIONS.c.id, DECISIONS.c.cohort_id, DECISIONS.c.decision_week, DECISIONS.c.created_at
    ).order_by(DECISIONS.c.id.desc())
    with engine.connect() as conn:
        agent_scope = _agent_scope(cohort, family, _pool(conn, cohort, methodology))
        if agent_scope is not None:
            query = query.where(DECISIONS.c.agent_id.in_(agent_scope))
        decided = typed_frame(
            fetch(conn, query),
            {"id": INT, "cohort_id": INT, "decision_week": INT, "created_at": TIME},
        )
        numbers = dict(conn.execute(select(COHORTS.c.id, COHORTS.c.number)).all())
    decided["cohort_number"] = [int(numbers[i]) for i in decided["cohort_id"]]
    weeks = (
        decided.groupby(["cohort_number", "decision_week"], as_index=False)
        .agg(at=("created_at", "min"), decisions=("id", "size"))
        .astype({"decisions": "int64"})
    )
    if start is not None:
        weeks = weeks[weeks["at"] >= pd.Timestamp(start)]
    if end is not None:
        weeks = weeks[weeks["at"] <= pd.Timestamp(end)]
    runs: list[dict[str, Any]] = []
    for week in weeks.sort_values(["at", "cohort_number"], kind="stable").itertuples():
        label = f"cohort {week.cohort_number} week {week.decision_week}"
        if runs and week.at - runs[-1]["at"] <= RUN_GAP:
            runs[-1]["runs"] += f", {label}"
            runs[-1]["decisions"] += int(week.decisions)
        else:
            runs.append({"at": week.at, "runs": label, "decisions": int(week.decisions)})
    return typed_frame(runs, DECISION_RUN_COLUMNS)
