"""Book-walk execution (`arena.core.book_walk`) on the RECORDED REAL books of tests/fixtures/clob/.

Every expected figure is worked out by hand in the comment beside it (checked with `bc`), never
by the code under test. Where a test needs a book the recordings do not hold (a crossed one, a
0.001 tick, a thin ask side) it builds it from a recorded book and says which level it edited.

The books (tests/fixtures/clob/PROVENANCE.md):
- SPURS, `book_spurs_2025-10.raw.json`: asks 0.62 × 46579.05, 0.63 × 76194.39, ...,
  0.90 × 42.78; bids 0.61 × 454511.68, 0.60 × 81506.92, ...; tick 0.01.
- ONE_SIDED, `book_one_sided_py_clob_client.raw.json`: bids 0.5 × 100, 0.33 × 58,
  0.31 × 148.56, 0.15 × 100; no asks.
"""

import json
from collections.abc import Callable
from decimal import Decimal as D
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.accounting import BetLimits, Holding, buy, sell
from arena.core.book_walk import Fill, Refused, bid_value, walk_buy, walk_sell
from arena.core.fees import FEE_IN_SHARES, FEE_USDC_ON_TOP, FeeCharged, FeeSchedule
from arena.core.order_book import Book, Level
from arena.markets.clob_wire import parse_book, to_core_book
from tests.examples import examples

CLOB = Path(__file__).resolve().parent / "fixtures" / "clob"
RECORDED_FEES = FeeSchedule(D("0.04"), 1, True, D("0.25"), "tech_fees")  # Gamma market 842093


def recorded(name: str) -> Book:
    return to_core_book(parse_book(json.loads((CLOB / name).read_text())))


SPURS = recorded("book_spurs_2025-10.raw.json")
ONE_SIDED = recorded("book_one_sided_py_clob_client.raw.json")
# ONE_SIDED's bids as the complementary token's asks: on Polymarket a bid for YES at p is an
# offer of NO at 1 − p. Asks 0.50 × 100 ($50), 0.67 × 58 ($38.86), 0.69 × 148.56
# ($102.5064), 0.85 × 100 ($85): $276.3664 of depth in all.
THIN = Book(bids=(), asks=tuple(Level(1 - lv.price, lv.size) for lv in ONE_SIDED.bids))


def fill(result: Fill | Refused) -> Fill:
    assert isinstance(result, Fill), result
    return result


def refused(result: Fill | Refused) -> Refused:
    assert isinstance(result, Refused), result
    return result


def test_the_wire_book_converts_best_first_and_exact() -> None:
    assert SPURS.asks[0] == Level(D("0.62"), D("46579.05"))
    assert SPURS.bids[0] == Level(D("0.61"), D("454511.68"))
    assert SPURS.asks[-1] == Level(D("0.9"), D("42.78"))
    assert (SPURS.tick_size, SPURS.min_order_size) == (D("0.01"), D("5"))
    assert ONE_SIDED.asks == () and ONE_SIDED.tick_size is None
    assert THIN.asks[0] == Level(D("0.5"), D("100"))


def test_a_buy_inside_the_best_level_is_v1s_buy_at_the_best_ask() -> None:
    result = fill(walk_buy(SPURS, D(500), None))

    # 500 / 0.62 = 806.451612903… → 806.451612 shares (rounded down, as v1's buy)
    assert result.shares == result.gross_shares == D("806.451612")
    assert (result.amount, result.vwap, result.fee) == (D("500"), D("0.62"), 0)
    assert result.levels == ((D("0.62"), D("806.451612")),)
    assert not result.partial and result.unfilled == 0


def test_vwap_across_two_levels() -> None:
    result = fill(walk_buy(SPURS, D(30000), None))

    # level 1 whole: 0.62 × 46579.05 = 28879.011; the rest 30000 − 28879.011 = 1120.989
    # level 2: 1120.989 / 0.63 = 1779.347619047… → 1779.347619 shares
    assert result.levels == ((D("0.62"), D("46579.05")), (D("0.63"), D("1779.347619")))
    # 46579.05 + 1779.347619 = 48358.397619 shares for the whole $30000
    assert result.shares == D("48358.397619") and result.amount == D("30000")
    # VWAP = (28879.011 + 0.63 × 1779.347619) / 48358.397619
    #      = 29999.99999997 / 48358.397619 = 0.62036795… → 0.620368
    assert result.vwap == D("0.620368")
    assert not result.partial


def test_a_stake_that_exactly_exhausts_a_level_takes_nothing_from_the_next() -> None:
    # 0.62 × 46579.05 = 28879.011 exactly
    exact = fill(walk_buy(SPURS, D("28879.011"), None))
    # one micro-dollar more: 0.000001 / 0.63 = 0.0000015… → 0.000001 share from level 2
    over = fill(walk_buy(SPURS, D("28879.011001"), None))

    assert exact.levels == ((D("0.62"), D("46579.05")),) and exact.shares == D("46579.05")
    assert over.levels == ((D("0.62"), D("46579.05")), (D("0.63"), D("0.000001")))


def test_depth_running_out_above_50_dollars_fills_the_part_the_book_holds() -> None:
    result = fill(walk_buy(THIN, D(500), None))

    # all four levels: $50 + $38.86 + $102.5064 + $85 = $276.3664 for 406.56 shares
    assert result.partial and result.amount == D("276.3664")
    assert result.unfilled == D("223.6336")  # 500 − 276.3664 stays in cash
    assert result.shares == D("406.56")
    # VWAP = 276.3664 / 406.56 = 0.67976780… → 0.679768
    assert result.vwap == D("0.679768")


def test_depth_of_exactly_50_dollars_still_executes() -> None:
    result = fill(walk_buy(THIN.top(1), D(500), None))  # one level: 0.50 × 100 = $50

    assert result.partial and result.amount == D("50") and result.shares == D("100")


def test_depth_running_out_below_50_dollars_refuses_the_leg() -> None:
    # SPURS cut to its worst recorded ask only: 0.90 × 42.78 = $38.502 < $50
    worst = Book(bids=SPURS.bids, asks=SPURS.asks[-1:], tick_size=D("0.01"))

    result = refused(walk_buy(worst, D(500), None))

    assert result.reason == "depth" and result.requested == D(500)
    assert "38.502" in result.message and "50" in result.message


def test_a_0_001_tick_level_at_0_999_refuses_five_hundred_thousandths_short_of_50() -> None:
    # SPURS' bids under one edited ask at 0.999 (a 0.001 tick): 0.999 × 50.05 = 49.99995,
    # $0.00005 short of the $50 minimum once the level is bought whole
    edge = Book(bids=SPURS.bids, asks=(Level(D("0.999"), D("50.05")),), tick_size=D("0.001"))

    assert refused(walk_buy(edge, D(100), None)).reason == "depth"
    # a $49.99995 stake buys the level exactly, at 50.05 shares: not a depth shortfall
    exact = fill(walk_buy(edge, D("49.99995"), None, min_fill=D(0)))
    assert exact.shares == D("50.05") and not exact.partial


def test_a_0_001_tick_bid_at_0_001_sells_for_a_tenth_of_a_cent_a_share() -> None:
    edge = Book(bids=(Level(D("0.001"), D("1000")),), asks=(), tick_size=D("0.001"))

    result = fill(walk_sell(edge, D(1000), RECORDED_FEES))

    # 1000 × 0.001 = $1; fee 1000 × 0.04 × 0.001 × 0.999 = 0.03996 → $1 − 0.03996 = 0.96004
    assert (result.fee, result.amount) == (D("0.03996"), D("0.96004"))


def test_an_empty_side_refuses_and_the_other_side_still_trades() -> None:
    result = refused(walk_buy(ONE_SIDED, D(100), None))

    assert result.reason == "empty_book" and "asks" in result.message
    assert isinstance(walk_sell(ONE_SIDED, D(10), None), Fill)
    assert refused(walk_sell(THIN, D(10), None)).reason == "empty_book"
    assert bid_value(THIN, D(10), None) is None


def test_a_crossed_book_refuses_before_any_walking() -> None:
    # SPURS with its best bid edited from 0.61 to 0.62, the best ask: crossed
    crossed = Book(bids=(Level(D("0.62"), SPURS.bids[0].size), *SPURS.bids[1:]), asks=SPURS.asks)

    assert crossed.crossed
    assert refused(walk_buy(crossed, D(500), None)).reason == "crossed_book"
    assert refused(walk_sell(crossed, D(10), None)).reason == "crossed_book"
    assert bid_value(crossed, D(10), None) is None


def test_a_buy_under_the_named_in_shares_option_pays_its_fee_in_shares() -> None:
    result = fill(walk_buy(SPURS, D(500), RECORDED_FEES, charged=FEE_IN_SHARES))

    # 806.451612 shares at 0.62: fee 806.451612 × 0.04 × 0.62 × 0.38 = 7.599999991… → 7.59999
    assert result.fee == D("7.59999")
    # in shares at the fill price: 7.59999 / 0.62 = 12.25804838… → 12.258049 (rounded up)
    assert result.fee_shares == D("12.258049")
    assert result.shares == D("794.193563")  # 806.451612 − 12.258049
    assert result.amount == D("500")  # the cash side is the stake, as with fees off


def test_a_buy_pays_its_fee_in_usdc_on_top_within_its_stake() -> None:
    """CLOB V2: S / (p × (1 + x)) shares, x the fee per dollar of principal at p."""
    result = fill(walk_buy(SPURS, D(500), RECORDED_FEES))

    # fee a share at 0.62: 0.04 × 0.62 × 0.38 = 0.009424, so x = 0.009424 / 0.62 = 0.0152
    # and p × (1 + x) = 0.629424; 500 / 0.629424 = 794.377081267… → 794.377081 (down)
    assert result.shares == result.gross_shares == D("794.377081")
    # fee 794.377081 × 0.009424 = 7.486209611… → 7.48620 (floored); principal
    # 794.377081 × 0.62 = 492.51379022; together 499.99999022, within the $500 moved
    assert (result.fee, result.fee_shares, result.amount) == (D("7.48620"), 0, D("500"))
    assert D("0.62") * result.shares + result.fee <= result.amount
    assert (result.vwap, result.partial) == (D("0.62"), False)


def test_a_walk_across_levels_keeps_principal_plus_fee_within_its_stake() -> None:
    result = fill(walk_buy(THIN, D(200), RECORDED_FEES))

    # each level whole, principal (up) + its floored fee: 0.50 × 100 = 50 + 100 × 0.04 × 0.25
    # = 1.00000; 0.67 × 58 = 38.86 + 58 × 0.04 × 0.2211 = 0.512952 → 0.51295; 0.69 × 148.56 =
    # 102.5064 + 148.56 × 0.04 × 0.2139 = 1.27107936 → 1.27107: $194.15042 spent, $5.84958 left
    # at 0.85: fee a share 0.04 × 0.85 × 0.15 = 0.0051, 5.84958 / 0.8551 = 6.8408139398… →
    # 6.840813 (down)
    assert result.levels[-1] == (D("0.85"), D("6.840813"))
    # its fee 6.840813 × 0.0051 = 0.0348881463 → 0.03488; the fees 1 + 0.51295 + 1.27107 +
    # 0.03488 = 2.81890; principal 50 + 38.86 + 102.5064 + 5.81469105 = 197.18109105
    assert result.fee == D("2.81890")
    principal = sum(at * size for at, size in result.levels)
    assert principal == D("197.18109105")
    assert principal + result.fee <= result.amount == D("200")  # 199.99999105
    assert result.shares == result.gross_shares == D("313.400813") and not result.partial


# Ported from Polymarket/py-clob-client-v2, tests/test_fee_calculations.py (main at b0a97fa):
# TestProductionFeeRatesV2.test_balance_adjusted_plus_fee_equals_amount_all_rates (amount 100,
# exponent 1) and TestAdjustBuyAmountForFees.test_platform_fee_only_adjusted_plus_fee_equals_
# amount (amount 50, rate 0.25, exponent 2, price 0.5). There `adjust_market_buy_amount` gives
# amount / (1 + x) and adjusted + fee == amount to 9 places in floats; here the one-level walk
# buys that principal's shares rounded down and floors the fee, so principal + fee is the
# amount less at most one fee unit (0.00001) and one micro-share's cost.
CLIENT_FITS = [
    *((D(100), D(rate), 1, D(at)) for rate in ("0.03", "0.04", "0.05", "0.072")
      for at in ("0.3", "0.5", "0.7")),
    (D(50), D("0.25"), 2, D("0.5")),
]  # fmt: skip


@pytest.mark.parametrize(("amount", "rate", "exponent", "at"), CLIENT_FITS)
def test_stake_plus_fee_fit_the_amount_as_the_clients_adjustment_does(
    amount: D, rate: D, exponent: int, at: D
) -> None:
    schedule = FeeSchedule(rate, exponent)
    result = fill(walk_buy(Book(bids=(), asks=(Level(at, D(10**6)),)), amount, schedule))

    x = rate * (at * (1 - at)) ** exponent / at  # the client's platform fee rate / price
    adjusted = amount / (1 + x)  # the client's adjusted amount: principal in USDC
    assert abs(result.shares - adjusted / at) < D("0.000001")
    principal = at * result.shares
    assert principal + result.fee <= result.amount == amount
    assert amount - (principal + result.fee) < D("0.00001") + at * (1 + x) * D("0.000001")


def test_a_sell_walks_the_bids_keeps_the_rest_and_pays_its_fee_in_usdc() -> None:
    result = fill(walk_sell(ONE_SIDED, D(500), RECORDED_FEES))

    # all 406.56 bid shares: 0.5 × 100 + 0.33 × 58 + 0.31 × 148.56 + 0.15 × 100
    #                      = 50 + 19.14 + 46.0536 + 15 = $130.1936 gross
    # fees, each level floored: 100 × 0.04 × 0.25 = 1.00000; 58 × 0.04 × 0.2211 = 0.512952
    # → 0.51295; 148.56 × 0.04 × 0.2139 = 1.27107936 → 1.27107; 100 × 0.04 × 0.1275 = 0.51
    # total 3.29402; net 130.1936 − 3.29402 = 126.89958
    assert result.shares == D("406.56") and result.partial
    assert result.unfilled == D("93.44")  # 500 − 406.56 stay held
    assert (result.fee, result.amount) == (D("3.29402"), D("126.89958"))


def test_the_bid_value_is_what_the_bids_pay_and_nothing_beyond_them() -> None:
    # 200 shares: 0.5 × 100 + 0.33 × 58 + 0.31 × 42 = 50 + 19.14 + 13.02 = 82.16
    assert bid_value(ONE_SIDED, D(200), None) == D("82.16")
    # 1000 shares: the 406.56 the bids absorb fetch $130.1936; the other 593.44 are worth 0
    assert bid_value(ONE_SIDED, D(1000), None) == D("130.1936")
    assert bid_value(ONE_SIDED, D(1000), RECORDED_FEES) == D("126.89958")


@pytest.mark.parametrize(
    "walk",
    [
        lambda: walk_buy(SPURS, D(0), None),
        lambda: walk_buy(SPURS, D(-5), None),
        lambda: walk_sell(SPURS, D(0), None),
        lambda: walk_sell(SPURS, D("-0.5"), None),
    ],
)
def test_a_request_that_is_not_positive_is_a_clear_error(walk: Callable[[], object]) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        walk()


unit_prices = st.decimals(min_value=D("0.001"), max_value=D("0.999"), places=3)
stakes = st.decimals(min_value=D(50), max_value=D(2500), places=6)
holdings = st.decimals(min_value=D("0.000001"), max_value=D(10**5), places=6)


@settings(max_examples=examples(200))
@given(unit_prices, stakes)
def test_a_one_level_buy_with_fees_off_is_exactly_v1s_buy(at: D, stake: D) -> None:
    book = Book(bids=(), asks=(Level(at, D(10**9)),))

    walked = fill(walk_buy(book, stake, None))
    v1 = buy(D(10**4), Holding(), stake, at, BetLimits())

    assert (walked.amount, walked.shares) == (v1.amount, v1.shares)


@settings(max_examples=examples(200))
@given(unit_prices, holdings)
def test_a_one_level_sell_with_fees_off_is_exactly_v1s_sell(at: D, count: D) -> None:
    book = Book(bids=(Level(at, D(10**9)),), asks=())

    walked = fill(walk_sell(book, count, None))
    v1 = sell(D(0), Holding(count, count), D(100), at)

    assert (walked.amount, walked.shares) == (v1.amount, v1.shares)
    assert bid_value(book, count, None) == v1.amount


levels = st.lists(
    st.builds(
        Level,
        price=st.decimals(min_value=D("0.01"), max_value=D("0.99"), places=2),
        size=st.decimals(min_value=D("0.01"), max_value=D(5000), places=2),
    ),
    min_size=1,
    max_size=8,
)


fee_schedules = [None, RECORDED_FEES, FeeSchedule(D("0.25"), 2), FeeSchedule(D("0.05"), D("0.5"))]


@settings(max_examples=examples(200))
@given(
    levels,
    stakes,
    st.sampled_from(fee_schedules),
    st.sampled_from([FEE_USDC_ON_TOP, FEE_IN_SHARES]),
)
def test_a_walk_never_pays_less_than_the_book_asks_nor_spends_past_its_stake(
    asks: list[Level], stake: D, fees: FeeSchedule | None, charged: FeeCharged
) -> None:
    book = Book(bids=(), asks=tuple(sorted(asks, key=lambda level: level.price)))

    result = walk_buy(book, stake, fees, charged=charged)

    if isinstance(result, Refused):
        assert result.reason == "depth"
        assert sum(lv.price * lv.size for lv in asks) < D(50)
        return
    assert result.amount + result.unfilled == stake and result.amount <= stake
    assert result.partial == (result.unfilled > 0)
    assert sum(size for _, size in result.levels) == result.gross_shares
    # the levels taken cost no more than was paid (whole levels may round up by < 1e-6 each)
    assert sum(at * size for at, size in result.levels) <= result.amount
    assert 0 <= result.fee_shares <= result.gross_shares
    assert result.shares == result.gross_shares - result.fee_shares
    if charged == FEE_USDC_ON_TOP:  # the fee in USDC, on top, within what was paid
        assert result.fee_shares == 0
        assert sum(at * size for at, size in result.levels) + result.fee <= result.amount
    assert min(at for at, _ in result.levels) <= result.vwap <= max(at for at, _ in result.levels)
