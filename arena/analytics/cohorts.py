"""Read models of the weekly competitions: the cohort list, one cohort's standings, its weeks.

Also home of the small helpers the dashboard's other read models share (table handles, running
a select into a typed DataFrame), so every module converts money and time the same way: money
columns are float64 dollars (exact to the micro-dollar the database stores), timestamps are
pandas ``datetime64[us, UTC]``, counts are int64, text is pandas ``string``.
"""

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Select, String, case, cast, exists, func, literal, select
from sqlalchemy.engine import Connection, Engine

# Re-exported: the read models import the column kinds and the driver-level helpers from here.
from arena.analytics.frames import (  # noqa: F401
    BOOL,
    FLOAT,
    INT,
    MONEY,
    NULLABLE_INT,
    OBJECT,
    TEXT,
    TIME,
    Kinds,
    columns_frame,
    json_as_stored,
    json_texts,
    query_frame,
    raw_rows,
    result_frame,
)
from arena.config import stamped_extensions
from arena.core.text import REPLICATE_LABEL
from arena.storage.tables import AGENTS, COHORTS, DECISIONS, FAMILIES, POSITIONS
from arena.storage.tables import BRIER_SCORES as BRIERS
from arena.storage.tables import PORTFOLIO_SNAPSHOTS as SNAPSHOTS

# --------------------------------------------------------------------------------------------
# Shared helpers


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
    one agent, one cohort or one family reads."""
    query = select(AGENTS.c.id).join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
    if cohort is not None:
        query = query.where(COHORTS.c.number == cohort)
    if family is not None:
        query = query.where(AGENTS.c.family_id == family)
    if replicate is not None:
        query = query.where(AGENTS.c.replicate == replicate)
    return query


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
    """Subqueries per agent: decisions made, fallback HOLDs, API cost, open positions, Brier;
    for the agents of the `agents` id select, or all.

    A page about one agent or one cohort passes its agents, so the aggregates seek those
    agents' rows instead of grouping every decision, position and Brier row ever written.
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
    briers = select(
        BRIERS.c.agent_id,
        func.avg(BRIERS.c.brier_score).label("brier"),
        func.count(BRIERS.c.id).label("resolved_bets"),
        func.sum(BRIERS.c.actual_outcome).label("wins"),
    ).group_by(BRIERS.c.agent_id)
    briers = _of_agents(briers, BRIERS.c.agent_id, agents).subquery("agent_briers")
    return decisions, positions, briers


# --------------------------------------------------------------------------------------------
# The cohort list

COHORT_COLUMNS: dict[str, str] = {
    "cohort_number": INT,
    "week_start": TIME,
    "status": TEXT,
    "methodology_version": TEXT,
    "is_default": BOOL,
    "extensions": TEXT,
    "agents": INT,
    "decision_weeks": INT,
    "decisions": INT,
    "open_positions": INT,
    "total_value": MONEY,
    "total_pnl": MONEY,
    "return_pct": FLOAT,
    "last_snapshot": TIME,
    "completed_at": TIME,
}


def cohorts(engine: Engine) -> pd.DataFrame:
    """One row per cohort, newest first.

    Columns: ``cohort_number``; ``week_start`` (Sunday 00:00 UTC); ``status`` (deciding |
    tracking | completed); ``methodology_version`` and ``is_default`` (false when a constant
    was overridden for a research run, or a protocol extension was on); ``extensions`` (the
    protocol extensions stamped on it, comma-separated; empty for v1); ``agents``;
    ``decision_weeks`` (the highest decision week any agent has decided); ``decisions``
    (finished); ``open_positions``;
    ``total_value`` / ``total_pnl`` (sum of the agents' latest snapshots, $) and
    ``return_pct`` (total_pnl over the agents' starting balances); ``last_snapshot``;
    ``completed_at``.
    """
    latest = latest_snapshots()
    per_cohort = (
        select(
            AGENTS.c.cohort_id,
            func.count(AGENTS.c.id).label("agents"),
            func.sum(AGENTS.c.starting_balance).label("capital"),
            func.sum(latest.c.total_value).label("total_value"),
            func.sum(latest.c.total_pnl).label("total_pnl"),
            func.max(latest.c.slot).label("last_snapshot"),
        )
        .select_from(AGENTS)
        .outerjoin(latest, latest.c.agent_id == AGENTS.c.id)
        .group_by(AGENTS.c.cohort_id)
        .subquery("per_cohort")
    )
    weeks = (
        select(
            DECISIONS.c.cohort_id,
            func.max(DECISIONS.c.decision_week).label("decision_weeks"),
            func.count(DECISIONS.c.id).label("decisions"),
        )
        .where(DECISIONS.c.status != "in_progress")
        .group_by(DECISIONS.c.cohort_id)
        .subquery("weeks")
    )
    open_positions = (
        select(AGENTS.c.cohort_id, func.count(POSITIONS.c.id).label("open_positions"))
        .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
        .where(POSITIONS.c.status == "open")
        .group_by(AGENTS.c.cohort_id)
        .subquery("open_positions")
    )
    query = (
        select(
            COHORTS.c.number.label("cohort_number"),
            COHORTS.c.week_start,
            COHORTS.c.status,
            COHORTS.c.methodology_version,
            COHORTS.c.constants,
            per_cohort.c.agents,
            per_cohort.c.capital,
            weeks.c.decision_weeks,
            weeks.c.decisions,
            open_positions.c.open_positions,
            per_cohort.c.total_value,
            per_cohort.c.total_pnl,
            per_cohort.c.last_snapshot,
            COHORTS.c.completed_at,
        )
        .select_from(COHORTS)
        .outerjoin(per_cohort, per_cohort.c.cohort_id == COHORTS.c.id)
        .outerjoin(weeks, weeks.c.cohort_id == COHORTS.c.id)
        .outerjoin(open_positions, open_positions.c.cohort_id == COHORTS.c.id)
        .order_by(COHORTS.c.number.desc())
    )
    with engine.connect() as conn:
        rows = fetch(conn, query)
    for row in rows:
        constants = row.pop("constants") or {}
        row["is_default"] = bool(constants.get("is_default", True))
        row["extensions"] = ", ".join(stamped_extensions(constants))
        row["return_pct"] = _pct(row["total_pnl"], row["capital"])
    return typed_frame(rows, COHORT_COLUMNS)


def _pct(pnl: Any, capital: Any) -> float:
    """P/L as a percentage of capital, exact in Decimal; NaN without either."""
    if pnl is None or not capital:
        return np.nan
    return float(Decimal(pnl) / Decimal(capital) * 100)


def cohort_numbers(engine: Engine) -> list[int]:
    """Every cohort number, newest first (for selectors)."""
    with engine.connect() as conn:
        found = conn.execute(select(COHORTS.c.number).order_by(COHORTS.c.number.desc())).scalars()
        return [int(n) for n in found]


# --------------------------------------------------------------------------------------------
# One cohort: standings and decisions by week

STANDINGS_COLUMNS: dict[str, str] = {
    "rank": INT,
    "family_id": TEXT,
    "replicate": INT,
    "display_name": TEXT,
    "kind": TEXT,
    "model_id": TEXT,
    "total_value": MONEY,
    "cash_balance": MONEY,
    "positions_value": MONEY,
    "total_pnl": MONEY,
    "return_pct": FLOAT,
    "brier": FLOAT,
    "resolved_bets": INT,
    "win_rate": FLOAT,
    "open_positions": INT,
    "decisions": INT,
    "fallback_holds": INT,
    "api_cost_usd": FLOAT,
    "last_snapshot": TIME,
}


def cohort_standings(engine: Engine, cohort: int) -> pd.DataFrame:
    """One cohort's agents ranked by return (its own leaderboard, v1 point numbers).

    Columns: ``rank`` (1 = best return; ties share); ``family_id``, ``display_name``,
    ``kind``, ``model_id`` (the model id the agent ran with: lineage); from the latest
    snapshot ``total_value``, ``cash_balance``, ``positions_value``, ``total_pnl`` ($) and
    ``return_pct``; before any snapshot the agent's cash and the cost of its open positions;
    ``brier`` (mean of its Brier rows, NaN before a resolution), ``resolved_bets``,
    ``win_rate`` (share of resolved bets won); ``open_positions``; ``decisions``,
    ``fallback_holds``, ``api_cost_usd``; ``last_snapshot``.
    """
    frame = _standings(engine, agent_ids(cohort))
    return frame[list(STANDINGS_COLUMNS)]


AGENT_STANDINGS_COLUMNS: dict[str, str] = {"cohort_number": INT, **STANDINGS_COLUMNS}


def _standings(engine: Engine, agents: Select[Any]) -> pd.DataFrame:
    """The standings rows (`STANDINGS_COLUMNS` and ``cohort_number``) of the agents of the
    `agents` id select, ranked by return within each cohort, cohort by cohort (newest first)
    then by rank and family id."""
    latest = latest_snapshots(agents)
    decisions, positions, briers = agent_stats(agents)
    open_cost = (
        select(POSITIONS.c.agent_id, func.sum(POSITIONS.c.cost_basis).label("open_cost"))
        .where(POSITIONS.c.status == "open")
        .group_by(POSITIONS.c.agent_id)
    )
    open_cost = _of_agents(open_cost, POSITIONS.c.agent_id, agents).subquery("open_cost")
    query = (
        select(
            COHORTS.c.number.label("cohort_number"),
            AGENTS.c.family_id,
            AGENTS.c.replicate,
            agent_display_name(),
            func.coalesce(FAMILIES.c.kind, "llm").label("kind"),
            AGENTS.c.model_id,
            AGENTS.c.starting_balance,
            AGENTS.c.cash_balance.label("agent_cash"),
            open_cost.c.open_cost,
            latest.c.total_value,
            latest.c.cash_balance,
            latest.c.positions_value,
            latest.c.total_pnl,
            latest.c.slot.label("last_snapshot"),
            briers.c.brier,
            briers.c.resolved_bets,
            briers.c.wins,
            positions.c.open_positions,
            decisions.c.decisions,
            decisions.c.fallback_holds,
            decisions.c.api_cost_usd,
        )
        .select_from(AGENTS)
        .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .outerjoin(latest, latest.c.agent_id == AGENTS.c.id)
        .outerjoin(open_cost, open_cost.c.agent_id == AGENTS.c.id)
        .outerjoin(briers, briers.c.agent_id == AGENTS.c.id)
        .outerjoin(positions, positions.c.agent_id == AGENTS.c.id)
        .outerjoin(decisions, decisions.c.agent_id == AGENTS.c.id)
        .where(AGENTS.c.id.in_(agents))
    )
    with engine.connect() as conn:
        rows = fetch(conn, query)
    for row in rows:
        if row["total_value"] is None:  # never valued yet: cash plus open positions at cost
            cash = row["agent_cash"]
            positions_value = row["open_cost"] or Decimal(0)
            row["cash_balance"] = cash
            row["positions_value"] = positions_value
            row["total_value"] = cash + positions_value
            row["total_pnl"] = row["total_value"] - row["starting_balance"]
        row["return_pct"] = _pct(row["total_pnl"], row["starting_balance"])
        bets = row["resolved_bets"] or 0
        row["win_rate"] = (row["wins"] or 0) / bets if bets else np.nan
    frame = typed_frame(rows, AGENT_STANDINGS_COLUMNS)
    ranks = frame.groupby("cohort_number")["return_pct"].rank(method="min", ascending=False)
    frame["rank"] = ranks.fillna(0).astype(int)
    order = frame.sort_values(
        ["cohort_number", "rank", "family_id", "replicate"],
        ascending=[False, True, True, True],
        kind="stable",
    )
    return order.reset_index(drop=True)


def family_standings(engine: Engine, family: str) -> pd.DataFrame:
    """The standings (`cohort_standings` rows with ``cohort_number``) of every agent in the
    cohorts where `family` has an agent, newest cohort first: a family's place in each of
    its cohorts. Empty when the family has no agent."""
    theirs = select(AGENTS.c.cohort_id).where(AGENTS.c.family_id == family)
    return _standings(engine, select(AGENTS.c.id).where(AGENTS.c.cohort_id.in_(theirs)))


# --------------------------------------------------------------------------------------------
# A family's place in its cohort: rank of N, and the cohort's average, best and worst return

FIELD_COLUMNS: dict[str, str] = {
    "rank": INT,
    "agents": INT,
    "return_pct": FLOAT,
    "cohort_mean_return": FLOAT,
    "cohort_best_return": FLOAT,
    "cohort_best": TEXT,
    "cohort_worst_return": FLOAT,
    "cohort_worst": TEXT,
    "vs_mean": FLOAT,
    "vs_best": FLOAT,
    "vs_worst": FLOAT,
}


def cohort_field(
    standings: pd.DataFrame, family: str, replicate: int | None = None
) -> dict[str, Any]:
    """`family`'s place among the agents of one cohort's `standings` (`cohort_standings`):
    ``rank`` (of ``agents``, baselines included), its ``return_pct``, the cohort's
    ``cohort_mean_return`` (mean of the agents' returns), ``cohort_best_return`` and
    ``cohort_worst_return`` with who (``cohort_best`` / ``cohort_worst``: display names), and
    the differences ``vs_mean``, ``vs_best``, ``vs_worst`` in percentage points. Empty when
    the family has no agent in `standings`. Pure: no database."""
    mine = standings[standings["family_id"] == family]
    if replicate is not None:
        mine = mine[mine["replicate"] == replicate]
    if mine.empty:
        return {}
    me = mine.iloc[0]
    returns = standings["return_pct"]
    valued = standings[returns.notna()]
    if valued.empty:
        best = worst = pd.Series({"return_pct": np.nan, "display_name": pd.NA})
    else:
        # Ties: the first in the standings' order (rank, then family id).
        best = valued.loc[valued["return_pct"].idxmax()]
        worst = valued.loc[valued["return_pct"].idxmin()]
    mean = float(returns.mean()) if returns.notna().any() else np.nan
    mine_return = float(me["return_pct"])
    return {
        "rank": int(me["rank"]),
        "agents": len(standings),
        "return_pct": mine_return,
        "cohort_mean_return": mean,
        "cohort_best_return": float(best["return_pct"]),
        "cohort_best": best["display_name"],
        "cohort_worst_return": float(worst["return_pct"]),
        "cohort_worst": worst["display_name"],
        "vs_mean": mine_return - mean,
        "vs_best": mine_return - float(best["return_pct"]),
        "vs_worst": mine_return - float(worst["return_pct"]),
    }


def best_llm(standings: pd.DataFrame) -> str | None:
    """The family id of the best-ranked LLM agent in `standings` (`cohort_standings` order:
    rank, then family id); None when the standings hold no LLM agent."""
    llms = standings[standings["kind"] == "llm"].sort_values(["rank", "family_id"], kind="stable")
    return str(llms["family_id"].iloc[0]) if not llms.empty else None


WEEK_COLUMNS: dict[str, str] = {
    "decision_week": INT,
    "family_id": TEXT,
    "display_name": TEXT,
    "decision_id": INT,
    "action": TEXT,
    "status": TEXT,
    "bets": INT,
    "sells": INT,
    "rejected": INT,
    "amount": MONEY,
    "cost_usd": FLOAT,
}


def decisions_by_week(engine: Engine, cohort: int) -> pd.DataFrame:
    """Every decision of one cohort, one row per agent × decision week.

    Columns: ``decision_week``, ``family_id``, ``display_name``, ``decision_id``, ``action``
    (BET | SELL | HOLD, empty while in progress), ``status``; from its legs ``bets`` and
    ``sells`` (executed), ``rejected`` (legs refused with a reason) and ``amount`` (dollars
    bet by the executed BET legs); ``cost_usd`` (API cost of all its attempts).
    """
    query = (
        select(
            DECISIONS.c.decision_week,
            AGENTS.c.family_id,
            func.coalesce(FAMILIES.c.display_name, AGENTS.c.display_name).label("display_name"),
            DECISIONS.c.id.label("decision_id"),
            DECISIONS.c.action,
            DECISIONS.c.status,
            *leg_tallies(),
            DECISIONS.c.cost_usd,
        )
        .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
        .join(COHORTS, COHORTS.c.id == DECISIONS.c.cohort_id)
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .where(COHORTS.c.number == cohort)
        .order_by(DECISIONS.c.decision_week, AGENTS.c.family_id)
    )
    return read_frame(engine, query, WEEK_COLUMNS)


def decision_grid(weeks: pd.DataFrame) -> pd.DataFrame:
    """`decisions_by_week` as one row per family and one column per week (``week N``), each
    cell a short line: action, status when not ok, legs (``BET 2 bet(s) $750, 1 rejected``).

    Columns: ``family`` (display name), then ``week 1`` … in week order.
    """
    if weeks.empty:
        return pd.DataFrame(columns=["family"])
    return (
        weeks.groupby(["display_name", "decision_week"])
        .apply(_week_line, include_groups=False)
        .unstack("decision_week")
        .rename(columns=lambda week: f"week {week}")
        .reset_index()
        .rename(columns={"display_name": "family"})
    )


def _week_line(frame: pd.DataFrame) -> str:
    """One agent's decision of one week as a short line: action, status, legs."""
    one = frame.iloc[0]
    text = str(one["action"]) if not pd.isna(one["action"]) else "…"
    if one["status"] != "ok":
        text += f" [{one['status']}]"
    if one["bets"]:
        text += f" {int(one['bets'])} bet(s) ${one['amount']:,.0f}"
    if one["sells"]:
        text += f" {int(one['sells'])} sell(s)"
    if one["rejected"]:
        text += f", {int(one['rejected'])} rejected"
    return text


def leg_tallies() -> tuple[Any, ...]:
    """A decision's leg tallies as the read models name them: ``bets`` and ``sells``
    (executed), ``rejected`` (legs refused with a reason), ``amount`` (dollars bet by the
    executed BETs). The engine writes them with the legs, so no read decodes the JSON."""
    return (
        DECISIONS.c.bets_executed.label("bets"),
        DECISIONS.c.sells_executed.label("sells"),
        DECISIONS.c.legs_rejected.label("rejected"),
        DECISIONS.c.amount_bet.label("amount"),
    )
