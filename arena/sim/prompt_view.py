"""What the simulated models read from a decision prompt (`arena.agents.prompts`' text).

Why apart: the personas answer the real prompt, so they must parse it as a model would read
it — instant, cash, bet limits, open positions, market lines — and nothing else.
"""

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from arena.agents.prompts import STATED_PROBABILITY_HEADING, V2_CAP_HEADING

__all__ = [
    "CENT",
    "PromptMarket",
    "PromptPosition",
    "PromptView",
    "asks_probability",
    "parse_prompt",
    "states_total_cap",
    "user_prompt",
]

CENT = Decimal("0.01")


@dataclass(frozen=True)
class PromptMarket:
    market_id: str
    question: str
    market_type: Literal["binary", "named"]
    sides: tuple[tuple[str, Decimal], ...]  # side as the answer names it, and its price


@dataclass(frozen=True)
class PromptPosition:
    position_id: int
    market_id: str
    question: str
    side: str
    avg_entry: Decimal
    now: Decimal


@dataclass(frozen=True)
class PromptView:
    """What the server reads from a decision prompt (None/empty for whatever is not there)."""

    at: datetime | None
    cash: Decimal
    min_bet: Decimal
    max_bet: Decimal
    positions: tuple[PromptPosition, ...]
    markets: tuple[PromptMarket, ...]

    @property
    def cap_fraction(self) -> Decimal:
        """The cap as a fraction of cash (25%): per bet under methodology v1; under v2
        `max_bet` is the whole decision's (see `states_total_cap`)."""
        if self.cash <= 0:
            return Decimal("0.25")
        return min(Decimal(1), (self.max_bet + CENT) / self.cash).quantize(Decimal("0.0001"))


_DATE = re.compile(r"^Date: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC", re.M)
_CASH = re.compile(r"^Cash: (-?\$[\d,]+\.\d\d)", re.M)
_LIMITS = re.compile(r"^Bet limits now: minimum (\$[\d,]+\.\d\d), maximum (\$[\d,]+\.\d\d)", re.M)
_POSITION = re.compile(
    r"^position_id (\d+) \| market (\S+) ?(.*?) \| side (.+?) \| [\d,.]+ shares \| "
    r"avg entry ([\d.]+) \| now ([\d.]+) \|",
    re.M,
)
_MARKETS = re.compile(r"^MARKETS \((\d+)\)$", re.M)
_NAMED_PRICE = re.compile(r'("(?:[^"\\]|\\.)*"|[^;]+?) (\d+(?:\.\d+)?)(?:; |$)')


def _money(text: str) -> Decimal:
    return Decimal(text.replace("$", "").replace(",", ""))


def _name(text: str) -> str:
    """An outcome name as the prompt shows it: JSON-quoted names decoded."""
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, str) else text
    return text


def _market_line(line: str) -> PromptMarket | None:
    head = line.split("|", 3)
    tail = line.rsplit("|", 2)
    if len(head) < 4 or len(tail) < 3:
        return None
    market_id, question = head[0], head[1]
    prices = head[3].rsplit("|", 2)[0]
    try:
        if prices.startswith("YES "):
            yes = Decimal(prices[4:])
            return PromptMarket(market_id, question, "binary", (("YES", yes), ("NO", 1 - yes)))
        sides = tuple(
            (_name(m.group(1)), Decimal(m.group(2))) for m in _NAMED_PRICE.finditer(prices)
        )
    except InvalidOperation:
        return None
    return PromptMarket(market_id, question, "named", sides) if sides else None


def parse_prompt(text: str) -> PromptView:
    """The decision state in a user prompt built by `arena.agents.prompts.user_prompt`."""
    date = _DATE.search(text)
    at = datetime.strptime(date.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=UTC) if date else None
    cash_match = _CASH.search(text)
    cash = _money(cash_match.group(1)) if cash_match else Decimal(0)
    limits = _LIMITS.search(text)
    min_bet, max_bet = (
        (_money(limits.group(1)), _money(limits.group(2))) if limits else (Decimal(1), cash / 4)
    )
    positions = tuple(
        PromptPosition(
            int(m.group(1)), m.group(2), m.group(3), _name(m.group(4)),
            Decimal(m.group(5)), Decimal(m.group(6)),
        )
        for m in _POSITION.finditer(text)
    )  # fmt: skip
    markets: list[PromptMarket] = []
    header = _MARKETS.search(text)
    if header:
        lines = text[header.end() :].split("\n")[2:]  # skip the rest of the line and the legend
        for line in lines[: int(header.group(1))]:
            market = _market_line(line)
            if market is not None:
                markets.append(market)
    return PromptView(at, cash, min_bet, max_bet, positions, tuple(markets))


def asks_probability(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the system prompt is the `stated_probability` extension's (it asks each BET leg
    for its probability)."""
    return any(
        m.get("role") == "system" and STATED_PROBABILITY_HEADING in str(m.get("content", ""))
        for m in messages
    )


def states_total_cap(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the system prompt is methodology v2's: the cap bounds the total of a decision's
    bets (`V2_CAP_HEADING`), so the user prompt's maximum is the whole decision's."""
    return any(
        m.get("role") == "system" and V2_CAP_HEADING in str(m.get("content", "")) for m in messages
    )


def user_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """The decision prompt: the first user message listing markets, else the first user one."""
    users = [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
    return next((u for u in users if "\nMARKETS (" in u), users[0] if users else "")
