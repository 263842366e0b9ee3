"""The planner with the extension `book_execution` (`plan_execution(..., books=...)`): pure.

Legs executed by hand from the RECORDED REAL books of tests/fixtures/clob/ (PROVENANCE.md);
every figure is worked out in the comment beside it, never by the code under test.
- SPURS: asks 0.62 × 46579.05, 0.63 × 76194.39, ...; bids 0.61 × 454511.68, ...
- ONE_SIDED: bids 0.5 × 100, 0.33 × 58, 0.31 × 148.56, 0.15 × 100; no asks.
- THIN: ONE_SIDED's bids as the complementary token's asks (0.50 × 100, 0.67 × 58,
  0.69 × 148.56, 0.85 × 100: $276.3664 of depth), as tests/test_book_walk.py builds it.
"""

from dataclasses import dataclass, field
from decimal import Decimal as D

import pytest

from arena.agents.prompts import BOOK_EXECUTION_HEADING, system_prompt
from arena.config import (
    BOOK_EXECUTION,
    FEE_CHARGED,
    Methodology,
    cohort_stamp,
    executes_on_books,
    load_settings,
    stamped_fee_charged,
)
from arena.core.accounting import BetLimits, Holding
from arena.core.book_legs import LegBook, RunBooks, bid_mark, charging
from arena.core.execution import ExecutionPlan, HeldPosition, SnapshotMarket, plan_execution
from arena.core.fees import FEE_IN_SHARES, FEE_USDC_ON_TOP, FeeCharged
from arena.core.order_book import Book, Level
from tests.test_book_walk import ONE_SIDED, RECORDED_FEES, SPURS, THIN

LIMITS = BetLimits()
CASH = D("10000")
SNAPSHOT = {
    "m1": SnapshotMarket("m1", "binary", ["Yes", "No"], ["0.6", "0.4"]),
    "m2": SnapshotMarket("m2", "binary", ["Yes", "No"], ["0.5", "0.5"]),
    "m3": SnapshotMarket("m3", "named", ["A", "B"], ["0.5", "0.5"]),
}
CROSSED = Book(bids=(Level(D("0.60"), D("100")),), asks=(Level(D("0.55"), D("100")),))
SHALLOW = Book(bids=(), asks=(Level(D("0.5"), D("60")),))  # $30 of asks: below $50
BOOKS: RunBooks = {
    "m1": (LegBook(SPURS, "ok", RECORDED_FEES), LegBook(THIN, "ok", None)),
    "m2": (LegBook(ONE_SIDED, "one_sided_book", None), LegBook(CROSSED, "crossed_book", None)),
    "m3": (LegBook(SHALLOW, "ok", None), LegBook(None, "clob_unavailable", None)),
}


@dataclass
class Bet:
    market_id: str
    side: str
    amount: D


@dataclass
class Sale:
    position_id: int
    percentage: D


@dataclass
class Plan:
    action: str
    bets: list[Bet] = field(default_factory=list)
    sells: list[Sale] = field(default_factory=list)


def bets(*legs: tuple[str, str, str], charged: FeeCharged = FEE_USDC_ON_TOP) -> ExecutionPlan:
    decision = Plan("BET", [Bet(m, s, D(a)) for m, s, a in legs])
    return plan_execution(decision, CASH, [], SNAPSHOT, LIMITS, charging(BOOKS, charged))


def test_a_bet_of_a_cohort_stamped_in_shares_pays_the_fee_in_shares() -> None:
    # $500 at 0.62 (inside the best level): 500 / 0.62 = 806.451612 gross shares; fee
    # 806.451612 × 0.04 × 0.62 × 0.38 = 7.59999 (floored to 5 places), 7.59999 / 0.62 =
    # 12.258049 shares (up); credited 806.451612 − 12.258049 = 794.193563.
    plan = bets(("m1", "YES", "500"), charged=FEE_IN_SHARES)
    leg = plan.legs[0]
    assert leg.executed and (leg.amount, leg.price, leg.shares) == (
        D("500"),
        D("0.62"),
        D("794.193563"),
    )
    assert plan.cash_after == D("9500")
    assert leg.holding_after == Holding(D("794.193563"), D("500"))
    assert leg.fill is not None
    assert (leg.fill["fee"], leg.fill["fee_shares"], leg.fill["gross_shares"]) == (
        "7.59999",
        "12.258049",
        "806.451612",
    )
    assert leg.fill["levels"] == [["0.62", "806.451612"]] and leg.fill["partial"] is False
    assert leg.record()["fill"] == leg.fill


def test_a_bet_of_a_new_cohort_pays_the_fee_in_usdc_within_its_stake() -> None:
    # 500 / (0.62 + 0.04 × 0.62 × 0.38) = 500 / 0.629424 → 794.377081 shares; fee 7.48620
    # (tests/test_book_walk.py works it out); the stake moves whole, the fee inside it.
    leg = bets(("m1", "YES", "500")).legs[0]
    assert (leg.amount, leg.shares) == (D("500"), D("794.377081"))
    assert leg.fill is not None and (leg.fill["fee"], leg.fill["fee_shares"]) == (
        "7.48620",
        "0.000000",
    )


def test_a_bet_on_books_that_do_not_say_how_fees_are_paid_is_an_error() -> None:
    decision = Plan("BET", [Bet("m1", "YES", D("500"))])
    with pytest.raises(ValueError, match="fee convention"):
        plan_execution(decision, CASH, [], SNAPSHOT, LIMITS, BOOKS)


def test_vwap_across_the_levels_of_a_recorded_book() -> None:
    # $200 on THIN (fees off): 0.50 × 100 = $50, 0.67 × 58 = $38.86, 0.69 × 148.56 =
    # $102.5064 taken whole ($191.3664); the last $8.6336 buys 8.6336 / 0.85 = 10.157176 (down).
    # Shares 316.717176; VWAP 199.9999996 / 316.717176 = 0.631478 (6 places).
    leg = bets(("m1", "NO", "200")).legs[0]
    assert (leg.amount, leg.shares, leg.price) == (D("200"), D("316.717176"), D("0.631478"))
    assert leg.fill is not None and len(leg.fill["levels"]) == 4


def test_a_stake_beyond_the_depth_fills_the_part_the_book_holds() -> None:
    # $300 on THIN's $276.3664: executes $276.3664 for 406.56 shares; $23.6336 stays cash.
    plan = bets(("m1", "NO", "300"))
    leg = plan.legs[0]
    assert (leg.amount, leg.shares) == (D("276.3664"), D("406.56"))
    assert leg.fill is not None and (leg.fill["partial"], D(leg.fill["unfilled"])) == (
        True,
        D("23.6336"),
    )
    assert plan.cash_after == D("9723.6336")
    assert plan.tallies()["amount_bet"] == D("276.3664")


@pytest.mark.parametrize(
    ("market", "side", "reason"),
    [
        ("m3", "A", "depth"),  # $30 of asks below the $50 minimum
        ("m2", "YES", "empty_book"),  # the recorded one-sided book has no asks
        ("m2", "NO", "crossed_book"),  # bid 0.60 ≥ ask 0.55
        ("m3", "B", "clob_unavailable"),  # stored with no book: its status is the reason
    ],
)
def test_a_leg_with_no_usable_book_is_refused_with_the_reason(
    market: str, side: str, reason: str
) -> None:
    plan = bets((market, side, "100"))
    assert not plan.legs[0].executed and plan.legs[0].reason == reason
    assert plan.cash_after == CASH


def test_a_market_the_run_stored_no_book_for_is_refused_no_book() -> None:
    snapshot = {**SNAPSHOT, "m4": SnapshotMarket("m4", "binary", ["Yes", "No"], ["0.5", "0.5"])}
    decision = Plan("BET", [Bet("m4", "YES", D("100")), Bet("m1", "YES", D("100"))])
    plan = plan_execution(decision, CASH, [], snapshot, LIMITS, charging(BOOKS, FEE_USDC_ON_TOP))
    assert (plan.legs[0].executed, plan.legs[0].reason) == (False, "no_book")
    assert plan.legs[1].executed  # a refused leg never stops the others


def test_the_caps_apply_to_the_requested_stake() -> None:
    # 25% of $10,000 is $2,500: a $2,600 stake is refused even though THIN would fill less.
    assert bets(("m1", "NO", "2600")).legs[0].reason == "above_max"
    assert bets(("m1", "YES", "49")).legs[0].reason == "below_min"


def test_a_sell_walks_the_bids_and_keeps_what_they_cannot_absorb() -> None:
    # 500 shares (cost $250) sold into ONE_SIDED with the recorded fees (docs/book-execution.md):
    # 406.56 absorbed, proceeds 130.1936 − fee 3.29402 = 126.89958; cost leaves pro rata:
    # 250 × 406.56 / 500 = 203.28; realised 126.89958 − 203.28 = −76.38042; 93.44 shares and
    # $46.72 of cost stay held.
    books: RunBooks = {"m2": (LegBook(ONE_SIDED, "one_sided_book", RECORDED_FEES),)}
    held = [HeldPosition(7, "m2", "YES", Holding(D("500"), D("250")))]
    decision = Plan("SELL", sells=[Sale(7, D("100"))])
    plan = plan_execution(decision, CASH, held, SNAPSHOT, LIMITS, books)
    leg = plan.legs[0]
    assert (leg.amount, leg.shares, leg.realized_pnl) == (
        D("126.89958"),
        D("406.56"),
        D("-76.38042"),
    )
    assert leg.holding_after == Holding(D("93.44"), D("46.72"), D("-76.38042"))
    assert plan.cash_after == CASH + D("126.89958")
    assert leg.fill is not None and (D(leg.fill["fee"]), D(leg.fill["unfilled"])) == (
        D("3.29402"),
        D("93.44"),
    )


def test_a_sell_into_an_empty_bid_side_is_refused_and_keeps_the_position() -> None:
    held = [HeldPosition(7, "m1", "NO", Holding(D("100"), D("50")))]
    plan = plan_execution(
        Plan("SELL", sells=[Sale(7, D("50"))]), CASH, held, SNAPSHOT, LIMITS, BOOKS
    )
    assert (plan.legs[0].executed, plan.legs[0].reason) == (False, "empty_book")
    assert plan.cash_after == CASH


def test_without_books_the_plan_and_its_record_are_v1s() -> None:
    decision = Plan("BET", [Bet("m1", "YES", D("500"))])
    plan = plan_execution(decision, CASH, [], SNAPSHOT, LIMITS)
    leg = plan.legs[0]
    assert (leg.price, leg.shares, leg.fill) == (D("0.6"), D("833.333333"), None)
    assert "fill" not in leg.record()


def test_a_mark_at_the_bid_and_its_fallbacks() -> None:
    # 100 shares into ONE_SIDED's 0.5 × 100 bid, fees off: $50, a share 0.5; the mid beside.
    mark, value, record, live = bid_mark(ONE_SIDED, None, D("100"), None, D("0.51"), D("0.4"), True)
    assert (mark, value, live) == (D("0.5"), D("50"), True)
    assert (record["bid_value"], record["mid"], record["source"]) == ("50", "0.51", "book_bid")
    # 500 shares: the bids hold 406.56 for $130.1936; the rest is worth nothing.
    assert bid_mark(ONE_SIDED, None, D("500"), None, None, D("0.4"), True)[1] == D("130.1936")
    # no bids (THIN), crossed, no book, a closed market: the prior 0.4 × 100 = $40, the reason
    for book, reason, trading, why in [
        (THIN, None, True, "empty_book"),
        (CROSSED, None, True, "crossed_book"),
        (None, "unknown_token", True, "unknown_token"),
        (SPURS, None, False, "market_closed"),
    ]:
        mark, value, record, live = bid_mark(book, reason, D("100"), None, None, D("0.4"), trading)
        assert (mark, value, live, record["fallback_reason"]) == (D("0.4"), D("40"), False, why)


def test_the_book_execution_prompt_adds_its_section_and_nothing_else() -> None:
    """The extension's section sits between the sizing rules and the answer formats; the
    prompt without it is the v1 / v2 text, byte for byte (pinned by tests/agents)."""
    args = (D("50"), D("0.25"), D("10000"))
    for v2 in (False, True):
        plain = system_prompt(*args, total_cap=v2)
        walked = system_prompt(*args, total_cap=v2, book_execution=True)
        start = walked.index(f"\n\n{BOOK_EXECUTION_HEADING}")
        end = walked.index("\n\nANSWER FORMAT")
        assert walked[:start] + walked[end:] == plain
        section = walked[start:end]
        assert "volume-weighted average" in section and "at least $50" in section
        assert "in dollars on top of the price" in section and "bids" in section
        # a cohort stamped before `fee_charged` keeps its line: the fee taken in shares
        legacy = system_prompt(*args, total_cap=v2, book_execution=True, fee_charged="in_shares")
        line = "charge Polymarket's taker fee on each purchase, taken in shares.\n- A SELL"
        assert line in legacy and "on top" not in legacy and legacy[:start] == walked[:start]


def test_the_extension_is_named_in_the_settings_and_stamped_on_v1_and_v2() -> None:
    settings = load_settings(extensions="book_execution,stated_probability")
    assert settings.extensions == ("book_execution", "stated_probability")
    for methodology in (Methodology(), Methodology(version="v2")):
        stamp = cohort_stamp(methodology, [BOOK_EXECUTION])
        assert stamp["extensions"] == ["book_execution"] and stamp["is_default"] is False
        assert executes_on_books(stamp) and not executes_on_books(methodology.stamp())
        # how its buys pay the fee is stamped; a stamp from before the key ran in_shares
        assert stamp[FEE_CHARGED] == "usdc_on_top" == stamped_fee_charged(stamp)
        older = {k: v for k, v in stamp.items() if k != FEE_CHARGED}
        assert stamped_fee_charged(older) == "in_shares"
        named = cohort_stamp(methodology, [BOOK_EXECUTION], fee_charged=FEE_IN_SHARES)
        assert stamped_fee_charged(named) == "in_shares"
        assert stamped_fee_charged(methodology.stamp()) is None
        assert FEE_CHARGED not in cohort_stamp(methodology, ["stated_probability"])
        assert cohort_stamp(methodology) == methodology.stamp()  # v1's stamp: no key
        with pytest.raises(ValueError, match="fee_charged"):
            stamped_fee_charged({**stamp, FEE_CHARGED: "in_kind"})
