"""Read models of risk: drawdown, volatility and Sharpe from the 10-minute portfolio curves.

Why: two families with the same return can have taken very different paths. All figures are
*paper* (no fees, no slippage, no financing), with a risk-free rate of 0.

* Max drawdown per agent is taken on the full 10-minute curve, in SQL (a running-peak window
  per agent, then one GROUP BY), with the starting balance as the first peak.
* Daily returns use end-of-day values: the last snapshot of each UTC date, read from the
  daily portfolio rollup, with the starting balance as the value before the first day.
* Volatility and Sharpe are annualised with √365 (prediction markets trade every day); the
  Sharpe's standard error ``sharpe_se`` is Mertens' (2002), which allows for the skewed,
  heavy-tailed daily returns of a book of binary bets; ``sharpe_se_iid`` is Lo's (2002)
  iid-normal one, kept for comparison (`arena.core.stats.SharpeEstimate` has both formulas).
* A family's figures are those of its combined book: each day's return is the sum of its
  agents' P/L that day over the sum of their values the evening before (agents count from
  their first to their last snapshot date), so capital-weighted across cohorts; its max
  drawdown is taken on the compounded daily index of that book (daily resolution). Pooled
  replicates (several agents of a family in one cohort) enter that book like cohorts do, so
  a family's figures are those of everything it was given, as the leaderboard pools it.
* Scope, as every statistical read (`arena.analytics.query.scope`): all cohorts means every
  v1 cohort (extended cohorts left out); a cohort chosen by number is read as it is.
"""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Float, Select, case, cast, func, select
from sqlalchemy.engine import Engine

from arena.analytics.query.frames import result_frame
from arena.analytics.query.scope import cohort_id_of, in_scope
from arena.config import METHODOLOGY_VERSION
from arena.core import stats
from arena.storage.models import ROLLUP_DAY as DAY
from arena.storage.tables import AGENTS, COHORTS, FAMILIES
from arena.storage.tables import PORTFOLIO_ROLLUPS as ROLLUPS
from arena.storage.tables import PORTFOLIO_SNAPSHOTS as SNAPSHOTS

AGENT_RISK_COLUMNS: tuple[str, ...] = (
    "family_id",
    "cohort_number",
    "agent_id",
    "days",
    "return_pct",
    "max_drawdown",
    "volatility",
    "sharpe",
    "sharpe_se",
    "sharpe_se_iid",
)
# What the leaderboard adds per family (`leaderboard_risk`), raw numbers in its CSV.
LEADERBOARD_RISK_COLUMNS: tuple[str, ...] = (
    "max_drawdown_pct",
    "sharpe",
    "sharpe_se",
    "sharpe_days",
)
FAMILY_RISK_COLUMNS: tuple[str, ...] = (
    "family_id",
    "kind",
    "cohorts",
    "days",
    "max_drawdown",
    "volatility",
    "sharpe",
    "sharpe_se",
    "sharpe_se_iid",
)


def _of_agents(query: Select[Any], family: str | None, replicate: int | None) -> Select[Any]:
    """Restrict a query that joins `agents` to one family (and one of its replicates)."""
    if family is not None:
        query = query.where(AGENTS.c.family_id == family)
    if replicate is not None:
        query = query.where(AGENTS.c.replicate == replicate)
    return query


def daily_values(
    engine: Engine,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    family: str | None = None,
    replicate: int | None = None,
    cohort_ids: tuple[int, ...] | None = None,
) -> pd.DataFrame:
    """End-of-day portfolio values: the last snapshot of each agent on each UTC date (of
    `family` alone, and its replicate `replicate`, when given; `cohort_ids`: of exactly those
    cohort rows instead of `cohort` / `methodology`, as the late-entry board reads them).

    Columns: ``agent_id``, ``family_id``, ``cohort_number``, ``starting_balance`` (float),
    ``date`` (datetime.date), ``total_value`` (float), sorted by agent and date.
    """
    # The daily rollup holds exactly that row per agent and UTC day (arena.engine.rollups).
    query = (
        select(
            AGENTS.c.id.label("agent_id"),
            AGENTS.c.family_id,
            COHORTS.c.number.label("cohort_number"),
            AGENTS.c.starting_balance,
            ROLLUPS.c.bucket.label("date"),
            ROLLUPS.c.total_value,
        )
        .select_from(ROLLUPS)
        .join(AGENTS, AGENTS.c.id == ROLLUPS.c.agent_id)
        .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
        .where(ROLLUPS.c.width == DAY)
    )
    with engine.connect() as conn:
        ids = cohort_ids if cohort_ids is not None else cohort_id_of(conn, cohort, methodology)
        scoped = _of_agents(in_scope(query, ids), family, replicate)
        result = conn.execute(scoped)
        frame = result_frame(result)
    if frame.empty:
        return frame
    frame["date"] = [datetime.fromtimestamp(int(d), UTC).date() for d in frame["date"]]
    frame["starting_balance"] = frame["starting_balance"].astype("float64")
    frame["total_value"] = frame["total_value"].astype("float64")
    return frame.sort_values(["agent_id", "date"]).reset_index(drop=True)


def max_drawdowns(
    engine: Engine,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    family: str | None = None,
    replicate: int | None = None,
) -> pd.DataFrame:
    """Per agent: the largest fall from a running peak on the 10-minute curve (fraction ≥ 0).

    Set-based: a window function keeps each snapshot's running peak (the starting balance
    counts as the first peak), one GROUP BY takes the worst fall. Columns: ``agent_id``,
    ``max_drawdown``.
    """
    running = func.max(SNAPSHOTS.c.total_value).over(
        partition_by=SNAPSHOTS.c.agent_id, order_by=SNAPSHOTS.c.slot
    )
    with engine.connect() as conn:
        curve = in_scope(
            select(
                SNAPSHOTS.c.agent_id,
                cast(SNAPSHOTS.c.total_value, Float).label("value"),
                cast(running, Float).label("running_peak"),
                cast(AGENTS.c.starting_balance, Float).label("start"),
            ).join(AGENTS, AGENTS.c.id == SNAPSHOTS.c.agent_id),
            cohort_id_of(conn, cohort, methodology),
        )
        curve = _of_agents(curve, family, replicate)
        sub = curve.subquery()
        peak = case((sub.c.running_peak > sub.c.start, sub.c.running_peak), else_=sub.c.start)
        fall = case((peak > 0, (peak - sub.c.value) / peak), else_=0.0)
        query = select(sub.c.agent_id, func.max(fall).label("max_drawdown")).group_by(
            sub.c.agent_id
        )
        result = conn.execute(query)
        frame = result_frame(result)
    if not frame.empty:
        frame["max_drawdown"] = frame["max_drawdown"].astype("float64").clip(lower=0.0)
    return frame


def agent_risk(
    engine: Engine,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    family: str | None = None,
    replicate: int | None = None,
) -> pd.DataFrame:
    """Per agent (cohort × family) with snapshots: its risk figures (`family`'s agents alone,
    and its replicate `replicate`'s, when given: the Agent page reads one agent).

    Columns: ``family_id``, ``cohort_number``, ``agent_id``, ``days`` (daily returns used),
    ``return_pct`` (last end-of-day value vs the start), ``max_drawdown`` (fraction of the
    peak, 10-minute curve), ``volatility`` (annualised sd of daily returns), ``sharpe``
    (annualised, r_f = 0, paper), ``sharpe_se`` (its standard error, Mertens 2002: allows for
    skew and kurtosis), ``sharpe_se_iid`` (Lo 2002's iid-normal standard error).
    """
    daily = daily_values(
        engine, cohort=cohort, family=family, replicate=replicate, methodology=methodology
    )
    if daily.empty:
        return pd.DataFrame(columns=list(AGENT_RISK_COLUMNS))
    drawdowns = max_drawdowns(
        engine, cohort=cohort, family=family, replicate=replicate, methodology=methodology
    )
    drawdown = drawdowns.set_index("agent_id")["max_drawdown"]
    records = []
    for agent_id, group in daily.groupby("agent_id", sort=True):
        start = float(group["starting_balance"].iloc[0])
        values = group["total_value"].to_numpy()
        estimate = stats.sharpe_estimate(stats.simple_returns(values, base=start))
        records.append(
            {
                "family_id": group["family_id"].iloc[0],
                "cohort_number": int(group["cohort_number"].iloc[0]),
                "agent_id": int(agent_id),
                "days": estimate.periods,
                "return_pct": (values[-1] / start - 1.0) * 100.0,
                "max_drawdown": float(drawdown.get(agent_id, np.nan)),
                "volatility": estimate.volatility,
                "sharpe": estimate.sharpe,
                "sharpe_se": estimate.sharpe_se,
                "sharpe_se_iid": estimate.sharpe_se_iid,
            }
        )
    frame = pd.DataFrame(records)[list(AGENT_RISK_COLUMNS)]
    return frame.sort_values(["family_id", "cohort_number"]).reset_index(drop=True)


def combined_daily_returns(daily: pd.DataFrame) -> pd.Series:
    """Daily returns of a family's combined book (see the module docstring), by date.

    `daily` holds one family's `daily_values` rows. An agent counts from its first to its
    last snapshot date; the evening before its first day it is worth its starting balance.
    """
    values = daily.pivot(index="date", columns="agent_id", values="total_value").sort_index()
    start = daily.groupby("agent_id")["starting_balance"].first()
    filled = values.ffill()
    previous = filled.shift(1)
    first = values.apply(lambda column: column.first_valid_index())
    last = values.apply(lambda column: column.last_valid_index())
    dates = pd.Series(values.index, index=values.index)
    alive = pd.DataFrame(
        {a: (dates >= first[a]) & (dates <= last[a]) for a in values.columns}, index=values.index
    )
    for agent in values.columns:
        previous.loc[first[agent], agent] = start[agent]
    pnl = ((filled - previous) * alive).sum(axis=1)
    base = (previous * alive).sum(axis=1)
    return (pnl / base).where(base > 0)


def family_risk(
    engine: Engine, *, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """Per family: the risk figures of its combined book across its cohorts.

    Columns: ``family_id``, ``kind``, ``cohorts``, ``days`` (daily returns), ``max_drawdown``
    (fraction, on the compounded daily index), ``volatility``, ``sharpe``, ``sharpe_se``,
    ``sharpe_se_iid`` (annualised, r_f = 0, paper; see the module docstring).
    """
    daily = daily_values(engine, cohort=cohort, methodology=methodology)
    if daily.empty:
        return pd.DataFrame(columns=list(FAMILY_RISK_COLUMNS))
    with engine.connect() as conn:
        kinds = dict(conn.execute(select(FAMILIES.c.id, FAMILIES.c.kind)).all())
    return risk_of_daily(daily, kinds)


def risk_of_daily(daily: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """`family_risk`'s figures from `daily_values` rows (non-empty), per ``family_id``. Pure."""
    records = []
    for family_id, group in daily.groupby("family_id", sort=True):
        returns = combined_daily_returns(group).dropna().to_numpy()
        estimate = stats.sharpe_estimate(returns)
        index = np.cumprod(1.0 + returns)
        records.append(
            {
                "family_id": family_id,
                "kind": kinds.get(family_id, "llm"),
                "cohorts": int(group["cohort_number"].nunique()),
                "days": estimate.periods,
                "max_drawdown": stats.max_drawdown(index, start=1.0),
                "volatility": estimate.volatility,
                "sharpe": estimate.sharpe,
                "sharpe_se": estimate.sharpe_se,
                "sharpe_se_iid": estimate.sharpe_se_iid,
            }
        )
    return pd.DataFrame(records)[list(FAMILY_RISK_COLUMNS)]


def leaderboard_risk(
    engine: Engine, *, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """The leaderboard's risk columns per family (index ``family_id``), from `family_risk`:
    ``max_drawdown_pct`` (% of the peak, ≥ 0, on the combined book's daily index),
    ``sharpe`` and ``sharpe_se`` (annualised daily Sharpe and its Mertens standard error; NaN
    with fewer than 2 daily returns or none that vary), ``sharpe_days`` (daily returns used)."""
    return leaderboard_columns(family_risk(engine, cohort=cohort, methodology=methodology))


def leaderboard_columns(risk: pd.DataFrame) -> pd.DataFrame:
    """`family_risk` rows as the leaderboard's risk columns, index ``family_id``. Pure."""
    risk = risk.set_index("family_id")
    frame = pd.DataFrame(
        {
            "max_drawdown_pct": risk["max_drawdown"].astype("float64") * 100.0,
            "sharpe": risk["sharpe"].astype("float64"),
            "sharpe_se": risk["sharpe_se"].astype("float64"),
            "sharpe_days": risk["days"].astype("int64"),
        },
        index=risk.index,
    )
    return frame[list(LEADERBOARD_RISK_COLUMNS)]
