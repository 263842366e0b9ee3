"""How a simulated model writes its answer: reasoning at its verbosity, and the JSON's form.

Why apart: deciding (`arena.sim.models`) and wording are separate jobs; these functions are pure
given the decision and the answer's RNG.
"""

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from arena.sim.personas import Persona
from arena.sim.prompt_view import PromptMarket, PromptPosition, PromptView

__all__ = ["Leg", "bet_text", "hold_text", "render", "sell_text"]


@dataclass(frozen=True)
class Leg:
    """One BET leg a persona decided: what the answer and its reasoning name."""

    market: PromptMarket
    side: str
    price: Decimal
    belief: float
    amount: Decimal


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
