"""How a simulated model writes its answer: reasoning at its verbosity, and the JSON's form,
and the last touch on a BET's legs under methodology v2's total cap.

Why apart: deciding (`arena.sim.models`) and wording are separate jobs; these functions are pure
given the decision and the answer's RNG.

**v2's total cap.** A v2 prompt caps the sum of a decision's bets at 25% of the cash before it
(its user prompt states that sum as the maximum). The personas size each leg as under v1 (a
share of the cap on the cash left), then `total_capped` fits the legs to the stated maximum:
all scaled by one factor, cents rounded down, a leg left under the minimum dropped
(`fit_total`). With chance `overspend` (the persona table) the persona adds up wrong instead
and states legs totalling 10-50% over the maximum (`overshoot`): the engine refuses that plan
as a whole and asks again, as it would a real model's. v1 prompts never come here.
"""

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_DOWN, Decimal
from typing import Any

from arena.sim.personas import Persona
from arena.sim.prompt_view import CENT, PromptMarket, PromptPosition, PromptView

__all__ = [
    "OVERSHOOT",
    "Leg",
    "bet_text",
    "fit_total",
    "hold_text",
    "overshoot",
    "render",
    "sell_text",
    "total_capped",
]

OVERSHOOT = (1.1, 1.5)  # how far over the total cap an overspending answer's bets add up


@dataclass(frozen=True)
class Leg:
    """One BET leg a persona decided: what the answer and its reasoning name."""

    market: PromptMarket
    side: str
    price: Decimal
    belief: float
    amount: Decimal


def fit_total(legs: Sequence[Leg], total: Decimal, minimum: Decimal) -> list[Leg]:
    """The legs scaled by one factor so they add up to at most `total` (cents rounded down),
    a leg left under `minimum` dropped; legs already within `total` unchanged."""
    spent = sum((leg.amount for leg in legs), Decimal(0))
    if spent <= total:
        return list(legs)
    scaled = [replace(leg, amount=_cents_down(leg.amount * total / spent)) for leg in legs]
    return [leg for leg in scaled if leg.amount >= minimum]


def overshoot(legs: Sequence[Leg], total: Decimal, factor: Decimal) -> list[Leg]:
    """The legs scaled by one factor so they add up to about `factor` × `total` (> `total`):
    the plan of a persona that added its bets up wrong."""
    spent = sum((leg.amount for leg in legs), Decimal(0))
    if spent <= 0:
        return list(legs)
    return [replace(leg, amount=_cents_down(leg.amount * total * factor / spent)) for leg in legs]


def total_capped(
    persona: Persona, view: PromptView, legs: Sequence[Leg], rng: random.Random
) -> list[Leg]:
    """A v2 answer's legs: fitted to the decision's maximum, or (chance `overspend`) over it."""
    if rng.random() < persona.overspend:
        low, high = OVERSHOOT
        return overshoot(legs, view.max_bet, Decimal(str(round(rng.uniform(low, high), 2))))
    return fit_total(legs, view.max_bet, view.min_bet)


def _cents_down(value: Decimal) -> Decimal:
    return value.quantize(CENT, ROUND_DOWN)


def _price(value: Decimal) -> str:
    text = format(value.quantize(Decimal("0.001")), "f").rstrip("0").rstrip(".")
    return text or "0"


def _quote(question: str, limit: int = 90) -> str:
    return f"'{question if len(question) <= limit else question[: limit - 1] + '…'}'"


def bet_text(persona: Persona, legs: list[Leg], view: PromptView) -> str:
    first = legs[0]
    if persona.verbosity == "terse":
        question = _quote(first.market.question, 60)
        return f"{first.side} on {question} looks cheap at {_price(first.price)}."
    sentences = [
        f"{_quote(leg.market.question)} trades at {leg.side} {_price(leg.price)}; I put it "
        f"nearer {leg.belief:.2f}, so I buy {leg.side} for ${leg.amount:,.2f}."
        for leg in legs
    ]
    if persona.verbosity == "verbose":
        spent = sum((leg.amount for leg in legs), Decimal(0))
        sentences.insert(
            0,
            f"With ${view.cash:,.2f} of cash and {len(view.positions)} open "
            f"position{'' if len(view.positions) == 1 else 's'}, "
            f"I looked for markets where my estimate and the price disagree.",
        )
        sentences.append(
            f"That commits ${spent:,.2f}, sized by how large each edge is; the other markets "
            "look fairly priced to me."
        )
    return " ".join(sentences)


def sell_text(persona: Persona, sells: list[tuple[PromptPosition, float]]) -> str:
    position = sells[0][0]
    if persona.verbosity == "terse":
        return f"Exiting {position.side} on {_quote(position.question or position.market_id, 60)}."
    sentences = [
        f"{_quote(p.question or p.market_id)}: {p.side} bought at {_price(p.avg_entry)} now "
        f"trades at {_price(p.now)}, above my estimate of {b:.2f}, so I close the position."
        for p, b in sells
    ]
    if persona.verbosity == "verbose":
        sentences.append("Taking the price now is better than waiting for resolution.")
    return " ".join(sentences)


def hold_text(
    persona: Persona,
    markets: Sequence[PromptMarket],
    beliefs: Mapping[tuple[str, str], float],
    drawn: bool,
) -> str:
    if persona.verbosity == "terse" or not markets:
        return "Nothing worth trading this week."
    best = max(
        (
            (beliefs.get((m.market_id, s), float(p)) - float(p), m, s, p)
            for m in markets
            for s, p in m.sides
        ),
        key=lambda row: row[0],
    )
    edge, market, side, price = best
    text = (
        f"The closest call is {_quote(market.question)} at {side} {_price(price)}, an edge of "
        f"{edge:+.2f} by my estimate"
    )
    text += ", but I prefer to keep my powder dry this week." if drawn else ", too small to act on."
    if persona.verbosity == "verbose":
        text += f" I reviewed {len(markets)} markets and my current portfolio stays as it is."
    return text


def render(decision: dict[str, Any], form: str, rng: random.Random) -> str:
    text = json.dumps(decision, ensure_ascii=False)
    if form == "fenced":
        return f"```json\n{json.dumps(decision, ensure_ascii=False, indent=2)}\n```"
    if form == "prose":
        return f"Here is my decision for this week.\n{text}\nI will revisit it next week."
    if form == "wrong_field":
        wrong = dict(decision)
        if "bets" in wrong:
            wrong["bets"] = [
                {("stake" if k == "amount" else k): v for k, v in leg.items()}
                for leg in wrong["bets"]
            ]
        else:
            wrong["decision"] = wrong.pop("action")
        return json.dumps(wrong, ensure_ascii=False)
    if form == "bad_probability":
        wrong = dict(decision)
        first = dict(wrong["bets"][0])
        percent = round(float(first.get("probability", 0.5)) * 100)
        first["probability"] = rng.choice((f"{percent}%", max(2, percent), "likely"))
        wrong["bets"] = [first, *wrong["bets"][1:]]
        return json.dumps(wrong, ensure_ascii=False)
    if form == "invalid_json":
        if rng.random() < 0.5:
            return text[: max(10, len(text) // 2)]
        return repr(decision)  # Python literal: single quotes, not JSON
    return text
