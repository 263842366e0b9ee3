"""How much of a return is realised: the stakes resolved against the stakes still marked.

Why: a family's return mixes settled money with open marks, and the two are not equally sure;
a 5% return that is 95% marks can still vanish. The Leaderboard and Cohorts pages show, per
family (over a scope) and per family × cohort, what share of the dollars staked has resolved.

The rule, on exact sums (every money column is an integer number of micro-dollars, so the SQL
sums are exact and the shares come from Decimals):

- ``stakes``: the dollars of the agent's BUY legs (the cost paid);
- ``marked_stakes``: the remaining cost basis of its open positions (what is still at a mark);
- ``resolved_stakes`` = stakes − marked_stakes: the cost of what no longer sits at a mark,
  split by how it left the mark: ``sold_stakes`` (the cost basis a SELL removed: its proceeds
  minus its realized P/L, partial sells included), ``settled_stakes`` (the rest of positions
  settled won or lost) and ``refunded_stakes`` (the rest of positions refunded on a void).

A sale counts as resolved ("closed": the money is no longer at a mark, whatever the price).
A partly sold open position splits: its sold cost resolved, its remaining cost basis marked.
Counts are positions: ``resolved_positions`` (status won, lost, cancelled or sold),
``marked_positions`` (open, a partly sold one included).

The scope is the leaderboard's: one cohort number, or all cohorts of a methodology version or
protocol group (`arena.analytics.query.scope.cohort_id_of`, `in_scope`), so "all" means the
same cohorts.
"""

from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import case, func, select, type_coerce
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.frames import FLOAT, INT, MONEY, TEXT
from arena.analytics.query.scope import CohortScope, cohort_id_of, in_scope
from arena.analytics.query.selects import typed_frame
from arena.config import METHODOLOGY_VERSION
from arena.storage.db import consistent_read
from arena.storage.models import MONEY as MONEY_TYPE
from arena.storage.tables import AGENTS, COHORTS, POSITIONS, TRADES

ZERO = Decimal(0)
# How each position status left the mark (open: it has not).
RESOLVED_BY = {"won": "settled", "lost": "settled", "cancelled": "refunded", "sold": "sold"}
STAKE_COLUMNS: dict[str, str] = {
    "stakes": MONEY,
    "resolved_stakes": MONEY,
    "marked_stakes": MONEY,
    "settled_stakes": MONEY,
    "refunded_stakes": MONEY,
    "sold_stakes": MONEY,
    "resolved_share": FLOAT,
    "marked_share": FLOAT,
    "positions": INT,
    "resolved_positions": INT,
    "marked_positions": INT,
}
COHORT_REALISED_COLUMNS: dict[str, str] = {
    "family_id": TEXT,
    "cohort_number": INT,
    "replicate": INT,
    **STAKE_COLUMNS,
}
FAMILY_REALISED_COLUMNS: dict[str, str] = {"family_id": TEXT, **STAKE_COLUMNS}
# The money sums a row carries before its shares (Decimal while summing).
_SUMS = ("stakes", "marked_stakes", "settled_stakes", "refunded_stakes", "sold_stakes")
_COUNTS = ("positions", "resolved_positions", "marked_positions")


def _money_sum(column: Any) -> Any:
    """SQL SUM of a money column (or of a CASE over one), read back as an exact Decimal."""
    return type_coerce(func.sum(column), MONEY_TYPE)


def _positions(conn: Connection, scope: CohortScope) -> list[Any]:
    """Per agent × position status: positions and their remaining cost basis."""
    query = (
        select(
            POSITIONS.c.agent_id,
            POSITIONS.c.status,
            func.count(POSITIONS.c.id).label("n"),
            _money_sum(POSITIONS.c.cost_basis).label("cost_basis"),
        )
        .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
        .group_by(POSITIONS.c.agent_id, POSITIONS.c.status)
    )
    return list(conn.execute(in_scope(query, scope)))


def _trades(conn: Connection, scope: CohortScope) -> list[Any]:
    """Per agent × status of the trade's position: BUY dollars, SELL proceeds and SELL
    realized P/L (proceeds − realized = the cost basis the sale removed)."""
    is_buy = TRADES.c.trade_type == "BUY"
    is_sell = TRADES.c.trade_type == "SELL"
    query = (
        select(
            TRADES.c.agent_id,
            POSITIONS.c.status,
            _money_sum(case((is_buy, TRADES.c.amount), else_=0)).label("bought"),
            _money_sum(case((is_sell, TRADES.c.amount), else_=0)).label("proceeds"),
            _money_sum(case((is_sell, TRADES.c.realized_pnl), else_=0)).label("sale_pnl"),
        )
        .join(POSITIONS, POSITIONS.c.id == TRADES.c.position_id)
        .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
        .where(TRADES.c.trade_type.in_(("BUY", "SELL")))
        .group_by(TRADES.c.agent_id, POSITIONS.c.status)
    )
    return list(conn.execute(in_scope(query, scope)))


def _agents(conn: Connection, scope: CohortScope) -> list[Any]:
    """The agents in scope: id, family, cohort number, replicate."""
    query = (
        select(AGENTS.c.id, AGENTS.c.family_id, COHORTS.c.number, AGENTS.c.replicate)
        .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
        .order_by(AGENTS.c.id)
    )
    return list(conn.execute(in_scope(query, scope)))


def _empty_sums() -> dict[str, Any]:
    return {**dict.fromkeys(_SUMS, ZERO), **dict.fromkeys(_COUNTS, 0)}


def _fold(sums: dict[int, dict[str, Any]], positions: list[Any], trades: list[Any]) -> None:
    """In place: each agent's exact sums from its per-status position and trade rows."""
    for agent_id, status, n, cost_basis in positions:
        row = sums[agent_id]
        row["positions"] += int(n)
        if status == "open":
            row["marked_positions"] += int(n)
            row["marked_stakes"] += cost_basis or ZERO
        else:
            row["resolved_positions"] += int(n)
    for agent_id, status, bought, proceeds, sale_pnl in trades:
        row = sums[agent_id]
        bought, sold = bought or ZERO, (proceeds or ZERO) - (sale_pnl or ZERO)
        row["stakes"] += bought
        row["sold_stakes"] += sold
        how = RESOLVED_BY.get(str(status))
        if how in ("settled", "refunded"):  # what was not sold before the verdict
            row[f"{how}_stakes"] += bought - sold


def _agent_sums(
    engine: Engine, cohort: int | None, methodology: str
) -> tuple[list[Any], dict[int, dict[str, Any]]]:
    """The agents in scope and each one's exact sums, read in one consistent snapshot."""
    with consistent_read(engine) as conn:
        scope = cohort_id_of(conn, cohort, methodology)
        agents = _agents(conn, scope)
        sums = {agent_id: _empty_sums() for agent_id, *_ in agents}
        _fold(sums, _positions(conn, scope), _trades(conn, scope))
    return agents, sums


def with_shares(row: dict[str, Any]) -> dict[str, Any]:
    """`row` (exact sums) with ``resolved_stakes`` and the two shares (0-1; NaN without a
    stake). Pure."""
    stakes, marked = row["stakes"], row["marked_stakes"]
    resolved = stakes - marked
    shares = (float(resolved / stakes), float(marked / stakes)) if stakes > 0 else (np.nan, np.nan)
    return {
        **row,
        "resolved_stakes": resolved,
        "resolved_share": shares[0],
        "marked_share": shares[1],
    }


def realised_by_cohort(
    engine: Engine, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """One row per agent in scope (family × cohort; × replicate in a replicated cohort), by
    cohort then family then replicate: `COHORT_REALISED_COLUMNS`. An agent without a position
    has zero stakes and NaN shares. Unknown `cohort` → InputError."""
    agents, sums = _agent_sums(engine, cohort, methodology)
    rows = [
        {"family_id": family, "cohort_number": number, "replicate": replicate}
        | with_shares(sums[agent_id])
        for agent_id, family, number, replicate in agents
    ]
    frame = typed_frame(rows, COHORT_REALISED_COLUMNS)
    order = frame.sort_values(["cohort_number", "family_id", "replicate"], kind="stable")
    return order.reset_index(drop=True)


def realised_by_family(
    engine: Engine, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """One row per family over the scope (its cohorts and replicates pooled: stakes summed,
    shares of the sums), by family id: `FAMILY_REALISED_COLUMNS`."""
    agents, sums = _agent_sums(engine, cohort, methodology)
    pooled: dict[str, dict[str, Any]] = {}
    for agent_id, family, *_ in agents:
        into = pooled.setdefault(str(family), _empty_sums())
        for key, value in sums[agent_id].items():
            into[key] += value
    rows = [{"family_id": family} | with_shares(pooled[family]) for family in sorted(pooled)]
    return typed_frame(rows, FAMILY_REALISED_COLUMNS)


# The columns a page adds beside its own frame (its CSV's last columns), in this order.
SHOWN_COLUMNS: tuple[str, ...] = (
    "stakes",
    "resolved_stakes",
    "marked_stakes",
    "resolved_share",
    "marked_share",
    "positions",
    "resolved_positions",
    "marked_positions",
)


def with_realised(
    frame: pd.DataFrame, realised: pd.DataFrame, on: tuple[str, ...] = ("family_id",)
) -> pd.DataFrame:
    """`frame` (the leaderboard, a cohort's standings) with `SHOWN_COLUMNS` of `realised`
    (`realised_by_family` / `realised_by_cohort`) as its last columns, matched on `on`, its
    rows and their order kept. A row `realised` lacks gets NaN (no figures, not zero). Pure.

    Why beside and not inside the leaderboard: the page may show a frame the hourly analyses
    stored before this column existed; the split is a few-millisecond read of its own."""
    keys = list(on)
    extra = realised[[*keys, *SHOWN_COLUMNS]] if len(realised) else None
    base = frame.drop(columns=[c for c in SHOWN_COLUMNS if c in frame.columns])
    if extra is None:
        return base.assign(**dict.fromkeys(SHOWN_COLUMNS, np.nan))
    merged = base.merge(extra, on=keys, how="left", validate="many_to_one")
    for column in ("positions", "resolved_positions", "marked_positions"):
        if merged[column].notna().all():
            merged[column] = merged[column].astype("int64")
    merged.index = frame.index
    return merged
