"""Order books of the simulated world: shape, spread, depth, mirror, faults and determinism."""

import statistics
from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arena.sim import books
from arena.sim.books import (
    SimBook,
    TokenQuote,
    WorldBooks,
    book_for,
    clob_token_id,
    clob_token_ids,
    condition_id,
    decimal_text,
    draw_book,
    fault_for,
)
from arena.sim.world import SimulatedWorld
from tests.examples import examples

SEED = 11
START = datetime(2026, 1, 4, tzinfo=UTC)
AT = START + timedelta(days=2, hours=7, minutes=13)
ONE = Decimal(1)


def quote(anchor: str, centre: float, liquidity: float, *, mirrored: bool = False) -> TokenQuote:
    return TokenQuote("900001", condition_id(SEED, "900001"), anchor, mirrored, centre, liquidity,
                      False)  # fmt: skip


def healthy(n: int, centre: float, liquidity: float, at: datetime = AT) -> list[SimBook]:
    """Up to n unfaulted books around `centre` (distinct anchors, same inputs otherwise)."""
    found = []
    for i in range(n):
        book = draw_book(SEED, quote(f"tok{i}", centre, liquidity), f"tok{i}", at)
        if book is not None and book.fault is None:
            found.append(book)
    return found


def relative_spread(book: SimBook, centre: float) -> float:
    assert book.best_ask is not None and book.best_bid is not None
    return float(book.best_ask - book.best_bid) / min(centre, 1 - centre)


def notional(levels: tuple[books.Level, ...]) -> float:
    return sum(float(level.price * level.size) for level in levels)


@pytest.fixture(scope="module")
def world() -> SimulatedWorld:
    return SimulatedWorld(SEED, START, n_initial=200, new_per_day=4, days=30)


@pytest.fixture(scope="module")
def world_books(world: SimulatedWorld) -> WorldBooks:
    return WorldBooks(world)


# --- token ids ---------------------------------------------------------------------------


def test_token_ids_look_real_and_are_fixed_by_seed_market_and_outcome() -> None:
    token = clob_token_id(SEED, "900001", "Yes")
    assert token.isdigit() and 70 <= len(token) <= 78
    assert token == clob_token_id(SEED, "900001", "Yes")
    others = {
        clob_token_id(SEED, "900001", "No"),
        clob_token_id(SEED + 1, "900001", "Yes"),
        clob_token_id(SEED, "900002", "Yes"),
    }
    assert token not in others and len(others) == 3
    lengths = {len(clob_token_id(s, "m", "o")) for s in range(300)}
    assert lengths <= set(range(70, 79)) and max(lengths) >= 77
    market = condition_id(SEED, "900001")
    assert market.startswith("0x") and len(market) == 66 and int(market, 16) >= 0


def test_world_markets_carry_one_token_per_outcome_at_every_instant(world: SimulatedWorld) -> None:
    for market in world.top_markets(AT, 100):
        assert market.clob_token_ids == clob_token_ids(SEED, market.id, market.outcomes)
        later = world.get_market(market.id, AT + timedelta(days=60))  # closed or resolved by then
        assert later is not None and later.clob_token_ids == market.clob_token_ids


# --- spread and depth ----------------------------------------------------------------------


def test_spread_widens_toward_zero_and_one() -> None:
    """Relative to the cheaper side's price (what a long-shot buyer pays above display)."""
    by_centre = {
        centre: statistics.mean(relative_spread(b, centre) for b in healthy(150, centre, 5_000))
        for centre in (0.5, 0.2, 0.05, 0.02)
    }
    assert by_centre[0.5] < by_centre[0.2] < by_centre[0.05] <= by_centre[0.02]
    mirrored = statistics.mean(relative_spread(b, 0.98) for b in healthy(150, 0.98, 5_000))
    assert mirrored == pytest.approx(by_centre[0.02], rel=0.25)
    # in absolute terms too, until the cap (a share of the cheaper side's price) binds
    halves = [books.half_spread(p, 5_000) for p in (0.5, 0.3, 0.2, 0.1)]
    assert halves == sorted(halves) and halves[0] < halves[-1]
    assert books.half_spread(0.7, 5_000) == pytest.approx(books.half_spread(0.3, 5_000))


def test_spread_widens_in_thin_markets() -> None:
    for centre in (0.5, 0.1, 0.03):
        thick = statistics.mean(relative_spread(b, centre) for b in healthy(150, centre, 80_000))
        thin = statistics.mean(relative_spread(b, centre) for b in healthy(150, centre, 150))
        assert thin > 1.5 * thick, centre


def test_depth_follows_liquidity() -> None:
    for side in ("bids", "asks"):
        deep = statistics.mean(notional(getattr(b, side)) for b in healthy(100, 0.4, 100_000))
        shallow = statistics.mean(notional(getattr(b, side)) for b in healthy(100, 0.4, 5_000))
        assert deep > 10 * shallow
        # each side holds about DEPTH_SHARE of the liquidity
        assert 0.6 * books.DEPTH_SHARE < deep / 100_000 < 1.4 * books.DEPTH_SHARE
    many = statistics.mean(len(b.bids) for b in healthy(100, 0.4, 100_000))
    few = statistics.mean(len(b.bids) for b in healthy(100, 0.4, 100))
    assert many > few + 3


def test_tick_is_fine_near_the_edges() -> None:
    assert {b.tick for b in healthy(20, 0.5, 5_000)} == {Decimal("0.01")}
    assert {b.tick for b in healthy(20, 0.03, 5_000)} == {Decimal("0.001")}
    assert {b.tick for b in healthy(20, 0.97, 5_000)} == {Decimal("0.001")}


# --- the whole book ------------------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(
    centre=st.floats(min_value=0.001, max_value=0.999),
    liquidity=st.floats(min_value=0.0, max_value=2_000_000.0),
    anchor=st.text(alphabet="0123456789", min_size=1, max_size=12),
    hours=st.integers(min_value=0, max_value=24 * 400),
)
def test_every_unfaulted_book_is_sane(
    centre: float, liquidity: float, anchor: str, hours: int
) -> None:
    at = START + timedelta(hours=hours)
    book = draw_book(SEED, quote(anchor, centre, liquidity), anchor, at)
    assume(book is not None and book.fault is None)
    assert book is not None
    assert book.bids and book.asks
    assert book.best_bid is not None and book.best_ask is not None
    assert book.best_bid < book.best_ask
    bids = [level.price for level in book.bids]
    asks = [level.price for level in book.asks]
    assert bids == sorted(bids, reverse=True) and len(set(bids)) == len(bids)
    assert asks == sorted(asks) and len(set(asks)) == len(asks)
    for level in (*book.bids, *book.asks):
        assert 0 < level.price < 1
        assert level.price % book.tick == 0
        assert level.size >= books.MIN_ORDER_SIZE and level.size == level.size.quantize(
            Decimal("0.01")
        )
    mid = book.midpoint()
    assert mid is not None and book.best_bid < mid < book.best_ask
    assert 0 < book.last_trade < 1 and book.last_trade % book.tick == 0


def test_no_book_is_the_mirror_of_yes(world: SimulatedWorld, world_books: WorldBooks) -> None:
    binaries = [m for m in world.top_markets(AT, 200) if m.market_type == "binary"]
    assert len(binaries) > 20
    for market in binaries:
        assert market.clob_token_ids is not None
        yes_i = [o.casefold() for o in market.outcomes].index("yes")
        yes = book_for(world_books, market.clob_token_ids[yes_i], AT)
        no = book_for(world_books, market.clob_token_ids[1 - yes_i], AT)
        assert (yes is None) == (no is None)
        if yes is None or no is None:
            continue
        assert no.token == market.clob_token_ids[1 - yes_i] and no.market == yes.market
        assert [(ONE - lv.price, lv.size) for lv in yes.asks] == [
            (lv.price, lv.size) for lv in no.bids
        ]
        assert [(ONE - lv.price, lv.size) for lv in yes.bids] == [
            (lv.price, lv.size) for lv in no.asks
        ]
        assert no.fault == yes.fault and no.tick == yes.tick
        assert no.last_trade == ONE - yes.last_trade
        if yes.fault is None:
            assert no.midpoint() == ONE - yes.midpoint()  # type: ignore[operator]


def test_named_outcomes_get_their_own_books(world: SimulatedWorld, world_books: WorldBooks) -> None:
    named = next(m for m in world.top_markets(AT, 500) if m.market_type == "named")
    assert named.clob_token_ids is not None
    drawn = [book_for(world_books, token, AT) for token in named.clob_token_ids]
    present = [book for book in drawn if book is not None and book.fault is None]
    assert len(present) >= 2
    assert len({book.token for book in present}) == len(present)
    assert len({book.market for book in present}) == 1


def test_books_sit_around_the_quoted_price(world: SimulatedWorld, world_books: WorldBooks) -> None:
    """The default centre is the display price: the midpoint stays within the spread of it."""
    gaps = []
    for market in world.top_markets(AT, 200):
        assert market.clob_token_ids is not None and market.prices is not None
        for token, price in zip(market.clob_token_ids, market.prices, strict=True):
            book = book_for(world_books, token, AT)
            if book is None or book.fault is not None:
                continue
            assert book.best_bid is not None and book.best_ask is not None
            assert book.best_bid - book.tick <= price <= book.best_ask + book.tick
            gaps.append(abs(float(book.midpoint() or 0) - float(price)))
    assert statistics.median(gaps) < 0.01


def test_hidden_centre_follows_the_posterior(world: SimulatedWorld) -> None:
    hidden = WorldBooks(world, centre="hidden")
    market = next(m for m in world.top_markets(AT, 100) if m.market_type == "binary")
    assert market.clob_token_ids is not None
    yes_i = [o.casefold() for o in market.outcomes].index("yes")
    found = hidden.quote(market.clob_token_ids[yes_i], AT)
    assert found is not None
    assert found.centre == world.hidden_probability(market.id, "Yes", AT)


def test_no_book_for_unknown_unlisted_or_closed_markets(
    world: SimulatedWorld, world_books: WorldBooks
) -> None:
    assert book_for(world_books, "123", AT) is None
    late = next(mid for mid in world.market_ids() if world.schedule(mid).created_at > AT)
    market = world.get_market(late, world.schedule(late).created_at)
    assert market is not None and market.clob_token_ids is not None
    first = market.clob_token_ids[0]
    assert book_for(world_books, first, AT) is None  # not listed yet
    assert world_books.quote(first, world.schedule(late).created_at) is not None
    ended = world.schedule(late).end_date + timedelta(hours=1)
    assert book_for(world_books, first, ended) is None  # closed: the CLOB's 404


# --- determinism and faults ----------------------------------------------------------------


def test_books_are_a_function_of_seed_token_and_hour() -> None:
    q = quote("777", 0.37, 12_000)
    first = draw_book(SEED, q, "777", AT)
    same_hour = draw_book(SEED, q, "777", AT.replace(minute=59))
    assert first is not None and same_hour is not None
    assert (first.bids, first.asks) == (same_hour.bids, same_hour.asks)
    later = [draw_book(SEED, q, "777", AT + timedelta(hours=h)) for h in range(1, 6)]
    other_seed = draw_book(SEED + 1, q, "777", AT)
    assert any(b is not None and (b.bids, b.asks) != (first.bids, first.asks) for b in later)
    assert other_seed is None or (other_seed.bids, other_seed.asks) != (first.bids, first.asks)


def test_fault_rates_are_low_and_named() -> None:
    n = 40_000
    counts: Counter[str | None] = Counter(fault_for(SEED, str(i), AT) for i in range(n))
    rates = {
        "missing": books.MISSING_RATE,
        "empty": books.EMPTY_RATE,
        "one_sided": books.ONE_SIDED_RATE,
        "crossed": books.CROSSED_RATE,
    }
    assert all(0 < rate <= 0.01 for rate in rates.values())
    for fault, rate in rates.items():
        expected = n * rate
        assert abs(counts[fault] - expected) < 5 * (expected**0.5), (fault, counts[fault])
    assert counts[None] > 0.95 * n


def test_a_fault_holds_all_day_and_changes_between_days() -> None:
    morning, evening = AT.replace(hour=0, minute=1), AT.replace(hour=23, minute=58)
    tokens = [str(i) for i in range(3_000)]
    assert [fault_for(SEED, t, morning) for t in tokens] == [
        fault_for(SEED, t, evening) for t in tokens
    ]
    faulted = {t for t in tokens if fault_for(SEED, t, morning)}
    next_day = {t for t in tokens if fault_for(SEED, t, morning + timedelta(days=1))}
    assert faulted and faulted != next_day


def faulted_book(kind: str, centre: float = 0.42) -> SimBook | None:
    anchor = next(str(i) for i in range(100_000) if fault_for(SEED, str(i), AT) == kind)
    return draw_book(SEED, quote(anchor, centre, 20_000), anchor, AT)


def test_faulted_books_are_broken_as_named() -> None:
    assert faulted_book("missing") is None
    empty = faulted_book("empty")
    assert empty is not None and not empty.bids and not empty.asks
    assert empty.midpoint() is None and empty.spread() is None and empty.price("BUY") is None
    one = faulted_book("one_sided")
    assert one is not None and bool(one.bids) != bool(one.asks)
    best = one.best_bid or one.best_ask
    assert best is not None and one.midpoint() == best / 2  # the missing side counts as 0
    crossed = faulted_book("crossed")
    assert crossed is not None and crossed.best_bid is not None and crossed.best_ask is not None
    assert crossed.best_bid > crossed.best_ask
    assert crossed.spread() is not None and crossed.spread() < 0  # type: ignore[operator]
    at_top = faulted_book("crossed", centre=0.995)
    assert at_top is not None and at_top.best_bid > at_top.best_ask  # type: ignore[operator]


def test_decimal_text_is_the_clobs() -> None:
    assert decimal_text(Decimal("0.500")) == "0.5"
    assert decimal_text(Decimal("0.045")) == "0.045"
    assert decimal_text(Decimal("46465.50")) == "46465.5"
    assert decimal_text(Decimal("15.00")) == "15"
    assert decimal_text(Decimal("0.000")) == "0"
