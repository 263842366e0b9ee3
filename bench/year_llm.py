"""A simulated LLM for the year benchmark: plausible answers, tokens and costs, no network.

Why: a year of data needs the seven LLM families to trade like models do (many bets, some
sells, a reasoning text, the occasional malformed answer that gets retried, token usage and
cost for the spend pages) through the engine's real decision path: prompt → raw text →
parser → executor. This responder implements `arena.agents.responders.Responder` and answers
in the JSON format the parser reads (the same shape the baselines emit).

Forecasts are the simulated world's unbiased posterior (`world.hidden_probability`) distorted
per family: a persistent per-market bias, fresh noise per decision and a pull towards 0.5 (the
favourite–longshot bias), so families differ in skill. Every draw is a hash of (seed, family,
market, cohort, week), so a rebuild is identical whatever order decisions run in.
"""

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from statistics import NormalDist

from arena.agents.baselines import BaselineInput, HiddenProbability
from arena.agents.llm import AttemptRecord, ChatResult
from arena.agents.prompts import PromptMarket, PromptPosition
from arena.agents.responders import Responder
from arena.lineup import FamilySpec

Messages = Sequence[Mapping[str, str]]

CENT = Decimal("0.01")
MIN_EDGE = 0.02  # bet only where the estimate beats the price by this much
STAKE_SPAN = 30.0  # dollars above the minimum bet, scaled by the edge (full at EDGE_SCALE)
EDGE_SCALE = 0.5
RESERVE = Decimal("500")  # cash a family keeps back (the cohort lasts five decisions)
MAX_SELL_LEGS = 12
MALFORMED_RATE = 0.03  # first answers that are truncated JSON (the engine retries them)
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Profile:
    """How one simulated family forecasts, trades, talks and bills."""

    skill: float  # weight of the world's posterior against the market price (0 = price only)
    noise: float  # sd of the fresh per-decision noise on each probability
    bias: float  # sd of a persistent per-market bias
    longshot: float  # pull of every estimate towards 0.5 (0 = none)
    legs: tuple[int, int]  # BET legs per decision, inclusive range
    sell_rate: float  # chance a decision from week 2 on is a SELL
    price_in: float  # dollars per million prompt tokens
    price_out: float  # dollars per million completion tokens
    thinking: tuple[int, int]  # hidden reasoning tokens billed as output, inclusive range
    ms_per_token: float  # output speed
    provider: str  # upstream provider OpenRouter reports
    fenced: bool  # wraps its JSON in prose and a ```json fence


# From the best forecaster to the weakest; prices are list prices per million tokens.
# fmt: off
PROFILES: dict[str, Profile] = {
    "claude-opus-4.5": Profile(
        0.50, 0.045, 0.025, 0.00, (26, 32), 0.20, 5.0, 25.0, (500, 3000), 18, "Anthropic", True
    ),
    "gpt-5.1": Profile(
        0.45, 0.05, 0.03, 0.00, (28, 34), 0.20, 1.75, 14.0, (800, 4000), 12, "OpenAI", False
    ),
    "gemini-2.5-flash": Profile(
        0.40, 0.06, 0.03, 0.05, (28, 34), 0.18, 2.0, 12.0, (600, 3000), 9, "Google Vertex", True
    ),
    "grok-4": Profile(
        0.30, 0.08, 0.04, 0.05, (30, 36), 0.22, 0.2, 0.5, (300, 1500), 6, "xAI", False
    ),
    "deepseek-v3.1": Profile(
        0.25, 0.09, 0.05, 0.10, (28, 34), 0.20, 0.27, 0.4, (200, 1200), 25, "DeepInfra", False
    ),
    "kimi-k2": Profile(
        0.20, 0.11, 0.05, 0.10, (30, 36), 0.25, 0.6, 2.5, (1000, 5000), 20, "Moonshot AI", True
    ),
    "qwen-3-next": Profile(
        0.10, 0.13, 0.06, 0.15, (30, 36), 0.22, 0.15, 0.6, (100, 800), 10, "Alibaba", False
    ),
}
# fmt: on


def _unit(*key: object) -> float:
    """A uniform draw in (0, 1) that is a pure function of `key` (no RNG state to order)."""
    digest = hashlib.blake2b(":".join(map(str, key)).encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") + 0.5) / 2**64


def _gauss(*key: object) -> float:
    return _NORMAL.inv_cdf(_unit(*key))


def profile_for(family: FamilySpec) -> Profile:
    """The family's profile; an unknown family (custom lineup) gets a stable derived one."""
    known = PROFILES.get(family.id)
    if known is not None:
        return known
    u = _unit("profile", family.id)
    return Profile(
        skill=0.2 + 0.3 * u,
        noise=0.05 + 0.08 * u,
        bias=0.04,
        longshot=0.1 * u,
        legs=(26, 34),
        sell_rate=0.2,
        price_in=1.0,
        price_out=4.0,
        thinking=(200, 2000),
        ms_per_token=15,
        provider=family.provider,
        fenced=u < 0.5,
    )


def _sides(market: PromptMarket) -> list[tuple[str, str, float]]:
    """(side to answer, outcome name in the world, price) for each tradable side."""
    if not market.prices or len(market.prices) != len(market.outcomes):
        return []
    if market.market_type == "binary":
        yes = next(
            p for o, p in zip(market.outcomes, market.prices, strict=True) if o.upper() == "YES"
        )
        pairs = [("YES", "Yes", yes), ("NO", "No", Decimal(1) - yes)]
    else:
        pairs = [(o, o, p) for o, p in zip(market.outcomes, market.prices, strict=True)]
    return [(side, name, float(p)) for side, name, p in pairs if Decimal(0) < p < Decimal(1)]


def _world_outcome(side: str) -> str:
    """A stored position side as the world names the outcome (binary sides are YES/NO)."""
    return {"YES": "Yes", "NO": "No"}.get(side, side)


@dataclass(frozen=True)
class _Pick:
    edge: float
    estimate: float
    price: float
    market: PromptMarket
    side: str


class SimulatedLLMResponder:
    """A lineup LLM family answered by a seeded forecaster over the simulated world."""

    def __init__(self, family: FamilySpec, seed: int, probability: HiddenProbability) -> None:
        self.family = family
        self.seed = seed
        self.probability = probability
        self.profile = profile_for(family)

    # --- the Responder protocol --------------------------------------------------------------

    def respond(self, messages: Messages, context: BaselineInput) -> ChatResult:
        """One answer; the first of a few decisions is malformed, and its retry is valid."""
        turn = (len(messages) - 2) // 2  # 0 for the first answer, 1+ for retries
        decision_key = (self.seed, self.family.id, context.cohort_number, context.decision_week)
        body = self._answer(context)
        text = self._dress(body, context)
        if turn == 0 and _unit("malformed", *decision_key) < MALFORMED_RATE:
            text = text[: len(text) // 2]  # cut off mid-answer, like a hit max_tokens
        record = self._usage(messages, text, turn, decision_key)
        return ChatResult(content=text, finish_reason="stop", attempts=[record])

    # --- forecasting and trading -------------------------------------------------------------

    def estimate(self, market_id: str, outcome: str, price: float, context: BaselineInput) -> float:
        """The family's probability for one outcome at this decision: part world posterior,
        part the market's own price, plus bias, noise and the longshot pull."""
        p = self.probability(market_id, outcome, context.at)
        key = (self.seed, self.family.id, market_id, outcome)
        skill = self.profile.skill
        noisy = (
            skill * p
            + (1.0 - skill) * price
            + self.profile.bias * _gauss("bias", *key)
            + self.profile.noise
            * _gauss("noise", *key, context.cohort_number, context.decision_week)
        )
        noisy += self.profile.longshot * (0.5 - noisy)
        return min(0.99, max(0.01, noisy))

    def _answer(self, context: BaselineInput) -> dict[str, object]:
        key = (self.seed, self.family.id, context.cohort_number, context.decision_week)
        if context.decision_week >= 2 and _unit("sell", *key) < self.profile.sell_rate:
            sells = self._sells(context)
            if sells:
                return sells
        return self._bets(context)

    def _bets(self, context: BaselineInput) -> dict[str, object]:
        held = {p.market_id for p in context.portfolio.positions}
        picks: list[_Pick] = []
        for market in context.markets:
            if market.market_id in held:
                continue
            best: _Pick | None = None
            for side, outcome, price in _sides(market):
                estimate = self.estimate(market.market_id, outcome, price, context)
                edge = estimate - price
                if edge > MIN_EDGE and (best is None or edge > best.edge):
                    best = _Pick(edge, estimate, price, market, side)
            if best is not None:
                picks.append(best)
        picks.sort(key=lambda pick: (-pick.edge, pick.market.market_id))
        low, high = self.profile.legs
        wanted = low + int(
            _unit("legs", self.seed, self.family.id, *_when(context)) * (high - low + 1)
        )
        cash, min_bet = context.portfolio.cash, context.portfolio.min_bet
        bets: list[dict[str, object]] = []
        chosen: list[_Pick] = []
        for pick in picks[:wanted]:
            stake = float(min_bet) + STAKE_SPAN * min(1.0, pick.edge / EDGE_SCALE)
            amount = Decimal(str(stake)).quantize(CENT, ROUND_DOWN)
            ceiling = (cash * Decimal("0.25")).quantize(CENT, ROUND_DOWN)
            if amount > ceiling or cash - amount < RESERVE:
                break
            bets.append(
                {"market_id": pick.market.market_id, "side": pick.side, "amount": float(amount)}
            )
            chosen.append(pick)
            cash -= amount
        if not bets:
            return {
                "action": "HOLD",
                "reasoning": "No market is mispriced enough against my estimates to justify a "
                "stake this week, or my free cash is committed; holding.",
            }
        return {"action": "BET", "bets": bets, "reasoning": self._bet_reasoning(chosen, context)}

    def _sells(self, context: BaselineInput) -> dict[str, object] | None:
        """Sell positions whose side now looks overpriced (or take a large profit)."""
        listed = {m.market_id for m in context.markets}
        legs: list[tuple[float, PromptPosition, int]] = []
        for position in context.portfolio.positions:
            price = float(position.current_price)
            if position.market_id not in listed or not 0.0 < price < 1.0:
                continue
            outcome = _world_outcome(position.side)
            estimate = self.estimate(position.market_id, outcome, price, context)
            overpriced = price - estimate
            profit = price - float(position.avg_entry_price)
            if overpriced > 0.05:
                legs.append((overpriced, position, 100))
            elif profit > 0.25:
                legs.append((profit / 2, position, 50))
        if not legs:
            return None
        legs.sort(key=lambda leg: (-leg[0], leg[1].position_id))
        chosen = legs[:MAX_SELL_LEGS]
        sells = [{"position_id": p.position_id, "percentage": pct} for _, p, pct in chosen]
        names = "; ".join(
            f"#{p.position_id} {p.question[:60]} ({p.side})" for _, p, _ in chosen[:3]
        )
        reasoning = (
            f"Reviewing my {len(context.portfolio.positions)} open positions: the market now "
            f"prices some of them above my own estimate, or has moved far enough in my favour "
            f"to lock in part of the gain. Selling {len(sells)}: {names}."
        )
        return {"action": "SELL", "sells": sells, "reasoning": reasoning}

    def _bet_reasoning(self, chosen: list[_Pick], context: BaselineInput) -> str:
        lines = [
            f"Week {context.decision_week} of cohort {context.cohort_number}: I compared my "
            f"probability for each of the {len(context.markets)} listed markets with its price "
            f"and bet where the gap is largest, sizing each stake by the edge and keeping cash "
            f"for the coming weeks ({len(context.portfolio.positions)} positions already open)."
        ]
        for pick in chosen[:5]:
            lines.append(
                f"- {pick.market.question[:90]} — {pick.side} at {pick.price:.3f}, my estimate "
                f"{pick.estimate:.2f} (edge {pick.edge:+.2f})."
            )
        if len(chosen) > 5:
            lines.append(f"Plus {len(chosen) - 5} smaller edges across other categories.")
        return "\n".join(lines)

    # --- presentation and billing ------------------------------------------------------------

    def _dress(self, body: dict[str, object], context: BaselineInput) -> str:
        text = json.dumps(body, ensure_ascii=False)
        if not self.profile.fenced:
            return text
        return (
            f"Here is my decision for week {context.decision_week}.\n\n```json\n"
            f"{json.dumps(body, ensure_ascii=False, indent=2)}\n```"
        )

    def _usage(
        self, messages: Messages, text: str, turn: int, key: tuple[object, ...]
    ) -> AttemptRecord:
        profile = self.profile
        tokens_in = sum(math.ceil(len(m["content"]) / 4) for m in messages)
        low, high = profile.thinking
        thinking = low + int(_unit("thinking", *key, turn) * (high - low + 1))
        tokens_out = math.ceil(len(text) / 4) + thinking
        cost = round((tokens_in * profile.price_in + tokens_out * profile.price_out) / 1e6, 6)
        jitter = 0.7 + 0.6 * _unit("latency", *key, turn)
        latency = int((800 + tokens_in * 0.02 + tokens_out * profile.ms_per_token) * jitter)
        return AttemptRecord(
            attempt_no=1,
            status=200,
            outcome="ok",
            latency_ms=latency,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=cost,
            served_model=self.family.model,
            provider=profile.provider,
        )


def _when(context: BaselineInput) -> tuple[int, int]:
    return context.cohort_number, context.decision_week


ResponderFactory = Callable[[FamilySpec], Responder | None]


def with_simulated_llms(
    baselines: ResponderFactory, seed: int, probability: HiddenProbability
) -> ResponderFactory:
    """A responder factory: simulated LLMs for `llm` families, `baselines` for the rest."""

    def factory(family: FamilySpec) -> Responder | None:
        if family.kind == "llm":
            return SimulatedLLMResponder(family, seed, probability)
        return baselines(family)

    return factory
