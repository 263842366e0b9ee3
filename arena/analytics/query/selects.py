"""The selects the read models share: typed frames from rows, the agent scopes, each agent's
newest snapshot, its decision/position/Brier aggregates and its book (the one P/L rule).

Every read model converts money and time the same way through these: money columns are
float64 dollars (exact to the micro-dollar the database stores), timestamps are pandas
``datetime64[us, UTC]``, counts are int64, text is pandas ``string``.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Select, String, case, cast, exists, func, literal, select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.frames import Kinds, columns_frame, query_frame
from arena.core.text import REPLICATE_LABEL
from arena.storage.tables import AGENTS, COHORTS, DECISIONS, FAMILIES, POSITIONS, live_cohort
from arena.storage.tables import BRIER_SCORES as BRIERS
from arena.storage.tables import PORTFOLIO_SNAPSHOTS as SNAPSHOTS


def typed_frame(rows: Sequence[Mapping[str, Any]], kinds: Kinds) -> pd.DataFrame:
    """Rows → a DataFrame with exactly the columns of `kinds`, in that order, typed.

    One conversion for every read model, so a page or a test never meets a Decimal, a naive
    timestamp or an object column where a number was documented. Missing counts become 0
    (``NULLABLE_INT`` keeps them missing); missing money, floats and times stay NaN / NaT.
    (For rows a model does not touch in Python, `query_frame` skips the dicts altogether.)
    """
    columns = {column: [row.get(column) for row in rows] for column in kinds}
    return columns_frame(columns, kinds, len(rows))


def fetch(conn: Connection, query: Select[Any]) -> list[dict[str, Any]]:
    """Every row of `query` as a plain dict (column label → value), the labels read once,
    not per row: read models return tens of thousands."""
    result = conn.execute(query)
    keys = list(result.keys())
    return [dict(zip(keys, row, strict=True)) for row in result.all()]


def read_frame(engine: Engine, query: Select[Any], kinds: Kinds) -> pd.DataFrame:
    """Run one select on a short-lived connection and type it (`query_frame`)."""
    with engine.connect() as conn:
        return query_frame(conn, query, kinds)


def newest_snapshots(before: Any = None, agents: Any = None) -> Any:
    """Subquery (agent_id, snapshot_id): each agent's newest snapshot (the newest before
    `before`, if given), for the agents of the `agents` id select, or all.

    One backwards seek on the (agent_id, slot) index per agent, and callers join the
    snapshot by primary key. A GROUP BY over the table reads every snapshot ever written
    (millions after a year); so would a join on `agent_id`, which SQLite's planner prefers
    to an `id IN (...)` list.
    """
    newest = SNAPSHOTS.alias("newest")
    pick = select(newest.c.id).where(newest.c.agent_id == AGENTS.c.id)
    if before is not None:
        pick = pick.where(newest.c.slot < before)
    snapshot_id = pick.order_by(newest.c.slot.desc()).limit(1).scalar_subquery()
    query = select(AGENTS.c.id.label("agent_id"), snapshot_id.label("snapshot_id"))
    if agents is not None:
        query = query.where(AGENTS.c.id.in_(agents))
    return query.subquery("newest_snapshots")


def latest_snapshots(agents: Any = None) -> Any:
    """Subquery: each agent's most recent portfolio snapshot (agent_id, slot, values), for
    the agents of the `agents` id select, or all."""
    newest = newest_snapshots(agents=agents)
    return (
        select(
            newest.c.agent_id,
            SNAPSHOTS.c.slot,
            SNAPSHOTS.c.cash_balance,
            SNAPSHOTS.c.positions_value,
            SNAPSHOTS.c.total_value,
            SNAPSHOTS.c.total_pnl,
            SNAPSHOTS.c.total_pnl_percent,
        )
        .select_from(newest)
        .join(SNAPSHOTS, SNAPSHOTS.c.id == newest.c.snapshot_id)
        .subquery("latest")
    )


def agent_ids(
    cohort: int | None = None, family: str | None = None, replicate: int | None = None
) -> Select[Any]:
    """Select of the ids of the agents in cohort number `cohort` and of `family` (each filter
    optional; `replicate`: only that replicate of a replicated cohort): the scope a page about
    one agent, one cohort or one family reads. Live agents only: a late entrant's shadow
    repeats its original's number, and never enters a live read (without filters: every live
    agent)."""
    query = select(AGENTS.c.id).join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
    query = query.where(live_cohort())
    if cohort is not None:
        query = query.where(COHORTS.c.number == cohort)
    if family is not None:
        query = query.where(AGENTS.c.family_id == family)
    if replicate is not None:
        query = query.where(AGENTS.c.replicate == replicate)
    return query


def late_agent_ids(cohort: int | None, family: str) -> Select[Any]:
    """Select of the ids of the late entrant `family`'s agents (methodology §20): of its
    shadow of cohort number `cohort`, or of every cohort it replayed."""
    query = (
        select(AGENTS.c.id)
        .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
        .where(COHORTS.c.late_entry_family == family, ~live_cohort())
    )
    return query if cohort is None else query.where(COHORTS.c.number == cohort)


def agent_display_name() -> Any:
    """SQL: an agent's display name, labelled ``display_name``: its family's (as the lineup
    names it now), with `replicate_name`'s " · r<k>" when the family fields several agents in
    the agent's cohort (a replicated cohort). Needs `agents` and `families` in the FROM."""
    family_name = func.coalesce(FAMILIES.c.display_name, AGENTS.c.display_name)
    sibling = AGENTS.alias("sibling")
    replicated = exists().where(
        sibling.c.cohort_id == AGENTS.c.cohort_id,
        sibling.c.family_id == AGENTS.c.family_id,
        sibling.c.replicate > 1,
    )
    labelled = family_name + literal(REPLICATE_LABEL) + cast(AGENTS.c.replicate, String)
    return case((replicated, labelled), else_=family_name).label("display_name")


def _of_agents(query: Any, column: Any, agents: Any) -> Any:
    """`query` restricted to rows whose `column` is one of the `agents` id select (None: all)."""
    return query if agents is None else query.where(column.in_(agents))


def agent_stats(agents: Any = None) -> Any:
    """Subqueries per agent: decisions made, fallback HOLDs and API cost; open and ever-held
    positions; for the agents of the `agents` id select, or all.

    A page about one agent or one cohort passes its agents, so the aggregates seek those
    agents' rows instead of grouping every decision and position ever written.
    """
    decisions = (
        select(
            DECISIONS.c.agent_id,
            func.count(DECISIONS.c.id).label("decisions"),
            func.sum(case((DECISIONS.c.status == "fallback_hold", 1), else_=0)).label(
                "fallback_holds"
            ),
            func.sum(DECISIONS.c.cost_usd).label("api_cost_usd"),
        )
        .where(DECISIONS.c.status != "in_progress")
        .group_by(DECISIONS.c.agent_id)
    )
    decisions = _of_agents(decisions, DECISIONS.c.agent_id, agents).subquery("agent_decisions")
    positions = select(
        POSITIONS.c.agent_id,
        func.sum(case((POSITIONS.c.status == "open", 1), else_=0)).label("open_positions"),
        func.count(POSITIONS.c.id).label("positions"),
    ).group_by(POSITIONS.c.agent_id)
    positions = _of_agents(positions, POSITIONS.c.agent_id, agents).subquery("agent_positions")
    return decisions, positions


# --------------------------------------------------------------------------------------------
# The agent book: the one read of what an agent has, and the one P/L rule over it


def agent_book(agents: Any = None) -> Any:
    """Subquery, one row per agent (of the `agents` id select, or all): what its P/L and
    Brier are read from, so every page, the leaderboard's replicates and the standings read
    the same book.

    Columns: ``agent_id``; ``capital`` (starting balance) and ``cash`` (its cash now);
    ``open_cost`` (its open positions at cost; NULL without one); from its latest snapshot
    (NULL before the first) ``slot``, ``cash_balance``, ``positions_value``, ``total_value``,
    ``total_pnl``, ``total_pnl_percent``; from its Brier rows ``brier_sum``,
    ``resolved_bets`` and ``wins`` (NULL before a resolution). Join it on ``agent_id``.
    """
    latest = latest_snapshots(agents)
    open_cost = (
        select(POSITIONS.c.agent_id, func.sum(POSITIONS.c.cost_basis).label("open_cost"))
        .where(POSITIONS.c.status == "open")
        .group_by(POSITIONS.c.agent_id)
    )
    open_cost = _of_agents(open_cost, POSITIONS.c.agent_id, agents).subquery("open_cost")
    briers = select(
        BRIERS.c.agent_id,
        func.sum(BRIERS.c.brier_score).label("brier_sum"),
        func.count(BRIERS.c.id).label("resolved_bets"),
        func.sum(BRIERS.c.actual_outcome).label("wins"),
    ).group_by(BRIERS.c.agent_id)
    briers = _of_agents(briers, BRIERS.c.agent_id, agents).subquery("agent_briers")
    query = (
        select(
            AGENTS.c.id.label("agent_id"),
            AGENTS.c.starting_balance.label("capital"),
            AGENTS.c.cash_balance.label("cash"),
            open_cost.c.open_cost,
            latest.c.slot,
            latest.c.cash_balance,
            latest.c.positions_value,
            latest.c.total_value,
            latest.c.total_pnl,
            latest.c.total_pnl_percent,
            briers.c.brier_sum,
            briers.c.resolved_bets,
            briers.c.wins,
        )
        .select_from(AGENTS)
        .outerjoin(latest, latest.c.agent_id == AGENTS.c.id)
        .outerjoin(open_cost, open_cost.c.agent_id == AGENTS.c.id)
        .outerjoin(briers, briers.c.agent_id == AGENTS.c.id)
    )
    return _of_agents(query, AGENTS.c.id, agents).subquery("book")


def agent_pnl(
    capital: np.ndarray, cash: np.ndarray, open_cost: np.ndarray, snapshot_pnl: np.ndarray
) -> np.ndarray:
    """v1's P/L per agent: its latest snapshot's total P/L, else (before its first snapshot)
    cash + open positions at cost − capital. NaN open cost (no open position) counts as 0.

    The one rule the leaderboard, its bootstrap, the replicates and the standings share."""
    book = cash + np.nan_to_num(open_cost)
    return np.where(np.isnan(snapshot_pnl), book - capital, snapshot_pnl)


def ratio(numerator: Any, denominator: Any) -> np.ndarray:
    """numerator / denominator where the denominator is positive, else NaN (a return with no
    capital, a mean Brier with no resolved bet)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
        )


def newest_slot(conn: Connection) -> datetime | None:
    """The newest snapshot slot of a live agent: what the stored analyses' freshness and the
    arena's status are judged by. A late entrant's snapshots (methodology §20) can be newer
    (its last settlement is when it asked), and must not make a live frame look stale.

    A walk down the slot index from the newest row, skipping the few shadow agents' rows
    (their ids are one small list): one seek when the newest row is a live agent's."""
    shadows = (
        select(AGENTS.c.id).join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id).where(~live_cohort())
    )
    query = (
        select(SNAPSHOTS.c.slot)
        .where(SNAPSHOTS.c.agent_id.not_in(shadows))
        .order_by(SNAPSHOTS.c.slot.desc())
        .limit(1)
    )
    return conn.execute(query).scalar_one_or_none()
