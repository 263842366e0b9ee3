"""What the leaderboard's statistics are computed over, read in one consistent snapshot.

Why its own module: the bootstrap (`arena.analytics.stats.bootstrap`) and the paired comparisons
(`arena.analytics.stats.paired`) resample the same units, so they must read them the same way. Read
here, aggregated in SQL: the agents in scope with their latest snapshot and position totals;
per agent × market the sums in `UNIT_SUMS` (the market's P/L contribution, Brier sums and the
market's own Brier on the same bets, BUY legs and those against the favourite), each with its
bootstrap cluster (`cluster_label`); per family the decision counts and API cost.

A market's P/L contribution is the realized P/L of the agent's positions in it (sells,
settlements, refunds) plus, while open, marked value minus remaining cost basis (mark = the
position's last mark, else its entry price: the snapshot's rule).
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import BigInteger, Text, and_, case, cast, func, select, type_coerce
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.frames import result_frame
from arena.analytics.query.scope import CohortScope, cohort_id_of, in_scope
from arena.analytics.query.selects import latest_snapshots
from arena.analytics.stats.late_entry import late_scope, remap_agents
from arena.config import METHODOLOGY_VERSION
from arena.core.accounting import mark_value
from arena.core.late_entry import entrant_family, entrant_name
from arena.storage.db import consistent_read
from arena.storage.tables import AGENTS, COHORTS, DECISIONS, FAMILIES, MARKETS, POSITIONS, TRADES
from arena.storage.tables import BRIER_SCORES as BRIERS
from arena.storage.tables import MARKET_SNAPSHOT_ITEMS as UNIVERSE_ITEMS

# Per agent × market sums the bootstrap resamples (see `_units`).
UNIT_SUMS = (
    "pnl",
    "brier_sum",
    "brier_n",
    "wins",
    "skill_family_sum",
    "skill_market_sum",
    "skill_n",
    "buys",
    "against",
    "against_resolved",
    "against_won",
)


def cluster_label(event_id: object, market_id: object) -> str:
    """The bootstrap cluster of a market: its Polymarket event, else the market alone."""
    if event_id is None or (isinstance(event_id, float) and np.isnan(event_id)) or event_id == "":
        return f"market:{market_id}"
    return f"event:{event_id}"


def float_values(values: pd.Series) -> np.ndarray:
    """Decimals, ints, None and NaN as float64 (None → NaN)."""
    return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)


@dataclass(frozen=True)
class LeaderboardInputs:
    """The scope's rows: agents, per agent × market units and per family decision counts."""

    agents: pd.DataFrame  # one row per agent in scope
    units: pd.DataFrame  # one row per agent × market with the `UNIT_SUMS`
    decisions: pd.DataFrame  # per family: decisions, fallback_holds, api_cost_usd


def _agents(conn: Connection, cohort_id: CohortScope) -> pd.DataFrame:
    """Agents in scope with their latest snapshot (if any) and their position totals."""
    latest = latest_snapshots()
    books = (
        select(
            POSITIONS.c.agent_id,
            func.sum(POSITIONS.c.realized_pnl).label("realized"),
            func.sum(case((POSITIONS.c.status == "open", POSITIONS.c.cost_basis), else_=0)).label(
                "open_cost"
            ),
        )
        .group_by(POSITIONS.c.agent_id)
        .subquery()
    )
    query = (
        select(
            AGENTS.c.id.label("agent_id"),
            AGENTS.c.family_id,
            AGENTS.c.replicate,
            COHORTS.c.id.label("cohort_id"),
            COHORTS.c.number.label("cohort_number"),
            AGENTS.c.starting_balance,
            AGENTS.c.cash_balance,
            latest.c.total_value,
            latest.c.total_pnl,
            latest.c.positions_value,
            books.c.realized,
            books.c.open_cost,
        )
        .select_from(AGENTS)
        .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
        .outerjoin(latest, latest.c.agent_id == AGENTS.c.id)
        .outerjoin(books, books.c.agent_id == AGENTS.c.id)
        .order_by(AGENTS.c.id)
    )
    return result_frame(conn.execute(in_scope(query, cohort_id)))


def _position_units(conn: Connection, cohort_id: CohortScope) -> pd.DataFrame:
    """P/L contribution per agent × market: realized (SQL sum) + open positions' unrealized."""
    realized = in_scope(
        select(
            POSITIONS.c.agent_id,
            POSITIONS.c.market_id,
            func.sum(POSITIONS.c.realized_pnl).label("realized"),
        )
        .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
        .group_by(POSITIONS.c.agent_id, POSITIONS.c.market_id),
        cohort_id,
    )
    open_rows = in_scope(
        select(
            POSITIONS.c.agent_id,
            POSITIONS.c.market_id,
            POSITIONS.c.shares,
            POSITIONS.c.cost_basis,
            POSITIONS.c.avg_entry_price,
            POSITIONS.c.mark_price,
        )
        .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
        .where(POSITIONS.c.status == "open"),
        cohort_id,
    )
    sums = result_frame(conn.execute(realized))
    sums["pnl"] = float_values(sums["realized"]) if len(sums) else np.zeros(0)
    opened = result_frame(conn.execute(open_rows))
    if len(opened):
        unrealized = [
            float(mark_value(shares, mark if mark is not None else entry) - cost)
            for shares, cost, entry, mark in zip(
                opened["shares"],
                opened["cost_basis"],
                opened["avg_entry_price"],
                opened["mark_price"],
                strict=True,
            )
        ]
        opened["unrealized"] = unrealized
        extra = opened.groupby(["agent_id", "market_id"], as_index=False)["unrealized"].sum()
        sums = sums.merge(extra, on=["agent_id", "market_id"], how="left")
        sums["pnl"] = sums["pnl"] + sums["unrealized"].fillna(0.0)
    return sums[["agent_id", "market_id", "pnl"]]


def _brier_units(conn: Connection, cohort_id: CohortScope) -> pd.DataFrame:
    """Brier sums per agent × market, and the market's own Brier on the same bets."""
    priced = BRIERS.c.market_price.is_not(None)
    market_error = (BRIERS.c.market_price - BRIERS.c.actual_outcome) * (
        BRIERS.c.market_price - BRIERS.c.actual_outcome
    )
    query = (
        select(
            BRIERS.c.agent_id,
            BRIERS.c.market_id,
            func.sum(BRIERS.c.brier_score).label("brier_sum"),
            func.count(BRIERS.c.id).label("brier_n"),
            func.sum(BRIERS.c.actual_outcome).label("wins"),
            func.sum(case((priced, BRIERS.c.brier_score), else_=0.0)).label("skill_family_sum"),
            func.sum(case((priced, market_error), else_=0.0)).label("skill_market_sum"),
            func.sum(case((priced, 1), else_=0)).label("skill_n"),
        )
        .join(AGENTS, AGENTS.c.id == BRIERS.c.agent_id)
        .group_by(BRIERS.c.agent_id, BRIERS.c.market_id)
    )
    return result_frame(conn.execute(in_scope(query, cohort_id)))


def against_favourite(price: float, market_type: str | None, shown: Sequence[Any] | None) -> bool:
    """Whether a BUY at `price` (its side's price) backed an outcome other than the favourite.

    The favourite is the outcome priced highest in the frozen universe the decision saw: on a
    binary market the side priced below 0.5; on a named market any outcome priced below the
    top price. Without the frozen prices (a trade outside a decision), below 0.5 is the rule.
    """
    if market_type == "named" and shown:
        try:
            top = max(float(p) for p in shown)
        except (TypeError, ValueError):
            return price < 0.5
        return price < top - 1e-12
    return price < 0.5


def _json_list(raw: Any) -> list[Any] | None:
    """A JSON list column read as raw text (PostgreSQL's driver may hand back the list)."""
    if raw is None or isinstance(raw, list):
        return raw
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, list) else None


def _buy_units(conn: Connection, cohort_id: CohortScope) -> pd.DataFrame:
    """BUY legs per agent × market, how many backed an underdog, and how those resolved."""
    shown = UNIVERSE_ITEMS.alias("shown")
    query = (
        select(
            TRADES.c.agent_id,
            TRADES.c.market_id,
            TRADES.c.price,
            shown.c.market_type,
            # raw JSON text: only a named market's frozen prices are ever looked at
            type_coerce(shown.c.prices, Text).label("shown_prices"),
            BRIERS.c.actual_outcome,
        )
        .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
        .outerjoin(DECISIONS, DECISIONS.c.id == TRADES.c.decision_id)
        .outerjoin(
            shown,
            and_(
                shown.c.snapshot_id == DECISIONS.c.market_snapshot_id,
                shown.c.market_id == TRADES.c.market_id,
            ),
        )
        .outerjoin(BRIERS, BRIERS.c.trade_id == TRADES.c.id)
        .where(TRADES.c.trade_type == "BUY")
    )
    rows = result_frame(conn.execute(in_scope(query, cohort_id)))
    columns = ["agent_id", "market_id", "buys", "against", "against_resolved", "against_won"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows["against"] = [
        against_favourite(float(p), t, _json_list(s) if t == "named" else None)
        for p, t, s in zip(rows["price"], rows["market_type"], rows["shown_prices"], strict=True)
    ]
    resolved = rows["actual_outcome"].notna()
    rows["buys"] = 1
    rows["against_resolved"] = rows["against"] & resolved
    rows["against_won"] = rows["against"] & resolved & (rows["actual_outcome"].fillna(0) == 1)
    grouped = rows.groupby(["agent_id", "market_id"], as_index=False)[columns[2:]].sum()
    return grouped[columns]


def _decision_counts(
    conn: Connection, cohort_id: CohortScope, per: tuple[Any, ...] = (AGENTS.c.family_id,)
) -> pd.DataFrame:
    """Per family (`per`: the grouping columns): finished decisions, fallback HOLDs and API
    cost.

    Counted per cohort × week × agent × status first, a walk of the covering
    ``ix_decisions_spend`` (a decision row carries its prompts inline), then per family."""
    per_status = (
        select(
            DECISIONS.c.cohort_id,
            DECISIONS.c.decision_week,
            DECISIONS.c.agent_id,
            DECISIONS.c.status,
            func.count().label("n"),
            func.sum(DECISIONS.c.cost_usd).label("cost"),
        )
        .group_by(
            DECISIONS.c.cohort_id,
            DECISIONS.c.decision_week,
            DECISIONS.c.agent_id,
            DECISIONS.c.status,
        )
        .subquery("per_status")
    )

    def count_where(condition: Any) -> Any:
        return cast(func.sum(case((condition, per_status.c.n), else_=0)), BigInteger)

    query = (
        select(
            *per,
            count_where(per_status.c.status != "in_progress").label("decisions"),
            count_where(per_status.c.status == "fallback_hold").label("fallback_holds"),
            func.sum(per_status.c.cost).label("api_cost_usd"),
        )
        .join(AGENTS, AGENTS.c.id == per_status.c.agent_id)
        .group_by(*per)
    )
    return result_frame(conn.execute(in_scope(query, cohort_id)))


def _units(conn: Connection, cohort_id: CohortScope, agents: pd.DataFrame) -> pd.DataFrame:
    """All per agent × market sums in one frame, with family, cohort and cluster."""
    frames = [
        _position_units(conn, cohort_id),
        _brier_units(conn, cohort_id),
        _buy_units(conn, cohort_id),
    ]
    units = pd.DataFrame(columns=["agent_id", "market_id"])
    for frame in frames:
        units = units.merge(frame, on=["agent_id", "market_id"], how="outer")
    for column in UNIT_SUMS:
        present = units[column] if column in units else pd.Series(np.nan, index=units.index)
        units[column] = np.nan_to_num(float_values(present))
    if units.empty:
        return units.assign(family_id=[], cohort_id=[], cluster=[])
    traded = in_scope(
        select(POSITIONS.c.market_id, MARKETS.c.event_id)
        .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
        .join(MARKETS, MARKETS.c.id == POSITIONS.c.market_id)
        .distinct(),
        cohort_id,
    )
    events: dict[Any, Any] = dict(conn.execute(traded).all())
    owner = agents.set_index("agent_id")
    units["family_id"] = owner.loc[units["agent_id"], "family_id"].to_numpy()
    units["cohort_id"] = owner.loc[units["agent_id"], "cohort_id"].to_numpy()
    units["cluster"] = [cluster_label(events.get(m), m) for m in units["market_id"]]
    return units


def load_inputs(
    engine: Engine,
    cohort: int | None,
    methodology: str = METHODOLOGY_VERSION,
    *,
    late_entry: bool = False,
) -> tuple[LeaderboardInputs, dict[str, tuple[str, str]]]:
    """The scope's inputs and every family's (display name, kind); unknown cohort → InputError.

    With `late_entry`, the scope is "late entrants on the same cohorts" of protocol
    `methodology` (`arena.analytics.stats.late_entry`): the live cohorts of that protocol that
    have late entrants (only cohort number `cohort`, when given) and their shadows, each
    shadow agent paired with the incumbents by its original cohort under its entrant id."""
    if late_entry:
        return _load_late(engine, cohort, methodology)
    with consistent_read(engine) as conn:
        cohort_id = cohort_id_of(conn, cohort, methodology)
        agents = _agents(conn, cohort_id)
        units = _units(conn, cohort_id, agents)
        decisions = _decision_counts(conn, cohort_id)
        families = _families(conn)
    return LeaderboardInputs(agents, units, decisions), families


def _families(conn: Connection) -> dict[str, tuple[str, str]]:
    return {
        fid: (name, kind)
        for fid, name, kind in conn.execute(
            select(FAMILIES.c.id, FAMILIES.c.display_name, FAMILIES.c.kind)
        )
    }


def _load_late(
    engine: Engine, cohort: int | None, protocol: str
) -> tuple[LeaderboardInputs, dict[str, tuple[str, str]]]:
    """`load_inputs` over the late-entry scope of `protocol` (see there)."""
    with consistent_read(engine) as conn:
        scope = late_scope(conn, protocol, cohort)
        ids = scope.ids
        agents = remap_agents(_agents(conn, ids), scope)
        units = _units(conn, ids, agents)
        per_agent = _decision_counts(conn, ids, (AGENTS.c.family_id, AGENTS.c.cohort_id))
        families = _families(conn)
    columns = ["decisions", "fallback_holds", "api_cost_usd"]
    decisions = pd.DataFrame(columns=["family_id", *columns])
    if len(per_agent):
        per_agent = remap_agents(per_agent, scope)
        per_agent["api_cost_usd"] = float_values(per_agent["api_cost_usd"])
        decisions = per_agent.groupby("family_id", as_index=False)[columns].sum()
    for entrant, contaminated in scope.contaminated().items():
        display, kind = families.get(entrant_family(entrant), (entrant_family(entrant), "llm"))
        families[entrant] = (entrant_name(display, contaminated), kind)
    return LeaderboardInputs(agents, units, decisions), families
