"""The random null: where a family's return falls among skill-free traders on the same markets.

Why: a return means little until it is compared with luck. For each seed a random trader
(`arena.analytics.stats.null_replay`, the `baseline-random` strategy's own draw) plays every
cohort in scope on the universes the cohorts' decisions actually saw (`database_random_null`, inputs
from `load_null_inputs`), or over the demo's simulated season (`random_null`, no database);
`null_percentiles` places each family's return among them for the leaderboard.

A null trader is one agent: its return is on one agent's capital per cohort (`agent_capital`),
whatever the number of agents a family fields per cohort. A family's return (P/L over its
pooled capital) is the mean of its agents' returns, so it is on that scale too; over the pooled
capital of N replicates the null's spread would shrink N-fold.
"""

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.frames import result_frame
from arena.analytics.query.scope import CohortScope, cohort_id_of, cohort_in_scope
from arena.analytics.stats.leaderboard_inputs import float_values
from arena.analytics.stats.null_replay import (
    NullCandidate,
    NullCohort,
    NullMarket,
    NullRun,
    candidate,
    simulate_random_pnl,
)
from arena.analytics.stats.one_run import once
from arena.config import METHODOLOGY_VERSION
from arena.core import stats
from arena.core.accounting import BetLimits
from arena.storage.db import consistent_read
from arena.storage.tables import COHORTS, DECISIONS, MARKETS
from arena.storage.tables import MARKET_SNAPSHOT_ITEMS as UNIVERSE_ITEMS
from arena.storage.tables import MARKET_SNAPSHOTS as UNIVERSES

DEFAULT_NULL_SEEDS = 200


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


def _database_runs(conn: Connection, cohort_id: CohortScope) -> pd.DataFrame:
    """Per cohort × decision week in scope (None: every v1 cohort), the frozen universe most
    of its decisions saw."""
    query = (
        select(
            DECISIONS.c.cohort_id,
            DECISIONS.c.decision_week,
            DECISIONS.c.market_snapshot_id.label("snapshot_id"),
            func.count(DECISIONS.c.id).label("n"),
        )
        .where(
            DECISIONS.c.market_snapshot_id.is_not(None),
            cohort_in_scope(DECISIONS.c.cohort_id, cohort_id),
        )
        .group_by(DECISIONS.c.cohort_id, DECISIONS.c.decision_week, DECISIONS.c.market_snapshot_id)
    )
    runs = result_frame(conn.execute(query))
    if runs.empty:
        return runs
    runs = runs.sort_values(
        ["cohort_id", "decision_week", "n", "snapshot_id"], ascending=[True, True, False, True]
    )
    return runs.drop_duplicates(["cohort_id", "decision_week"]).reset_index(drop=True)


def load_null_inputs(
    engine: Engine, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> tuple[list[NullCohort], dict[str, NullMarket]]:
    """The cohorts' decision runs (their frozen universes) and the fate of every market in them."""
    with consistent_read(engine) as conn:
        cohort_id = cohort_id_of(conn, cohort, methodology)
        runs = _database_runs(conn, cohort_id)
        if runs.empty:
            return [], {}
        chosen = sorted(int(s) for s in set(runs["snapshot_id"]))
        frozen = (
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
            .order_by(UNIVERSE_ITEMS.c.snapshot_id, UNIVERSE_ITEMS.c.rank)
        )
        items = result_frame(conn.execute(frozen))
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
    engine: Engine,
    *,
    cohort: int | None = None,
    seeds: Iterable[int] = range(DEFAULT_NULL_SEEDS),
    methodology: str = METHODOLOGY_VERSION,
) -> pd.DataFrame:
    """`replay_database_null`, replayed once per scope and seeds within one run of the hourly
    analyses (`one_run`: the leaderboard's percentiles and the detectability's null rows)."""
    chosen = tuple(seeds)
    key = ("random_null", id(engine), cohort, methodology, chosen)
    return once(
        key,
        lambda: replay_database_null(engine, cohort=cohort, seeds=chosen, methodology=methodology),
    ).copy()


def replay_database_null(
    engine: Engine,
    *,
    cohort: int | None = None,
    seeds: Iterable[int] = range(DEFAULT_NULL_SEEDS),
    methodology: str = METHODOLOGY_VERSION,
) -> pd.DataFrame:
    """The random null on the markets the cohorts actually saw: nothing stored, all recomputed.

    For each seed, a skill-free trader plays `random_strategy` (same RNG key as the
    `baseline-random` family, so seed S of the null is exactly a random baseline seeded S) in
    every cohort in scope: at each decision run it sees that run's frozen universe
    (market_snapshot_items) and its cash, and its positions pay out when the engine settled
    their markets. One row per seed × cohort with a decision run. Columns: ``seed``,
    ``cohort_number``, ``pnl`` ($), ``capital`` (starting balance), ``return_pct``.
    """
    cohorts, markets = load_null_inputs(engine, cohort, methodology)
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

    The world is the demo's (`arena.sim.world`: same start, size and growth for
    `world_seed`), so seed S is what a `baseline-random` agent seeded S would score in
    `arena demo --seed world_seed --weeks weeks`, up to the universe ranking (volume as of the
    sync). Return % is the P/L summed over the season's cohorts on their summed capital, like
    the leaderboard's.
    """
    from arena.sim.world import DEFAULT_TAIL_WEEKS, DEMO_START, demo_world

    begin = start or DEMO_START
    tail = DEFAULT_TAIL_WEEKS if tail_weeks is None else tail_weeks
    world = demo_world(world_seed, weeks, tail_weeks=tail, start=begin)
    cohorts, markets = world_null_inputs(world, weeks, start=begin, tail_weeks=tail)
    pnl = simulate_random_pnl(cohorts, markets, seeds)
    capital = sum(float(c.starting_balance) for c in cohorts)
    return pnl.sum(axis=1) / capital * 100.0


def agent_capital(agents: pd.DataFrame) -> pd.Series:
    """Per family: one agent's starting balance in each cohort it entered, summed over those
    cohorts (the capital one null trader plays with on them). `agents`: one row per agent
    (``family_id``, ``cohort_number``, ``starting_balance``: `LeaderboardInputs.agents`); a
    cohort's replicates share one balance, so their mean is it."""
    if agents.empty:
        return pd.Series(dtype=np.float64)
    balance = pd.Series(float_values(agents["starting_balance"]), index=agents.index)
    per_cohort = balance.groupby([agents["family_id"], agents["cohort_number"]]).mean()
    return per_cohort.groupby(level=0).sum()


def trader_returns(pnl: pd.DataFrame, entered: Iterable[int], capital: float) -> np.ndarray | None:
    """Each null trader's return (%) on a family's cohorts: its P/L (`pnl`: seed × cohort
    number) summed over the cohorts `entered` that had a decision run, on one agent's capital
    over every cohort entered (`agent_capital`: a cohort without a run adds P/L 0 and its
    capital). None when no cohort entered had a decision run."""
    seen = sorted(n for n in entered if n in pnl.columns)
    if not seen:
        return None
    return np.asarray(pnl[seen].sum(axis=1).to_numpy() / capital * 100.0, dtype=np.float64)


def null_percentiles(
    engine: Engine,
    cohort: int | None,
    agents: pd.DataFrame,
    head: pd.DataFrame,
    null_seeds: int,
    methodology: str = METHODOLOGY_VERSION,
) -> np.ndarray:
    """Each family's return as a percentile of the random null over the family's own cohorts.

    `agents` has one row per agent (``family_id``, ``cohort_number``, ``starting_balance``:
    `LeaderboardInputs`), `head` one per family (``family_id``, ``pnl``, ``capital``:
    `FamilyBootstrap.head`); one percentile per row of `head`, NaN for a family none of whose
    cohorts had a decision run. The family's return is its P/L over its pooled capital (the
    mean of its agents' returns); each null trader's is on one agent's capital per cohort
    (`trader_returns`), so a family of N replicates per cohort meets the same null as one agent.
    """
    if null_seeds <= 0:
        return np.full(len(head), np.nan)
    null = database_random_null(
        engine, cohort=cohort, seeds=range(null_seeds), methodology=methodology
    )
    if null.empty:
        return np.full(len(head), np.nan)
    pnl = null.pivot(index="seed", columns="cohort_number", values="pnl")
    one_agent = agent_capital(agents)
    out = []
    for fid, family_pnl, capital in zip(
        head["family_id"], head["pnl"], head["capital"], strict=True
    ):
        entered = set(agents.loc[agents["family_id"] == fid, "cohort_number"])
        returns = trader_returns(pnl, entered, float(one_agent.get(fid, np.nan)))
        if returns is None:
            out.append(np.nan)
            continue
        out.append(stats.percentile_of(float(family_pnl / capital * 100.0), returns))
    return np.asarray(out, dtype=np.float64)
