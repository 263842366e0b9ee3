"""Listings of the simulated world: what each one is drawn as, and the markets it lists.

Why: a listing (a standalone binary, a named-outcome market or a negRisk group) draws
everything from its own `random.Random(f"...:{seed}:{i}")`, so the world is a pure function of
(seed, start, options). This module drafts the listings, gives them Gamma-like ids in creation
order and builds their markets (fixed fields, hidden truth, timetable, price path).
"""

import math
import random
import re
from dataclasses import dataclass

import numpy as np

from arena.markets.types import classify_outcomes
from arena.sim.clock import DAY_US, HOUR_US, ceil_to, instant
from arena.sim.paths import MILLS, belief_path, draw_index, hidden_probabilities
from arena.sim.questions import ListingKind, Template, Text, templates

__all__ = ["Draft", "Market", "Options", "draft_listings", "place_listings"]

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

# Volumes: lognormal final volume, reached along u**shape over the market's life.
_VOLUME_MEDIAN = 120_000.0
_VOLUME_SIGMA = 1.4
_NON_SLUG = re.compile(r"[^a-z0-9]+")


def _log_uniform(rng: random.Random, low: float, high: float) -> float:
    """Durations spread evenly over orders of magnitude (days to months)."""
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def _slugify(text: str) -> str:
    """Gamma-style slug: lower-case ASCII words joined by hyphens."""
    return _NON_SLUG.sub("-", text.lower()).strip("-")[:90].rstrip("-")


@dataclass(frozen=True, slots=True)
class Draft:
    """A listing before it is placed on the id line: content drawn from its own Random."""

    index: int
    template: Template
    text: Text
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
        return -(-(self.end_us - self.created_us) // HOUR_US)


@dataclass(frozen=True, slots=True, eq=False)
class Market:
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
        return [MILLS - yes, yes] if self.no_first else [yes, MILLS - yes]

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
    return ceil_to(raw_end_us, DAY_US if at_midnight else HOUR_US)


@dataclass(frozen=True, slots=True)
class Options:
    """The constructor's arguments, normalised: everything the world is a function of."""

    seed: int
    start_us: int
    n_initial: int
    new_per_day: float
    days: float
    void_rate: float
    stuck_rate: float


def _listing_rng(seed: int, index: int, stream: str) -> random.Random:
    """The private Random of one listing: independent of every other listing and query."""
    return random.Random(f"forecaster-arena-sim:{seed}:{index}:{stream}")


def draft_listings(options: Options) -> list[Draft]:
    """Initial listings until n_initial markets, then new ones spread over `days`."""
    drafts: list[Draft] = []
    initial_markets = 0
    while initial_markets < options.n_initial:
        draft = _draft(options, len(drafts), None)
        drafts.append(draft)
        initial_markets += len(draft.text.questions)
    if options.new_per_day <= 0:
        return drafts
    horizon_us = options.start_us + round(options.days * DAY_US)
    new_markets = 0
    while True:
        index = len(drafts)
        slot = _listing_rng(options.seed, index, "slot").random()
        created_us = options.start_us + round((new_markets + slot) / options.new_per_day * DAY_US)
        if created_us >= horizon_us:
            return drafts
        draft = _draft(options, index, created_us)
        drafts.append(draft)
        new_markets += len(draft.text.questions)


def _draft(options: Options, index: int, created_us: int | None) -> Draft:
    """Draw one listing; `created_us` None means it is already trading at the world's start."""
    rng = _listing_rng(options.seed, index, "listing")
    kind = _pick_kind(rng)
    template = rng.choice(templates()[kind])
    size = rng.randint(*template.sizes)
    lifetime_us = round(_log_uniform(rng, *template.days) * DAY_US)
    age_us = round(rng.uniform(0.05, 45.0) * DAY_US)
    midnight = rng.random() < 0.5
    if created_us is None:
        created_us = options.start_us - min(age_us, lifetime_us - HOUR_US)
        lifetime_us = max(lifetime_us, options.start_us - created_us + DAY_US)
    end_us = _end_us(midnight, created_us + lifetime_us)
    text = template.build(rng, instant(end_us), size)
    hidden = hidden_probabilities(rng, kind, len(text.alternatives))
    winner = draw_index(rng, hidden)
    voided = kind != "group" and rng.random() < options.void_rate
    stuck = rng.random() < options.stuck_rate
    resolved_us, disputed_us = _resolution_times(rng, end_us, stuck)
    return Draft(
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
        disputed_us = end_us + round(rng.uniform(12.0, 48.0) * HOUR_US)
        return end_us + round(rng.uniform(8.0, 35.0) * DAY_US), disputed_us
    return end_us + round(_log_uniform(rng, 2.0, 72.0) * HOUR_US), None


def _volume_profile(rng: random.Random) -> tuple[float, float, float]:
    """Final volume (lognormal), growth shape, and liquidity while trading."""
    final = math.exp(rng.gauss(math.log(_VOLUME_MEDIAN), _VOLUME_SIGMA))
    return final, rng.uniform(0.5, 2.5), round(final * rng.uniform(0.01, 0.08), 2)


def place_listings(options: Options, drafts: list[Draft]) -> list[Market]:
    """Give listings ids in creation order (like Gamma's) and build their markets."""
    markets: list[Market] = []
    ordered = sorted(drafts, key=lambda draft: (draft.created_us, draft.index))
    for event_number, draft in enumerate(ordered):
        path, posterior = belief_path(
            _listing_rng(options.seed, draft.index, "path"), draft.hidden, draft.winner, draft.hours
        )
        event_id = str(FIRST_EVENT_ID + event_number)
        markets.extend(_listing_markets(draft, event_id, len(markets), path, posterior))
    return markets


def _outcome_view(
    draft: Draft, member: int
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
    draft: Draft, event_id: str, first_number: int, path: np.ndarray, posterior: np.ndarray
) -> list[Market]:
    """The market(s) of one listing: one for binary or named, one per member for a group."""
    text, kind = draft.text, draft.template.kind
    event_slug = f"{_slugify(text.event_title)}-{event_id}"
    markets: list[Market] = []
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
            "end_date": instant(draft.end_us),
            "neg_risk": kind == "group",
            "source": "simulated",
        }
        markets.append(
            Market(
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
