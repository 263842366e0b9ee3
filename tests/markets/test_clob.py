"""The CLOB client against a real loopback server: batches, fallbacks and every bad input."""

import json
import logging
import random
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from arena.markets.clob import ClobClient, ClobUnavailable
from tests.markets.clob_server import ClobServer, Reply, serve

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "clob"
LOGGER = "arena.markets.clob"
D = Decimal
ClientFactory = Callable[..., ClobClient]


def recorded(name: str = "book_spurs_2025-10.raw.json") -> dict[str, Any]:
    raw: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return raw


def book(token: str, bids: list[str], asks: list[str]) -> dict[str, Any]:
    """A raw book in the real wire order (best price last)."""
    return {
        "market": "0xabc",
        "asset_id": token,
        "timestamp": "1761342851801",
        "hash": "h",
        "bids": [{"price": p, "size": "10"} for p in sorted(bids, key=D)],
        "asks": [{"price": p, "size": "10"} for p in sorted(asks, key=D, reverse=True)],
    }


@pytest.fixture
def server() -> Iterator[ClobServer]:
    with serve(recorded()) as running:
        yield running


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_client(server: ClobServer, sleeps: list[float]) -> Iterator[ClientFactory]:
    clients: list[ClobClient] = []

    def factory(**overrides: Any) -> ClobClient:
        options: dict[str, Any] = {
            "timeout": 2.0,
            "min_interval": 0.0,
            "sleep": sleeps.append,
            "rng": random.Random(7),
        }
        options.update(overrides)
        client = ClobClient(server.url, **options)
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.close()


SPURS = recorded()["asset_id"]


def test_midpoints_are_one_post_for_the_batch(
    server: ClobServer, make_client: ClientFactory
) -> None:
    server.add_book(book("2", ["0.10"], ["0.14"]))
    quotes = make_client().midpoints([SPURS, "2", SPURS])
    assert quotes[SPURS].mid == D("0.615") and quotes["2"].mid == D("0.12")
    posts = server.requests_to("POST", "/midpoints")
    assert len(posts) == 1 and posts[0].body == [{"token_id": SPURS}, {"token_id": "2"}]
    assert server.requests_to("GET", "/midpoint") == []


def test_batches_are_chunked(server: ClobServer, make_client: ClientFactory) -> None:
    tokens = [server.add_book(book(str(i), ["0.40"], ["0.42"])) for i in range(5)]
    quotes = make_client(batch_size=2).midpoints(tokens)
    assert all(quotes[t].mid == D("0.41") for t in tokens)
    assert [len(r.body) for r in server.requests_to("POST", "/midpoints")] == [2, 2, 1]


def test_a_failed_batch_falls_back_to_one_get_per_token(
    server: ClobServer,
    make_client: ClientFactory,
    sleeps: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.add_book(book("2", ["0.10"], ["0.14"]))
    server.script("POST", "/midpoints", Reply(500, "boom"))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        quotes = make_client(max_attempts=2).midpoints([SPURS, "2"])
    assert quotes[SPURS].mid == D("0.615") and quotes["2"].mid == D("0.12")
    assert len(server.requests_to("POST", "/midpoints")) == 2 and len(sleeps) == 1
    assert [r.query["token_id"] for r in server.requests_to("GET", "/midpoint")] == [SPURS, "2"]
    assert "reading each alone" in caplog.text


def test_a_token_the_batch_leaves_out_is_read_alone_and_unknown_is_logged_with_its_market(
    server: ClobServer, make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        quotes = make_client().midpoints([SPURS, "404"], market_ids={"404": "mkt-9"})
    assert quotes[SPURS].ok
    gone = quotes["404"]
    assert gone.mid is None and gone.reason == "unknown_token"
    assert "No orderbook exists" in (gone.detail or "")
    assert "CLOB token 404 (market mkt-9): no price, unknown_token" in caplog.text


def test_invalid_token_400_is_unknown_not_retried(
    server: ClobServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script("GET", "/midpoint", Reply(400, {"error": "Invalid token id"}))
    quote = make_client().midpoint("abc")
    assert quote.reason == "unknown_token" and "Invalid token id" in (quote.detail or "")
    assert sleeps == [] and len(server.requests_to("GET", "/midpoint")) == 1


def test_a_429_storm_honours_retry_after_then_gives_no_price(
    server: ClobServer,
    make_client: ClientFactory,
    sleeps: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    storm = Reply(429, {"error": "Too Many Requests"}, headers={"Retry-After": "2"})
    server.script("POST", "/midpoints", storm)
    server.script("GET", "/midpoint", storm)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        quotes = make_client(max_attempts=3).midpoints([SPURS], market_ids={SPURS: "mkt-1"})
    assert quotes[SPURS].mid is None and quotes[SPURS].reason == "clob_unavailable"
    assert sleeps == [2.0] * 4  # two retries for the batch, two for the single read
    assert f"CLOB token {SPURS} (market mkt-1): no price, clob_unavailable" in caplog.text
    assert "CLOB GET /midpoint failed 3 time(s) in a row (last: HTTP 429)" in caplog.text


def test_5xx_then_success_is_retried(server: ClobServer, make_client: ClientFactory) -> None:
    server.script("GET", "/midpoint", Reply(503, "busy"), Reply(body={"mid": "0.5"}))
    assert make_client().midpoint(SPURS).mid == D("0.5")


def test_malformed_json_is_retried_then_reported_without_a_price(
    server: ClobServer, make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    server.script("GET", "/midpoint", Reply(200, "<html>oops</html>"))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        quote = make_client(max_attempts=2).midpoint(SPURS, "mkt-3")
    assert quote.mid is None and quote.reason == "clob_unavailable"
    assert "not JSON" in (quote.detail or "") and "mkt-3" in caplog.text


@pytest.mark.parametrize(
    "body", [{"mid": "1.7"}, {"mid": "abc"}, {"price": "0.5"}, ["0.5"], {"mid": None}]
)
def test_wrong_shapes_are_malformed(
    server: ClobServer, make_client: ClientFactory, body: object
) -> None:
    server.script("GET", "/midpoint", Reply(body=body))
    quote = make_client().midpoint("7")
    assert quote.mid is None and quote.reason == "malformed"


def test_a_bad_batch_value_is_read_alone(server: ClobServer, make_client: ClientFactory) -> None:
    server.script("POST", "/midpoints", Reply(body={SPURS: "2.5"}))
    quotes = make_client().midpoints([SPURS])
    assert quotes[SPURS].mid == D("0.615")
    assert len(server.requests_to("GET", "/midpoint")) == 1


def test_books_batch_with_empty_one_sided_and_crossed_books(
    server: ClobServer, make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    server.add_book(book("empty", [], []))
    server.add_book(recorded("book_one_sided_py_clob_client.raw.json"))
    one_sided = recorded("book_one_sided_py_clob_client.raw.json")["asset_id"]
    server.add_book(book("crossed", ["0.55"], ["0.50"]))
    tokens = [SPURS, "empty", one_sided, "crossed", "missing"]
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        quotes = make_client().books(tokens, market_ids={"crossed": "mkt-x"})
    spurs_book = quotes[SPURS].book
    assert quotes[SPURS].mid == D("0.615") and spurs_book is not None
    assert spurs_book.best_bid == D("0.61")
    assert quotes["empty"].reason == "empty_book"
    assert quotes[one_sided].reason == "one_sided_book"
    assert quotes["crossed"].reason == "crossed_book"
    assert quotes["missing"].reason == "unknown_token"
    assert len(server.requests_to("POST", "/books")) == 1
    assert [r.query["token_id"] for r in server.requests_to("GET", "/book")] == ["missing"]
    assert "CLOB token crossed (market mkt-x): no price, crossed_book" in caplog.text


def test_a_failed_books_batch_falls_back_to_get_book(
    server: ClobServer, make_client: ClientFactory
) -> None:
    server.script("POST", "/books", Reply(body={"error": "not a list"}))
    quote = make_client().books([SPURS])[SPURS]
    assert quote.mid == D("0.615")
    assert len(server.requests_to("GET", "/book")) == 1


def test_a_book_for_another_token_is_malformed(
    server: ClobServer, make_client: ClientFactory
) -> None:
    server.script("GET", "/book", Reply(body=recorded()))
    assert make_client().book("other").reason == "malformed"


def test_price_spread_and_history(server: ClobServer, make_client: ClientFactory) -> None:
    client = make_client()
    assert client.price(SPURS, "BUY") == D("0.62") and client.price(SPURS, "SELL") == D("0.61")
    assert client.spread(SPURS) == D("0.01")
    assert client.spread("missing") is None
    server.history[SPURS] = [{"t": 1761342800, "p": 0.615}]
    points = client.price_history(SPURS, start_ts=1761340000, end_ts=1761350000, fidelity=5)
    assert [(p.t, p.p) for p in points] == [(1761342800, D("0.615"))]
    query = server.requests_to("GET", "/prices-history")[0].query
    assert query == {
        "market": SPURS,
        "startTs": "1761340000",
        "endTs": "1761350000",
        "fidelity": "5",
    }
    server.script("GET", "/prices-history", Reply(502, "bad"))
    with pytest.raises(ClobUnavailable, match="prices-history"):
        make_client(max_attempts=1).price_history(SPURS, start_ts=0, end_ts=1)
