"""One skill-free trader replayed on a cohort's markets, through the pure accounting functions.

Why its own module: the random null (`arena.analytics.stats.random_null`) is thousands of these
replays, so they must be cheap and exact. No database: a cohort's decision runs with their
frozen universes (`NullCohort`), each market's fate (`NullMarket`), and a seed. The legs are
`arena.agents.baselines.random_legs` from `random_rng` (the strategy's own draw, not a copy),
so seed S is exactly the `baseline-random` agent seeded S; a side pays out by
`arena.core.accounting.side_won`, the settlement job's rule.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import numpy as np

from arena.agents.baselines import Side, random_legs, random_rng, strategy_sides
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
from arena.core.money import ZERO, money


@dataclass(frozen=True)
class NullCandidate:
    """A market of a frozen universe as the random strategy sees it, and how a BUY executes."""

    market_id: str
    market_type: str
    outcomes: tuple[str, ...]
    prices: tuple[Any, ...]
    sides: tuple[Side, ...]  # the strategy's view (`strategy_sides`): YES/NO or named


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


def candidate(
    market_id: str, market_type: str, outcomes: Sequence[str], prices: Sequence[Any]
) -> NullCandidate | None:
    """A universe market as a candidate, or None when the strategy could not trade it."""
    sides = strategy_sides(market_type, outcomes, prices)
    if not sides:
        return None
    return NullCandidate(market_id, market_type, tuple(outcomes), tuple(prices), sides)


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
        rng = random_rng(seed, cohort.number, run.decision_week)
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
        fate = markets.get(market_id)
        try:
            if fate is None:
                raise TradeRejected("no_price", "unknown market")
            mark = side_price(fate.market_type, fate.outcomes, fate.prices, side)
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
