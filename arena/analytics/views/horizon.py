"""The extension `horizon`: per horizon cohort, when it was due to finish and when it did, and
the bets whose market's end date moved past the horizon after the bet (its overruns).

Why its own read: a horizon cohort promises answers about D days after its last decision run
(methodology §18), but an end date can move after a bet (Polymarket extends markets). Such a
position stays held and is valued and settled like any other; this view only counts how
often it happens, so a reader can tell a late cohort from a broken rule. A bet overruns when
its market's end date as known now (`markets.end_date`) is later than its decision run (the
run's frozen snapshot, `market_snapshots.taken_at`) plus D days. Nothing here writes.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pandas as pd
from sqlalchemy import and_, func, select
from sqlalchemy.engine import Connection, Engine

from arena.config import Methodology, stamped_horizon_days
from arena.storage.tables import (
    AGENTS,
    COHORTS,
    DECISIONS,
    MARKET_SNAPSHOT_ITEMS,
    MARKET_SNAPSHOTS,
    MARKETS,
    POSITIONS,
    TRADES,
)

# One row per horizon cohort (stable column ids; raw numbers and instants, no formatting).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "cohort",  # cohort number
    "horizon_days",  # D, from the stamp
    "window_end",  # week start + the stamped decision window
    "last_decision_run",  # the latest run a decision of the cohort was frozen at (None: none)
    "expected_completion",  # last_decision_run + D
    "last_resolution",  # the latest settlement, once no position is open (None: still open)
    "completed_at",  # the cohort row's completion (the snapshot job sets it)
    "open_positions",
    "bets",  # BUY legs
    "overrun_bets",  # BUY legs whose market now ends after run + D
    "overrun_markets",  # distinct markets among them
    "overrun_share",  # overrun_bets / bets (None without bets)
    "days_late",  # last_resolution - expected_completion in days (None until resolved)
)
# One row per overrun BUY leg.
OVERRUN_COLUMNS: tuple[str, ...] = (
    "cohort",
    "trade_id",
    "agent_id",
    "market_id",
    "side",
    "decision_run",
    "horizon_end",  # decision_run + D
    "end_date_at_bet",  # the end date the run's frozen snapshot showed
    "end_date_now",
    "days_past",  # end_date_now - horizon_end, in days
    "position_status",
)


@dataclass(frozen=True)
class HorizonCohort:
    """A cohort stamped `horizon`: its id, number, days and decision window."""

    id: int
    number: int
    days: int
    week_start: datetime
    window_weeks: int


def horizon_cohorts(conn: Connection, numbers: Sequence[int] | None = None) -> list[HorizonCohort]:
    """Every cohort whose stamp names `horizon` (among cohort numbers `numbers`, when given),
    oldest first (v1 cohorts have none)."""
    query = select(COHORTS.c.id, COHORTS.c.number, COHORTS.c.week_start, COHORTS.c.constants)
    if numbers is not None:
        query = query.where(COHORTS.c.number.in_(list(numbers)))
    rows = conn.execute(query.order_by(COHORTS.c.number))
    found = []
    for cid, number, start, constants in rows:
        days = stamped_horizon_days(constants)
        if days is not None:
            weeks = (constants or {}).get("decision_window_weeks")
            window = weeks if isinstance(weeks, int) else Methodology().decision_window_weeks
            found.append(HorizonCohort(int(cid), int(number), days, start, window))
    return found


def _bets(conn: Connection, ids: Sequence[int]) -> list[Any]:
    """The cohorts' BUY legs with their run, the end date then and now, and the position."""
    item = and_(
        MARKET_SNAPSHOT_ITEMS.c.snapshot_id == DECISIONS.c.market_snapshot_id,
        MARKET_SNAPSHOT_ITEMS.c.market_id == TRADES.c.market_id,
    )
    query = (
        select(
            DECISIONS.c.cohort_id,
            TRADES.c.id,
            TRADES.c.agent_id,
            TRADES.c.market_id,
            TRADES.c.side,
            MARKET_SNAPSHOTS.c.taken_at,
            MARKET_SNAPSHOT_ITEMS.c.end_date,
            MARKETS.c.end_date,
            POSITIONS.c.status,
        )
        .select_from(TRADES)
        .join(DECISIONS, DECISIONS.c.id == TRADES.c.decision_id)
        .join(MARKET_SNAPSHOTS, MARKET_SNAPSHOTS.c.id == DECISIONS.c.market_snapshot_id)
        .join(MARKETS, MARKETS.c.id == TRADES.c.market_id)
        .join(POSITIONS, POSITIONS.c.id == TRADES.c.position_id)
        .outerjoin(MARKET_SNAPSHOT_ITEMS, item)
        .where(TRADES.c.trade_type == "BUY", DECISIONS.c.cohort_id.in_(list(ids)))
        .order_by(TRADES.c.id)
    )
    return list(conn.execute(query))


def _horizon_end(run: datetime, days: int) -> datetime:
    """Where a run's horizon ends: a bet overruns when its market now ends after it, and a
    cohort is expected to complete there after its last run."""
    return run + timedelta(days=days)


def _days(delta: timedelta) -> float:
    return delta.total_seconds() / 86400


def horizon_overruns(engine: Engine) -> pd.DataFrame:
    """Every BUY leg of a horizon cohort whose market now ends after its run + D (columns
    `OVERRUN_COLUMNS`); empty, with the columns, when there is none."""
    with engine.connect() as conn:
        cohorts = {c.id: c for c in horizon_cohorts(conn)}
        bets = _bets(conn, list(cohorts)) if cohorts else []
    rows = []
    for cid, trade_id, agent_id, market_id, side, run, then, now, status in bets:
        cohort = cohorts[cid]
        end = _horizon_end(run, cohort.days)
        if now is not None and now > end:
            row = (cohort.number, trade_id, agent_id, market_id, side, run, end, then, now)
            rows.append((*row, _days(now - end), status))
    return pd.DataFrame(rows, columns=list(OVERRUN_COLUMNS))


def _cohort_times(conn: Connection, ids: Sequence[int]) -> dict[int, tuple[Any, Any, int]]:
    """Per cohort: its last decision run, its latest settlement and its open positions."""
    runs = dict(
        conn.execute(
            select(DECISIONS.c.cohort_id, func.max(MARKET_SNAPSHOTS.c.taken_at))
            .join(MARKET_SNAPSHOTS, MARKET_SNAPSHOTS.c.id == DECISIONS.c.market_snapshot_id)
            .where(DECISIONS.c.cohort_id.in_(ids))
            .group_by(DECISIONS.c.cohort_id)
        ).all()
    )
    settled = dict(
        conn.execute(
            select(AGENTS.c.cohort_id, func.max(TRADES.c.created_at))
            .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
            .where(TRADES.c.trade_type.in_(("SETTLE", "REFUND")), AGENTS.c.cohort_id.in_(ids))
            .group_by(AGENTS.c.cohort_id)
        ).all()
    )
    open_: dict[int, int] = dict(
        conn.execute(
            select(AGENTS.c.cohort_id, func.count())
            .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
            .where(POSITIONS.c.status == "open", AGENTS.c.cohort_id.in_(ids))
            .group_by(AGENTS.c.cohort_id)
        ).all()
    )
    return {cid: (runs.get(cid), settled.get(cid), int(open_.get(cid, 0))) for cid in ids}


def horizon_summary(engine: Engine, numbers: Sequence[int] | None = None) -> pd.DataFrame:
    """One row per horizon cohort (among cohort numbers `numbers`, when given: a page reads
    only the cohorts it shows) (columns `SUMMARY_COLUMNS`), oldest first: the window's end,
    the expected completion (last decision run + D), the actual one, and its overruns."""
    with engine.connect() as conn:
        cohorts = horizon_cohorts(conn, numbers)
        ids = [c.id for c in cohorts]
        times = _cohort_times(conn, ids) if ids else {}
        bets = _bets(conn, ids) if ids else []
        completed = dict(
            conn.execute(
                select(COHORTS.c.id, COHORTS.c.completed_at).where(COHORTS.c.id.in_(ids))
            ).all()
        )
    counts: dict[int, list[int]] = {cid: [0, 0] for cid in ids}
    markets: dict[int, set[str]] = {cid: set() for cid in ids}
    by_id = {c.id: c for c in cohorts}
    for cid, _trade, _agent, market_id, _side, run, _then, now, _status in bets:
        counts[cid][0] += 1
        if now is not None and now > _horizon_end(run, by_id[cid].days):
            counts[cid][1] += 1
            markets[cid].add(market_id)
    rows = []
    for c in cohorts:
        run, settled, open_positions = times[c.id]
        expected = _horizon_end(run, c.days) if run is not None else None
        last = settled if open_positions == 0 else None
        bets_n, over = counts[c.id]
        late = _days(last - expected) if last is not None and expected is not None else None
        rows.append(
            (
                c.number,
                c.days,
                c.week_start + timedelta(weeks=c.window_weeks),
                run,
                expected,
                last,
                completed.get(c.id),
                open_positions,
                bets_n,
                over,
                len(markets[c.id]),
                over / bets_n if bets_n else None,
                late,
            )
        )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
