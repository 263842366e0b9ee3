"""Live: the real CLOB still answers in the shapes `arena.markets.clob_wire` reads (opt-in).

Token ids come from the real Gamma top list (its `clobTokenIds`); the checks read their books
and midpoints through the project's own `ClobClient` and check the wire order (best price
last), the fields, and that `/midpoints` agrees with each book's own midpoint.
"""

import time
from collections.abc import Iterator

import pytest

from arena.markets.clob import CLOB_URL, ClobClient
from arena.markets.clob_wire import book_hash, parse_book
from arena.markets.gamma import GammaClient
from tests.live.network import require_network

pytestmark = pytest.mark.live

GAMMA_URL = "https://gamma-api.polymarket.com"


@pytest.fixture
def tokens() -> list[str]:
    require_network(GAMMA_URL)
    with GammaClient(GAMMA_URL, timeout=20.0, max_attempts=2) as gamma:
        markets = gamma.top_markets(limit_total=5)
    found = [t for m in markets for t in (m.clob_token_ids or [])]
    assert found, "no open market on Gamma names its clobTokenIds"
    return found[:6]


@pytest.fixture
def client() -> Iterator[ClobClient]:
    with ClobClient(CLOB_URL, timeout=20.0, max_attempts=2) as live:
        yield live


def test_books_arrive_best_last_and_parse(client: ClobClient, tokens: list[str]) -> None:
    require_network(CLOB_URL)
    raw = client._retrier.request_json(
        "POST", "/books", json_body=[{"token_id": t} for t in tokens]
    )
    assert isinstance(raw, list) and raw, f"/books answered {type(raw).__name__}"
    for entry in raw:
        assert {"asset_id", "bids", "asks", "hash", "timestamp"} <= set(entry), sorted(entry)
        prices = [float(level["price"]) for level in entry["bids"]]
        assert prices == sorted(prices), "bids are no longer sent ascending"
        prices = [float(level["price"]) for level in entry["asks"]]
        assert prices == sorted(prices, reverse=True), "asks are no longer sent descending"
        assert book_hash(entry) == entry["hash"], "the book hash formula changed"
        parse_book(entry)


def test_midpoints_agree_with_the_books(client: ClobClient, tokens: list[str]) -> None:
    require_network(CLOB_URL)
    mids = client.midpoints(tokens)
    books = client.books(tokens)
    for token in tokens:
        if mids[token].mid is not None and books[token].mid is not None:
            assert abs(mids[token].mid - books[token].mid) <= 0.01, token  # type: ignore[operator]


def test_price_history_answers_as_the_late_entrants_marks_read_it(
    client: ClobClient, tokens: list[str]
) -> None:
    """`/prices-history` over the last day, as `late_entry_runs.clob_history` asks it: points
    in time order, prices in [0, 1], none after the end asked for."""
    require_network(CLOB_URL)
    end = int(time.time())
    points = client.price_history(tokens[0], start_ts=end - 86_400, end_ts=end, fidelity=60)
    assert points, f"no price history for {tokens[0]} over the last day"
    times = [point.t for point in points]
    assert times == sorted(times) and times[-1] <= end + 3600, times[-3:]
    assert all(0 <= float(point.p) <= 1 for point in points)
