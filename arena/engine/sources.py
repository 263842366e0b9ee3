"""Where markets come from: the live Gamma API or the simulated world, behind one interface."""

from datetime import datetime
from typing import Protocol

from arena.markets.gamma import GammaClient
from arena.markets.types import ParsedMarket


class MarketSource(Protocol):
    """What the engine needs of a market source; `at` is the job's instant."""

    name: str

    def top_markets(self, at: datetime, limit_total: int) -> list[ParsedMarket]: ...

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None: ...


class GammaSource:
    """The live Polymarket Gamma API. It can only answer "now", so `at` is not used."""

    name = "gamma"

    def __init__(self, client: GammaClient) -> None:
        self.client = client

    def top_markets(self, at: datetime, limit_total: int) -> list[ParsedMarket]:
        return self.client.top_markets(limit_total)

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None:
        return self.client.get_market(market_id)
