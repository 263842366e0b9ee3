"""Read models of the weekly competitions: the cohort list, one cohort's standings, its weeks,
and a family's standing in each of its cohorts (`family_standings`).

The selects they share with the other read models live in `arena.analytics.query.selects`.
"""

from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Select, func, select
from sqlalchemy.engine import Engine

from arena.analytics.query.frames import BOOL, FLOAT, INT, MONEY, TEXT, TIME, query_frame
from arena.analytics.query.scope import live_cohort_of
from arena.analytics.query.selects import (
    agent_book,
    agent_display_name,
    agent_ids,
    agent_pnl,
    agent_stats,
    fetch,
    latest_snapshots,
    ratio,
    read_frame,
    typed_frame,
)
from arena.analytics.views.realised import realised_by_cohort, with_realised
from arena.config import stamped_extensions
from arena.storage.tables import AGENTS, COHORTS, DECISIONS, FAMILIES, POSITIONS, live_cohort

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
        .where(live_cohort())
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
    """Every live cohort's number, newest first (for selectors)."""
    query = select(COHORTS.c.number).where(live_cohort()).order_by(COHORTS.c.number.desc())
    with engine.connect() as conn:
        found = conn.execute(query).scalars()
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


def cohort_standings_realised(engine: Engine, cohort: int) -> pd.DataFrame:
    """`cohort_standings` with how much of each agent's return is realised as its last columns
    (`arena.analytics.views.realised.SHOWN_COLUMNS`: stakes resolved, stakes still marked,
    their shares, position counts), matched on family and replicate."""
    split = realised_by_cohort(engine, cohort=cohort)
    return with_realised(cohort_standings(engine, cohort), split, on=("family_id", "replicate"))


AGENT_STANDINGS_COLUMNS: dict[str, str] = {"cohort_number": INT, **STANDINGS_COLUMNS}


def _book_columns(book: Any) -> list[Any]:
    """The agent book's columns the standings read, labelled as `_STANDINGS_READ` names them."""
    return [
        book.c.capital,
        book.c.cash,
        book.c.open_cost,
        book.c.total_value,
        book.c.cash_balance,
        book.c.positions_value,
        book.c.total_pnl,
        book.c.slot.label("last_snapshot"),
        book.c.brier_sum,
        book.c.resolved_bets,
        book.c.wins,
    ]


_STANDINGS_READ: dict[str, str] = {
    "cohort_number": INT,
    "family_id": TEXT,
    "replicate": INT,
    "display_name": TEXT,
    "kind": TEXT,
    "model_id": TEXT,
    "capital": MONEY,
    "cash": MONEY,
    "open_cost": MONEY,
    "total_value": MONEY,
    "cash_balance": MONEY,
    "positions_value": MONEY,
    "total_pnl": MONEY,
    "last_snapshot": TIME,
    "brier_sum": FLOAT,
    "resolved_bets": INT,
    "wins": INT,
    "open_positions": INT,
    "decisions": INT,
    "fallback_holds": INT,
    "api_cost_usd": FLOAT,
}


def _value_books(frame: pd.DataFrame) -> None:
    """In place: an agent never valued yet shows its cash and its open positions at cost
    (the P/L rule, `agent_pnl`); return, mean Brier and win rate from the book."""
    unvalued = frame["total_value"].isna()
    open_cost = frame["open_cost"].fillna(0.0)
    frame["cash_balance"] = frame["cash_balance"].where(~unvalued, frame["cash"])
    frame["positions_value"] = frame["positions_value"].where(~unvalued, open_cost)
    frame["total_value"] = frame["total_value"].where(~unvalued, frame["cash"] + open_cost)
    capital = frame["capital"].to_numpy()
    frame["total_pnl"] = agent_pnl(
        capital,
        frame["cash"].to_numpy(),
        frame["open_cost"].to_numpy(),
        frame["total_pnl"].to_numpy(),
    )
    frame["return_pct"] = ratio(frame["total_pnl"], capital) * 100
    bets = frame["resolved_bets"].to_numpy()
    frame["brier"] = ratio(frame["brier_sum"], bets)
    frame["win_rate"] = ratio(frame["wins"], bets)


def _standings(engine: Engine, agents: Select[Any]) -> pd.DataFrame:
    """The standings rows (`STANDINGS_COLUMNS` and ``cohort_number``) of the agents of the
    `agents` id select, ranked by return within each cohort, cohort by cohort (newest first)
    then by rank and family id."""
    book = agent_book(agents)
    decisions, positions = agent_stats(agents)
    query = (
        select(
            COHORTS.c.number.label("cohort_number"),
            AGENTS.c.family_id,
            AGENTS.c.replicate,
            agent_display_name(),
            func.coalesce(FAMILIES.c.kind, "llm").label("kind"),
            AGENTS.c.model_id,
            *_book_columns(book),
            positions.c.open_positions,
            decisions.c.decisions,
            decisions.c.fallback_holds,
            decisions.c.api_cost_usd,
        )
        .select_from(AGENTS)
        .join(COHORTS, live_cohort_of(AGENTS.c.cohort_id))
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .join(book, book.c.agent_id == AGENTS.c.id)
        .outerjoin(positions, positions.c.agent_id == AGENTS.c.id)
        .outerjoin(decisions, decisions.c.agent_id == AGENTS.c.id)
    )
    with engine.connect() as conn:
        frame = query_frame(conn, query, _STANDINGS_READ)
    _value_books(frame)
    ranks = frame.groupby("cohort_number")["return_pct"].rank(method="min", ascending=False)
    frame["rank"] = ranks.fillna(0).astype(int)
    frame = frame[list(AGENT_STANDINGS_COLUMNS)]
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
    theirs = (
        select(AGENTS.c.cohort_id)
        .join(COHORTS, live_cohort_of(AGENTS.c.cohort_id))
        .where(AGENTS.c.family_id == family)
    )
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
        .join(COHORTS, live_cohort_of(DECISIONS.c.cohort_id))
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
