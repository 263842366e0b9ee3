"""The simulated world: deterministic, calibrated, Gamma-shaped, and fast enough for the demo."""

import math
import statistics
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from arena.markets.resolution import resolution_verdict
from arena.markets.types import EndWindow, ParsedMarket
from arena.sim.world import SimulatedWorld

START = datetime(2026, 1, 4, tzinfo=UTC)
MILLI = Decimal("0.001")
INSTANTS = [START + timedelta(days=d, hours=h) for d, h in ((0, 0), (3, 5), (12, 1), (40, 9))]


@pytest.fixture(scope="module")
def world() -> SimulatedWorld:
    """A demo-sized world: initial markets plus new ones over three months."""
    return SimulatedWorld(7, START, n_initial=300, new_per_day=6, days=90)


@pytest.fixture(scope="module")
def big_world() -> SimulatedWorld:
    """Thousands of markets at once: enough for calibration and rare lifecycle accidents."""
    return SimulatedWorld(2024, START, n_initial=3000, new_per_day=0)


def _settled(world: SimulatedWorld, market_id: str) -> ParsedMarket:
    """The market a day after its UMA resolution."""
    at = world.schedule(market_id).resolved_at + timedelta(days=1)
    market = world.get_market(market_id, at)
    assert market is not None
    return market


def _snapshot(world: SimulatedWorld, at: datetime) -> list[ParsedMarket | None]:
    return [world.get_market(market_id, at) for market_id in world.market_ids()]


# --- determinism ------------------------------------------------------------------------------


def test_same_seed_builds_an_identical_world() -> None:
    first = SimulatedWorld(3, START, n_initial=80, new_per_day=4, days=30)
    second = SimulatedWorld(3, START, n_initial=80, new_per_day=4, days=30)
    assert first.market_ids() == second.market_ids()
    for at in INSTANTS:
        assert _snapshot(first, at) == _snapshot(second, at)
        assert first.top_markets(at) == second.top_markets(at)
    for market_id in first.market_ids():
        assert first.schedule(market_id) == second.schedule(market_id)
        assert first.true_outcome(market_id) == second.true_outcome(market_id)
        outcomes = first.get_market(market_id, first.schedule(market_id).end_date)
        assert outcomes is not None
        for outcome in outcomes.outcomes:
            assert first.hidden_probability(market_id, outcome) == second.hidden_probability(
                market_id, outcome
            )


def test_different_seed_builds_a_different_world() -> None:
    first = SimulatedWorld(3, START, n_initial=80, new_per_day=4, days=30)
    other = SimulatedWorld(4, START, n_initial=80, new_per_day=4, days=30)
    questions = [m.question for m in first.top_markets(START)]
    assert questions != [m.question for m in other.top_markets(START)]
    assert _snapshot(first, INSTANTS[2]) != _snapshot(other, INSTANTS[2])


def test_answers_do_not_depend_on_query_order() -> None:
    forwards = SimulatedWorld(5, START, n_initial=60, new_per_day=3, days=20)
    backwards = SimulatedWorld(5, START, n_initial=60, new_per_day=3, days=20)
    early, late = INSTANTS[1], INSTANTS[3]
    forward_answers = (_snapshot(forwards, early), _snapshot(forwards, late))
    late_first = _snapshot(backwards, late)
    early_second = _snapshot(backwards, early)
    assert forward_answers == (early_second, late_first)
    assert _snapshot(forwards, early) == forward_answers[0]  # asking again changes nothing


# --- shape of every market --------------------------------------------------------------------


def test_markets_look_like_parsed_gamma_markets(world: SimulatedWorld) -> None:
    at = INSTANTS[2]
    markets = world.top_markets(at, limit_total=10_000)
    assert len(markets) > 100
    for market in markets:
        assert market.id.isdigit() and int(market.id) >= 900_001
        assert market.source == "simulated"
        assert market.active and not market.closed and market.uma_resolution_status is None
        assert market.event_id and market.event_slug and market.event_title
        assert market.question and market.slug and market.description and market.category
        assert market.end_date is not None and market.end_date.tzinfo is not None
        assert market.end_date > at
        assert market.prices is not None and len(market.prices) == len(market.outcomes)
        for price in market.prices:
            assert isinstance(price, Decimal)
            assert MILLI <= price <= 1 - MILLI and price == price.quantize(MILLI)
    types = {m.market_type for m in markets}
    assert types == {"binary", "named"}
    assert len({m.category for m in markets}) >= 5


def test_named_markets_have_three_to_six_outcomes_priced_to_one(world: SimulatedWorld) -> None:
    named = [m for m in world.top_markets(INSTANTS[1], 10_000) if m.market_type == "named"]
    assert len(named) >= 10
    for market in named:
        assert 3 <= len(market.outcomes) <= 6
        assert len(set(market.outcomes)) == len(market.outcomes)
        assert market.prices is not None
        assert abs(sum(market.prices, Decimal(0)) - 1) <= Decimal("0.01")
        hidden = [world.hidden_probability(market.id, o) for o in market.outcomes]
        assert math.isclose(sum(hidden), 1.0)


def test_binary_markets_sometimes_list_no_first(big_world: SimulatedWorld) -> None:
    no_first = [
        market_id
        for market_id in big_world.market_ids()
        if (m := big_world.get_market(market_id, START)) and m.outcomes == ["No", "Yes"]
    ]
    assert len(no_first) >= 20
    for market_id in no_first[:20]:
        market = _settled(big_world, market_id)
        assert market.market_type == "binary"
        if big_world.is_voided(market_id):
            continue
        yes_price = market.prices[1] if market.prices else None
        assert (yes_price == 1) == (big_world.true_outcome(market_id) == "Yes")
        assert math.isclose(
            big_world.hidden_probability(market_id, "YES")
            + big_world.hidden_probability(market_id, "no"),
            1.0,
        )


def test_neg_risk_groups_share_an_event_and_have_one_winner(world: SimulatedWorld) -> None:
    groups: dict[str, list[ParsedMarket]] = defaultdict(list)
    for market_id in world.market_ids():
        market = _settled(world, market_id)
        if market.neg_risk:
            assert market.event_id is not None
            groups[market.event_id].append(market)
    assert len(groups) >= 10
    for members in groups.values():
        assert len(members) >= 3
        assert len({(m.event_slug, m.event_title, m.end_date) for m in members}) == 1
        titles = [m.group_item_title for m in members]
        assert None not in titles and len(set(titles)) == len(titles)
        assert all(m.market_type == "binary" and m.outcomes == ["Yes", "No"] for m in members)
        winners = [m for m in members if world.true_outcome(m.id) == "Yes"]
        assert len(winners) == 1
        assert [m.id for m in members if m.prices == [1, 0]] == [winners[0].id]
        hidden = sum(world.hidden_probability(m.id, "Yes") for m in members)
        assert math.isclose(hidden, 1.0)


def test_neg_risk_yes_prices_sum_to_about_one_while_trading(world: SimulatedWorld) -> None:
    groups: dict[str, list[Decimal]] = defaultdict(list)
    for market in world.top_markets(INSTANTS[1], 10_000):
        if market.neg_risk and market.prices:
            groups[market.event_id or ""].append(market.prices[0])
    complete = [yes for yes in groups.values() if len(yes) >= 3]
    assert complete
    for yes_prices in complete:
        assert abs(sum(yes_prices, Decimal(0)) - 1) <= Decimal("0.01")


# --- hidden truth -----------------------------------------------------------------------------


def test_resolutions_follow_the_hidden_probabilities(big_world: SimulatedWorld) -> None:
    """Decile bins of hidden P(Yes) resolve Yes at their mean probability (4-sigma)."""
    bins: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for market_id in big_world.market_ids():
        market = _settled(big_world, market_id)
        if market.market_type != "binary":
            continue
        p_yes = big_world.hidden_probability(market_id, "Yes")
        bins[min(9, int(p_yes * 10))].append((p_yes, big_world.true_outcome(market_id) == "Yes"))
    pairs = [pair for rows in bins.values() for pair in rows]
    assert len(pairs) >= 2000
    checked = 0
    for rows in bins.values():
        if len(rows) < 50:
            continue
        expected = statistics.fmean(p for p, _ in rows)
        observed = statistics.fmean(y for _, y in rows)
        sigma = math.sqrt(expected * (1 - expected) / len(rows))
        assert abs(observed - expected) <= 4 * sigma + 1e-9
        checked += 1
    assert checked >= 8
    brier = statistics.fmean((p - y) ** 2 for p, y in pairs)
    assert brier < 0.2


def test_resolved_prices_name_the_true_outcome(big_world: SimulatedWorld) -> None:
    for market_id in big_world.market_ids()[:800]:
        verdict = resolution_verdict(_settled(big_world, market_id))
        if big_world.is_voided(market_id):
            assert verdict.state == "cancelled"
        else:
            assert verdict.state == "resolved"
            assert verdict.winner == big_world.true_outcome(market_id)


def test_prices_drift_toward_the_true_outcome(big_world: SimulatedWorld) -> None:
    at_start: list[float] = []
    near_end: list[float] = []
    for market_id in big_world.market_ids()[:400]:
        schedule = big_world.schedule(market_id)
        first = big_world.get_market(market_id, schedule.created_at)
        last = big_world.get_market(market_id, schedule.end_date - timedelta(hours=1))
        assert first is not None and first.prices and last is not None and last.prices
        winner = first.outcomes.index(big_world.true_outcome(market_id))
        at_start.append(float(first.prices[winner]))
        near_end.append(float(last.prices[winner]))
    assert statistics.fmean(near_end) > 0.95
    assert statistics.fmean(near_end) - statistics.fmean(at_start) > 0.2


def test_the_oracle_beats_the_crowd_at_listing_but_not_at_the_end(
    big_world: SimulatedWorld,
) -> None:
    """Listing prices are the truth plus crowd bias; by the end the crowd knows more."""
    hidden, listed, late, outcomes = [], [], [], []
    for market_id in big_world.market_ids()[:1500]:
        schedule = big_world.schedule(market_id)
        first = big_world.get_market(market_id, schedule.created_at)
        last = big_world.get_market(market_id, schedule.end_date - timedelta(hours=1))
        assert first is not None and first.prices and last is not None and last.prices
        if first.market_type != "binary":
            continue
        yes = first.outcomes.index("Yes")
        hidden.append(big_world.hidden_probability(market_id, "Yes"))
        listed.append(float(first.prices[yes]))
        late.append(float(last.prices[yes]))
        outcomes.append(big_world.true_outcome(market_id) == "Yes")

    def brier(forecasts: list[float]) -> float:
        return statistics.fmean((f - y) ** 2 for f, y in zip(forecasts, outcomes, strict=True))

    assert brier(late) < brier(hidden) < brier(listed)
    gaps = [abs(h - p) for h, p in zip(hidden, listed, strict=True)]
    assert 0.02 < statistics.fmean(gaps) < 0.2


def test_hidden_truth_rejects_unknown_markets_and_outcomes(world: SimulatedWorld) -> None:
    market_id = world.market_ids()[0]
    with pytest.raises(KeyError):
        world.hidden_probability("123", "Yes")
    with pytest.raises(KeyError):
        world.true_outcome("123")
    with pytest.raises(ValueError):
        world.hidden_probability(market_id, "Maybe")


# --- lifecycle --------------------------------------------------------------------------------


def test_an_ordinary_market_opens_closes_then_resolves(world: SimulatedWorld) -> None:
    market_id = next(
        m
        for m in world.market_ids()
        if not world.is_voided(m)
        and not world.schedule(m).stuck
        and world.schedule(m).created_at > START
    )
    schedule = world.schedule(market_id)
    tick = timedelta(microseconds=1)
    assert world.get_market(market_id, schedule.created_at - tick) is None

    opened = world.get_market(market_id, schedule.created_at)
    assert opened is not None and not opened.closed and opened.uma_resolution_status is None
    last_trade = world.get_market(market_id, schedule.end_date - tick)
    assert last_trade is not None and not last_trade.closed

    closed = world.get_market(market_id, schedule.end_date)
    assert closed is not None and closed.closed and closed.active
    assert closed.uma_resolution_status == "proposed"
    assert closed.closed_time == schedule.end_date
    assert closed.prices == last_trade.prices  # leftover trading prices, not a resolution
    assert closed.prices is not None and all(0 < p < 1 for p in closed.prices)
    assert resolution_verdict(closed).state == "unresolved"
    assert market_id not in {m.id for m in world.top_markets(schedule.end_date, 10_000)}

    pending = world.get_market(market_id, schedule.resolved_at - tick)
    assert pending is not None and pending.uma_resolution_status == "proposed"
    resolved = world.get_market(market_id, schedule.resolved_at)
    assert resolved is not None and resolved.closed
    assert resolved.uma_resolution_status == "resolved"
    winner = world.true_outcome(market_id)
    assert resolved.prices == [
        Decimal("1") if o == winner else Decimal("0") for o in resolved.outcomes
    ]
    assert timedelta(hours=1) <= schedule.resolved_at - schedule.end_date <= timedelta(days=4)


def test_voided_markets_resolve_with_equal_prices(big_world: SimulatedWorld) -> None:
    voided = [m for m in big_world.market_ids() if big_world.is_voided(m)]
    assert 10 <= len(voided) <= 0.05 * len(big_world.market_ids())
    kinds = set()
    for market_id in voided:
        market = _settled(big_world, market_id)
        assert market.uma_resolution_status == "resolved" and market.prices
        kinds.add(market.market_type)
        if market.market_type == "binary":
            assert market.prices == [Decimal("0.5"), Decimal("0.5")]
        else:
            assert len(set(market.prices)) == 1
            assert abs(sum(market.prices, Decimal(0)) - 1) < Decimal("0.0001")
        assert resolution_verdict(market).state == "cancelled"
    assert kinds == {"binary", "named"}


def test_some_markets_stay_closed_but_unresolved_for_weeks(big_world: SimulatedWorld) -> None:
    stuck = [m for m in big_world.market_ids() if big_world.schedule(m).stuck]
    assert 20 <= len(stuck) <= 0.06 * len(big_world.market_ids())
    for market_id in stuck:
        schedule = big_world.schedule(market_id)
        assert schedule.resolved_at - schedule.end_date > timedelta(days=7)
        week_later = big_world.get_market(market_id, schedule.end_date + timedelta(days=7))
        assert week_later is not None and week_later.closed
        assert week_later.uma_resolution_status in {"proposed", "disputed"}
        assert resolution_verdict(week_later).state == "unresolved"
        assert _settled(big_world, market_id).uma_resolution_status == "resolved"


def test_end_dates_span_days_to_months(world: SimulatedWorld) -> None:
    lifetimes = [
        world.schedule(m).end_date - world.schedule(m).created_at for m in world.market_ids()
    ]
    assert min(lifetimes) < timedelta(days=5)
    assert max(lifetimes) > timedelta(days=60)
    assert all(world.schedule(m).end_date.minute == 0 for m in world.market_ids())


# --- top_markets ------------------------------------------------------------------------------


def test_top_markets_are_open_markets_by_volume(world: SimulatedWorld) -> None:
    at = INSTANTS[2]
    everything = world.top_markets(at, limit_total=10_000)
    open_ids = {
        m
        for m in world.market_ids()
        if world.schedule(m).created_at <= at < world.schedule(m).end_date
    }
    assert {m.id for m in everything} == open_ids
    keys = [(-(m.volume or 0.0), int(m.id)) for m in everything]
    assert keys == sorted(keys)
    top = world.top_markets(at, limit_total=50)
    assert top == everything[:50]
    assert world.top_markets(at, limit_total=0) == []


def test_new_markets_appear_and_volume_grows(world: SimulatedWorld) -> None:
    early, later = START, START + timedelta(days=30)
    early_ids = {m.id for m in world.top_markets(early, 10_000)}
    later_top = world.top_markets(later, 10_000)
    newcomers = [m for m in later_top if m.id not in early_ids]
    assert len(newcomers) > 100
    assert all(world.get_market(m.id, early) is None for m in newcomers)
    assert [m.id for m in world.top_markets(early, 20)] != [m.id for m in later_top[:20]]
    market_id = newcomers[0].id
    schedule = world.schedule(market_id)
    volumes = [
        world.get_market(
            market_id, schedule.created_at + (schedule.end_date - schedule.created_at) * f
        )
        for f in (0.1, 0.5, 0.9)
    ]
    assert [v.volume for v in volumes if v] == sorted(
        v.volume for v in volumes if v and v.volume is not None
    )
    assert volumes[0] and volumes[2] and (volumes[0].volume or 0) < (volumes[2].volume or 0)


def test_unknown_and_future_markets_are_invisible(world: SimulatedWorld) -> None:
    assert world.get_market("42", START) is None
    future = max(world.market_ids(), key=int)
    assert world.get_market(future, START) is None


def test_naive_instants_are_rejected(world: SimulatedWorld) -> None:
    with pytest.raises(ValueError):
        world.top_markets(datetime(2026, 1, 5))


def test_an_empty_world_is_allowed() -> None:
    empty = SimulatedWorld(1, START, n_initial=0, new_per_day=0)
    assert empty.market_ids() == [] and empty.top_markets(START) == []


def test_the_posterior_forecasts_better_than_the_market_price(big_world: SimulatedWorld) -> None:
    """The oracle's `at`-aware probability is the market's belief without bias and noise."""
    posterior_brier = price_brier = 0.0
    n = 0
    for market_id in big_world.market_ids():
        schedule = big_world.schedule(market_id)
        if schedule.voided:
            continue
        at = schedule.created_at + (schedule.end_date - schedule.created_at) * 0.7
        market = big_world.get_market(market_id, at)
        if market is None or market.market_type != "binary" or market.prices is None:
            continue
        won = big_world.true_outcome(market_id) == "Yes"
        yes_price = float(market.prices[market.outcomes.index("Yes")])
        posterior = big_world.hidden_probability(market_id, "Yes", at)
        assert 0.0 < posterior < 1.0
        posterior_brier += (posterior - won) ** 2
        price_brier += (yes_price - won) ** 2
        n += 1
    assert n > 500
    assert posterior_brier / n < price_brier / n


def test_an_end_window_gives_the_top_among_the_markets_ending_within_it(
    world: SimulatedWorld,
) -> None:
    """The world honours the sync's end-date window as Gamma does (extension `horizon`): the
    top by volume among the open markets ending within it, both ends included."""
    at = START + timedelta(days=12, hours=1)
    window = EndWindow(at, at + timedelta(days=14, hours=1))
    every = world.top_markets(at, 10_000)
    inside = [m.id for m in every if window.holds(m.end_date)]
    assert 0 < len(inside) < len(every)
    assert [m.id for m in world.top_markets(at, 10_000, window)] == inside
    assert [m.id for m in world.top_markets(at, 5, window)] == inside[:5]
    edge = every[0].end_date
    assert edge is not None
    exact = EndWindow(edge, edge)
    assert every[0].id in [m.id for m in world.top_markets(at, 10_000, exact)]
