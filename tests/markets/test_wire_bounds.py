"""Outside values refused at the wire: hostile variants of the RECORDED REAL payloads.

Every book here is the recorded Spurs book (tests/fixtures/clob/, PROVENANCE.md: its hash
reproduces, so it is byte-for-byte the server's) with one field changed, and every Gamma
market the recorded resolved market (tests/fixtures/gamma/recorded/, PROVENANCE.md) with one
field changed: the parser must refuse (or bound) exactly that field, naming it.
"""

from __future__ import annotations

import json
import logging
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.book_walk import Fill, Refused, bid_value, walk_buy, walk_sell
from arena.core.fees import FEE_IN_SHARES, FEE_USDC_ON_TOP, FeeSchedule
from arena.markets.clob_wire import ClobParseError, parse_book
from arena.markets.gamma_wire import MarketParseError, parse_market
from tests.examples import examples

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SPURS: dict[str, Any] = json.loads((FIXTURES / "clob/book_spurs_2025-10.raw.json").read_text())
RESOLVED: dict[str, Any] = json.loads(
    (FIXTURES / "gamma/recorded/market_resolved.raw.json").read_text()
)


def spurs(**changes: Any) -> dict[str, Any]:
    return {**SPURS, **changes}


def refusal(raw: dict[str, Any]) -> str:
    with pytest.raises(ClobParseError) as refused:
        parse_book(raw)
    return refused.value.message


def test_the_recorded_book_still_parses() -> None:
    book = parse_book(SPURS)
    assert (book.best_bid, book.best_ask, book.tick_size) == (D("0.61"), D("0.62"), D("0.01"))


def test_an_off_tick_ask_refuses_the_whole_book_naming_the_level() -> None:
    # The ask that turned a $200 BUY into 96,000,010 shares: 0.000002 on a 0.01 tick.
    asks = [*SPURS["asks"], {"price": "0.000002", "size": "96000000"}]
    message = refusal(spurs(asks=asks))
    assert "asks level at 0.000002 is off the book's 0.01 tick" in message
    assert SPURS["asset_id"] in message
    # without a tick the book is held to Polymarket's finest, 0.0001
    no_tick = {k: v for k, v in SPURS.items() if k != "tick_size"}
    assert "off the book's 0.0001 tick" in refusal({**no_tick, "asks": asks})


@pytest.mark.parametrize("price", ["0", "1", "0.00", "1.0", "-0.01", "1.01", "NaN", "Infinity"])
def test_a_level_price_outside_the_open_unit_interval_is_refused(price: str) -> None:
    bids = [*SPURS["bids"], {"price": price, "size": "10"}]
    assert "bids" in refusal(spurs(bids=bids))


@pytest.mark.parametrize(
    "size",
    ["1e22", "1000000001", "-1", "NaN", "-Infinity", "1E+999999", "1E-999999", "9" * 40, 1e22],
)
def test_an_absurd_size_is_refused(size: object) -> None:
    asks = [*SPURS["asks"], {"price": "0.95", "size": size}]
    assert "asks" in refusal(spurs(asks=asks))


def test_a_number_of_absurd_text_length_is_refused_before_it_is_read() -> None:
    asks = [*SPURS["asks"], {"price": "0.95", "size": "1" + "0" * 1_000_000}]
    assert "characters (at most 32)" in refusal(spurs(asks=asks))


def test_a_side_may_hold_a_billion_shares_a_level_and_ten_billion_in_all() -> None:
    billion = [{"price": f"0.{n}", "size": "1000000000"} for n in range(70, 80)]
    assert len(parse_book(spurs(asks=billion)).asks) == 10
    one_more = [*billion, {"price": "0.81", "size": "1"}]
    assert "more than 10000000000 shares on one side" in refusal(spurs(asks=one_more))


def test_more_levels_than_ticks_is_refused_before_parsing() -> None:
    at_one_cent = [{"price": f"{n / 100:.2f}", "size": "1"} for n in range(1, 100)]
    assert len(parse_book(spurs(bids=at_one_cent, asks=[])).bids) == 99  # every tick once
    extra = [*at_one_cent, {"price": "not even read", "size": "x"}]
    assert "bids: 100 levels, more than the 99 its tick allows" in refusal(spurs(bids=extra))
    huge = [{"price": "?", "size": "?"}] * 50_000  # never read: the count refuses it
    assert "asks: 50000 levels" in refusal(spurs(asks=huge))


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("timestamp", "1" * 40, "timestamp is 40 characters long (at most 20)"),
        ("timestamp", "2025-10-24T00:00:00Z", "timestamp '2025-10-24T00:00:00Z' holds"),
        ("hash", "a" * 100, "hash is 100 characters long (at most 64)"),
        ("hash", "eaf8 b0fc", "hash 'eaf8 b0fc' holds"),
        ("asset_id", "1" * 97, "asset_id is 97 characters long (at most 96)"),
        ("market", "0x" + "ab" * 100, "market is 202 characters long (at most 128)"),
        ("tick_size", "0.00000001", "tick 1E-8 is not a tick"),
        ("tick_size", "0.03", "tick 0.03 is not a tick"),
        ("min_order_size", "1e22", "size 1E+22 is over"),
        ("last_trade_price", "1.5", "price 1.5 is outside [0, 1]"),
    ],
)
def test_every_kept_text_and_number_has_its_rule(field: str, value: str, named: str) -> None:
    assert named in refusal(spurs(**{field: value}))


# ---- the walk never raises on what the parser accepts -------------------------------------

# Numbers as the wire might send them: plain, exponent, huge, tiny, non-finite.
hostile_numbers = st.one_of(
    st.decimals(min_value=0, max_value=10**9, places=2, allow_nan=False).map(str),
    st.integers(-5, 10**25).map(str),
    st.builds(lambda m, e: f"{m}E{e:+d}", st.integers(1, 999), st.integers(-60, 60)),
    st.sampled_from(["1e22", "NaN", "Infinity", "1E+999999", "1E-999999", "-0"]),
)
tick_prices = st.integers(1, 99).map(lambda n: f"{n / 100:.2f}")
raw_levels = st.lists(
    st.fixed_dictionaries({"price": tick_prices, "size": hostile_numbers}), max_size=6
)
fee_schedules = st.one_of(
    st.none(),
    st.builds(
        FeeSchedule,
        rate=st.decimals(min_value=0, max_value=1, places=4),
        exponent=st.decimals(min_value=D("0.1"), max_value=10, places=1),
    ),
)


@settings(max_examples=examples(150), deadline=None)
@given(
    bids=raw_levels,
    asks=raw_levels,
    fees=fee_schedules,
    stake=st.integers(1, 10_000),
    count=st.integers(1, 10**9),
)
def test_a_book_the_parser_accepts_always_walks(
    bids: list[dict[str, str]],
    asks: list[dict[str, str]],
    fees: FeeSchedule | None,
    stake: int,
    count: int,
) -> None:
    """Either the parser refuses the book, or every walk over it returns a Fill or a Refused:
    never `decimal.InvalidOperation` (a size of 1e22 raised it, every hour, as a retryable
    `error`)."""
    try:
        book = parse_book(spurs(bids=bids, asks=asks))
    except ClobParseError:
        return
    for charged in (FEE_USDC_ON_TOP, FEE_IN_SHARES):
        assert isinstance(walk_buy(book, D(stake), fees, charged=charged), Fill | Refused)
    assert isinstance(walk_sell(book, D(count), fees), Fill | Refused)
    bid_value(book, D(count), fees)


# ---- Gamma -----------------------------------------------------------------------------------


def resolved(**changes: Any) -> dict[str, Any]:
    return {**RESOLVED, **changes}


def test_the_recorded_market_still_parses() -> None:
    market = parse_market(RESOLVED)
    assert market.fee_schedule is not None and market.fee_schedule.exponent == 1


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"id": "9" * 65}, "id is 65 characters long (at most 64)"),
        ({"id": "84 2093"}, "holds characters an id does not"),
        ({"outcomes": json.dumps(["Yes", "N" + "o" * 300])}, "over 256 characters"),
        ({"outcomes": json.dumps([f"o{n}" for n in range(101)])}, "101 outcomes"),
    ],
)
def test_an_id_or_outcome_beyond_its_column_makes_the_market_unusable(
    changes: dict[str, Any], reason: str
) -> None:
    with pytest.raises(MarketParseError) as refused:
        parse_market(resolved(**changes))
    assert reason in refused.value.reason


def test_free_text_is_cut_with_a_marker_and_labels_beyond_their_rule_are_dropped() -> None:
    market = parse_market(
        resolved(
            question="Q" * 5_000,
            description="D" * 100_000,
            groupItemTitle="G" * 1_000,
            category="C" * 3_000,  # indexed: a B-tree row has a size limit
            slug="a slug with spaces",
            umaResolutionStatus="r" * 200,
            clobTokenIds=json.dumps(["1" * 97, "2"]),
            events=[{"id": "7" * 65, "title": "T" * 600}],
        )
    )
    assert market.question.endswith("[…cut by the arena]") and len(market.question) == 1_000
    assert market.description is not None and len(market.description) == 20_000
    assert market.group_item_title is not None and len(market.group_item_title) == 500
    assert market.event_title is not None and len(market.event_title) == 500
    assert market.category is None and market.slug is None
    assert market.uma_resolution_status is None and market.event_id is None
    assert market.clob_token_ids is None


@pytest.mark.parametrize(
    ("schedule", "field"),
    [
        ({"exponent": "1E+5000", "rate": 0.04}, "exponent '1E+5000'"),
        ({"exponent": 11, "rate": 0.04}, "exponent 11"),
        ({"exponent": 1, "rate": "1E-999999"}, "rate '1E-999999'"),
        ({"exponent": 1, "rate": 0.04, "rebateRate": 2}, "rebateRate 2"),
    ],
)
def test_a_fee_schedule_out_of_its_bounds_is_fees_off_named_in_the_log(
    schedule: dict[str, Any], field: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="arena.markets.gamma"):
        market = parse_market(resolved(feeSchedule=schedule))
    assert market.fee_schedule is None
    (line,) = [r.getMessage() for r in caplog.records if "no usable schedule" in r.getMessage()]
    assert RESOLVED["id"] in line and field in line
