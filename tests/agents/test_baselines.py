"""Baselines answer like a model: JSON text that the real parser accepts, legal and reproducible."""

import json
from datetime import UTC, datetime
from decimal import Decimal as D
from typing import Literal

from arena.agents.baselines import (
    BaselineInput,
    cash_strategy,
    favorite_strategy,
    oracle_strategy,
    random_strategy,
)
from arena.agents.parsing import parse_decision
from arena.agents.prompts import PortfolioView, PromptMarket, PromptPosition

AT = datetime(2026, 11, 1, 0, 5, tzinfo=UTC)


def market(mid: str, outcomes: list[str], prices: list[str]) -> PromptMarket:
    kind: Literal["binary", "named"] = (
        "binary" if sorted(o.lower() for o in outcomes) == ["no", "yes"] else "named"
    )
    return PromptMarket(
        mid,
        f"Question {mid}?",
        None,
        None,
        kind,
        outcomes,
        [D(p) for p in prices],
        1000.0,
        None,
    )


MARKETS = [
    market("1", ["Yes", "No"], ["0.7", "0.3"]),
    market("2", ["No", "Yes"], ["0.8", "0.2"]),
    market("3", ["A", "B", "C"], ["0.2", "0.5", "0.3"]),
    market("4", ["Yes", "No"], ["0.45", "0.55"]),
    market("5", ["Yes", "No"], ["0.5", "0.5"]),
    market("6", ["Yes", "No"], ["0.9", "0.1"]),
]


def inputs(
    cash: str = "10000", positions: list[PromptPosition] | None = None, week: int = 1
) -> BaselineInput:
    portfolio = PortfolioView(D(cash), D(cash) * D("0.25"), D("50"), positions or [])
    return BaselineInput(AT, 1, week, portfolio, MARKETS)


def legs(text: str) -> list[tuple[str, str, D]]:
    parsed = parse_decision(text).ok
    assert parsed is not None, text
    return [(b.market_id, b.side, b.amount) for b in parsed.bets]


def test_cash_always_holds() -> None:
    parsed = parse_decision(cash_strategy(inputs())).ok
    assert parsed is not None and parsed.action == "HOLD" and parsed.reasoning


def test_favorite_backs_the_favourite_of_the_top_markets() -> None:
    assert legs(favorite_strategy(inputs())) == [
        ("1", "YES", D("100")),
        ("2", "NO", D("100")),
        ("3", "B", D("100")),
        ("4", "NO", D("100")),
        ("5", "YES", D("100")),
    ]


def test_favorite_skips_held_sides_and_respects_small_cash() -> None:
    held = PromptPosition(7, "1", "Q", "YES", D("1"), D("0.5"), D("0.7"), D("0.7"), D("0.2"))
    assert legs(favorite_strategy(inputs(positions=[held])))[0][0] == "2"
    assert legs(favorite_strategy(inputs(cash="240")))[0][2] == D("60")
    assert parse_decision(favorite_strategy(inputs(cash="100"))).ok.action == "HOLD"  # type: ignore[union-attr]


def test_random_is_seeded_and_legal() -> None:
    first = random_strategy(inputs(week=2), seed=5)
    assert first == random_strategy(inputs(week=2), seed=5)
    seen = set()
    for week in range(1, 30):
        cash = D("10000")
        for _mid, _side, amount in legs(random_strategy(inputs(week=week), seed=5)) or []:
            assert D("50") <= amount <= cash * D("0.25")
            cash -= amount
        seen.add(random_strategy(inputs(week=week), seed=5))
    assert len(seen) > 10


def test_oracle_bets_where_the_hidden_probability_beats_the_price() -> None:
    truth = {
        ("1", "Yes"): 0.9,
        ("1", "No"): 0.1,
        ("2", "Yes"): 0.2,
        ("2", "No"): 0.8,
        ("3", "A"): 0.6,
        ("3", "B"): 0.3,
        ("3", "C"): 0.1,
    }

    def probability(market_id: str, outcome: str, at: object) -> float:
        return truth.get((market_id, outcome), 0.5)

    chosen = legs(oracle_strategy(inputs(), probability))
    assert {(m, s) for m, s, _ in chosen} == {("3", "A"), ("1", "YES"), ("6", "NO")}  # 4: edge 0.05
    by_edge = {(m, s): a for m, s, a in chosen}
    assert by_edge[("3", "A")] > by_edge[("1", "YES")]  # bigger edge, bigger bet
    assert json.loads(oracle_strategy(inputs(), probability))["reasoning"]
