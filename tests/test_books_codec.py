"""The stored form of a decision run's books (arena.engine.books): pure encode/decode, exact.

A side is `price:size;...` best-first with each number's exact decimal text; the recorded real
Spurs book (tests/fixtures/clob/book_spurs_2025-10.raw.json) round-trips to the digit."""

import json
from decimal import Decimal as D
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.book_text import BookTextError, decode_levels, encode_levels
from arena.core.order_book import BOOK_DEPTH, Level
from arena.engine.books import BookToken, book_row, universe_tokens
from arena.markets.clob_wire import ClobQuote, parse_book, to_core_book
from arena.markets.price_source import quote_from_book
from tests.examples import examples

SPURS = Path(__file__).parent / "fixtures" / "clob" / "book_spurs_2025-10.raw.json"

prices = st.decimals(min_value=0, max_value=1, places=4, allow_nan=False)
sizes = st.decimals(min_value=0, max_value=10**9, places=6, allow_nan=False)
levels = st.lists(st.builds(Level, prices, sizes), max_size=BOOK_DEPTH)


@settings(max_examples=examples(200))
@given(levels)
def test_a_side_round_trips_exactly(side: list[Level]) -> None:
    decoded = decode_levels(encode_levels(side))
    assert decoded == tuple(side)
    # exact text, not merely equal values: 0.50 stays 0.50
    assert [str(level.price) for level in decoded] == [format(lv.price, "f") for lv in side]


def test_the_text_is_compact_and_plain() -> None:
    side = [
        Level(D("0.61"), D("454511.68")),
        Level(D("0.6"), D("81506.92")),
        Level(D("0.50"), D("1E+3")),
    ]
    assert encode_levels(side) == "0.61:454511.68;0.6:81506.92;0.50:1000"
    assert encode_levels([]) == "" and decode_levels("") == ()


@pytest.mark.parametrize("text", ["0.5", "0.5:", "a:1", "0.5:1;;", "0.5:1;0.4-2", "0.5:NaN"])
def test_a_broken_side_is_refused_never_guessed(text: str) -> None:
    with pytest.raises(BookTextError):
        decode_levels(text)


def test_the_recorded_real_book_round_trips_to_the_digit() -> None:
    raw = json.loads(SPURS.read_text())
    book = parse_book(raw)
    row = book_row(7, BookToken(book.asset_id, "m1", "Yes"), quote_from_book(book))
    assert row["status"] == "ok"
    assert row["bids"].startswith("0.61:454511.68;0.6:81506.92;0.59:23925.96;")
    assert row["asks"].startswith("0.62:46579.05;0.63:76194.39;")
    assert row["bids"].endswith(";0.01:15") and row["asks"].endswith(";0.9:42.78")
    assert (row["tick_size"], row["min_order_size"]) == ("0.01", "5")
    assert (row["book_timestamp"], row["book_hash"]) == (raw["timestamp"], raw["hash"])
    served = {(lv["price"], lv["size"]) for lv in raw["bids"]}
    decoded = decode_levels(row["bids"])
    assert {(str(lv.price), str(lv.size)) for lv in decoded} == served  # every digit as sent
    assert decoded == to_core_book(book).bids


def test_a_deep_book_is_cut_to_its_best_twenty_a_side() -> None:
    raw = {
        "asset_id": "t1",
        "bids": [{"price": f"0.{i:02d}", "size": "1"} for i in range(1, 31)],
        "asks": [{"price": f"0.{i:02d}", "size": "2"} for i in range(60, 100)],
    }
    row = book_row(1, BookToken("t1", "m", "Yes"), quote_from_book(parse_book(raw)))
    bids, asks = decode_levels(row["bids"]), decode_levels(row["asks"])
    assert len(bids) == len(asks) == BOOK_DEPTH
    assert (bids[0].price, bids[-1].price) == (D("0.30"), D("0.11"))
    assert (asks[0].price, asks[-1].price) == (D("0.60"), D("0.79"))


def test_empty_crossed_and_missing_books_keep_their_reason() -> None:
    token = BookToken("t", "m", "Yes")
    empty = book_row(1, token, quote_from_book(parse_book({"asset_id": "t"})))
    assert (empty["status"], empty["bids"], empty["asks"]) == ("empty_book", "", "")
    crossed_raw = {
        "asset_id": "t",
        "bids": [{"price": "0.6", "size": "3"}],
        "asks": [{"price": "0.5", "size": "4"}],
    }
    crossed = book_row(1, token, quote_from_book(parse_book(crossed_raw)))
    assert (crossed["status"], crossed["bids"], crossed["asks"]) == (
        "crossed_book",
        "0.6:3",
        "0.5:4",
    )
    gone = book_row(1, token, ClobQuote("t", reason="unknown_token", detail="404"))
    assert (gone["status"], gone["bids"], gone["asks"]) == ("unknown_token", None, None)
    unread = book_row(1, token, None)
    assert (unread["status"], unread["bids"]) == ("clob_unavailable", None)


def test_a_market_without_one_token_per_outcome_has_none() -> None:
    tokens = universe_tokens(
        [
            ("a", ["Yes", "No"], ["ty", "tn"]),
            ("b", ["Yes", "No"], None),
            ("c", ["X", "Y", "Z"], ["tx"]),
        ]
    )
    assert tokens == [BookToken("ty", "a", "Yes"), BookToken("tn", "a", "No")]
