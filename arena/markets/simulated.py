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
* Each listing has hidden probabilities over its alternatives and a winner drawn from them.
* Its price path is an hourly Bayesian belief: the crowd starts from the hidden probabilities
  distorted by a bias, and watches evidence (a Brownian signal per alternative that drifts up for
  the winner) arriving ever faster as the end nears, so prices converge to the outcome; an AR(1)
  noise term makes the quoted price wobble around that belief.
* After the end date a market is closed with its last traded prices, UMA status "proposed"
  (or "disputed" for the few that stay unresolved for weeks), then "resolved" with exact 1/0
  prices (0.5/0.5, or 1/n for named outcomes, when voided).
"""

import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from itertools import pairwise
from statistics import NormalDist
from typing import Literal

import numpy as np

from arena.markets.types import ParsedMarket, classify_outcomes

__all__ = ["MarketSchedule", "SimulatedWorld"]

ListingKind = Literal["binary", "named", "group"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_HOUR_US = 3_600_000_000
_DAY_US = 24 * _HOUR_US

# The demo season's world (`arena demo`; the random null's world-only mode builds the same one).
DEMO_START = datetime(2026, 1, 4, tzinfo=UTC)  # a Sunday: cohort 1's week start
DEFAULT_TAIL_WEEKS = 1  # weeks simulated after the last cohort's decision window
WORLD_INITIAL_MARKETS = 1000  # enough that the universe holds 500 open markets all season
WORLD_NEW_PER_DAY = 12.0

FIRST_MARKET_ID = 900_001
FIRST_EVENT_ID = 400_001

# Mix of listings, and the lifecycle accidents.
_KIND_WEIGHTS: tuple[tuple[ListingKind, float], ...] = (
    ("binary", 0.5),
    ("named", 0.25),
    ("group", 0.25),
)
NO_FIRST_RATE = 0.15  # standalone binaries listed as ["No", "Yes"]
VOID_RATE = 0.05  # per standalone listing (groups never void): about 2% of all markets
STUCK_RATE = 0.03  # per listing: closed but unresolved for 8-35 days

# Belief dynamics (log-odds units, per hour).
_INFO_TOTAL = (20.0, 40.0)  # evidence by the end: winner-vs-loser log-odds gap has this mean
_INFO_LINEAR = 0.1  # share of evidence arriving evenly; the rest comes as u**12 near the end
_BIAS_SD = 0.5  # crowd's initial mispricing of each alternative, fading as evidence arrives
_NOISE_SD = 0.12  # stationary sd of the quote's wobble around the belief
_NOISE_RHO = 0.97  # hourly persistence of that wobble (half-life about a day)
_NOISE_INNOV = _NOISE_SD * math.sqrt(1.0 - _NOISE_RHO**2)

# Volumes: lognormal final volume, reached along u**shape over the market's life.
_VOLUME_MEDIAN = 120_000.0
_VOLUME_SIGMA = 1.4

_MILLS = 1000
_MIN_MILLS = 1
_MAX_MILLS = 999
_PRICE_TABLE: tuple[Decimal, ...] = tuple(Decimal(k) / _MILLS for k in range(_MILLS + 1))
_NON_SLUG = re.compile(r"[^a-z0-9]+")
_ONE = Decimal("1")
_ZERO = Decimal("0")
_HALF = Decimal("0.5")
_MICRO = Decimal("0.000001")

# 4096 equiprobable standard-normal quantiles: a fast, exactly reproducible normal sampler.
_NORMAL_TABLE = np.array([NormalDist().inv_cdf((i + 0.5) / 4096) for i in range(4096)])
_AR_BLOCK = 128
_AR_POWERS = _NOISE_RHO ** np.arange(_AR_BLOCK, dtype=float)


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


# --------------------------------------------------------------------------------------------
# Time helpers


def _micros(at: datetime) -> int:
    """Integer microseconds since the epoch: exact arithmetic for hour indexing."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"instant {at!r} must be timezone-aware (UTC)")
    return (at - _EPOCH) // _US


def _instant(micros: int) -> datetime:
    """The aware UTC datetime for integer epoch microseconds."""
    return _EPOCH + timedelta(microseconds=micros)


def _ceil_to(micros: int, step: int) -> int:
    """Round up to a multiple of `step` microseconds (hour or midnight ends, like Gamma's)."""
    return -(-micros // step) * step


def _log_uniform(rng: random.Random, low: float, high: float) -> float:
    """Durations spread evenly over orders of magnitude (days to months)."""
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def _date_text(at: datetime) -> str:
    """'March 3, 2026' — portable (no %-d)."""
    return f"{at:%B} {at.day}, {at.year}"


# --------------------------------------------------------------------------------------------
# Question templates


_FIRST = (
    "Amara", "Tomas", "Lena", "Rafael", "Ingrid", "Kenji", "Priya", "Mateo", "Sofia", "Nikolai",
    "Aisha", "Jonas", "Mei", "Diego", "Hana", "Oskar", "Leila", "Viktor", "Elena", "Samuel",
)  # fmt: skip
_LAST = (
    "Okafor", "Lindqvist", "Moreau", "Castillo", "Brandt", "Tanaka", "Varga", "Haddad", "Novak",
    "Ferreira", "Abiola", "Kowalski", "Sato", "Marin", "Hughes", "Petrov", "Dumont", "Reyes",
)  # fmt: skip
_CITIES = (
    "Harbor City", "Northvale", "Port Adler", "Riverton", "Eastmoor", "Lakeside", "Redcliff",
    "Summitview", "Westbrook", "Granite Bay", "Ironwood", "Silverton", "Ashford", "Clearwater",
)  # fmt: skip
_MASCOTS = (
    "Falcons", "Comets", "Wolves", "Mariners", "Titans", "Foxes", "Rangers", "Storm", "Miners",
    "Owls", "Bulldogs", "Pioneers", "Hornets", "Knights",
)  # fmt: skip
_LEAGUES = (
    "Premier Football League", "Northern Hockey League", "Continental Basketball Association",
    "Pacific Baseball League", "Atlantic Rugby Union",
)  # fmt: skip
_TOURNAMENTS = (
    "Champions Cup",
    "Continental Open",
    "Summer Invitational",
    "World Series of Esports",
)
_COUNTRIES = (
    "Canada", "Germany", "Japan", "Brazil", "India", "France", "Italy", "Spain", "Australia",
    "Mexico", "South Korea", "Poland", "Netherlands", "Nigeria", "Chile", "Portugal", "Kenya",
)  # fmt: skip
_PARLIAMENTARY = ("Canada", "Japan", "India", "Italy", "Spain", "Australia", "Netherlands")
_REPUBLICS = ("Brazil", "France", "Mexico", "Chile", "Nigeria", "Kenya", "South Korea", "Poland")
_PARTIES = (
    "Progressive Alliance", "National Union", "Green Future", "Liberal Democrats",
    "Workers' Party", "Civic Platform", "Reform Movement",
)  # fmt: skip
_COMPANIES = ("Apple", "Google", "Microsoft", "OpenAI", "Meta", "Amazon", "Nvidia", "Samsung")
_PRODUCTS = (
    "a foldable phone", "a new flagship AI model", "smart glasses", "a humanoid robot",
    "a price increase for its main subscription", "a self-driving taxi service",
)  # fmt: skip
_FILMS = (
    "The Last Lighthouse", "Neon Tides", "Paper Crowns", "Echoes of Mars", "The Quiet Orchard",
    "Midnight Cartographer", "Iron Saints", "Glass Harbor", "Salt and Thunder", "Little Comet",
)  # fmt: skip
_WEATHER_CITIES = ("New York", "London", "Chicago", "Tokyo", "Seoul", "Miami", "Paris", "Toronto")
# (name, centre price, bracket step)
_ASSETS = (
    ("Bitcoin", 100_000, 2_500),
    ("Ethereum", 3_500, 100),
    ("Solana", 180, 5),
    ("BNB", 700, 20),
)
_FED_OUTCOMES = ("50+ bps decrease", "25 bps decrease", "No change", "25+ bps increase")
_FED_PHRASES = (
    "cut rates by 50+ bps",
    "cut rates by 25 bps",
    "leave rates unchanged",
    "raise rates by 25+ bps",
)


@dataclass(frozen=True, slots=True)
class _Text:
    """What a template writes: the event, one question per market, the alternatives."""

    event_title: str
    questions: tuple[str, ...]  # one per market (one for binary and named listings)
    alternatives: tuple[str, ...]  # binary: Yes, No; named: outcomes; group: item titles
    description: str


_Builder = Callable[[random.Random, datetime, int], _Text]


@dataclass(frozen=True, slots=True)
class _Template:
    """A kind of question: its category, shape and typical lifetime."""

    kind: ListingKind
    category: str
    sizes: tuple[int, int]  # number of alternatives, inclusive range
    days: tuple[float, float]  # lifetime range in days
    build: _Builder


def _person(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def _people(rng: random.Random, n: int) -> list[str]:
    """n distinct fictional people (no real person's odds are simulated)."""
    names: list[str] = []
    while len(names) < n:
        name = _person(rng)
        if name not in names:
            names.append(name)
    return names


def _teams(rng: random.Random, n: int) -> list[str]:
    """n distinct fictional teams from distinct cities."""
    cities = rng.sample(_CITIES, n)
    return [f"{city} {rng.choice(_MASCOTS)}" for city in cities]


def _dollars(value: float) -> str:
    return f"${value:,.0f}"


def _asset_level(rng: random.Random) -> tuple[str, int, int]:
    """An asset, a round price level near its centre, and its bracket step."""
    name, centre, step = rng.choice(_ASSETS)
    level = round(centre * (1.0 + rng.gauss(0.0, 0.08)) / step) * step
    return name, max(step, level), step


def _binary_text(question: str, condition: str) -> _Text:
    return _Text(
        event_title=question,
        questions=(question,),
        alternatives=("Yes", "No"),
        description=(
            f'This market will resolve to "Yes" if {condition}. Otherwise, this market will '
            'resolve to "No".'
        ),
    )


def _b_crypto(rng: random.Random, end: datetime, _n: int) -> _Text:
    asset, level, _ = _asset_level(rng)
    when = _date_text(end)
    return _binary_text(
        f"Will {asset} close above {_dollars(level)} on {when}?",
        f"the {asset}/USD daily close on {when} is above {_dollars(level)}",
    )


def _b_fed(rng: random.Random, end: datetime, _n: int) -> _Text:
    meeting = f"{end:%B} {end.year}"
    return _binary_text(
        f"Will the Fed cut interest rates at the {meeting} FOMC meeting?",
        f"the FOMC announces a lower federal funds target range at its {meeting} meeting",
    )


def _b_jobs(rng: random.Random, end: datetime, _n: int) -> _Text:
    rate = rng.choice((3.9, 4.0, 4.1, 4.2, 4.3, 4.4, 4.5, 4.6))
    return _binary_text(
        f"Will the US unemployment rate be {rate}% or higher in the {end:%B} jobs report?",
        f"the unemployment rate published in the {end:%B} {end.year} jobs report is {rate}% "
        "or higher",
    )


def _b_snap_election(rng: random.Random, end: datetime, _n: int) -> _Text:
    country = rng.choice(_COUNTRIES)
    when = _date_text(end)
    return _binary_text(
        f"Will {country} hold a snap general election before {when}?",
        f"{country} holds a national general election ahead of schedule before {when}",
    )


def _b_leader(rng: random.Random, end: datetime, _n: int) -> _Text:
    country, leader = rng.choice(_COUNTRIES), _person(rng)
    when = _date_text(end)
    return _binary_text(
        f"Will {leader} remain head of government of {country} through {when}?",
        f"{leader} is still head of government of {country} on {when}",
    )


def _b_match(rng: random.Random, end: datetime, _n: int) -> _Text:
    home, away = _teams(rng, 2)
    when = _date_text(end)
    return _binary_text(
        f"Will the {home} beat the {away} on {when}?",
        f"the {home} win their {rng.choice(_LEAGUES)} game against the {away} on {when}",
    )


def _b_player(rng: random.Random, end: datetime, _n: int) -> _Text:
    player, (team, rival) = _person(rng), _teams(rng, 2)
    points = rng.choice((20, 25, 30, 35))
    return _binary_text(
        f"Will {player} score {points}+ points for the {team} against the {rival}?",
        f"{player} scores at least {points} points in the game on {_date_text(end)}",
    )


def _b_product(rng: random.Random, end: datetime, _n: int) -> _Text:
    company, product = rng.choice(_COMPANIES), rng.choice(_PRODUCTS)
    when = _date_text(end)
    return _binary_text(
        f"Will {company} announce {product} before {when}?",
        f"{company} officially announces {product} before {when}",
    )


def _b_box_office(rng: random.Random, end: datetime, _n: int) -> _Text:
    film, millions = rng.choice(_FILMS), rng.choice((40, 60, 80, 100, 150))
    return _binary_text(
        f"Will '{film}' gross more than ${millions}M in its opening weekend?",
        f"'{film}' reports a domestic opening-weekend gross above ${millions} million",
    )


def _b_trade_deal(rng: random.Random, end: datetime, _n: int) -> _Text:
    first, second = rng.sample(_COUNTRIES, 2)
    when = _date_text(end)
    return _binary_text(
        f"Will {first} and {second} announce a trade agreement by {when}?",
        f"the governments of {first} and {second} announce a signed trade agreement by {when}",
    )


def _b_weather(rng: random.Random, end: datetime, _n: int) -> _Text:
    city, degrees = rng.choice(_WEATHER_CITIES), rng.choice((60, 70, 80, 90))
    when = _date_text(end)
    return _binary_text(
        f"Will {city} record a high above {degrees}°F on {when}?",
        f"the official high temperature in {city} on {when} exceeds {degrees}°F",
    )


def _named_text(question: str, outcomes: Sequence[str], rule: str) -> _Text:
    return _Text(
        event_title=question,
        questions=(question,),
        alternatives=tuple(outcomes),
        description=f"This market will resolve to the outcome that {rule}.",
    )


def _n_match(rng: random.Random, end: datetime, _n: int) -> _Text:
    home, away = _teams(rng, 2)
    league = rng.choice(_LEAGUES)
    return _named_text(
        f"{league}: {home} vs. {away} ({_date_text(end)})",
        (home, "Draw", away),
        "matches the result after regulation time",
    )


def _n_tournament(rng: random.Random, end: datetime, n: int) -> _Text:
    tournament = rng.choice(_TOURNAMENTS)
    return _named_text(
        f"Who will win the {tournament} {end.year}?",
        _teams(rng, n),
        f"names the team that wins the {tournament} {end.year}",
    )


def _n_fed(rng: random.Random, end: datetime, _n: int) -> _Text:
    return _named_text(
        f"Fed decision in {end:%B} {end.year}?",
        _FED_OUTCOMES,
        f"matches the change to the federal funds target at the {end:%B} {end.year} meeting",
    )


def _brackets(rng: random.Random, n: int) -> tuple[str, list[str]]:
    """n exhaustive price brackets around a level: '<$X', '$X-$Y', …, '>$Z'."""
    asset, level, step = _asset_level(rng)
    low = level - step * (n - 2) // 2
    edges = [low + step * i for i in range(n - 1)]
    labels = [f"<{_dollars(edges[0])}"]
    labels += [f"{_dollars(a)}-{_dollars(b)}" for a, b in pairwise(edges)]
    labels.append(f">{_dollars(edges[-1])}")
    return asset, labels


def _bracket_phrase(label: str) -> str:
    """'<$X' reads 'less than $X' in a question; '$X-$Y' reads 'between $X and $Y'."""
    if label.startswith("<"):
        return f"less than {label[1:]}"
    if label.startswith(">"):
        return f"greater than {label[1:]}"
    low, high = label.split("-")
    return f"between {low} and {high}"


def _n_asset_range(rng: random.Random, end: datetime, n: int) -> _Text:
    asset, labels = _brackets(rng, n)
    return _named_text(
        f"{asset} price on {_date_text(end)}?",
        labels,
        f"contains the {asset}/USD close on {_date_text(end)}",
    )


def _n_box_office(rng: random.Random, end: datetime, n: int) -> _Text:
    return _named_text(
        f"Which film will top the box office on the weekend of {_date_text(end)}?",
        rng.sample(_FILMS, n),
        "is the film with the highest domestic weekend gross",
    )


def _n_temperature(rng: random.Random, end: datetime, n: int) -> _Text:
    city = rng.choice(_WEATHER_CITIES)
    base = rng.choice((50, 60, 70, 80))
    edges = [base + 2 * i for i in range(n - 1)]
    labels = [f"{edges[0] - 1}°F or below"]
    labels += [f"{a}-{a + 1}°F" for a in edges[:-1]]
    labels.append(f"{edges[-1]}°F or higher")
    return _named_text(
        f"Highest temperature in {city} on {_date_text(end)}?",
        labels,
        f"contains the official high temperature in {city} on {_date_text(end)}",
    )


def _n_parties(rng: random.Random, end: datetime, n: int) -> _Text:
    country = rng.choice(_COUNTRIES)
    return _named_text(
        f"Which party will win the most seats in the {country} parliamentary election?",
        rng.sample(_PARTIES, n),
        f"wins the most seats in the {country} election held by {_date_text(end)}",
    )


def _group_text(title: str, questions: Sequence[str], items: Sequence[str], rule: str) -> _Text:
    return _Text(
        event_title=title,
        questions=tuple(questions),
        alternatives=tuple(items),
        description=(
            f'Each market in this group resolves "Yes" if {rule} is the one it names, and "No" '
            "otherwise; exactly one market in the group resolves Yes."
        ),
    )


def _g_prime_minister(rng: random.Random, end: datetime, n: int) -> _Text:
    country, names = rng.choice(_PARLIAMENTARY), _people(rng, n)
    return _group_text(
        f"Next Prime Minister of {country}?",
        [f"Will {name} be the next Prime Minister of {country}?" for name in names],
        names,
        f"the next person sworn in as Prime Minister of {country}",
    )


def _g_champion(rng: random.Random, end: datetime, n: int) -> _Text:
    league, teams = rng.choice(_LEAGUES), _teams(rng, n)
    return _group_text(
        f"{league} Champion {end.year}",
        [f"Will the {team} win the {league} {end.year}?" for team in teams],
        teams,
        f"the {league} {end.year} champion",
    )


def _g_fed(rng: random.Random, end: datetime, _n: int) -> _Text:
    meeting = f"{end:%B} {end.year}"
    return _group_text(
        f"Fed decision in {meeting}?",
        [f"Will the Fed {phrase} at the {meeting} meeting?" for phrase in _FED_PHRASES],
        _FED_OUTCOMES,
        f"the FOMC decision at the {meeting} meeting",
    )


def _g_asset_range(rng: random.Random, end: datetime, n: int) -> _Text:
    asset, labels = _brackets(rng, n)
    when = _date_text(end)
    return _group_text(
        f"{asset} price on {when}?",
        [f"Will the price of {asset} be {_bracket_phrase(label)} on {when}?" for label in labels],
        labels,
        f"the price bracket of the {asset}/USD close on {when}",
    )


def _g_president(rng: random.Random, end: datetime, n: int) -> _Text:
    country, names = rng.choice(_REPUBLICS), _people(rng, n)
    return _group_text(
        f"{country} Presidential Election Winner {end.year}",
        [f"Will {name} win the {end.year} {country} presidential election?" for name in names],
        names,
        f"the winner of the {end.year} {country} presidential election",
    )


def _g_awards(rng: random.Random, end: datetime, n: int) -> _Text:
    films = rng.sample(_FILMS, n)
    return _group_text(
        f"Best Picture Winner {end.year}",
        [f"Will '{film}' win Best Picture at the {end.year} Film Awards?" for film in films],
        films,
        f"the Best Picture winner at the {end.year} Film Awards",
    )


_TEMPLATES: dict[ListingKind, tuple[_Template, ...]] = {
    "binary": (
        _Template("binary", "Crypto", (2, 2), (2, 60), _b_crypto),
        _Template("binary", "Economy", (2, 2), (10, 90), _b_fed),
        _Template("binary", "Economy", (2, 2), (7, 45), _b_jobs),
        _Template("binary", "Politics", (2, 2), (14, 120), _b_snap_election),
        _Template("binary", "Politics", (2, 2), (14, 120), _b_leader),
        _Template("binary", "Sports", (2, 2), (2, 10), _b_match),
        _Template("binary", "Sports", (2, 2), (2, 7), _b_player),
        _Template("binary", "Tech", (2, 2), (14, 120), _b_product),
        _Template("binary", "Culture", (2, 2), (5, 40), _b_box_office),
        _Template("binary", "Geopolitics", (2, 2), (20, 120), _b_trade_deal),
        _Template("binary", "Weather", (2, 2), (3, 14), _b_weather),
    ),
    "named": (
        _Template("named", "Sports", (3, 3), (2, 10), _n_match),
        _Template("named", "Sports", (4, 6), (20, 120), _n_tournament),
        _Template("named", "Economy", (4, 4), (10, 90), _n_fed),
        _Template("named", "Crypto", (4, 6), (5, 45), _n_asset_range),
        _Template("named", "Culture", (3, 5), (4, 21), _n_box_office),
        _Template("named", "Weather", (4, 6), (3, 10), _n_temperature),
        _Template("named", "Politics", (3, 5), (30, 120), _n_parties),
    ),
    "group": (
        _Template("group", "Politics", (4, 7), (30, 120), _g_prime_minister),
        _Template("group", "Sports", (4, 8), (30, 120), _g_champion),
        _Template("group", "Economy", (4, 4), (10, 90), _g_fed),
        _Template("group", "Crypto", (4, 6), (5, 45), _g_asset_range),
        _Template("group", "Politics", (3, 6), (30, 120), _g_president),
        _Template("group", "Culture", (4, 7), (20, 90), _g_awards),
    ),
}


def _slugify(text: str) -> str:
    """Gamma-style slug: lower-case ASCII words joined by hyphens."""
    return _NON_SLUG.sub("-", text.lower()).strip("-")[:90].rstrip("-")


# --------------------------------------------------------------------------------------------
# Hidden truth and price paths


def _normals(rng: random.Random, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normals from one `randbytes` call: fast, and the same on every platform."""
    raw = np.frombuffer(rng.randbytes(2 * math.prod(shape)), dtype="<u2")
    return _NORMAL_TABLE[raw >> 4].reshape(shape)


def _hidden_probabilities(rng: random.Random, kind: ListingKind, size: int) -> list[float]:
    """The truth the winner is drawn from: logit-normal for binary, Dirichlet otherwise."""
    if kind == "binary":
        p_yes = min(0.98, max(0.02, 1.0 / (1.0 + math.exp(-rng.gauss(0.0, 1.7)))))
        return [p_yes, 1.0 - p_yes]
    weights = [max(rng.gammavariate(0.9, 1.0), 1e-9) for _ in range(size)]
    total = sum(weights)
    floored = [max(w / total, 0.002) for w in weights]
    norm = sum(floored)
    return [p / norm for p in floored]


def _draw_index(rng: random.Random, probabilities: Sequence[float]) -> int:
    """Index i with probability probabilities[i]."""
    target, cumulative = rng.random(), 0.0
    for index, probability in enumerate(probabilities):
        cumulative += probability
        if target < cumulative:
            return index
    return len(probabilities) - 1


def _info_fraction(u: np.ndarray) -> np.ndarray:
    """Share of all evidence seen after fraction u of the market's life: most of it late."""
    return _INFO_LINEAR * u + (1.0 - _INFO_LINEAR) * u**12


def _ar1(initial: np.ndarray, shocks: np.ndarray) -> np.ndarray:
    """e[t] = ρ·e[t−1] + shocks[t] from e[−1] = initial, in vectorised blocks.

    Within a block, e[b+i] = ρ^i·(ρ·e[b−1] + Σ_{s≤i} ρ^−s·shocks[b+s]); blocks stay short so
    ρ^−s stays small and no precision is lost.
    """
    out = np.empty_like(shocks)
    previous = initial
    for begin in range(0, len(shocks), _AR_BLOCK):
        block = shocks[begin : begin + _AR_BLOCK]
        powers = _AR_POWERS[: len(block), None]
        values = powers * (_NOISE_RHO * previous + np.cumsum(block / powers, axis=0))
        out[begin : begin + len(block)] = values
        previous = values[-1]
    return out


def _to_mills(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax as per-mille prices in [1, 999], nudged so each row sums to 1000."""
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    shares = _MILLS * weights / weights.sum(axis=1, keepdims=True)
    mills = np.clip(np.rint(shares), _MIN_MILLS, _MAX_MILLS).astype(np.int64)
    rows = np.arange(len(mills))
    top = mills.argmax(axis=1)
    nudged = mills[rows, top] + _MILLS - mills.sum(axis=1)
    fits = (nudged >= _MIN_MILLS) & (nudged <= _MAX_MILLS)
    mills[rows[fits], top[fits]] = nudged[fits]
    return mills.astype(np.uint16)


def _belief_path(
    rng: random.Random, hidden: Sequence[float], winner: int, hours: int
) -> tuple[np.ndarray, np.ndarray]:
    """Hourly per-mille prices and posteriors, shape (hours, alternatives) each.

    The posterior (prior + evidence, without the crowd's bias and quoting noise) is what a
    perfectly informed forecaster would say at that hour: the oracle baseline bets on it, so it
    beats the market by exactly the market's bias and noise.

    Log-weight of alternative j at hour h: log p_j + bias_j·(1−g) + X_j + e_j, where X_j is a
    Brownian signal with drift +½ for the winner and −½ otherwise over evidence time τ = K·g(u),
    so log p_j + X_j is the exact Bayesian posterior; e_j is AR(1) quoting noise.
    """
    size = len(hidden)
    info_total = rng.uniform(*_INFO_TOTAL)
    first = _normals(rng, (2, size))
    draws = _normals(rng, (2, hours, size))
    seen = _info_fraction(np.arange(hours) / hours)
    step = info_total * np.diff(seen, prepend=0.0)
    drift = np.full(size, -0.5)
    drift[winner] = 0.5
    signal = np.cumsum(step[:, None] * drift + np.sqrt(step)[:, None] * draws[0], axis=0)
    noise = _ar1(_NOISE_SD * first[1], _NOISE_INNOV * draws[1])
    bias = np.outer(1.0 - seen, _BIAS_SD * first[0])
    prior = np.log(np.asarray(hidden))
    return _to_mills(prior + bias + signal + noise), _to_mills(prior + signal)


# --------------------------------------------------------------------------------------------
# Listings and markets


@dataclass(frozen=True, slots=True)
class _Draft:
    """A listing before it is placed on the id line: content drawn from its own Random."""

    index: int
    template: _Template
    text: _Text
    hidden: tuple[float, ...]
    winner: int
    created_us: int
    end_us: int
    resolved_us: int
    disputed_us: int | None  # stuck listings turn "disputed" from here until resolved
    voided: bool
    no_first: bool
    volumes: tuple[tuple[float, float, float], ...]  # per market: final, shape, liquidity

    @property
    def hours(self) -> int:
        """Length of the price path: whole hours from creation to end, rounded up."""
        return -(-(self.end_us - self.created_us) // _HOUR_US)


@dataclass(frozen=True, slots=True, eq=False)
class _Market:
    """One simulated market: fixed fields, hidden truth, timetable and price path."""

    id: str
    number: int
    static: dict[str, object]  # ParsedMarket fields that never change
    outcomes: tuple[str, ...]
    hidden: tuple[float, ...]  # aligned to outcomes
    winner: int  # index into outcomes
    path: np.ndarray  # the listing's hourly per-mille prices, shape (hours, alternatives)
    posterior: np.ndarray  # the unbiased, noise-free belief behind those prices, same shape
    yes_column: int | None  # binary: the path column pricing Yes; named: None (all columns)
    no_first: bool  # binary listed as ["No", "Yes"]
    created_us: int
    end_us: int
    resolved_us: int
    disputed_us: int | None
    voided: bool
    stuck: bool
    volume_final: float
    volume_shape: float
    liquidity: float

    def mills_at(self, hour: int, table: np.ndarray | None = None) -> list[int]:
        """Per-mille prices (or posteriors) aligned to outcomes at an hour of its life."""
        rows = self.path if table is None else table
        row = rows[min(max(hour, 0), len(rows) - 1)]
        if self.yes_column is None:
            return row.tolist()
        yes = int(row[self.yes_column])
        return [_MILLS - yes, yes] if self.no_first else [yes, _MILLS - yes]

    def volume_at(self, now_us: int) -> float:
        """Cumulative volume: grows along u**shape from 0 at creation to its final value."""
        life = (now_us - self.created_us) / (self.end_us - self.created_us)
        return round(self.volume_final * min(1.0, max(0.0, life)) ** self.volume_shape, 2)


def _pick_kind(rng: random.Random) -> ListingKind:
    """Binary, named or group, by the configured mix."""
    target, cumulative = rng.random(), 0.0
    for kind, weight in _KIND_WEIGHTS:
        cumulative += weight
        if target < cumulative:
            return kind
    return _KIND_WEIGHTS[-1][0]


def _end_us(at_midnight: bool, raw_end_us: int) -> int:
    """Ends fall on the hour, half of them at midnight UTC, as Gamma end dates usually do."""
    return _ceil_to(raw_end_us, _DAY_US if at_midnight else _HOUR_US)


@dataclass(frozen=True, slots=True)
class _Options:
    """The constructor's arguments, normalised: everything the world is a function of."""

    seed: int
    start_us: int
    n_initial: int
    new_per_day: float
    days: float
    void_rate: float
    stuck_rate: float


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
        self.start = _instant(_micros(start))
        options = _Options(
            seed, _micros(start), n_initial, new_per_day, days, void_rate, stuck_rate
        )
        drafts = _draft_listings(options)
        self._markets: list[_Market] = _place_listings(options, drafts)
        self._by_id: dict[str, _Market] = {market.id: market for market in self._markets}

    # --- Gamma-client mirror --------------------------------------------------------------

    def top_markets(self, at: datetime, limit_total: int = 500) -> list[ParsedMarket]:
        """Open markets (created, not yet ended) by volume desc, ties by id; at most limit_total."""
        now = _micros(at)
        if limit_total <= 0:
            return []
        ranked = sorted(
            (
                (-market.volume_at(now), market.number, market)
                for market in self._markets
                if market.created_us <= now < market.end_us
            ),
            key=lambda row: (row[0], row[1]),
        )
        return [_parse(market, now) for _, _, market in ranked[:limit_total]]

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None:
        """The market as Gamma would show it at `at`; None if unknown or not yet created."""
        now = _micros(at)
        market = self._by_id.get(market_id)
        if market is None or now < market.created_us:
            return None
        return _parse(market, now)

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
        hour = (_micros(at) - market.created_us) // _HOUR_US
        return market.mills_at(hour, market.posterior)[index] / _MILLS

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
            created_at=_instant(market.created_us),
            end_date=_instant(market.end_us),
            resolved_at=_instant(market.resolved_us),
            voided=market.voided,
            stuck=market.stuck,
        )

    def _market(self, market_id: str) -> _Market:
        try:
            return self._by_id[market_id]
        except KeyError:
            raise KeyError(f"unknown simulated market {market_id!r}") from None


def _outcome_index(market: _Market, outcome: str) -> int:
    """Index of an outcome by name, case-insensitively (sides arrive as YES/NO)."""
    wanted = outcome.strip().casefold()
    for index, name in enumerate(market.outcomes):
        if name.casefold() == wanted:
            return index
    raise ValueError(f"market {market.id} has no outcome {outcome!r}")


# --------------------------------------------------------------------------------------------
# Building the world


def _listing_rng(seed: int, index: int, stream: str) -> random.Random:
    """The private Random of one listing: independent of every other listing and query."""
    return random.Random(f"forecaster-arena-sim:{seed}:{index}:{stream}")


def _draft_listings(options: _Options) -> list[_Draft]:
    """Initial listings until n_initial markets, then new ones spread over `days`."""
    drafts: list[_Draft] = []
    initial_markets = 0
    while initial_markets < options.n_initial:
        draft = _draft(options, len(drafts), None)
        drafts.append(draft)
        initial_markets += len(draft.text.questions)
    if options.new_per_day <= 0:
        return drafts
    horizon_us = options.start_us + round(options.days * _DAY_US)
    new_markets = 0
    while True:
        index = len(drafts)
        slot = _listing_rng(options.seed, index, "slot").random()
        created_us = options.start_us + round((new_markets + slot) / options.new_per_day * _DAY_US)
        if created_us >= horizon_us:
            return drafts
        draft = _draft(options, index, created_us)
        drafts.append(draft)
        new_markets += len(draft.text.questions)


def _draft(options: _Options, index: int, created_us: int | None) -> _Draft:
    """Draw one listing; `created_us` None means it is already trading at the world's start."""
    rng = _listing_rng(options.seed, index, "listing")
    kind = _pick_kind(rng)
    template = rng.choice(_TEMPLATES[kind])
    size = rng.randint(*template.sizes)
    lifetime_us = round(_log_uniform(rng, *template.days) * _DAY_US)
    age_us = round(rng.uniform(0.05, 45.0) * _DAY_US)
    midnight = rng.random() < 0.5
    if created_us is None:
        created_us = options.start_us - min(age_us, lifetime_us - _HOUR_US)
        lifetime_us = max(lifetime_us, options.start_us - created_us + _DAY_US)
    end_us = _end_us(midnight, created_us + lifetime_us)
    text = template.build(rng, _instant(end_us), size)
    hidden = _hidden_probabilities(rng, kind, len(text.alternatives))
    winner = _draw_index(rng, hidden)
    voided = kind != "group" and rng.random() < options.void_rate
    stuck = rng.random() < options.stuck_rate
    resolved_us, disputed_us = _resolution_times(rng, end_us, stuck)
    return _Draft(
        index=index,
        template=template,
        text=text,
        hidden=tuple(hidden),
        winner=winner,
        created_us=created_us,
        end_us=end_us,
        resolved_us=resolved_us,
        disputed_us=disputed_us,
        voided=voided,
        no_first=kind == "binary" and rng.random() < NO_FIRST_RATE,
        volumes=tuple(_volume_profile(rng) for _ in text.questions),
    )


def _resolution_times(rng: random.Random, end_us: int, stuck: bool) -> tuple[int, int | None]:
    """UMA resolution hours to days after close; stuck ones are disputed for weeks first."""
    if stuck:
        disputed_us = end_us + round(rng.uniform(12.0, 48.0) * _HOUR_US)
        return end_us + round(rng.uniform(8.0, 35.0) * _DAY_US), disputed_us
    return end_us + round(_log_uniform(rng, 2.0, 72.0) * _HOUR_US), None


def _volume_profile(rng: random.Random) -> tuple[float, float, float]:
    """Final volume (lognormal), growth shape, and liquidity while trading."""
    final = math.exp(rng.gauss(math.log(_VOLUME_MEDIAN), _VOLUME_SIGMA))
    return final, rng.uniform(0.5, 2.5), round(final * rng.uniform(0.01, 0.08), 2)


def _place_listings(options: _Options, drafts: list[_Draft]) -> list[_Market]:
    """Give listings ids in creation order (like Gamma's) and build their markets."""
    markets: list[_Market] = []
    ordered = sorted(drafts, key=lambda draft: (draft.created_us, draft.index))
    for event_number, draft in enumerate(ordered):
        path, posterior = _belief_path(
            _listing_rng(options.seed, draft.index, "path"), draft.hidden, draft.winner, draft.hours
        )
        event_id = str(FIRST_EVENT_ID + event_number)
        markets.extend(_listing_markets(draft, event_id, len(markets), path, posterior))
    return markets


def _outcome_view(
    draft: _Draft, member: int
) -> tuple[tuple[str, ...], tuple[float, ...], int, int | None]:
    """Outcomes, hidden probabilities, winner index and Yes column of one market of a listing.

    A named market shows every alternative; a binary market (standalone, or one member of a
    group) shows Yes/No (or No/Yes) priced from its alternative's column of the listing's path.
    """
    if draft.template.kind == "named":
        return draft.text.alternatives, draft.hidden, draft.winner, None
    yes_column = member if draft.template.kind == "group" else 0
    p_yes, yes_wins = draft.hidden[yes_column], draft.winner == yes_column
    if draft.no_first:
        return ("No", "Yes"), (1.0 - p_yes, p_yes), 1 if yes_wins else 0, yes_column
    return ("Yes", "No"), (p_yes, 1.0 - p_yes), 0 if yes_wins else 1, yes_column


def _listing_markets(
    draft: _Draft, event_id: str, first_number: int, path: np.ndarray, posterior: np.ndarray
) -> list[_Market]:
    """The market(s) of one listing: one for binary or named, one per member for a group."""
    text, kind = draft.text, draft.template.kind
    event_slug = f"{_slugify(text.event_title)}-{event_id}"
    markets: list[_Market] = []
    for member, question in enumerate(text.questions):
        number = FIRST_MARKET_ID + first_number + member
        market_id = str(number)
        outcomes, hidden, winner, yes_column = _outcome_view(draft, member)
        final, shape, liquidity = draft.volumes[member]
        static: dict[str, object] = {
            "id": market_id,
            "question": question,
            "market_type": classify_outcomes(list(outcomes)),
            "outcomes": list(outcomes),
            "slug": f"{_slugify(question)}-{market_id}",
            "description": text.description,
            "event_id": event_id,
            "event_slug": event_slug,
            "event_title": text.event_title,
            "group_item_title": text.alternatives[member] if kind == "group" else None,
            "category": draft.template.category,
            "end_date": _instant(draft.end_us),
            "neg_risk": kind == "group",
            "source": "simulated",
        }
        markets.append(
            _Market(
                id=market_id,
                number=number,
                static=static,
                outcomes=tuple(outcomes),
                hidden=tuple(hidden),
                winner=winner,
                path=path,
                posterior=posterior,
                yes_column=yes_column,
                no_first=draft.no_first,
                created_us=draft.created_us,
                end_us=draft.end_us,
                resolved_us=draft.resolved_us,
                disputed_us=draft.disputed_us,
                voided=draft.voided,
                stuck=draft.disputed_us is not None,
                volume_final=final,
                volume_shape=shape,
                liquidity=liquidity,
            )
        )
    return markets


# --------------------------------------------------------------------------------------------
# The market as seen at an instant


def _parse(market: _Market, now_us: int) -> ParsedMarket:
    """The ParsedMarket for `market` at `now_us` (which must be at or after its creation)."""
    if now_us < market.end_us:
        hour = (now_us - market.created_us) // _HOUR_US
        return ParsedMarket(
            **market.static,
            prices=[_PRICE_TABLE[m] for m in market.mills_at(hour)],
            volume=market.volume_at(now_us),
            liquidity=market.liquidity,
            updated_at=_instant(market.created_us + hour * _HOUR_US),
        )
    resolved = now_us >= market.resolved_us
    return ParsedMarket(
        **market.static,
        prices=_final_prices(market) if resolved else _leftover_prices(market),
        volume=market.volume_at(now_us),
        liquidity=0.0,
        closed=True,
        uma_resolution_status=_uma_status(market, now_us),
        closed_time=_instant(market.end_us),
        updated_at=_instant(market.resolved_us if resolved else market.end_us),
    )


def _leftover_prices(market: _Market) -> list[Decimal]:
    """Closed but unresolved: the last traded prices stay on the book."""
    return [_PRICE_TABLE[m] for m in market.mills_at(len(market.path) - 1)]


def _final_prices(market: _Market) -> list[Decimal]:
    """Resolved: exactly 1 for the winner and 0 elsewhere; void pays every outcome equally."""
    count = len(market.outcomes)
    if market.voided:
        share = _HALF if count == 2 else (_ONE / count).quantize(_MICRO)
        return [share] * count
    return [_ONE if index == market.winner else _ZERO for index in range(count)]


def _uma_status(market: _Market, now_us: int) -> str:
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
