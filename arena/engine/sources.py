"""Where markets come from: the live Gamma API or the simulated world, behind one interface.

A market row belongs to the source that listed it (its `source` column). A job never asks a
source about, overwrites or settles a market of the other kind (methodology §18, "Live and
simulated markets"): a simulated market id can be a real Polymarket id too, and the live
answer for it would settle a simulated position against a real-world outcome.
"""

from datetime import datetime
from typing import Protocol

from arena.markets.gamma import GammaClient
from arena.markets.types import EndWindow, ParsedMarket


class MarketSource(Protocol):
    """What the engine needs of a market source; `at` is the job's instant.

    `top_markets` with `ending` is the top among the open markets whose end date falls within
    the window (the extension `horizon`'s short-dated universe, `market_sync`)."""

    name: str

    def top_markets(
        self, at: datetime, limit_total: int, ending: EndWindow | None = None
    ) -> list[ParsedMarket]: ...

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None: ...


SIMULATED = "simulated"  # the `source` of the simulated world's markets
LIVE = "gamma"  # the `source` of markets listed by Polymarket Gamma


def foreign_markets(source_name: str) -> str:
    """The market `source` a job whose source is `source_name` must leave alone.

    Only the simulated world runs simulated jobs; any other source (Gamma, or a command that
    asks none) is live, so it is the simulated markets that are foreign to it.
    """
    return LIVE if source_name == SIMULATED else SIMULATED


def skipped_line(count: int, source_name: str, what: str = "skipped") -> str:
    """What a job says about the markets of the other kind it left alone."""
    if foreign_markets(source_name) == SIMULATED:
        return f"{count} simulated market(s) {what}: this source ({source_name}) is live"
    return f"{count} live market(s) {what}: this source is simulated"


class GammaSource:
    """The live Polymarket Gamma API. It can only answer "now", so `at` is not used."""

    name = LIVE

    def __init__(self, client: GammaClient) -> None:
        self.client = client

    def top_markets(
        self, at: datetime, limit_total: int, ending: EndWindow | None = None
    ) -> list[ParsedMarket]:
        return self.client.top_markets(limit_total, ending)

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None:
        return self.client.get_market(market_id)
