"""The simulated CLOB over real HTTP: every read route, the wire order, errors and the clock."""

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from arena.sim.books import (
    SimBook,
    TokenQuote,
    book_for,
    condition_id,
    decimal_text,
    fault_for,
)
from arena.sim.clob_server import BATCH_LIMIT, NO_ORDERBOOK, ClobServer, book_json
from arena.sim.world import SimulatedWorld

SEED = 5
START = datetime(2026, 1, 4, tzinfo=UTC)
AT = START + timedelta(days=3, hours=2, minutes=30)
FIXTURES = Path(__file__).parent.parent / "fixtures" / "clob"


class FixedSource:
    """A book source with hand-picked tokens: one per fault kind, plus a healthy one."""

    seed = SEED

    def __init__(self) -> None:
        self.quotes: dict[str, TokenQuote] = {}
        for kind in ("missing", "empty", "one_sided", "crossed", None):
            anchor = next(str(i) for i in range(100_000) if fault_for(SEED, str(i), AT) == kind)
            self.quotes[str(kind)] = TokenQuote(
                "900001", condition_id(SEED, "900001"), anchor, False, 0.42, 20_000.0, True
            )

    def quote(self, token: str, at: datetime) -> TokenQuote | None:
        return self.quotes.get(token)


@pytest.fixture(scope="module")
def world() -> SimulatedWorld:
    return SimulatedWorld(SEED, START, n_initial=150, new_per_day=2, days=20)


@pytest.fixture(scope="module")
def server(world: SimulatedWorld) -> Iterator[ClobServer]:
    with ClobServer(world, at=AT) as running:
        yield running


@pytest.fixture(scope="module")
def faults() -> Iterator[ClobServer]:
    with ClobServer(source=FixedSource(), at=AT) as running:
        yield running


@pytest.fixture(scope="module")
def pair(world: SimulatedWorld, server: ClobServer) -> tuple[str, str]:
    """(yes, no) tokens of a binary market whose books are healthy at AT."""
    source = server.source
    for market in world.top_markets(AT, 150):
        if market.market_type != "binary" or market.clob_token_ids is None:
            continue
        yes_i = [o.casefold() for o in market.outcomes].index("yes")
        yes, no = market.clob_token_ids[yes_i], market.clob_token_ids[1 - yes_i]
        book = book_for(source, yes, AT)
        if book is not None and book.fault is None and len(book.bids) > 2:
            return yes, no
    raise AssertionError("no healthy binary market")


def expected(server: ClobServer, token: str, at: datetime = AT) -> SimBook:
    book = book_for(server.source, token, at)
    assert book is not None
    return book


def get(
    server: ClobServer, route: str, headers: dict[str, str] | None = None, **params: str
) -> httpx.Response:
    return httpx.get(server.origin + route, params=params, headers=headers, timeout=5)


def post(server: ClobServer, route: str, body: object) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(server.origin + route, content=content, timeout=5)


# --- /book and /books ----------------------------------------------------------------------


def test_book_speaks_the_clob_format(server: ClobServer, pair: tuple[str, str]) -> None:
    yes, _ = pair
    response = get(server, "/book", token_id=yes)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    real = json.loads((FIXTURES / "book_with_last_trade_price_trimmed.json").read_text())
    assert list(body) == list(real)  # the 2026 key order, `last_trade_price` last
    book = expected(server, yes)
    assert body == book_json(book)
    assert body["asset_id"] == yes and len(body["market"]) == 66
    assert body["market"].startswith("0x")
    assert body["timestamp"] == str(int(AT.timestamp() * 1000))
    assert body["min_order_size"] == "5" and body["tick_size"] == decimal_text(book.tick)
    assert isinstance(body["neg_risk"], bool)
    assert Decimal(body["last_trade_price"]) == book.last_trade
    blanked = {**body, "hash": ""}
    compact = json.dumps(blanked, separators=(",", ":"))
    assert body["hash"] == hashlib.sha1(compact.encode()).hexdigest()
    assert len(body["hash"]) == 40


def test_best_price_is_last_on_both_sides(server: ClobServer, pair: tuple[str, str]) -> None:
    """The real CLOB lists bids ascending and asks descending, as the recorded books show."""
    real = json.loads((FIXTURES / "book_spurs_2025-10.raw.json").read_text())
    real_bids = [Decimal(level["price"]) for level in real["bids"]]
    real_asks = [Decimal(level["price"]) for level in real["asks"]]
    assert real_bids == sorted(real_bids) and real_asks == sorted(real_asks, reverse=True)
    for token in pair:
        body = get(server, "/book", token_id=token).json()
        bids = [Decimal(level["price"]) for level in body["bids"]]
        asks = [Decimal(level["price"]) for level in body["asks"]]
        assert len(bids) > 1 and len(asks) > 1
        assert bids == sorted(bids) and asks == sorted(asks, reverse=True)
        book = expected(server, token)
        assert bids[-1] == book.best_bid and asks[-1] == book.best_ask
        assert bids[-1] < asks[-1]


def test_books_batch_in_order_skipping_tokens_without_a_book(
    server: ClobServer, pair: tuple[str, str]
) -> None:
    yes, no = pair
    response = post(server, "/books", [{"token_id": no}, {"token_id": "42"}, {"token_id": yes}])
    assert response.status_code == 200
    assert response.json() == [book_json(expected(server, no)), book_json(expected(server, yes))]


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"token_id": "1"}',
        b"[]",
        b'[{"side": "BUY"}]',
        b'[{"token_id": 7}]',
        b'["1"]',
    ],
)
def test_malformed_batches_are_invalid_payloads(server: ClobServer, body: bytes) -> None:
    for route in ("/books", "/midpoints"):
        response = post(server, route, body)
        assert response.status_code == 400
        assert response.json() == {"error": "Invalid payload"}


def test_batches_over_the_limit_are_refused(server: ClobServer, pair: tuple[str, str]) -> None:
    response = post(server, "/midpoints", [{"token_id": pair[0]}] * (BATCH_LIMIT + 1))
    assert response.status_code == 400
    assert response.json() == {"error": "Payload exceeds the limit"}
    assert post(server, "/midpoints", [{"token_id": pair[0]}] * BATCH_LIMIT).status_code == 200


# --- midpoint, price, spread ---------------------------------------------------------------


def test_midpoints_one_and_many(server: ClobServer, pair: tuple[str, str]) -> None:
    yes, no = pair
    mid_yes = expected(server, yes).midpoint()
    mid_no = expected(server, no).midpoint()
    assert mid_yes is not None and mid_no is not None and mid_yes + mid_no == 1
    assert get(server, "/midpoint", token_id=yes).json() == {"mid": decimal_text(mid_yes)}
    many = post(server, "/midpoints", [{"token_id": yes}, {"token_id": "1"}, {"token_id": no}])
    assert many.status_code == 200
    assert many.json() == {yes: decimal_text(mid_yes), no: decimal_text(mid_no)}


def test_price_buy_is_the_best_bid_and_sell_the_best_ask(
    server: ClobServer, pair: tuple[str, str]
) -> None:
    book = expected(server, pair[0])
    assert book.best_bid is not None and book.best_ask is not None
    buy = get(server, "/price", token_id=pair[0], side="BUY")
    sell = get(server, "/price", token_id=pair[0], side="sell")
    assert buy.json() == {"price": decimal_text(book.best_bid)}
    assert sell.json() == {"price": decimal_text(book.best_ask)}
    bad = get(server, "/price", token_id=pair[0], side="HOLD")
    assert bad.status_code == 400 and bad.json() == {"error": "Invalid side"}


def test_spread(server: ClobServer, pair: tuple[str, str]) -> None:
    book = expected(server, pair[1])
    assert book.best_bid is not None and book.best_ask is not None
    response = get(server, "/spread", token_id=pair[1])
    assert response.json() == {"spread": decimal_text(book.best_ask - book.best_bid)}


@pytest.mark.parametrize("route", ["/book", "/midpoint", "/spread", "/price"])
def test_unknown_and_absent_tokens(server: ClobServer, route: str) -> None:
    unknown = get(server, route, token_id="12345678901234567890", side="BUY")
    assert unknown.status_code == 404 and unknown.json() == {"error": NO_ORDERBOOK}
    absent = get(server, route, side="BUY")
    assert absent.status_code == 400 and absent.json() == {"error": "Invalid token id"}


def test_unknown_routes_are_404(server: ClobServer) -> None:
    assert get(server, "/prices-history", market="1").status_code == 404
    assert httpx.post(server.origin + "/book", content=b"[]").status_code == 404


# --- faults --------------------------------------------------------------------------------


def test_a_missing_book_is_a_404_everywhere(faults: ClobServer) -> None:
    for route in ("/book", "/midpoint", "/spread", "/price"):
        response = get(faults, route, token_id="missing", side="BUY")
        assert response.status_code == 404 and response.json() == {"error": NO_ORDERBOOK}
    assert post(faults, "/books", [{"token_id": "missing"}]).json() == []
    assert post(faults, "/midpoints", [{"token_id": "missing"}]).json() == {}


def test_an_empty_book_is_served_but_has_no_prices(faults: ClobServer) -> None:
    book = get(faults, "/book", token_id="empty")
    assert book.status_code == 200
    assert book.json()["bids"] == [] and book.json()["asks"] == []
    for route in ("/midpoint", "/spread", "/price"):
        response = get(faults, route, token_id="empty", side="SELL")
        assert response.status_code == 404 and response.json() == {"error": NO_ORDERBOOK}
    assert post(faults, "/midpoints", [{"token_id": "empty"}]).json() == {}


def test_one_sided_and_crossed_books_get_the_clobs_arithmetic(faults: ClobServer) -> None:
    one = get(faults, "/book", token_id="one_sided").json()
    assert (one["bids"] == []) != (one["asks"] == [])
    best = Decimal((one["bids"] or one["asks"])[-1]["price"])
    assert get(faults, "/midpoint", token_id="one_sided").json() == {"mid": decimal_text(best / 2)}
    crossed = get(faults, "/book", token_id="crossed").json()
    bid, ask = Decimal(crossed["bids"][-1]["price"]), Decimal(crossed["asks"][-1]["price"])
    assert bid > ask
    mid = get(faults, "/midpoint", token_id="crossed").json()["mid"]
    assert Decimal(mid) == (bid + ask) / 2
    assert Decimal(get(faults, "/spread", token_id="crossed").json()["spread"]) == ask - bid < 0
    healthy = get(faults, "/book", token_id="None").json()
    assert Decimal(healthy["bids"][-1]["price"]) < Decimal(healthy["asks"][-1]["price"])


# --- the simulated instant -----------------------------------------------------------------


def test_the_header_wins_over_the_clock(world: SimulatedWorld, pair: tuple[str, str]) -> None:
    yes = pair[0]
    later = AT + timedelta(hours=5)
    with ClobServer(world, at=AT) as server:
        by_clock = get(server, "/book", token_id=yes).json()
        by_header = get(server, "/book", {"X-Arena-At": later.isoformat()}, token_id=yes).json()
        zulu = get(server, "/book", {"x-arena-at": "2026-01-07T07:30:00Z"}, token_id=yes).json()
        garbage = get(server, "/book", {"X-Arena-At": "yesterday"}, token_id=yes).json()
        server.at = later
        moved = get(server, "/book", token_id=yes).json()
    assert by_clock == book_json(expected(server, yes, AT))
    assert by_header == book_json(expected(server, yes, later))
    assert zulu == book_json(expected(server, yes, later))
    assert garbage == by_clock  # an unreadable header falls back to the clock
    assert moved == by_header
    assert by_clock["timestamp"] != by_header["timestamp"]


def test_without_header_or_clock_there_is_no_instant(world: SimulatedWorld) -> None:
    with ClobServer(world) as server:
        response = get(server, "/midpoint", token_id="1")
        assert response.status_code == 400 and "X-Arena-At" in response.json()["error"]
        batch = post(server, "/books", [{"token_id": "1"}])
        assert batch.status_code == 400


def test_the_log_counts_batches(world: SimulatedWorld, pair: tuple[str, str]) -> None:
    with ClobServer(world, at=AT) as server:
        post(server, "/midpoints", [{"token_id": token} for token in pair])
        get(server, "/midpoint", token_id=pair[0])
    assert [(c.method, c.route, c.tokens, c.status) for c in server.log] == [
        ("POST", "/midpoints", 2, 200),
        ("GET", "/midpoint", 1, 200),
    ]


def test_a_world_or_a_source_is_needed() -> None:
    with pytest.raises(ValueError):
        ClobServer()


# --- the shell -------------------------------------------------------------------------------


def test_cli_serves_the_demo_world_until_sigterm() -> None:
    import signal
    import subprocess
    import sys

    command = [sys.executable, "-m", "arena", "clob-server", "--port", "0", "--weeks", "1"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith(
            "simulated CLOB (seed 7, at 2026-01-04T00:00:00+00:00) at http://127.0.0.1:"
        )
        origin = first.rsplit(" at ", 1)[1].strip()
        response = httpx.get(origin + "/midpoint", params={"token_id": "1"}, timeout=5)
        assert response.status_code == 404 and response.json() == {"error": NO_ORDERBOOK}
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
    assert "served 1 CLOB requests" in out


def test_cli_refuses_an_unreadable_instant(capsys: pytest.CaptureFixture[str]) -> None:
    from arena.app.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["clob-server", "--port", "0", "--at", "soon"])
    assert exit_info.value.code != 0
    assert "--at" in capsys.readouterr().err
