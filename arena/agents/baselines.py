"""Baseline agents: reference strategies that answer through the same parser and executor.

Each returns the raw JSON text an LLM would, with a one-line reasoning, so baselines and
models share one code path (prompt → raw text → parser → executor). `random` is seeded per
cohort and week, so a replay gives the same bets; `oracle` exists only in simulated runs,
where it knows the hidden probabilities: it proves the scoring separates skill from luck.

The random strategy's draw (`random_rng`, `strategy_sides`, `random_legs`) is pure and public:
the leaderboard's random null (`arena.analytics.stats.null_replay`) replays exactly these calls, so
seed S of the null is the `baseline-random` agent seeded S, by construction.
"""

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_DOWN, Decimal
from typing import Any, Protocol, TypeVar

from arena.agents.prompts import PortfolioView, PromptMarket

HiddenProbability = Callable[[str, str, datetime], float]

FAVORITE_MARKETS = 5
FAVORITE_AMOUNT = Decimal("100")
RANDOM_KEY = "baseline-random"  # the random strategy's RNG key prefix (`random_rng`)
RANDOM_MAX_LEGS = 3  # 0-3 legs a week
RANDOM_FRACTION = Decimal("0.25")  # a leg's ceiling: 25% of the cash left, in cents
ORACLE_MIN_EDGE = 0.05
ORACLE_MAX_LEGS = 10
CENT = Decimal("0.01")


@dataclass(frozen=True)
class BaselineInput:
    """What a baseline sees: exactly what the prompt shows, in structured form."""

    at: datetime
    cohort_number: int
    decision_week: int
    portfolio: PortfolioView
    markets: list[PromptMarket]
    # The cohort runs the protocol extension `stated_probability`: the oracle states its
    # probability with each bet; the other baselines have none to state (recorded missing).
    stated_probability: bool = False
    # The agent's replicate in a replicated cohort (`ARENA_REPLICATES` > 1), else None: the
    # random baseline draws its own legs per replicate, LLM replicates sample independently.
    replicate: int | None = None
    # Methodology v2: the cap bounds the decision's total (`portfolio.max_bet` for all bets
    # together), so each strategy stops its legs at that budget; False (v1): per bet.
    total_cap: bool = False

    def budget(self) -> Decimal | None:
        """What all of this decision's bets may add up to (v2), None when only v1's per-bet
        cap applies."""
        return self.portfolio.max_bet if self.total_cap else None


def _within(amount: Decimal, budget: Decimal | None, spent: Decimal) -> Decimal:
    """`amount` cut to what is left of a v2 decision's budget (unchanged in v1)."""
    return amount if budget is None else min(amount, budget - spent)


Side = tuple[str, Decimal]  # a tradable side and its price


def strategy_sides(
    market_type: str, outcomes: Sequence[str], prices: Sequence[Any] | None
) -> tuple[Side, ...]:
    """Each tradable side with its price (binary: YES as listed and NO = 1 − YES); none when
    the market has no usable price list."""
    if not prices or len(prices) != len(outcomes):
        return ()
    values = [Decimal(str(p)) for p in prices]
    if market_type == "binary":
        yes = next(p for o, p in zip(outcomes, values, strict=True) if o.upper() == "YES")
        return (("YES", yes), ("NO", Decimal(1) - yes))
    return tuple(zip(outcomes, values, strict=True))


def _sides(market: PromptMarket) -> tuple[Side, ...]:
    return strategy_sides(market.market_type, market.outcomes, market.prices)


def _held(portfolio: PortfolioView) -> set[tuple[str, str]]:
    return {(p.market_id, p.side) for p in portfolio.positions}


def _answer(action: str, reasoning: str, bets: list[dict[str, object]] | None = None) -> str:
    body: dict[str, object] = {"action": action}
    if bets:
        body["bets"] = bets
    body["reasoning"] = reasoning
    return json.dumps(body)


def _bet(
    market_id: str, side: str, amount: Decimal, probability: float | None = None
) -> dict[str, object]:
    bet: dict[str, object] = {"market_id": market_id, "side": side, "amount": float(amount)}
    if probability is not None:
        bet["probability"] = round(probability, 4)
    return bet


def cash_strategy(inp: BaselineInput) -> str:
    """Never trades: the zero-skill, zero-risk reference."""
    return _answer("HOLD", "Cash baseline: never trades.")


def favorite_strategy(inp: BaselineInput) -> str:
    """Fixed-size bets on the favourite side of the top markets not yet held."""
    cash, held = inp.portfolio.cash, _held(inp.portfolio)
    bets: list[dict[str, object]] = []
    for market in inp.markets:
        if len(bets) == FAVORITE_MARKETS:
            break
        sides = [s for s in _sides(market) if Decimal(0) < s[1] < Decimal(1)]
        if not sides:
            continue
        side, _price = max(sides, key=lambda s: s[1])
        amount = min(FAVORITE_AMOUNT, (cash * Decimal("0.25")).quantize(CENT, ROUND_DOWN))
        amount = _within(amount, inp.budget(), inp.portfolio.cash - cash)
        if (market.market_id, side) in held or amount < inp.portfolio.min_bet:
            continue
        bets.append(_bet(market.market_id, side, amount))
        cash -= amount
    if not bets:
        return _answer("HOLD", "Favourite baseline: nothing left to back.")
    return _answer(
        "BET", "Favourite baseline: backs the market favourite with a fixed stake.", bets
    )


class Drawable(Protocol):
    """A market the random strategy can draw: its tradable sides (`strategy_sides`), non-empty."""

    @property
    def sides(self) -> Sequence[Side]: ...


DrawableT = TypeVar("DrawableT", bound=Drawable)


@dataclass(frozen=True)
class _Listed:
    market_id: str
    sides: tuple[Side, ...]


def random_rng(
    seed: int, cohort_number: int, decision_week: int, replicate: int | None = None
) -> random.Random:
    """The random strategy's RNG for one cohort's decision week (seed S: the agent seeded S);
    a replicate of a replicated cohort has its own."""
    key = f"{RANDOM_KEY}:{seed}:{cohort_number}:{decision_week}"
    return random.Random(key if replicate is None else f"{key}:r{replicate}")


def random_legs(
    rng: random.Random,
    candidates: Sequence[DrawableT],
    cash: Decimal,
    min_bet: Decimal,
    budget: Decimal | None = None,
) -> list[tuple[DrawableT, str, Decimal]]:
    """The random strategy's legs: (candidate, side, amount), drawn from `rng` in this order.

    0-`RANDOM_MAX_LEGS` distinct candidates (randint, then sample), then per candidate a side
    (choice) and, if its price is strictly between 0 and 1, an amount (uniform between the
    minimum bet and 25% of the cash left, in cents); it stops once that ceiling is below the
    minimum bet. The same calls whoever asks, so a replay with the same RNG gets the same legs.
    `budget` (methodology v2): the ceiling is also what is left of the decision's total.
    """
    legs: list[tuple[DrawableT, str, Decimal]] = []
    count = rng.randint(0, RANDOM_MAX_LEGS)
    start = cash
    for market in rng.sample(candidates, k=min(len(candidates), count)):
        ceiling = _within((cash * RANDOM_FRACTION).quantize(CENT, ROUND_DOWN), budget, start - cash)
        if ceiling < min_bet:
            break
        side, price = rng.choice(market.sides)
        if not Decimal(0) < price < Decimal(1):
            continue
        amount = Decimal(str(rng.uniform(float(min_bet), float(ceiling)))).quantize(
            CENT, ROUND_DOWN
        )
        amount = max(min_bet, min(amount, ceiling))
        legs.append((market, side, amount))
        cash -= amount
    return legs


def random_strategy(inp: BaselineInput, seed: int = 0) -> str:
    """Seeded random legal bets: the skill-free trader the leaderboard is measured against."""
    rng = random_rng(seed, inp.cohort_number, inp.decision_week, inp.replicate)
    candidates = [_Listed(m.market_id, sides) for m in inp.markets if (sides := _sides(m))]
    legs = random_legs(rng, candidates, inp.portfolio.cash, inp.portfolio.min_bet, inp.budget())
    if not legs:
        return _answer("HOLD", "Random baseline: drew no bet this week.")
    bets = [_bet(market.market_id, side, amount) for market, side, amount in legs]
    return _answer("BET", "Random baseline: seeded random legal bets.", bets)


def oracle_strategy(inp: BaselineInput, probability: HiddenProbability) -> str:
    """Bets where the hidden probability beats the price, sized by the edge (simulation only).

    In a `stated_probability` cohort each bet states that hidden probability (4 decimals): the
    best stated forecast there is, the reference the extension's analyses are read against.
    """
    edges: list[tuple[float, float, str, str]] = []
    held = _held(inp.portfolio)
    for market in inp.markets:
        for side, price in _sides(market):
            if not Decimal(0) < price < Decimal(1) or (market.market_id, side) in held:
                continue
            outcome = (
                {"YES": "Yes", "NO": "No"}.get(side, side)
                if market.market_type == "binary"
                else side
            )
            hidden = probability(market.market_id, outcome, inp.at)
            edge = hidden - float(price)
            if edge > ORACLE_MIN_EDGE:
                edges.append((edge, hidden, market.market_id, side))
    cash, bets = inp.portfolio.cash, []
    ranked = sorted(edges, key=lambda e: (e[0], e[2], e[3]), reverse=True)
    for edge, hidden, market_id, side in ranked[:ORACLE_MAX_LEGS]:
        ceiling = (cash * Decimal("0.25")).quantize(CENT, ROUND_DOWN)
        amount = (ceiling * Decimal(str(min(1.0, edge / 0.5)))).quantize(CENT, ROUND_DOWN)
        amount = _within(amount, inp.budget(), inp.portfolio.cash - cash)
        if amount < inp.portfolio.min_bet:
            continue
        bets.append(_bet(market_id, side, amount, hidden if inp.stated_probability else None))
        cash -= amount
    if not bets:
        return _answer("HOLD", "Oracle: no edge over the market this week.")
    return _answer("BET", "Oracle: bets where the hidden probability beats the price.", bets)
