"""The leaderboard read model: v1 scores per family with honest uncertainty.

Why: a ranking by point estimates alone rewards luck. Each family keeps its v1 numbers exactly
(total P/L summed over cohorts from the latest snapshots, return % on the capital it was given,
the mean Brier of its implied confidence), and gets 95% intervals from a cluster bootstrap over
Polymarket events within cohorts (`arena.core.stats`), its probability of ranking first, where its
return falls among skill-free random traders on the same markets, and the market's own price
as a reference forecaster on the same bets.

How a family's P/L decomposes (what the bootstrap resamples): every position's P/L is its
realized P/L (sells, settlements, refunds) plus, while open, its marked value minus its
remaining cost basis (mark = the position's last mark, else its entry price: the snapshot's
rule). Summed per agent × market these are the *market contributions*; they sum to the agent's
P/L as of its positions' last marks. The headline P/L comes from the latest snapshot instead;
the small difference (prices or settlements newer than that snapshot) is kept as a fixed
per-family offset, so replicates are centred on the headline number.

Also here: paired comparisons of two families, and the random null (`random_null` for a
simulated world, `database_random_null` for the markets the cohorts actually saw).
"""

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_DOWN, Decimal
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import (
    BigInteger,
    Date,
    Select,
    Text,
    and_,
    case,
    cast,
    func,
    literal_column,
    select,
    type_coerce,
)
from sqlalchemy.engine import Connection, Engine

from arena.analytics.cohorts import latest_snapshots, result_frame
from arena.core import stats
from arena.core.accounting import (
    BetLimits,
    Holding,
    TradeRejected,
    buy,
    mark_value,
    refund,
    settle,
    side_price,
    side_won,
)
from arena.core.errors import InputError
from arena.core.money import ZERO, money
from arena.storage.db import consistent_read
from arena.storage.tables import AGENTS, COHORTS, DECISIONS, FAMILIES, MARKETS, POSITIONS, TRADES
from arena.storage.tables import BRIER_SCORES as BRIERS
from arena.storage.tables import MARKET_SNAPSHOT_ITEMS as UNIVERSE_ITEMS
from arena.storage.tables import MARKET_SNAPSHOTS as UNIVERSES

DEFAULT_MIN_RESOLVED = 30
DEFAULT_NULL_SEEDS = 200
NULL_KEY = "baseline-random"  # the random baseline's RNG key prefix: seed s IS that baseline
RANDOM_MAX_LEGS = 3  # arena.agents.baselines.random_strategy: 0-3 legs a week
RANDOM_FRACTION = Decimal("0.25")  # the strategy's own ceiling: 25% of cash, in cents
CENT = Decimal("0.01")
HALF = Decimal("0.5")

LEADERBOARD_CONTRACT_COLUMNS: tuple[str, ...] = (
    "family_id",
    "kind",
    "cohorts",
    "total_pnl",
    "return_pct",
    "return_ci_low",
    "return_ci_high",
    "brier",
    "brier_ci_low",
    "brier_ci_high",
    "resolved_bets",
    "p_rank_1",
)
LEADERBOARD_COLUMNS: tuple[str, ...] = (
    *LEADERBOARD_CONTRACT_COLUMNS,
    "display_name",
    "rank",
    "rank_low",
    "rank_high",
    "too_early",
    "capital",
    "pnl_ci_low",
    "pnl_ci_high",
    "resolved_only_return_pct",
    "mtm_return_pct",
    "unresolved_share",
    "win_rate",
    "win_rate_ci_low",
    "win_rate_ci_high",
    "market_brier",
    "market_brier_ci_low",
    "market_brier_ci_high",
    "skill_vs_market",
    "skill_vs_market_ci_low",
    "skill_vs_market_ci_high",
    "skill_bets",
    "bets",
    "against_favourite_share",
    "against_favourite_ci_low",
    "against_favourite_ci_high",
    "against_favourite_win_rate",
    "against_favourite_resolved",
    "random_null_percentile",
    "decisions",
    "fallback_holds",
    "api_cost_usd",
)

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


# --------------------------------------------------------------------------------------------
# Scope


def cohort_id_of(conn: Connection, cohort: int | None) -> int | None:
    """The database id of cohort number `cohort` (None: all cohorts); unknown → InputError."""
    if cohort is None:
        return None
    found = conn.execute(select(COHORTS.c.id).where(COHORTS.c.number == cohort)).scalar()
    if found is None:
        known = conn.execute(select(func.max(COHORTS.c.number))).scalar()
        hint = f"cohorts are numbered 1 to {known}" if known else "no cohort exists yet"
        raise InputError(f"cohort {cohort} does not exist", hint)
    return int(found)


def in_scope(query: Select[Any], cohort_id: int | None) -> Select[Any]:
    """Restrict a query that joins `agents` to one cohort (or leave it across all)."""
    return query if cohort_id is None else query.where(AGENTS.c.cohort_id == cohort_id)


def utc_date(column: Any, dialect: str) -> Any:
    """The UTC calendar date of a timestamp column, as SQL (GROUP BY-safe: no bound params).

    SQLite stores naive UTC text, so `date()` is the UTC date; PostgreSQL stores timestamptz,
    converted to UTC first so the session's time zone cannot shift a day.
    """
    if dialect == "postgresql":
        return cast(func.timezone(literal_column("'UTC'"), column), Date)
    return func.date(column)


def as_date(value: Any) -> date:
    """A `utc_date` result as a date (SQLite hands back text, PostgreSQL a date)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def cluster_label(event_id: object, market_id: object) -> str:
    """The bootstrap cluster of a market: its Polymarket event, else the market alone."""
    if event_id is None or (isinstance(event_id, float) and np.isnan(event_id)) or event_id == "":
        return f"market:{market_id}"
    return f"event:{event_id}"


def _frame(conn: Connection, query: Select[Any]) -> pd.DataFrame:
    result = conn.execute(query)
    return result_frame(result)


def _float(values: pd.Series) -> np.ndarray:
    """Decimals, ints, None and NaN as float64 (None → NaN)."""
    return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Loading (aggregated in SQL; per agent × market rows only for the bootstrap)


@dataclass(frozen=True)
class _Data:
    agents: pd.DataFrame  # one row per agent in scope
    units: pd.DataFrame  # one row per agent × market with the `UNIT_SUMS`
    decisions: pd.DataFrame  # per family: decisions, fallback_holds, api_cost_usd


def _agents(conn: Connection, cohort_id: int | None) -> pd.DataFrame:
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
    return _frame(conn, in_scope(query, cohort_id))


def _position_units(conn: Connection, cohort_id: int | None) -> pd.DataFrame:
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
    sums = _frame(conn, realized)
    sums["pnl"] = _float(sums["realized"]) if len(sums) else np.zeros(0)
    opened = _frame(conn, open_rows)
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


def _brier_units(conn: Connection, cohort_id: int | None) -> pd.DataFrame:
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
    return _frame(conn, in_scope(query, cohort_id))


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


def _buy_units(conn: Connection, cohort_id: int | None) -> pd.DataFrame:
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
    rows = _frame(conn, in_scope(query, cohort_id))
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


def _decision_counts(conn: Connection, cohort_id: int | None) -> pd.DataFrame:
    """Per family: finished decisions, fallback HOLDs and API cost.

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
            AGENTS.c.family_id,
            count_where(per_status.c.status != "in_progress").label("decisions"),
            count_where(per_status.c.status == "fallback_hold").label("fallback_holds"),
            func.sum(per_status.c.cost).label("api_cost_usd"),
        )
        .join(AGENTS, AGENTS.c.id == per_status.c.agent_id)
        .group_by(AGENTS.c.family_id)
    )
    return _frame(conn, in_scope(query, cohort_id))


def _units(conn: Connection, cohort_id: int | None, agents: pd.DataFrame) -> pd.DataFrame:
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
        units[column] = np.nan_to_num(_float(present))
    if units.empty:
        return units.assign(family_id=[], cohort_id=[], cluster=[])
    traded = in_scope(
        select(POSITIONS.c.market_id, MARKETS.c.event_id)
        .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
        .join(MARKETS, MARKETS.c.id == POSITIONS.c.market_id)
        .distinct(),
        cohort_id,
    )
    events = dict(conn.execute(traded).all())
    owner = agents.set_index("agent_id")
    units["family_id"] = owner.loc[units["agent_id"], "family_id"].to_numpy()
    units["cohort_id"] = owner.loc[units["agent_id"], "cohort_id"].to_numpy()
    units["cluster"] = [cluster_label(events.get(m), m) for m in units["market_id"]]
    return units


def _load(engine: Engine, cohort: int | None) -> tuple[_Data, dict[str, tuple[str, str]]]:
    with consistent_read(engine) as conn:
        cohort_id = cohort_id_of(conn, cohort)
        agents = _agents(conn, cohort_id)
        units = _units(conn, cohort_id, agents)
        decisions = _decision_counts(conn, cohort_id)
        families = {
            fid: (name, kind)
            for fid, name, kind in conn.execute(
                select(FAMILIES.c.id, FAMILIES.c.display_name, FAMILIES.c.kind)
            )
        }
    return _Data(agents, units, decisions), families


# --------------------------------------------------------------------------------------------
# The leaderboard


def _agent_books(agents: pd.DataFrame) -> pd.DataFrame:
    """Per agent: v1 P/L (latest snapshot, else cash + open cost basis − start), realized P/L,
    and the value still in unresolved positions."""
    start = _float(agents["starting_balance"])
    cash = _float(agents["cash_balance"])
    open_cost = np.nan_to_num(_float(agents["open_cost"]))
    snap_pnl = _float(agents["total_pnl"])
    has_snapshot = ~np.isnan(snap_pnl)
    book_total = cash + open_cost
    return pd.DataFrame(
        {
            "family_id": agents["family_id"].to_numpy(),
            "cohort_id": agents["cohort_id"].to_numpy(),
            "capital": start,
            "pnl": np.where(has_snapshot, snap_pnl, book_total - start),
            "realized": np.nan_to_num(_float(agents["realized"])),
            "unresolved_value": np.where(
                has_snapshot, _float(agents["positions_value"]), open_cost
            ),
            "total_value": np.where(has_snapshot, _float(agents["total_value"]), book_total),
        }
    )


def _headline(books: pd.DataFrame) -> pd.DataFrame:
    """`_agent_books` summed per family (P/L summed over cohorts, never averaged)."""
    return books.groupby("family_id", as_index=False).agg(
        cohorts=("cohort_id", "nunique"),
        capital=("capital", "sum"),
        pnl=("pnl", "sum"),
        realized=("realized", "sum"),
        unresolved_value=("unresolved_value", "sum"),
        total_value=("total_value", "sum"),
    )


@dataclass(frozen=True)
class _Matrices:
    """Per cluster × family sums (one matrix per `UNIT_SUMS` column) and the cluster strata."""

    sums: dict[str, np.ndarray]
    stratum_of: np.ndarray


def _matrices(units: pd.DataFrame, families: Sequence[str]) -> _Matrices:
    index = {fid: i for i, fid in enumerate(families)}
    if units.empty:
        empty = {c: np.zeros((0, len(families))) for c in UNIT_SUMS}
        return _Matrices(empty, np.zeros(0, dtype=np.int64))
    keys = units["cohort_id"].astype(str) + "|" + units["cluster"]
    labels, cluster = np.unique(keys.to_numpy(dtype=str), return_inverse=True)
    column = units["family_id"].map(index).to_numpy(dtype=np.int64)
    sums = {}
    for name in UNIT_SUMS:
        matrix = np.zeros((labels.size, len(families)))
        np.add.at(matrix, (cluster, column), units[name].to_numpy(dtype=np.float64))
        sums[name] = matrix
    stratum_of = np.zeros(labels.size, dtype=np.int64)
    stratum_of[cluster] = units["cohort_id"].to_numpy(dtype=np.int64)
    return _Matrices(sums, stratum_of)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
        )


@dataclass(frozen=True)
class FamilyBootstrap:
    """Everything the leaderboard resamples, shared with the calibration page so both show
    the same intervals: per-family headline numbers, per cluster × family sums, one draw."""

    data: _Data
    names: dict[str, tuple[str, str]]  # family id → (display name, kind)
    head: pd.DataFrame  # per family: cohorts, capital, pnl, realized, unresolved/total value
    families: list[str]
    sums: dict[str, np.ndarray]  # `UNIT_SUMS` name → (clusters × families)
    boot: stats.ClusterBootstrap
    books: pd.DataFrame  # `_agent_books`: per agent capital and P/L

    def pnl_replicates(self) -> np.ndarray:
        """(B × F) P/L replicates, summed over cohorts.

        Per cohort and family: the resampled market contributions, plus the fixed offset that
        centres them on the headline P/L (prices or settlements newer than the snapshot),
        floored at −capital (an agent cannot lose more than it was given).
        """
        books = self.books
        strata = sorted({int(c) for c in books["cohort_id"]})
        row = {c: i for i, c in enumerate(strata)}
        col = {f: j for j, f in enumerate(self.families)}
        offsets = np.zeros((len(strata), len(self.families)))
        floors = np.zeros_like(offsets)
        for cohort_id, family_id, capital, pnl in zip(
            books["cohort_id"], books["family_id"], books["capital"], books["pnl"], strict=True
        ):
            offsets[row[int(cohort_id)], col[family_id]] += pnl
            floors[row[int(cohort_id)], col[family_id]] -= capital
        pnl_sums = self.sums["pnl"]
        for label, i in row.items():
            offsets[i] -= pnl_sums[self.boot.stratum_of == label].sum(axis=0)
        return self.boot.floored_total(pnl_sums, strata, offsets, floors)


def family_bootstrap(
    engine: Engine,
    *,
    cohort: int | None = None,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
) -> FamilyBootstrap:
    """Load the scope (unknown cohort → InputError) and draw its cluster bootstrap once."""
    data, names = _load(engine, cohort)
    books = _agent_books(data.agents)
    head = _headline(books)
    families = list(head["family_id"])
    m = _matrices(data.units, families)
    boot = stats.ClusterBootstrap(m.stratum_of, replicates, seed)
    return FamilyBootstrap(data, names, head, families, m.sums, boot, books)


def leaderboard(
    engine: Engine,
    *,
    cohort: int | None = None,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    min_resolved: int = DEFAULT_MIN_RESOLVED,
    null_seeds: int = DEFAULT_NULL_SEEDS,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """One row per family (across cohorts, or within cohort number `cohort`), best first.

    Baselines are included (``kind`` = ``baseline``). Intervals are `level` (95%) percentile
    intervals of a stratified cluster bootstrap (`replicates` draws from `seed`): clusters are
    Polymarket events (or lone markets) traded by any agent in scope, resampled within their
    cohort, jointly for all families. Unknown `cohort` → InputError. Columns:

    - ``family_id`` (str), ``display_name`` (str), ``kind`` (``llm`` | ``baseline``)
    - ``cohorts`` (int): cohorts the family has an agent in; ``capital`` (float): the sum of
      their starting balances ($10,000 × cohorts in v1)
    - ``total_pnl`` (float $): P/L SUMMED over cohorts (not averaged), each agent's from its
      latest portfolio snapshot (mark-to-market), else cash + open cost basis − start
    - ``return_pct`` (float %): total_pnl / capital × 100 (v1 §11.3 over the family's cohorts)
      with ``return_ci_low`` / ``return_ci_high``; ``pnl_ci_low`` / ``pnl_ci_high`` the same in $
      (each cohort's replicate P/L floored at −its capital: no agent can lose more than it had)
    - ``mtm_return_pct``: the same as return_pct (marked to market), shown beside
      ``resolved_only_return_pct``: realized P/L only (sold, settled, refunded; open positions
      at cost) / capital × 100; ``unresolved_share`` (0-1): share of the family's current value
      held in positions not yet resolved (latest snapshot positions value / total value)
    - ``brier`` (float, lower is better): v1 cumulative Brier = mean of all the family's Brier
      rows (pooled over cohorts), with ``brier_ci_low`` / ``brier_ci_high``; NaN before any
      resolution. ``resolved_bets`` (int): its Brier rows (BUYs in markets with a winner)
    - ``win_rate`` (0-1, + CI): share of resolved bets whose side won
    - ``market_brier`` (+ CI): Brier of the market's own price for the side bought (the BUY's
      execution price) on the same bets; ``skill_vs_market`` (+ CI) = family Brier − market
      Brier on those bets (negative: the family's implied confidence beat the market price);
      ``skill_bets``: the bets with a recorded market price
    - ``bets`` (int): BUY legs; ``against_favourite_share`` (0-1, + CI): share of them that
      backed an outcome other than the favourite of the universe shown (`against_favourite`);
      ``against_favourite_win_rate``: win rate of those that resolved
      (``against_favourite_resolved`` of them)
    - ``rank`` (int): competition rank by return_pct (1 = best; ties share); ``rank_low`` /
      ``rank_high``: 95% rank interval over the replicates; ``p_rank_1`` (0-1): share of
      replicates in which the family has the highest return (ties split)
    - ``too_early`` (bool): resolved_bets < `min_resolved` — "too early to rank"; its numbers are
      still shown (greyed), never hidden
    - ``random_null_percentile`` (0-100): where return_pct falls among `null_seeds` random
      traders re-simulated on the same cohorts' universes (`database_random_null`); NaN when
      `null_seeds` is 0 or no decision run saw a universe
    - ``decisions`` (int, finished decisions), ``fallback_holds`` (int), ``api_cost_usd`` (float)
    """
    fb = family_bootstrap(engine, cohort=cohort, replicates=replicates, seed=seed)
    if not fb.families:
        return pd.DataFrame(columns=list(LEADERBOARD_COLUMNS))
    head, families, s, boot, names = fb.head, fb.families, fb.sums, fb.boot, fb.names
    capital = head["capital"].to_numpy()
    pnl_reps = fb.pnl_replicates()
    return_reps = pnl_reps / capital * 100.0

    brier_reps = boot.ratio(s["brier_sum"], s["brier_n"])
    win_reps = boot.ratio(s["wins"], s["brier_n"])
    market_reps = boot.ratio(s["skill_market_sum"], s["skill_n"])
    skill_reps = boot.ratio(s["skill_family_sum"] - s["skill_market_sum"], s["skill_n"])
    against_reps = boot.ratio(s["against"], s["buys"])
    ranks = stats.competition_ranks(return_reps)
    rank_low, rank_high = stats.rank_interval(ranks, level)

    totals = {name: matrix.sum(axis=0) for name, matrix in s.items()}
    return_pct = head["pnl"].to_numpy() / capital * 100.0
    frame = pd.DataFrame(
        {
            "family_id": families,
            "kind": [names.get(f, (f, "llm"))[1] for f in families],
            "cohorts": head["cohorts"].astype("int64").to_numpy(),
            "total_pnl": head["pnl"].to_numpy(),
            "return_pct": return_pct,
            "brier": _ratio(totals["brier_sum"], totals["brier_n"]),
            "resolved_bets": totals["brier_n"].astype("int64"),
            "p_rank_1": stats.p_rank_first(return_reps),
            "display_name": [names.get(f, (f, "llm"))[0] for f in families],
            "rank": stats.competition_ranks(return_pct),
            "rank_low": rank_low,
            "rank_high": rank_high,
            "capital": capital,
            "resolved_only_return_pct": head["realized"].to_numpy() / capital * 100.0,
            "mtm_return_pct": return_pct,
            "unresolved_share": _ratio(
                head["unresolved_value"].to_numpy(), head["total_value"].to_numpy()
            ),
            "win_rate": _ratio(totals["wins"], totals["brier_n"]),
            "market_brier": _ratio(totals["skill_market_sum"], totals["skill_n"]),
            "skill_vs_market": _ratio(
                totals["skill_family_sum"] - totals["skill_market_sum"], totals["skill_n"]
            ),
            "skill_bets": totals["skill_n"].astype("int64"),
            "bets": totals["buys"].astype("int64"),
            "against_favourite_share": _ratio(totals["against"], totals["buys"]),
            "against_favourite_win_rate": _ratio(totals["against_won"], totals["against_resolved"]),
            "against_favourite_resolved": totals["against_resolved"].astype("int64"),
        }
    )
    for prefix, reps in (
        ("return", return_reps),
        ("pnl", pnl_reps),
        ("brier", brier_reps),
        ("win_rate", win_reps),
        ("market_brier", market_reps),
        ("skill_vs_market", skill_reps),
        ("against_favourite", against_reps),
    ):
        frame[f"{prefix}_ci_low"], frame[f"{prefix}_ci_high"] = stats.percentile_interval(
            reps, level
        )
    frame["too_early"] = frame["resolved_bets"] < min_resolved
    frame["random_null_percentile"] = _null_percentiles(
        engine, cohort, fb.data.agents, head, null_seeds
    )
    counts = fb.data.decisions.set_index("family_id") if len(fb.data.decisions) else None
    for column, dtype in (
        ("decisions", "int64"),
        ("fallback_holds", "int64"),
        ("api_cost_usd", "float64"),
    ):
        values = counts[column].reindex(families).fillna(0).to_numpy() if counts is not None else 0
        frame[column] = pd.Series(values, index=frame.index).astype(dtype)
    frame = frame.sort_values(["rank", "family_id"], kind="stable").reset_index(drop=True)
    return frame[list(LEADERBOARD_COLUMNS)]


def _null_percentiles(
    engine: Engine,
    cohort: int | None,
    agents: pd.DataFrame,
    head: pd.DataFrame,
    null_seeds: int,
) -> np.ndarray:
    """Each family's return as a percentile of the random null over the family's own cohorts.

    A cohort the family entered that had no decision run adds P/L 0 to every null trader
    (a random trader with nothing to choose from holds cash) and its capital to the base.
    """
    if null_seeds <= 0:
        return np.full(len(head), np.nan)
    null = database_random_null(engine, cohort=cohort, seeds=range(null_seeds))
    if null.empty:
        return np.full(len(head), np.nan)
    pnl = null.pivot(index="seed", columns="cohort_number", values="pnl")
    out = []
    for fid, family_pnl, capital in zip(
        head["family_id"], head["pnl"], head["capital"], strict=True
    ):
        entered = set(agents.loc[agents["family_id"] == fid, "cohort_number"])
        seen = sorted(n for n in entered if n in pnl.columns)
        if not seen:
            out.append(np.nan)
            continue
        returns = pnl[seen].sum(axis=1).to_numpy() / capital * 100.0
        out.append(stats.percentile_of(float(family_pnl / capital * 100.0), returns))
    return np.asarray(out, dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Paired comparisons


PAIRED_COLUMNS: tuple[str, ...] = (
    "family_a",
    "family_b",
    "metric",
    "markets",
    "clusters",
    "mean_difference",
    "ci_low",
    "ci_high",
    "p_value",
    "exact",
)
PAIRED_METRICS = ("pnl", "brier")


def _paired_units(units: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per family × cohort × market: the statistic compared (P/L in $, or mean Brier)."""
    if metric not in PAIRED_METRICS:
        raise InputError(f"unknown paired metric {metric!r}", "use pnl or brier")
    if units.empty:
        return pd.DataFrame(columns=["family_id", "cohort_id", "market_id", "cluster", "value"])
    if metric == "pnl":
        chosen = units[units["buys"] > 0].assign(value=lambda u: u["pnl"])
    else:
        chosen = units[units["brier_n"] > 0].assign(value=lambda u: u["brier_sum"] / u["brier_n"])
    return chosen[["family_id", "cohort_id", "market_id", "cluster", "value"]]


def _compare(
    per_unit: pd.DataFrame,
    family_a: str,
    family_b: str,
    metric: str,
    replicates: int,
    seed: int,
    level: float,
) -> dict[str, Any]:
    keys = ["cohort_id", "market_id"]
    a = per_unit[per_unit["family_id"] == family_a]
    b = per_unit[per_unit["family_id"] == family_b]
    both = a.merge(b[[*keys, "value"]], on=keys, suffixes=("_a", "_b"))
    result = stats.paired_test(
        (both["value_a"] - both["value_b"]).to_numpy(dtype=np.float64),
        both["cluster"].to_numpy(),
        both["cohort_id"].to_numpy(),
        replicates=replicates,
        seed=seed,
        level=level,
    )
    return {
        "family_a": family_a,
        "family_b": family_b,
        "metric": metric,
        "markets": result.units,
        "clusters": result.clusters,
        "mean_difference": result.mean_difference,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "p_value": result.p_value,
        "exact": result.exact,
    }


def pairwise_comparisons(
    engine: Engine,
    *,
    metric: str = "pnl",
    families: Sequence[str] | None = None,
    cohort: int | None = None,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """Paired tests between families on the markets both traded (same cohort, same market).

    One row per pair (A, B) of `families` (default: every family in scope, in id order).
    Columns (`PAIRED_COLUMNS`): ``family_a``, ``family_b``, ``metric`` (``pnl``: the market's
    P/L contribution in $, counted where both bought; ``brier``: the mean Brier of each one's
    bets in the market, where both have resolved bets), ``markets`` (paired markets),
    ``clusters`` (their events), ``mean_difference`` (mean of A − B over the paired markets),
    ``ci_low`` / ``ci_high`` (stratified cluster bootstrap), ``p_value`` (two-sided cluster
    sign-flip test of no difference), ``exact`` (whether the sign-flip test was enumerated).
    """
    data, _ = _load(engine, cohort)
    per_unit = _paired_units(data.units, metric)
    present = sorted(set(data.agents["family_id"]))
    chosen = list(families) if families is not None else present
    unknown = [f for f in chosen if f not in present]
    if unknown:
        raise InputError(
            f"family {unknown[0]!r} has no agent in this scope",
            "use a family id from the leaderboard",
        )
    rows = [
        _compare(per_unit, a, b, metric, replicates, seed, level)
        for i, a in enumerate(chosen)
        for b in chosen[i + 1 :]
    ]
    return pd.DataFrame(rows, columns=list(PAIRED_COLUMNS))


def paired_comparison(
    engine: Engine,
    family_a: str,
    family_b: str,
    *,
    metric: str = "pnl",
    cohort: int | None = None,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """`pairwise_comparisons` for one pair: a one-row frame (A − B)."""
    return pairwise_comparisons(
        engine,
        metric=metric,
        families=[family_a, family_b],
        cohort=cohort,
        replicates=replicates,
        seed=seed,
        level=level,
    )


# --------------------------------------------------------------------------------------------
# The random null: skill-free traders on the same markets


@dataclass(frozen=True)
class NullCandidate:
    """A market of a frozen universe as the random strategy sees it, and how a BUY executes."""

    market_id: str
    market_type: str
    outcomes: tuple[str, ...]
    prices: tuple[Any, ...]
    sides: tuple[tuple[str, Decimal], ...]  # the strategy's view: YES/NO or named outcomes


@dataclass(frozen=True)
class NullRun:
    """One decision run of one cohort: when it happened and the universe it showed."""

    decision_week: int
    at: datetime
    candidates: tuple[NullCandidate, ...]


@dataclass(frozen=True)
class NullCohort:
    """A cohort replayed by the null: its RNG number, capital, bet limits and runs in order."""

    number: int
    starting_balance: Decimal
    limits: BetLimits
    runs: tuple[NullRun, ...]


@dataclass(frozen=True)
class NullMarket:
    """A market's fate: when the engine settled it (None: still unsettled) and the winner
    (None: cancelled and refunded); `prices` mark positions still open at the end."""

    market_type: str
    outcomes: tuple[str, ...]
    prices: tuple[Any, ...]
    settled_at: datetime | None
    winner: str | None


def strategy_sides(
    market_type: str, outcomes: Sequence[str], prices: Sequence[Any]
) -> tuple[tuple[str, Decimal], ...]:
    """Tradable sides as `random_strategy` lists them (binary: YES as listed, NO = 1 − YES)."""
    if not prices or len(prices) != len(outcomes):
        return ()
    values = [Decimal(str(p)) for p in prices]
    if market_type == "binary":
        yes = next(p for o, p in zip(outcomes, values, strict=True) if o.upper() == "YES")
        return (("YES", yes), ("NO", Decimal(1) - yes))
    return tuple(zip(outcomes, values, strict=True))


def candidate(
    market_id: str, market_type: str, outcomes: Sequence[str], prices: Sequence[Any]
) -> NullCandidate | None:
    """A universe market as a candidate, or None when the strategy could not trade it."""
    sides = strategy_sides(market_type, outcomes, prices)
    if not sides:
        return None
    return NullCandidate(market_id, market_type, tuple(outcomes), tuple(prices), sides)


def random_legs(
    rng: random.Random, candidates: Sequence[NullCandidate], cash: Decimal, min_bet: Decimal
) -> list[tuple[NullCandidate, str, Decimal]]:
    """The legs `arena.agents.baselines.random_strategy` draws, with the same RNG calls.

    The same calls in the same order (randint, sample, then per market choice and uniform), so
    with the baseline's RNG key a replay yields exactly its bets (tested against it).
    """
    legs: list[tuple[NullCandidate, str, Decimal]] = []
    count = rng.randint(0, RANDOM_MAX_LEGS)
    for market in rng.sample(list(candidates), k=min(len(candidates), count)):
        ceiling = (cash * RANDOM_FRACTION).quantize(CENT, ROUND_DOWN)
        if ceiling < min_bet:
            break
        side, price = rng.choice(market.sides)
        if not Decimal(0) < price < Decimal(1):
            continue
        amount = Decimal(str(rng.uniform(float(min_bet), float(ceiling)))).quantize(
            CENT, ROUND_DOWN
        )
        legs.append((market, side, max(min_bet, min(amount, ceiling))))
        cash -= legs[-1][2]
    return legs


def _settle_due(
    book: dict[tuple[str, str], Holding],
    markets: dict[str, NullMarket],
    cash: Decimal,
    at: datetime | None,
) -> Decimal:
    """Settle (or refund) every held position whose market the engine had settled by `at`
    (None: ever), removing it from the book; returns the new cash."""
    for key in list(book):
        market = markets.get(key[0])
        if market is None or market.settled_at is None:
            continue
        if at is not None and market.settled_at > at:
            continue
        holding = book.pop(key)
        if market.winner is None:
            cash = refund(cash, holding).cash_after
        else:
            cash = settle(
                cash, holding, side_won(key[1], market.winner, market.market_type)
            ).cash_after
    return cash


def replay_random(cohort: NullCohort, markets: dict[str, NullMarket], seed: int) -> Decimal:
    """One random trader's P/L over one cohort, through the pure accounting functions.

    Before each run, positions in markets settled by then pay out (so the cash the 25% cap is
    taken from is the engine's); each leg executes like the executor's (rejected legs skipped).
    At the end settled markets pay out, cancelled ones refund, and open positions are marked
    at the market's last prices (entry price when unusable).
    """
    cash = cohort.starting_balance
    book: dict[tuple[str, str], Holding] = {}
    for run in cohort.runs:
        cash = _settle_due(book, markets, cash, run.at)
        rng = random.Random(f"{NULL_KEY}:{seed}:{cohort.number}:{run.decision_week}")
        for market, side, amount in random_legs(rng, run.candidates, cash, cohort.limits.min_bet):
            key = (market.market_id, side)
            try:
                at_price = side_price(market.market_type, market.outcomes, market.prices, side)
                fill = buy(cash, book.get(key, Holding()), amount, at_price, cohort.limits)
            except TradeRejected:
                continue
            cash, book[key] = fill.cash_after, fill.holding
    cash = _settle_due(book, markets, cash, None)
    value = ZERO
    for (market_id, side), holding in book.items():
        market = markets.get(market_id)
        try:
            if market is None:
                raise TradeRejected("no_price", "unknown market")
            mark = side_price(market.market_type, market.outcomes, market.prices, side)
        except TradeRejected:
            mark = holding.avg_entry_price
        value += mark_value(holding.shares, mark)
    return money(cash + value - cohort.starting_balance)


def simulate_random_pnl(
    cohorts: Sequence[NullCohort], markets: dict[str, NullMarket], seeds: Iterable[int]
) -> np.ndarray:
    """P/L of the random strategy per seed × cohort ((len(seeds) × len(cohorts)) floats)."""
    chosen = list(seeds)
    out = np.zeros((len(chosen), len(cohorts)))
    for i, seed in enumerate(chosen):
        for j, cohort in enumerate(cohorts):
            out[i, j] = float(replay_random(cohort, markets, seed))
    return out


def stamped_limits(raw: Any) -> tuple[Decimal, BetLimits]:
    """(starting balance, bet limits) a cohort was stamped with; v1 defaults where missing."""
    from arena.config import Methodology

    defaults = Methodology()
    values = raw if isinstance(raw, dict) else {}

    def read(name: str, default: Decimal) -> Decimal:
        try:
            return Decimal(str(values[name]))
        except (KeyError, ArithmeticError, ValueError):
            return default

    return read("starting_balance", defaults.starting_balance), BetLimits(
        min_bet=read("min_bet", defaults.min_bet),
        max_bet_fraction=read("max_bet_fraction", defaults.max_bet_fraction),
    )


def _database_runs(conn: Connection, cohort_id: int | None) -> pd.DataFrame:
    """Per cohort × decision week, the frozen universe most of its decisions saw."""
    query = (
        select(
            DECISIONS.c.cohort_id,
            DECISIONS.c.decision_week,
            DECISIONS.c.market_snapshot_id.label("snapshot_id"),
            func.count(DECISIONS.c.id).label("n"),
        )
        .where(DECISIONS.c.market_snapshot_id.is_not(None))
        .group_by(DECISIONS.c.cohort_id, DECISIONS.c.decision_week, DECISIONS.c.market_snapshot_id)
    )
    if cohort_id is not None:
        query = query.where(DECISIONS.c.cohort_id == cohort_id)
    runs = _frame(conn, query)
    if runs.empty:
        return runs
    runs = runs.sort_values(
        ["cohort_id", "decision_week", "n", "snapshot_id"], ascending=[True, True, False, True]
    )
    return runs.drop_duplicates(["cohort_id", "decision_week"]).reset_index(drop=True)


def load_null_inputs(
    engine: Engine, cohort: int | None = None
) -> tuple[list[NullCohort], dict[str, NullMarket]]:
    """The cohorts' decision runs (their frozen universes) and the fate of every market in them."""
    with consistent_read(engine) as conn:
        cohort_id = cohort_id_of(conn, cohort)
        runs = _database_runs(conn, cohort_id)
        if runs.empty:
            return [], {}
        chosen = sorted(int(s) for s in set(runs["snapshot_id"]))
        items = _frame(
            conn,
            select(
                UNIVERSE_ITEMS.c.snapshot_id,
                UNIVERSE_ITEMS.c.market_id,
                UNIVERSE_ITEMS.c.market_type,
                UNIVERSE_ITEMS.c.outcomes,
                UNIVERSE_ITEMS.c.prices,
                UNIVERSES.c.taken_at,
            )
            .join(UNIVERSES, UNIVERSES.c.id == UNIVERSE_ITEMS.c.snapshot_id)
            .where(
                UNIVERSE_ITEMS.c.snapshot_id.in_(chosen),
                UNIVERSE_ITEMS.c.rank <= UNIVERSES.c.market_count,
            )
            .order_by(UNIVERSE_ITEMS.c.snapshot_id, UNIVERSE_ITEMS.c.rank),
        )
        shown = (
            select(UNIVERSE_ITEMS.c.market_id)
            .where(UNIVERSE_ITEMS.c.snapshot_id.in_(chosen))
            .distinct()
        )
        market_rows = conn.execute(
            select(
                MARKETS.c.id,
                MARKETS.c.market_type,
                MARKETS.c.outcomes,
                MARKETS.c.prices,
                MARKETS.c.status,
                MARKETS.c.resolution_outcome,
                MARKETS.c.resolved_at,
            ).where(MARKETS.c.id.in_(shown))
        ).all()
        cohort_rows = conn.execute(
            select(COHORTS.c.id, COHORTS.c.number, COHORTS.c.constants).where(
                COHORTS.c.id.in_(sorted(int(c) for c in set(runs["cohort_id"])))
            )
        ).all()
    markets = {
        mid: NullMarket(
            market_type=mtype,
            outcomes=tuple(outcomes or ()),
            prices=tuple(prices or ()),
            settled_at=resolved_at if status in ("resolved", "cancelled") else None,
            winner=winner if status == "resolved" else None,
        )
        for mid, mtype, outcomes, prices, status, winner, resolved_at in market_rows
    }
    universes: dict[int, tuple[datetime, list[NullCandidate]]] = {}
    for sid, group in items.groupby("snapshot_id", sort=True):
        found = [
            candidate(mid, mtype, list(outcomes or ()), list(prices or ()))
            for mid, mtype, outcomes, prices in zip(
                group["market_id"],
                group["market_type"],
                group["outcomes"],
                group["prices"],
                strict=True,
            )
        ]
        universes[int(sid)] = (group["taken_at"].iloc[0], [c for c in found if c is not None])
    cohorts = []
    for cid, number, constants in sorted(cohort_rows, key=lambda row: row[1]):
        balance, limits = stamped_limits(constants)
        mine = runs[runs["cohort_id"] == cid].sort_values("decision_week")
        replay = tuple(
            NullRun(int(week), *_universe(universes, int(sid)))
            for week, sid in zip(mine["decision_week"], mine["snapshot_id"], strict=True)
        )
        cohorts.append(NullCohort(int(number), balance, limits, replay))
    return cohorts, markets


def _universe(
    universes: dict[int, tuple[datetime, list[NullCandidate]]], snapshot_id: int
) -> tuple[datetime, tuple[NullCandidate, ...]]:
    at, found = universes.get(snapshot_id, (datetime.min.replace(tzinfo=UTC), []))
    return at, tuple(found)


NULL_COLUMNS: tuple[str, ...] = ("seed", "cohort_number", "pnl", "capital", "return_pct")


def database_random_null(
    engine: Engine, *, cohort: int | None = None, seeds: Iterable[int] = range(DEFAULT_NULL_SEEDS)
) -> pd.DataFrame:
    """The random null on the markets the cohorts actually saw: nothing stored, all recomputed.

    For each seed, a skill-free trader plays `random_strategy` (same RNG key as the
    `baseline-random` family, so seed S of the null is exactly a random baseline seeded S) in
    every cohort in scope: at each decision run it sees that run's frozen universe
    (market_snapshot_items) and its cash, and its positions pay out when the engine settled
    their markets. One row per seed × cohort with a decision run. Columns: ``seed``,
    ``cohort_number``, ``pnl`` ($), ``capital`` (starting balance), ``return_pct``.
    """
    cohorts, markets = load_null_inputs(engine, cohort)
    chosen = list(seeds)
    if not cohorts or not chosen:
        return pd.DataFrame(columns=list(NULL_COLUMNS))
    pnl = simulate_random_pnl(cohorts, markets, chosen)
    capital = np.array([float(c.starting_balance) for c in cohorts])
    frame = pd.DataFrame(
        {
            "seed": np.repeat(chosen, len(cohorts)),
            "cohort_number": np.tile([c.number for c in cohorts], len(chosen)),
            "pnl": pnl.ravel(),
            "capital": np.tile(capital, len(chosen)),
        }
    )
    frame["return_pct"] = frame["pnl"] / frame["capital"] * 100.0
    return frame[list(NULL_COLUMNS)]


def _ceil_hour(at: datetime) -> datetime:
    floor = at.replace(minute=0, second=0, microsecond=0)
    return floor if floor == at else floor + timedelta(hours=1)


def world_null_inputs(
    world: Any, weeks: int, *, start: datetime, tail_weeks: int, universe_size: int = 500
) -> tuple[list[NullCohort], dict[str, NullMarket]]:
    """The demo's season on a simulated world, as null inputs (no database).

    Mirrors `arena.app.demo`: cohort k starts on Sunday k, decides at 00:05 on each Sunday of its
    window while the season lasts, sees the top `universe_size` markets of that Sunday's
    00:00 sync; a market settles at the first hourly resolve after Polymarket (the world)
    resolved it; the season is valued after the settling tail.
    """
    from arena.config import Methodology

    defaults = Methodology()
    limits = BetLimits(defaults.min_bet, defaults.max_bet_fraction)
    end = start + timedelta(weeks=weeks + tail_weeks)
    cohorts: list[NullCohort] = []
    shown: set[str] = set()
    universes: dict[int, tuple[NullCandidate, ...]] = {}
    for number in range(1, weeks + 1):
        runs = []
        for week in range(1, min(defaults.decision_window_weeks, weeks - number + 1) + 1):
            sunday = start + timedelta(weeks=number - 1 + week - 1)
            key = number - 1 + week - 1
            if key not in universes:
                found = [
                    candidate(m.id, m.market_type, list(m.outcomes), list(m.prices or []))
                    for m in world.top_markets(sunday, universe_size)
                ]
                universes[key] = tuple(c for c in found if c is not None)
                shown.update(c.market_id for c in universes[key])
            runs.append(NullRun(week, sunday + timedelta(minutes=5), universes[key]))
        cohorts.append(NullCohort(number, defaults.starting_balance, limits, tuple(runs)))
    markets: dict[str, NullMarket] = {}
    for market_id in shown:
        schedule = world.schedule(market_id)
        settled = _ceil_hour(schedule.resolved_at)
        final = world.get_market(market_id, end)
        markets[market_id] = NullMarket(
            market_type=final.market_type,
            outcomes=tuple(final.outcomes),
            prices=tuple(final.prices or ()),
            settled_at=settled if settled <= end else None,
            winner=None if schedule.voided else world.true_outcome(market_id),
        )
    return cohorts, markets


def random_null(
    world_seed: int,
    weeks: int,
    seeds: Iterable[int] = range(DEFAULT_NULL_SEEDS),
    *,
    tail_weeks: int | None = None,
    start: datetime | None = None,
) -> np.ndarray:
    """Return % of the random strategy per seed over a simulated demo season (no database).

    The world is the demo's (`arena.markets.simulated`: same start, size and growth for
    `world_seed`), so seed S is what a `baseline-random` agent seeded S would score in
    `arena demo --seed world_seed --weeks weeks`, up to the universe ranking (volume as of the
    sync). Return % is the P/L summed over the season's cohorts on their summed capital, like
    the leaderboard's.
    """
    from arena.markets.simulated import (
        DEFAULT_TAIL_WEEKS,
        DEMO_START,
        WORLD_INITIAL_MARKETS,
        WORLD_NEW_PER_DAY,
        SimulatedWorld,
    )

    begin = start or DEMO_START
    tail = DEFAULT_TAIL_WEEKS if tail_weeks is None else tail_weeks
    world = SimulatedWorld(
        world_seed,
        begin,
        n_initial=WORLD_INITIAL_MARKETS,
        new_per_day=WORLD_NEW_PER_DAY,
        days=(weeks + tail) * 7 + 1,
    )
    cohorts, markets = world_null_inputs(world, weeks, start=begin, tail_weeks=tail)
    pnl = simulate_random_pnl(cohorts, markets, seeds)
    capital = sum(float(c.starting_balance) for c in cohorts)
    return pnl.sum(axis=1) / capital * 100.0


# --------------------------------------------------------------------------------------------
# Presentation for the CLI (`arena leaderboard`)


def csv_columns(frame: pd.DataFrame) -> list[str]:
    """The contract's columns first (contract §6), then every other column in order."""
    first = [c for c in LEADERBOARD_CONTRACT_COLUMNS if c in frame.columns]
    return first + [c for c in frame.columns if c not in first]


def _csv_cell(value: Any) -> Any:
    from arena.core.csvsafe import cell

    if isinstance(value, float | np.floating):
        return "" if np.isnan(value) else f"{float(value):.6f}"
    if isinstance(value, np.bool_):
        value = bool(value)
    if isinstance(value, np.integer):
        value = int(value)
    return cell(value)


def write_leaderboard_csv(frame: pd.DataFrame, handle: Any) -> None:
    """The leaderboard as CSV: a header row, contract columns first; floats with 6 decimals,
    NaN as an empty cell, booleans as true/false, text cells formula-safe."""
    import csv

    columns = csv_columns(frame)
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(columns)
    for row in frame[columns].itertuples(index=False, name=None):
        writer.writerow([_csv_cell(v) for v in row])


def _interval(value: float, low: float, high: float, fmt: str) -> str:
    if np.isnan(value):
        return "—"
    if np.isnan(low) or np.isnan(high):
        return format(value, fmt)
    return f"{format(value, fmt)} [{format(low, fmt)}, {format(high, fmt)}]"


def leaderboard_table(frame: pd.DataFrame, title: str = "Leaderboard") -> Any:
    """A rich Table of the leaderboard: intervals as "x [lo, hi]" (95%), baselines in
    italics, families with too few resolved bets greyed and marked "too early to rank"."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=title,
        caption="95% intervals: cluster bootstrap over events within cohorts; paper returns",
        box=box.SIMPLE_HEAD,
    )
    for name, justify in (
        ("#", "right"),
        ("family", "left"),
        ("kind", "left"),
        ("cohorts", "right"),
        ("P/L $", "right"),
        ("return %", "right"),
        ("Brier", "right"),
        ("bets", "right"),
        ("P(#1)", "right"),
        ("rank CI", "right"),
        ("skill vs market", "right"),
        ("win rate", "right"),
        ("null pct", "right"),
        ("note", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for row in frame.itertuples(index=False):
        style = "dim" if row.too_early else ("italic" if row.kind == "baseline" else None)
        table.add_row(
            str(row.rank),
            str(row.family_id),
            str(row.kind),
            str(row.cohorts),
            _interval(row.total_pnl, row.pnl_ci_low, row.pnl_ci_high, ",.0f"),
            _interval(row.return_pct, row.return_ci_low, row.return_ci_high, ".2f"),
            _interval(row.brier, row.brier_ci_low, row.brier_ci_high, ".3f"),
            str(row.resolved_bets),
            f"{row.p_rank_1:.3f}",
            f"{row.rank_low}–{row.rank_high}",
            _interval(
                row.skill_vs_market, row.skill_vs_market_ci_low, row.skill_vs_market_ci_high, "+.3f"
            ),
            "—" if np.isnan(row.win_rate) else f"{row.win_rate:.0%}",
            "—" if np.isnan(row.random_null_percentile) else f"{row.random_null_percentile:.0f}",
            "too early to rank" if row.too_early else "",
            style=style,
        )
    return table
