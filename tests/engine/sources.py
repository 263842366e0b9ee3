"""A market source for engine tests: real Gamma payloads, parsed by the real parser."""

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from arena.markets.gamma import parse_market
from arena.markets.types import EndWindow, ParsedMarket

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gamma"


def fixture_markets() -> dict[str, dict[str, Any]]:
    """Every market payload in tests/fixtures/gamma, by id."""
    markets: dict[str, dict[str, Any]] = {}
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text())
        for raw in data if isinstance(data, list) else [data]:
            markets[str(raw["id"])] = raw
    return markets


def reopened(raw: dict[str, Any], yes_price: str = "0.5") -> dict[str, Any]:
    """The same market as it looked while trading: open, unresolved, mid prices."""
    outcomes = json.loads(raw["outcomes"])
    prices = [yes_price, str(1 - float(yes_price))] if len(outcomes) == 2 else None
    return {
        **raw,
        "closed": False,
        "umaResolutionStatus": None,
        "umaResolutionStatuses": "[]",
        "outcomePrices": json.dumps(prices),
    }


class ScriptedSource:
    """Serves whatever payload the test sets for each market id (None = vanished)."""

    name = "scripted"

    def __init__(self, payloads: dict[str, dict[str, Any] | None]) -> None:
        self.payloads = payloads
        self.calls: list[str] = []

    def top_markets(
        self, at: datetime, limit_total: int, ending: EndWindow | None = None
    ) -> list[ParsedMarket]:
        markets = [parse_market(raw) for raw in self.payloads.values() if raw is not None]
        listed = [m for m in markets if not m.closed]
        return [m for m in listed if ending is None or ending.holds(m.end_date)][:limit_total]

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None:
        self.calls.append(market_id)
        raw = self.payloads.get(market_id)
        return parse_market(raw) if raw is not None else None
