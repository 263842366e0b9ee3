"""The CLOB wire models against recorded real responses, bad shapes and a property."""

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.markets.clob_wire import (
    ClobParseError,
    OrderBook,
    book_hash,
    error_text,
    parse_book,
    parse_books,
    parse_midpoint,
    parse_midpoints,
    parse_price,
    parse_price_history,
)
from arena.markets.price_source import book_midpoint
from tests.examples import examples

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "clob"
RECORDED = ("book_spurs_2025-10.raw.json", "book_one_sided_py_clob_client.raw.json")
ALL_BOOKS = (*RECORDED, "book_with_last_trade_price_trimmed.json")


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_books_are_unaltered_their_hash_reproduces(name: str) -> None:
    raw = load(name)
    assert book_hash(raw) == raw["hash"]


def test_the_trimmed_book_is_known_not_to_reproduce_its_hash() -> None:
    raw = load("book_with_last_trade_price_trimmed.json")
    assert book_hash(raw) != raw["hash"]  # PROVENANCE.md: levels were cut by its recorder


@pytest.mark.parametrize("name", ALL_BOOKS)
def test_every_recorded_book_parses_with_exact_decimals_best_first(name: str) -> None:
    raw = load(name)
    book = parse_book(raw)
    assert book.asset_id == raw["asset_id"]
    assert len(book.bids) == len(raw["bids"]) and len(book.asks) == len(raw["asks"])
    assert [lv.price for lv in book.bids] == sorted((lv.price for lv in book.bids), reverse=True)
    assert [lv.price for lv in book.asks] == sorted(lv.price for lv in book.asks)
    assert all(isinstance(lv.size, Decimal) for lv in book.bids + book.asks)


def test_the_real_wire_sends_best_last_and_the_model_puts_it_first() -> None:
    raw = load("book_spurs_2025-10.raw.json")
    assert raw["bids"][-1]["price"] == "0.61" and raw["asks"][-1]["price"] == "0.62"
    book = parse_book(raw)
    assert book.best_bid == Decimal("0.61") and book.best_ask == Decimal("0.62")
    assert book.bids[0].size == Decimal("454511.68")
    assert book.timestamp_ms == 1761342851801
    assert book.tick_size == Decimal("0.01") and book.min_order_size == Decimal("5")
    assert book.neg_risk is False and book.last_trade_price is None
    assert len(book.asset_id) == 78
    assert book_midpoint(book).mid == Decimal("0.615")


def test_last_trade_price_and_a_77_digit_token() -> None:
    book = parse_book(load("book_with_last_trade_price_trimmed.json"))
    assert book.last_trade_price == Decimal("0.750")
    assert len(book.asset_id) == 77
    assert (book.best_bid, book.best_ask) == (Decimal("0.25"), Decimal("0.26"))


def test_an_old_book_without_timestamp_or_tick_is_one_sided() -> None:
    book = parse_book(load("book_one_sided_py_clob_client.raw.json"))
    assert book.timestamp is None and book.tick_size is None and book.asks == ()
    assert book_midpoint(book).reason == "one_sided_book"
    assert book_midpoint(book).best_bid == Decimal("0.5")


def test_books_list_parses_each_entry_and_keeps_the_bad_one_as_its_error() -> None:
    good = load("book_spurs_2025-10.raw.json")
    bad = {**good, "asset_id": "42", "bids": [{"price": "1.5", "size": "1"}]}
    parsed = parse_books([good, bad])
    assert isinstance(parsed[0], OrderBook)
    assert isinstance(parsed[1], ClobParseError) and parsed[1].token_id == "42"
    assert "42" in str(parsed[1])


@pytest.mark.parametrize(
    "raw",
    [
        [],
        "book",
        {"bids": [], "asks": []},  # no asset_id
        {"asset_id": "1", "bids": [{"price": "abc", "size": "1"}]},
        {"asset_id": "1", "bids": [{"price": "0.5", "size": "-1"}]},
        {"asset_id": "1", "asks": [{"price": "NaN", "size": "1"}]},
        {"asset_id": "1", "asks": "[]"},
        {"asset_id": "1", "asks": [{"price": "0.5"}]},
    ],
)
def test_malformed_books_raise_a_parse_error(raw: object) -> None:
    with pytest.raises(ClobParseError):
        parse_book(raw)


def test_books_answer_must_be_a_list() -> None:
    with pytest.raises(ClobParseError, match="list"):
        parse_books({"error": "x"})


def test_midpoint_shapes() -> None:
    assert parse_midpoint({"mid": "0.455"}) == Decimal("0.455")
    assert parse_midpoint({"mid_price": "0.45"}) == Decimal("0.45")
    assert parse_midpoint({"mid": 0.5}) == Decimal("0.5")
    for bad in ({}, {"mid": "1.2"}, {"mid": None}, ["0.5"], {"mid": True}):
        with pytest.raises(ClobParseError):
            parse_midpoint(bad, "7")


def test_midpoints_map_keeps_good_values_and_marks_bad_ones() -> None:
    parsed = parse_midpoints({"1": "0.455", "2": "-0.1", "3": "x"})
    assert parsed["1"] == Decimal("0.455")
    assert isinstance(parsed["2"], ClobParseError) and isinstance(parsed["3"], ClobParseError)
    with pytest.raises(ClobParseError):
        parse_midpoints([{"1": "0.5"}])
    with pytest.raises(ClobParseError, match="error"):
        parse_midpoints({"error": "Invalid payload"})


def test_price_spread_history_and_errors() -> None:
    assert parse_price({"price": "0.62"}) == Decimal("0.62")
    assert parse_price({"spread": "0.01"}, "spread") == Decimal("0.01")
    with pytest.raises(ClobParseError):
        parse_price({"price": "2"})
    history = parse_price_history({"history": [{"t": 20, "p": 0.085}, {"t": 10, "p": "0.08"}]})
    assert [(point.t, point.p) for point in history] == [
        (10, Decimal("0.08")),
        (20, Decimal("0.085")),
    ]
    with pytest.raises(ClobParseError):
        parse_price_history({"history": [{"t": "x", "p": 0.5}]})
    with pytest.raises(ClobParseError):
        parse_price_history({"data": []})
    docs = load("errors_from_docs.json")
    assert error_text(docs["no_orderbook_404"]) == "No orderbook exists for the requested token id"
    assert error_text({"mid": "0.5"}) is None


# A level's price is strictly inside (0, 1) on the 0.001 grid (the parser refuses the rest).
prices = st.decimals(
    min_value=Decimal("0.001"), max_value=Decimal("0.999"), places=3, allow_nan=False
)
levels = st.lists(st.tuples(prices, st.integers(1, 10_000)), max_size=8)


@settings(max_examples=examples(100))  # hypothesis's default, scaled in `make check`
@given(bids=levels, asks=levels)
def test_midpoint_lies_between_the_touch_and_in_the_unit_interval(
    bids: list[tuple[Decimal, int]], asks: list[tuple[Decimal, int]]
) -> None:
    raw = {
        "asset_id": "1",
        "bids": [{"price": str(p), "size": str(s)} for p, s in bids],
        "asks": [{"price": str(p), "size": str(s)} for p, s in asks],
    }
    book = parse_book(raw)
    result = book_midpoint(book)
    if result.mid is None:
        assert result.reason in {"empty_book", "one_sided_book", "crossed_book"}
        if bids and asks:
            assert max(p for p, _ in bids) >= min(p for p, _ in asks)
        return
    assert result.reason is None
    assert book.best_bid is not None and book.best_ask is not None
    assert book.best_bid == max(p for p, _ in bids) and book.best_ask == min(p for p, _ in asks)
    assert book.best_bid < result.mid < book.best_ask
    assert 0 <= result.mid <= 1
