"""The simulated models: personas that read the real decision prompt and trade.

**How a persona decides.** The server parses the user message: the `Date: … UTC` line (the
decision instant), cash and bet limits, open positions and the market lines
(`id|question|category|prices|volume|close`). For each side of the first `look` markets (its
attention) its belief starts at the market price and moves `insig` (insight) of the way, on
the logit scale, toward the simulated world's hidden probability at that instant
(`SimulatedWorld.hidden_probability`, which the oracle baseline bets on in full: insight 1, no
noise). The belief is then moved by a favourite/longshot bias (`bias × (1 − 2·price)`: > 0
lifts longshots, < 0 lifts favourites), plus Gaussian noise (`noise`, logit sd), times an
overconfidence factor (`overc` > 1 pushes beliefs away from 1/2). It sells a position whose
belief fell below its price (with chance `sell`), otherwise bets the sides whose edge (belief −
price) is at least `edge`, best first, at most `legs` of them, each `min(1, size × edge)` of
the 25% cap on the cash left (a v2 prompt's legs then fit its total cap: `replies.total_capped`);
nothing worth it, or a drawn HOLD (chance `hold`), is a HOLD. The
`reasoning` is written from the markets' questions and prices, at the persona's verbosity.

**Instant and hidden probability.** The instant is read from the prompt's `Date:` line (the
prompt always states it, to the minute; the world's paths are hourly). A request without one
may send an `X-Arena-At` header (ISO-8601); with neither, or without a world, or for a market
the world does not know, the belief starts from the market price instead (no information).

**Stated probability** (protocol extension `stated_probability`, methodology §18). When the
system prompt asks for it (its `STATED PROBABILITY` section), every BET leg also carries
`"probability"`: the persona's belief that the side wins as it reports it, to 2 decimals —
the belief it traded on plus reporting noise (logit sd `noise`, drawn per market, side and
instant: a second, independent look), so a noisy persona sometimes states a probability its
own bet contradicts (at or below the price) while a careful one rarely does. Personas fail at it
as they fail at formats: among the malformed answers (chance `malformed`, `stubborn` on a
retry) a third write a bad probability (`"62%"`, `62` or `"likely"`, which the parser rejects
with an error fed back), and with chance `malformed` + `messy` (a sloppy answer) a valid one
leaves the last leg's probability out (recorded as missing). A v1 prompt gets exactly the
answers it always got: no draw is spent on probabilities unless the prompt asks.

**Format and transport behaviour.** With chance `messy` a valid answer is wrapped (a ```json
fence, or prose around the JSON; the parser accepts both); with chance `malformed` it is one the
parser rejects (a wrong field name, or invalid JSON: cut short or Python-quoted). On a format
retry (the conversation already holds an assistant turn) the persona repeats a malformed answer
with chance `stubborn`, so some decisions end as `fallback_hold`. With chance `fault` a request
fails in transport instead: 429 with `Retry-After`, 500, or an answer held back `slow_seconds`
(beyond a client timeout shorter than that). Latency is drawn in the `ms` range.

**Determinism.** Behaviour draws (hold, sell, format, fault, latency) come from an RNG keyed by
sha256(seed, model, sha256 of the messages, attempt seq), where the attempt seq counts earlier
identical requests (same model and messages) to this server; beliefs come from an RNG keyed by
(seed, model, market id, instant), so a persona's view of a market does not change between
retries. No global random state: the same requests in the same order give the same bodies.

**Sampling streams (replicates).** A request whose body names a `user` (the engine sends one
per agent only in a replicated cohort, `arena:<family>:r<k>`) is one sampling stream: its
behaviour draws are keyed by the stream too, its attempt seq counts only its own identical
requests, and its beliefs get a per-stream jitter (`SAMPLING_SHARE` of the persona's noise,
fixed per market and instant) on top of the persona's: replicates of one model share what it
knows and differ as independent samples of it. Without `user` nothing changes.

**Usage and cost.** `usage.prompt_tokens` / `completion_tokens` are the project's token estimate
(`estimate_tokens`, 4 characters a token); `usage.cost` (USD, from the persona's price per million
input/output tokens: approximate public list prices, as data) is sent only when the request asks
OpenRouter-style with `"usage": {"include": true}`.

"""

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import ROUND_DOWN, Decimal
from typing import Any, Literal

from arena.agents.prompts import estimate_tokens
from arena.sim.personas import Persona, persona_for
from arena.sim.prompt_view import (
    CENT,
    PromptMarket,
    PromptPosition,
    PromptView,
    asks_probability,
    parse_prompt,
    states_total_cap,
    user_prompt,
)
from arena.sim.replies import Leg, bet_text, hold_text, render, sell_text, total_capped
from arena.sim.wire import PROVIDER, Fault, Served, chat_completion, messages_sha256

__all__ = ["SAMPLING_SHARE", "SimulatedModels"]

# A sampling stream's extra belief noise, as a share of the persona's `noise` (logit scale).
SAMPLING_SHARE = 0.5


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _logit(p: float) -> float:
    p = min(0.99, max(0.01, p))
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


class SimulatedModels:
    """The personas as a pure function: (model, messages, attempt seq) → response.

    `world` is anything with `hidden_probability(market_id, outcome, at)` (a SimulatedWorld).
    """

    def __init__(
        self,
        seed: int = 0,
        world: Any = None,
        *,
        slow_seconds: float = 2.0,
        retry_after: int = 1,
        latency_scale: float = 1.0,
    ) -> None:
        self.seed = seed
        self.world = world
        self.slow_seconds = slow_seconds
        self.retry_after = retry_after
        self.latency_scale = latency_scale

    # --- beliefs ---------------------------------------------------------------------------

    def _hidden(self, market: PromptMarket, side: str, at: datetime | None) -> float | None:
        if self.world is None or at is None:
            return None
        outcome = (
            {"YES": "Yes", "NO": "No"}.get(side, side) if market.market_type == "binary" else side
        )
        try:
            return float(self.world.hidden_probability(market.market_id, outcome, at))
        except (KeyError, ValueError, IndexError):
            return None

    def beliefs(
        self,
        model: str,
        view: PromptView,
        markets: Sequence[PromptMarket] | None = None,
        stream: str | None = None,
    ) -> dict[tuple[str, str], float]:
        """The persona's probability for each side of the markets it looks at (a sampling
        `stream` adds its own jitter)."""
        persona = persona_for(model)
        chosen = view.markets[: persona.attention] if markets is None else markets
        out: dict[tuple[str, str], float] = {}
        for market in chosen:
            rng = _rng("belief", self.seed, model, market.market_id, view.at)
            sides = market.sides[:1] if market.market_type == "binary" else market.sides
            for side, price in sides:
                base = self._hidden(market, side, view.at)
                start = _logit(float(price))
                if (
                    base is not None
                ):  # sees `insig` (insight) of the way from the price to the truth
                    start += persona.insight * (_logit(base) - start)
                shift = persona.bias * (1 - 2 * float(price))
                noise = rng.gauss(0, persona.noise)
                if stream is not None:
                    sample = _rng("sample", self.seed, model, stream, market.market_id, view.at)
                    noise += sample.gauss(0, persona.noise * SAMPLING_SHARE)
                belief = _sigmoid(persona.overconf * (start + shift + noise))
                out[(market.market_id, side)] = belief
            if market.market_type == "binary":
                out[(market.market_id, "NO")] = 1 - out[(market.market_id, "YES")]
        return out

    # --- one answer ------------------------------------------------------------------------

    def respond(
        self,
        model: str,
        messages: Sequence[Mapping[str, Any]],
        attempt: int = 0,
        *,
        at: datetime | None = None,
        include_cost: bool = False,
        stream: str | None = None,
    ) -> Served:
        """The response to one chat request; `attempt` = earlier identical requests (of the
        same sampling `stream`, the request's `user`, if it names one)."""
        persona = persona_for(model)
        digest = messages_sha256(messages)
        keys = (digest, attempt) if stream is None else (stream, digest, attempt)
        rng = _rng("answer", self.seed, model, *keys)
        delay = rng.uniform(*persona.latency_ms) / 1000 * self.latency_scale
        if rng.random() < persona.fault:
            kind: Fault = rng.choice(("429", "500", "slow"))
            if kind == "429":
                error = {"error": {"message": "Rate limit exceeded (simulated)", "code": 429}}
                return Served(429, error, {"Retry-After": str(self.retry_after)}, delay, kind)
            if kind == "500":
                error = {"error": {"message": "Internal server error (simulated)", "code": 500}}
                return Served(500, error, {}, delay, kind)
            delay = max(delay, self.slow_seconds)
            fault: Fault | None = kind
        else:
            fault = None
        view = parse_prompt(user_prompt(messages))
        if view.at is None and at is not None:
            view = PromptView(
                at, view.cash, view.min_bet, view.max_bet, view.positions, view.markets
            )
        stated = asks_probability(messages)
        capped = _rng("total-cap", self.seed, model, *keys) if states_total_cap(messages) else None
        decision = self._decide(persona, model, view, rng, stated, stream, capped)
        retrying = any(m.get("role") == "assistant" for m in messages)
        chance = persona.stubborn if retrying else persona.malformed
        form = "clean"
        betting = stated and "bets" in decision
        if rng.random() < chance:
            broken = ("wrong_field", "invalid_json")
            form = rng.choice((*broken, "bad_probability") if betting else broken)
        elif rng.random() < persona.messy:
            form = rng.choice(("fenced", "prose"))
        sloppy = persona.malformed + persona.messy
        if betting and form != "bad_probability" and rng.random() < sloppy:
            decision["bets"][-1].pop("probability", None)  # stated by none: recorded missing
        content = render(decision, form, rng)
        prompt_tokens = estimate_tokens("".join(str(m.get("content", "")) for m in messages))
        completion_tokens = estimate_tokens(content)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if include_cost:
            cost = (prompt_tokens * persona.price_in + completion_tokens * persona.price_out) / 1e6
            usage["cost"] = round(cost, 8)
        body = chat_completion(
            content,
            model=model,
            completion_id="gen-sim-"
            + hashlib.sha256(f"{digest}:{attempt}:{model}".encode()).hexdigest()[:24],
            created=int(view.at.timestamp()) if view.at else 0,
            provider=PROVIDER,
            system_fingerprint=f"sim-{persona.name}",
            usage=usage,
        )
        return Served(200, body, {}, delay, fault, form)

    def _decide(
        self,
        persona: Persona,
        model: str,
        view: PromptView,
        rng: random.Random,
        stated: bool = False,
        stream: str | None = None,
        total_cap: random.Random | None = None,
    ) -> dict[str, Any]:
        """HOLD (drawn), SELL (drawn, if a held side looks overpriced) or BET the best edges;
        `total_cap` (v2's prompt: its own RNG) fits the legs to the decision's maximum."""
        considered = view.markets[: persona.attention]
        beliefs = self.beliefs(model, view, considered, stream)
        if rng.random() < persona.hold:
            return {"action": "HOLD", "reasoning": hold_text(persona, considered, beliefs, True)}
        if view.positions and rng.random() < persona.sell:
            sells = self._sells(persona, view, beliefs)
            if sells:
                return {
                    "action": "SELL",
                    "sells": [{"position_id": p.position_id, "percentage": 100} for p, _ in sells],
                    "reasoning": sell_text(persona, sells),
                }
        legs = _size_legs(persona, view, _edges(persona, view, considered, beliefs), beliefs)
        if total_cap is not None:
            legs = total_capped(persona, view, legs, total_cap)
        if not legs:
            return {"action": "HOLD", "reasoning": hold_text(persona, considered, beliefs, False)}
        return {
            "action": "BET",
            "bets": [
                {
                    "market_id": leg.market.market_id,
                    "side": leg.side,
                    "amount": float(leg.amount),
                    **({"probability": self._stated(persona, model, view, leg)} if stated else {}),
                }
                for leg in legs
            ],
            "reasoning": bet_text(persona, legs, view),
        }

    def _sells(
        self, persona: Persona, view: PromptView, beliefs: Mapping[tuple[str, str], float]
    ) -> list[tuple[PromptPosition, float]]:
        """The positions whose side the persona now believes in less than its price."""
        sells = []
        for position in view.positions:
            belief = beliefs.get((position.market_id, position.side))
            if belief is None:  # a market it does not look at now: the truth or the price
                kind: Literal["binary", "named"] = (
                    "binary" if position.side in ("YES", "NO") else "named"
                )
                market = PromptMarket(position.market_id, position.question, kind, ())
                hidden = self._hidden(market, position.side, view.at)
                belief = float(position.now) if hidden is None else hidden
            if belief < float(position.now) - persona.edge / 2:
                sells.append((position, belief))
        return sells

    def _stated(self, persona: Persona, model: str, view: PromptView, leg: Leg) -> float:
        """The probability the persona states for a leg: its belief, reported with noise."""
        rng = _rng("stated", self.seed, model, leg.market.market_id, leg.side, view.at)
        reported = _logit(leg.belief) + rng.gauss(0, persona.noise)
        return round(_sigmoid(reported), 2)


_Edge = tuple[float, int, PromptMarket, str, Decimal]


def _edges(
    persona: Persona,
    view: PromptView,
    considered: Sequence[PromptMarket],
    beliefs: Mapping[tuple[str, str], float],
) -> list[_Edge]:
    """Sides not held whose edge (belief − price) is at least the persona's, best first."""
    held = {(p.market_id, p.side) for p in view.positions}
    edges: list[_Edge] = []
    for index, market in enumerate(considered):
        for side, price in market.sides:
            belief = beliefs.get((market.market_id, side))
            if belief is None or not Decimal(0) < price < Decimal(1):
                continue
            if (market.market_id, side) in held:
                continue
            edge = belief - float(price)
            if edge >= persona.edge:
                edges.append((edge, -index, market, side, price))
    edges.sort(key=lambda row: (row[0], row[1]), reverse=True)
    return edges


def _size_legs(
    persona: Persona,
    view: PromptView,
    edges: Sequence[_Edge],
    beliefs: Mapping[tuple[str, str], float],
) -> list[Leg]:
    """At most `legs` bets, each `min(1, size × edge)` of the cap on the cash left."""
    cash, fraction, legs = view.cash, view.cap_fraction, []
    for edge, _, market, side, price in edges[: persona.legs]:
        cap = (cash * fraction).quantize(CENT, ROUND_DOWN)
        share = Decimal(str(round(min(1.0, persona.size * edge), 4)))
        amount = min(cap, (cap * share).quantize(CENT, ROUND_DOWN))
        if amount < view.min_bet:
            continue
        legs.append(Leg(market, side, price, beliefs[(market.market_id, side)], amount))
        cash -= amount
    return legs
