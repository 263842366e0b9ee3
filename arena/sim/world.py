"""An offline Polymarket-like world: the demo's, the tests' and the backtests' market source.

Why it exists: the engine must run end to end without a network, and the benchmark's baselines
(the oracle above all) need markets whose true probabilities are known. `SimulatedWorld` answers
the same questions as the Gamma client (`top_markets`, `get_market`) with the same
`ParsedMarket` type, always "as of" an explicit instant, plus the hidden truth.

The model, in short (see the README's methodology notes):

* The world is a sequence of *listings*: a standalone binary market, a named-outcome market, or
  a negRisk group of binary markets sharing one event. Listing `i` draws everything from its own
  `random.Random(f"...:{seed}:{i}")`, so the world is a pure function of (seed, start, options)
  and answers never depend on which instants were asked about before.
* A listing's text comes from a question template (`arena/sim/questions.toml`).
* Each listing has hidden probabilities over its alternatives and a winner drawn from them.
* Its price path is an hourly Bayesian belief (`arena.sim.paths`): the crowd starts from the
  hidden probabilities distorted by a bias, and watches evidence (a Brownian signal per
  alternative that drifts up for the winner) arriving ever faster as the end nears, so prices
  converge to the outcome; an AR(1) noise term makes the quoted price wobble around that belief.
* After the end date a market is closed with its last traded prices, UMA status "proposed"
  (or "disputed" for the few that stay unresolved for weeks), then "resolved" with exact 1/0
  prices (0.5/0.5, or 1/n for named outcomes, when voided).
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from arena.markets.types import EndWindow, ParsedMarket
from arena.sim.books import clob_token_ids
from arena.sim.clock import HOUR_US, instant, micros
from arena.sim.listings import (
    STUCK_RATE,
    VOID_RATE,
    Market,
    Options,
    draft_listings,
    place_listings,
)
from arena.sim.paths import MILLS

__all__ = ["MarketSchedule", "SimulatedWorld", "demo_world"]


# The demo season's world (`arena demo`; the random null's world-only mode builds the same one).
DEMO_START = datetime(2026, 1, 4, tzinfo=UTC)  # a Sunday: cohort 1's week start
DEFAULT_TAIL_WEEKS = 1  # weeks simulated after the last cohort's decision window
WORLD_INITIAL_MARKETS = 1000  # enough that the universe holds 500 open markets all season
WORLD_NEW_PER_DAY = 12.0
# The longest a simulated market stays unresolved after its end: a stuck listing's dispute
# (`listings._resolution_times`, 8-35 days).
LONGEST_RESOLUTION_DAYS = 35


def horizon_tail_weeks(horizon_days: int) -> int:
    """The settling tail a `horizon` season needs for its last cohort to complete: every bet
    ends within `horizon_days` of its run, and a market can take `LONGEST_RESOLUTION_DAYS` more
    to resolve (the tail stops early once no position is open, so the bound costs nothing)."""
    return max(DEFAULT_TAIL_WEEKS, -(-(horizon_days + LONGEST_RESOLUTION_DAYS) // 7))


_PRICE_TABLE: tuple[Decimal, ...] = tuple(Decimal(k) / MILLS for k in range(MILLS + 1))
_ONE = Decimal("1")
_ZERO = Decimal("0")
_HALF = Decimal("0.5")
_MICRO = Decimal("0.000001")


# --------------------------------------------------------------------------------------------
# Public value types


@dataclass(frozen=True, slots=True)
class MarketSchedule:
    """A market's hidden timetable: lets tests and the demo aim at each lifecycle phase."""

    created_at: datetime
    end_date: datetime
    resolved_at: datetime
    voided: bool
    stuck: bool  # closed but unresolved for weeks (UMA "disputed")


class SimulatedWorld:
    """A seeded, deterministic world of Polymarket-like markets, queried as of any instant.

    About `n_initial` markets are already trading at `start` (a negRisk group is added whole, so
    the count may overshoot by a few); about `new_per_day` markets appear per day for `days` days
    after it, none after that. `void_rate` / `stuck_rate` are the per-listing chances of a void
    resolution (standalone markets only) and of weeks closed-but-unresolved. Every answer is a
    pure function of the constructor arguments and the `at` passed in; all paths are built here,
    so queries are cheap (O(markets) for `top_markets`, O(1) for `get_market`).
    """

    name = "simulated"  # satisfies arena.engine.sources.MarketSource directly

    def __init__(
        self,
        seed: int,
        start: datetime,
        *,
        n_initial: int = 300,
        new_per_day: float = 6,
        days: float = 182,
        void_rate: float = VOID_RATE,
        stuck_rate: float = STUCK_RATE,
    ) -> None:
        if n_initial < 0 or new_per_day < 0 or days < 0:
            raise ValueError("n_initial, new_per_day and days must be non-negative")
        self.seed = seed
        self.start = instant(micros(start))
        options = Options(seed, micros(start), n_initial, new_per_day, days, void_rate, stuck_rate)
        drafts = draft_listings(options)
        self._markets: list[Market] = place_listings(options, drafts)
        self._by_id: dict[str, Market] = {market.id: market for market in self._markets}
        self._tokens: dict[str, list[str]] = {
            market.id: clob_token_ids(seed, market.id, market.outcomes) for market in self._markets
        }

    # --- Gamma-client mirror --------------------------------------------------------------

    def top_markets(
        self, at: datetime, limit_total: int = 500, ending: EndWindow | None = None
    ) -> list[ParsedMarket]:
        """Open markets (created, not yet ended) by volume desc, ties by id; at most limit_total.
        With `ending`, only those whose end date falls within it (as Gamma's end-date filters)."""
        now = micros(at)
        if limit_total <= 0:
            return []
        ranked = sorted(
            (
                (-market.volume_at(now), market.number, market)
                for market in self._markets
                if market.created_us <= now < market.end_us
                and (ending is None or ending.holds(instant(market.end_us)))
            ),
            key=lambda row: (row[0], row[1]),
        )
        return [
            _parse(market, now, self._tokens[market.id]) for _, _, market in ranked[:limit_total]
        ]

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None:
        """The market as Gamma would show it at `at`; None if unknown or not yet created."""
        now = micros(at)
        market = self._by_id.get(market_id)
        if market is None or now < market.created_us:
            return None
        return _parse(market, now, self._tokens[market.id])

    # --- hidden truth ------------------------------------------------------------------------

    def market_ids(self) -> list[str]:
        """Every market of the world (past, present and future), in id order."""
        return [market.id for market in self._markets]

    def hidden_probability(self, market_id: str, outcome: str, at: datetime | None = None) -> float:
        """The probability the outcome wins: the prior at creation, or, given `at`, the
        unbiased posterior at that instant (what the oracle baseline bets on)."""
        market = self._market(market_id)
        index = _outcome_index(market, outcome)
        if at is None:
            return market.hidden[index]
        hour = (micros(at) - market.created_us) // HOUR_US
        return market.mills_at(hour, market.posterior)[index] / MILLS

    def true_outcome(self, market_id: str) -> str:
        """The outcome drawn at creation (a voided market still has one; it pays 0.5 anyway)."""
        market = self._market(market_id)
        return market.outcomes[market.winner]

    def is_voided(self, market_id: str) -> bool:
        """Whether the market resolves as void (0.5/0.5, or 1/n for named outcomes)."""
        return self._market(market_id).voided

    def schedule(self, market_id: str) -> MarketSchedule:
        """The market's timetable: creation, end (close), UMA resolution; void/stuck flags."""
        market = self._market(market_id)
        return MarketSchedule(
            created_at=instant(market.created_us),
            end_date=instant(market.end_us),
            resolved_at=instant(market.resolved_us),
            voided=market.voided,
            stuck=market.stuck,
        )

    def _market(self, market_id: str) -> Market:
        try:
            return self._by_id[market_id]
        except KeyError:
            raise KeyError(f"unknown simulated market {market_id!r}") from None


def _outcome_index(market: Market, outcome: str) -> int:
    """Index of an outcome by name, case-insensitively (sides arrive as YES/NO)."""
    wanted = outcome.strip().casefold()
    for index, name in enumerate(market.outcomes):
        if name.casefold() == wanted:
            return index
    raise ValueError(f"market {market.id} has no outcome {outcome!r}")


# --------------------------------------------------------------------------------------------
# The market as seen at an instant


def _parse(market: Market, now_us: int, tokens: list[str]) -> ParsedMarket:
    """The ParsedMarket for `market` at `now_us` (which must be at or after its creation);
    `tokens` are its outcomes' CLOB token ids (`arena.sim.books.clob_token_ids`)."""
    if now_us < market.end_us:
        hour = (now_us - market.created_us) // HOUR_US
        return ParsedMarket(
            **market.static,
            clob_token_ids=list(tokens),
            prices=[_PRICE_TABLE[m] for m in market.mills_at(hour)],
            volume=market.volume_at(now_us),
            liquidity=market.liquidity,
            updated_at=instant(market.created_us + hour * HOUR_US),
        )
    resolved = now_us >= market.resolved_us
    return ParsedMarket(
        **market.static,
        clob_token_ids=list(tokens),
        prices=_final_prices(market) if resolved else _leftover_prices(market),
        volume=market.volume_at(now_us),
        liquidity=0.0,
        closed=True,
        uma_resolution_status=_uma_status(market, now_us),
        closed_time=instant(market.end_us),
        updated_at=instant(market.resolved_us if resolved else market.end_us),
    )


def _leftover_prices(market: Market) -> list[Decimal]:
    """Closed but unresolved: the last traded prices stay on the book."""
    return [_PRICE_TABLE[m] for m in market.mills_at(len(market.path) - 1)]


def _final_prices(market: Market) -> list[Decimal]:
    """Resolved: exactly 1 for the winner and 0 elsewhere; void pays every outcome equally."""
    count = len(market.outcomes)
    if market.voided:
        share = _HALF if count == 2 else (_ONE / count).quantize(_MICRO)
        return [share] * count
    return [_ONE if index == market.winner else _ZERO for index in range(count)]


def _uma_status(market: Market, now_us: int) -> str:
    """UMA status after close: proposed, disputed (stuck ones), then resolved."""
    if now_us >= market.resolved_us:
        return "resolved"
    if market.disputed_us is not None and now_us >= market.disputed_us:
        return "disputed"
    return "proposed"


def demo_world(
    seed: int, weeks: int, *, tail_weeks: int = DEFAULT_TAIL_WEEKS, start: datetime = DEMO_START
) -> SimulatedWorld:
    """The demo season's world: `weeks` decision weeks plus the settling tail, at the demo's
    size and growth (what `arena demo` plays and the random null's world-only mode replays)."""
    return SimulatedWorld(
        seed,
        start,
        n_initial=WORLD_INITIAL_MARKETS,
        new_per_day=WORLD_NEW_PER_DAY,
        days=(weeks + tail_weeks) * 7 + 1,
    )
