"""The Gamma client against a real loopback HTTP server playing realistic, messy responses."""

from __future__ import annotations

import json
import logging
import random
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from arena.markets.gamma import (
    KEYSET_PATH,
    LEGACY_PATH,
    GammaClient,
    GammaUnavailable,
    MarketParseError,
    parse_market,
    parse_page,
    parse_timestamp,
    retry_after_seconds,
)

from .gamma_server import GammaServer, Reply, serve

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gamma"
LOGGER = "arena.markets.gamma"

ClientFactory = Callable[..., GammaClient]


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def raw_market(market_id: str, **overrides: Any) -> dict[str, Any]:
    """A realistic open market (modelled on a real list page) with a new id."""
    market = dict(load("markets_page.json")[1])
    market.update(
        id=market_id,
        question=f"Will test market {market_id} happen?",
        slug=f"test-market-{market_id}",
    )
    market.update(overrides)
    return market


def keyset_page(ids: list[str], cursor: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"markets": [raw_market(market_id) for market_id in ids]}
    if cursor is not None:
        body["next_cursor"] = cursor
    return body


def ids_of(markets: list[Any]) -> list[str]:
    return [market.id for market in markets]


@pytest.fixture
def server() -> Iterator[GammaServer]:
    with serve() as running:
        yield running


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_client(server: GammaServer, sleeps: list[float]) -> Iterator[ClientFactory]:
    """Clients aimed at the loopback server; sleep is recorded, never real."""
    clients: list[GammaClient] = []

    def factory(**overrides: Any) -> GammaClient:
        options: dict[str, Any] = {
            "timeout": 2.0,
            "min_interval": 0.0,
            "sleep": sleeps.append,
            "rng": random.Random(7),
        }
        options.update(overrides)
        client = GammaClient(server.url, **options)
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.close()


# ---- paging -------------------------------------------------------------------------------


def test_keyset_pages_with_short_pages_duplicates_and_a_repeated_cursor(
    server: GammaServer, make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    duplicate = raw_market("5", question="A later copy that must not win")
    pages: list[tuple[str | None, dict[str, Any]]] = [
        (None, keyset_page(["1", "2", "3"], "c1")),
        ("c1", keyset_page(["4", "5"], "c2")),  # short page: not the end
        ("c2", {"markets": [duplicate, raw_market("6")], "next_cursor": "c3"}),
        ("c3", keyset_page(["7"], "c4")),
        ("c4", keyset_page(["8", "9"], "c5")),
        ("c5", keyset_page(["10", "1"], "c2")),  # repeats a cursor: stop here
    ]
    for after, body in pages:
        server.script(KEYSET_PATH, Reply(body=body), query={"after_cursor": after})

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        markets = make_client().top_markets(limit_total=500)

    assert ids_of(markets) == [str(n) for n in range(1, 11)]
    assert markets[4].question == "Will test market 5 happen?"
    requests = server.requests_to(KEYSET_PATH)
    assert [r.query.get("after_cursor") for r in requests] == [None, "c1", "c2", "c3", "c4", "c5"]
    for request in requests:
        assert request.query["active"] == "true"
        assert request.query["closed"] == "false"
        assert request.query["order"] == "volumeNum"
        assert request.query["ascending"] == "false"
        assert request.query["limit"] == "100"
    assert "repeated cursor" in caplog.text
    assert server.requests_to(LEGACY_PATH) == []


def test_keyset_accepts_data_and_camel_case_cursor(
    server: GammaServer, make_client: ClientFactory
) -> None:
    first = {"data": [raw_market("1")], "nextCursor": "n1"}
    server.script(KEYSET_PATH, Reply(body=first), query={"after_cursor": None})
    server.script(
        KEYSET_PATH, Reply(body={"data": [raw_market("2")]}), query={"after_cursor": "n1"}
    )

    assert ids_of(make_client().top_markets()) == ["1", "2"]


@pytest.mark.parametrize(
    "last_page",
    [
        keyset_page(["4"], None),
        keyset_page([], "c9"),
        {"markets": [raw_market("4")], "next_cursor": ""},
    ],
    ids=["missing-cursor", "empty-page", "blank-cursor"],
)
def test_keyset_stops_on_missing_cursor_or_empty_page(
    server: GammaServer, make_client: ClientFactory, last_page: dict[str, Any]
) -> None:
    server.script(
        KEYSET_PATH, Reply(body=keyset_page(["1", "2", "3"], "c1")), query={"after_cursor": None}
    )
    server.script(KEYSET_PATH, Reply(body=last_page), query={"after_cursor": "c1"})

    markets = make_client().top_markets()

    assert len(server.requests_to(KEYSET_PATH)) == 2
    assert ids_of(markets)[:3] == ["1", "2", "3"]


def test_limit_total_stops_paging_once_enough_markets_are_collected(
    server: GammaServer, make_client: ClientFactory
) -> None:
    server.script(
        KEYSET_PATH, Reply(body=keyset_page(["1", "2", "3"], "c1")), query={"after_cursor": None}
    )
    server.script(
        KEYSET_PATH, Reply(body=keyset_page(["4", "5", "6"], "c2")), query={"after_cursor": "c1"}
    )
    server.script(KEYSET_PATH, Reply(body=keyset_page(["7"], None)), query={"after_cursor": "c2"})

    markets = make_client().top_markets(limit_total=5)

    assert ids_of(markets) == ["1", "2", "3", "4", "5"]
    assert len(server.requests_to(KEYSET_PATH)) == 2


def test_page_cap_bounds_endless_paging(
    server: GammaServer, make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    server.script(KEYSET_PATH, Reply(body=keyset_page(["1"], "c1")), query={"after_cursor": None})
    for n in range(1, 10):
        body = keyset_page([str(n + 1)], f"c{n + 1}")
        server.script(KEYSET_PATH, Reply(body=body), query={"after_cursor": f"c{n}"})

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        markets = make_client(page_cap=3).top_markets()

    assert ids_of(markets) == ["1", "2", "3"]
    assert len(server.requests_to(KEYSET_PATH)) == 3
    assert "page cap" in caplog.text


def test_closed_or_inactive_markets_are_dropped_from_the_top_list(
    server: GammaServer, make_client: ClientFactory
) -> None:
    body = {
        "markets": [
            raw_market("1"),
            raw_market("2", closed=True),
            raw_market("3", active=False),
            raw_market("4"),
        ]
    }
    server.script(KEYSET_PATH, Reply(body=body))

    assert ids_of(make_client().top_markets()) == ["1", "4"]


# ---- legacy fallback -----------------------------------------------------------------------


@pytest.mark.parametrize("status", [404, 405, 410])
def test_keyset_missing_falls_back_to_legacy_offset_paging(
    server: GammaServer, make_client: ClientFactory, sleeps: list[float], status: int
) -> None:
    server.script(KEYSET_PATH, Reply(status, {"error": "not found"}))
    legacy = {
        "0": [raw_market("1"), raw_market("2"), raw_market("3")],
        "3": [raw_market("4"), raw_market("2")],  # short page with a duplicate: not the end
        "5": [raw_market("5")],
        "6": [],
    }
    for offset, body in legacy.items():
        server.script(LEGACY_PATH, Reply(body=body), query={"offset": offset})

    markets = make_client().top_markets()

    assert ids_of(markets) == ["1", "2", "3", "4", "5"]
    assert len(server.requests_to(KEYSET_PATH)) == 1  # a 4xx is not retried
    offsets = [r.query["offset"] for r in server.requests_to(LEGACY_PATH)]
    assert offsets == ["0", "3", "5", "6"]
    assert all(r.query["order"] == "volumeNum" for r in server.requests_to(LEGACY_PATH))
    assert sleeps == []


def test_unrecognised_keyset_envelope_falls_back_to_legacy(
    server: GammaServer, make_client: ClientFactory
) -> None:
    server.script(KEYSET_PATH, Reply(body=[raw_market("9")]))
    server.script(LEGACY_PATH, Reply(body=[raw_market("1")]), query={"offset": "0"})
    server.script(LEGACY_PATH, Reply(body=[]), query={"offset": "1"})

    assert ids_of(make_client().top_markets()) == ["1"]


def test_legacy_server_that_ignores_offset_is_not_paged_forever(
    server: GammaServer, make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    server.script(LEGACY_PATH, Reply(body=[raw_market("1"), raw_market("2")]))

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        markets = make_client().top_markets()

    assert ids_of(markets) == ["1", "2"]
    assert len(server.requests_to(LEGACY_PATH)) == 2
    assert "repeated earlier markets" in caplog.text


def test_both_endpoints_failing_raises_gamma_unavailable_naming_both(
    server: GammaServer, make_client: ClientFactory
) -> None:
    server.script(KEYSET_PATH, Reply(404, {"error": "gone"}))
    server.script(LEGACY_PATH, Reply(503, "down"))

    with pytest.raises(GammaUnavailable) as caught:
        make_client(max_attempts=2).top_markets()

    assert caught.value.path == LEGACY_PATH
    assert caught.value.status == 503
    assert "/markets/keyset" in caught.value.message
    assert "HTTP 503" in caught.value.message


# ---- retries -------------------------------------------------------------------------------


def test_429_honours_retry_after_seconds(
    server: GammaServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script(
        KEYSET_PATH,
        Reply(429, {"error": "slow down"}, headers={"Retry-After": "7"}),
        Reply(body=keyset_page(["1"], None)),
    )

    assert ids_of(make_client().top_markets()) == ["1"]
    assert sleeps == [7.0]
    assert len(server.requests_to(KEYSET_PATH)) == 2


def test_retry_after_within_the_cap_is_waited_for(
    server: GammaServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script(
        "/markets/1",
        Reply(429, "", headers={"Retry-After": "30"}),
        Reply(body=raw_market("1")),
    )

    assert make_client(max_backoff=30).get_market("1") is not None
    assert sleeps == [30]


def test_a_retry_after_beyond_the_cap_is_not_waited_for_and_opens_the_breaker(
    server: GammaServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script("/markets/1", Reply(429, "", headers={"Retry-After": "99999"}))
    client = make_client(max_backoff=30)

    with pytest.raises(GammaUnavailable, match="retry after 99999 s, more than the 30 s"):
        client.get_market("1")
    asked = len(server.requests)
    with pytest.raises(GammaUnavailable, match="Gamma GET /markets/1 not called: 1 failure"):
        client.get_market("1")
    assert sleeps == [] and len(server.requests) == asked  # no wait, no second request


def test_retry_after_parses_seconds_and_http_dates() -> None:
    now = datetime(2026, 8, 18, 2, 24, 0, tzinfo=UTC)
    assert retry_after_seconds("12", now) == 12.0
    assert retry_after_seconds("Tue, 18 Aug 2026 02:24:09 GMT", now) == 9.0
    assert retry_after_seconds("Tue, 18 Aug 2026 02:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon", now) is None
    assert retry_after_seconds(None, now) is None


def test_503_then_success_backs_off_with_jitter(
    server: GammaServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script("/markets/1", Reply(503, "busy"), Reply(body=raw_market("1")))

    market = make_client(backoff_base=0.5).get_market("1")

    assert market is not None and market.id == "1"
    assert len(sleeps) == 1 and 0 <= sleeps[0] <= 0.5


def test_backoff_is_exponential_full_jitter_and_capped(
    server: GammaServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script("/markets/1", Reply(502, "bad gateway"))

    with pytest.raises(GammaUnavailable) as caught:
        make_client(
            max_attempts=5, backoff_base=1.0, max_backoff=3.0, rng=random.Random(3)
        ).get_market("1")

    reference = random.Random(3)
    assert sleeps == [reference.uniform(0, ceiling) for ceiling in (1.0, 2.0, 3.0, 3.0)]
    assert len(server.requests_to("/markets/1")) == 5
    assert caught.value.status == 502
    assert "/markets/1" in caught.value.message and "HTTP 502" in caught.value.message
    assert "5 attempt" in caught.value.message


def test_timeout_is_retried(
    server: GammaServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script("/markets/1", Reply(body=raw_market("1"), delay=1.0), Reply(body=raw_market("1")))

    market = make_client(timeout=0.2).get_market("1")

    assert market is not None
    assert len(server.requests_to("/markets/1")) == 2
    assert len(sleeps) == 1


def test_timeouts_to_the_end_raise_gamma_unavailable(
    server: GammaServer, make_client: ClientFactory
) -> None:
    server.script("/markets/1", Reply(body=raw_market("1"), delay=1.0))

    with pytest.raises(GammaUnavailable, match=r"/markets/1.*timed out"):
        make_client(timeout=0.2, max_attempts=2).get_market("1")


def test_garbage_body_is_retried_then_unavailable_without_echoing_it(
    server: GammaServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    garbage = "<html>" + "x" * 5000 + "</html>"
    server.script("/markets/1", Reply(200, garbage, headers={"Content-Type": "text/html"}))

    with pytest.raises(GammaUnavailable) as caught:
        make_client(max_attempts=3).get_market("1")

    assert len(server.requests_to("/markets/1")) == 3
    assert len(sleeps) == 2
    message = caught.value.message
    assert "/markets/1" in message and "not JSON" in message
    assert "x" * 201 not in message and len(message) < 400


def test_other_4xx_is_not_retried(
    server: GammaServer, make_client: ClientFactory, sleeps: list[float]
) -> None:
    server.script("/markets/abc", Reply(422, {"error": "id must be a number"}))

    with pytest.raises(GammaUnavailable) as caught:
        make_client().get_market("abc")

    assert caught.value.status == 422
    assert len(server.requests_to("/markets/abc")) == 1
    assert sleeps == []


def test_connection_refused_is_retried_then_unavailable(sleeps: list[float]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = GammaClient(
        f"http://127.0.0.1:{port}", timeout=0.5, max_attempts=2, min_interval=0, sleep=sleeps.append
    )
    with client, pytest.raises(GammaUnavailable, match="connection failed"):
        client.get_market("1")
    assert len(sleeps) == 1


def test_requests_are_paced_by_min_interval(
    server: GammaServer, make_client: ClientFactory
) -> None:
    server.script("/markets/1", Reply(body=raw_market("1")))
    paced: list[float] = []
    client = make_client(min_interval=0.1, sleep=paced.append, clock=lambda: 100.0)

    client.get_market("1")
    client.get_market("1")
    client.get_market("1")

    assert paced == [0.1, 0.1]


# ---- get_market ----------------------------------------------------------------------------


def test_get_market_404_is_none(server: GammaServer, make_client: ClientFactory) -> None:
    server.script("/markets/999", Reply(404, {"type": "not found", "error": "market not found"}))

    assert make_client().get_market("999") is None
    assert len(server.requests_to("/markets/999")) == 1


def test_get_market_parses_a_resolved_market(
    server: GammaServer, make_client: ClientFactory
) -> None:
    server.script("/markets/842093", Reply(body=load("market_resolved.json")))

    market = make_client().get_market("842093")

    assert market is not None
    assert market.closed and market.uma_resolution_status == "resolved"
    assert market.prices == [Decimal(0), Decimal(1)]
    assert market.closed_time == datetime(2026, 6, 12, 20, 41, 49, tzinfo=UTC)
    assert market.event_id is None  # this payload carries no events[]
    assert market.group_item_title == "No IPO before 2028"


def test_get_market_with_an_unreadable_payload_raises_parse_error(
    server: GammaServer, make_client: ClientFactory
) -> None:
    server.script("/markets/7", Reply(body={"id": "7", "question": "Q?", "outcomes": "[]"}))

    with pytest.raises(MarketParseError) as caught:
        make_client().get_market("7")
    assert caught.value.market_id == "7"


def test_client_sends_json_accept_and_a_user_agent(
    server: GammaServer, make_client: ClientFactory
) -> None:
    server.script("/markets/1", Reply(body=raw_market("1")))

    with make_client() as client:
        client.get_market("1")

    headers = {k.lower(): v for k, v in server.requests_to("/markets/1")[0].headers.items()}
    assert headers["accept"] == "application/json"
    assert headers["user-agent"].startswith("forecaster-arena/")


# ---- parsing -------------------------------------------------------------------------------


def test_real_list_page_parses_with_json_string_fields() -> None:
    markets = parse_page(load("markets_page.json"))

    assert ids_of(markets) == ["2063134", "703258", "665374"]
    first = markets[0]
    assert first.market_type == "binary"
    assert first.outcomes == ["Yes", "No"]
    assert first.prices == [Decimal("0.01"), Decimal("0.99")]
    assert first.volume == pytest.approx(74637265.46443298)
    assert first.liquidity == pytest.approx(16085.17368)
    assert first.event_id == "411239"
    assert first.event_slug == "next-prime-minister-of-ethiopia"
    assert first.group_item_title == "Adanech Abiebie"
    assert first.neg_risk is True
    assert first.category is None
    assert first.end_date == datetime(2026, 6, 1, tzinfo=UTC)
    assert markets[1].group_item_title is None  # Gamma sends "" for "no group"


def test_numbers_as_strings_and_real_lists_are_accepted() -> None:
    raw = raw_market("1", outcomes=["Yes", "No"], outcomePrices=[0.25, "0.75"], volume="123.5")
    for key in ("volumeNum", "liquidityNum"):
        raw.pop(key)
    raw["liquidity"] = "42"

    market = parse_market(raw)

    assert market.prices == [Decimal("0.25"), Decimal("0.75")]
    assert market.volume == 123.5
    assert market.liquidity == 42.0


def test_unreadable_or_infinite_numbers_become_none() -> None:
    raw = raw_market("1", volumeNum="1e400", volume="lots", liquidityNum=None, liquidity=True)
    market = parse_market(raw)
    assert market.volume is None and market.liquidity is None


def test_integer_ids_and_string_flags_are_accepted() -> None:
    market = parse_market(raw_market("1", id=31337, closed="true", negRisk="false"))
    assert market.id == "31337"
    assert market.closed is True and market.neg_risk is False


@pytest.mark.parametrize(
    "prices",
    [
        None,
        '["0.5"]',
        '["0.5", "0.5", "0"]',
        '["1.2", "-0.2"]',
        '["abc", "0.5"]',
        "not json",
        '["NaN", "0.5"]',
    ],
    ids=["absent", "too-few", "too-many", "out-of-range", "unparseable", "garbage", "nan"],
)
def test_unusable_prices_keep_the_market_without_prices(prices: str | None) -> None:
    raw = raw_market("1", outcomePrices=prices)
    if prices is None:
        raw.pop("outcomePrices")

    market = parse_market(raw)

    assert market.id == "1"
    assert market.prices is None


def test_market_with_missing_prices_still_appears_in_the_top_list(
    server: GammaServer, make_client: ClientFactory
) -> None:
    no_prices = raw_market("2")
    no_prices.pop("outcomePrices")
    server.script(KEYSET_PATH, Reply(body={"markets": [raw_market("1"), no_prices]}))

    markets = make_client().top_markets()

    assert ids_of(markets) == ["1", "2"]
    assert markets[1].prices is None


def test_prices_are_kept_exact_not_rounded() -> None:
    market = parse_market(load("market_closed_not_resolved.json"))
    assert market.prices is not None
    assert market.prices[1] == Decimal("0.9999999563569650195371329796277182")
    assert market.prices[1] != 1
    assert market.category == "US-current-affairs"


def test_the_three_timestamp_formats_become_aware_utc() -> None:
    raw = raw_market(
        "1",
        endDate=None,
        endDateIso="2026-12-31",
        closedTime="2024-11-06 15:17:41+00",
        updatedAt="2026-08-06T22:38:20.060949Z",
    )
    market = parse_market(raw)

    assert market.end_date == datetime(2026, 12, 31, tzinfo=UTC)
    assert market.closed_time == datetime(2024, 11, 6, 15, 17, 41, tzinfo=UTC)
    assert market.updated_at == datetime(2026, 8, 6, 22, 38, 20, 60949, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-11-20T00:00:00Z", datetime(2020, 11, 20, tzinfo=UTC)),
        ("2020-10-09T17:00:08.468Z", datetime(2020, 10, 9, 17, 0, 8, 468000, tzinfo=UTC)),
        ("2024-01-04 17:33:51.448+00", datetime(2024, 1, 4, 17, 33, 51, 448000, tzinfo=UTC)),
        ("2024-11-06T10:17:41-05:00", datetime(2024, 11, 6, 15, 17, 41, tzinfo=UTC)),
        ("2024-11-05", datetime(2024, 11, 5, tzinfo=UTC)),
        ("yesterday", None),
        ("", None),
        (None, None),
        (1730800000, None),
    ],
)
def test_parse_timestamp(text: object, expected: datetime | None) -> None:
    assert parse_timestamp(text) == expected


def test_end_date_prefers_the_full_timestamp_over_the_date_only_field() -> None:
    market = parse_market(raw_market("1", endDate="2024-11-05T12:00:00Z", endDateIso="2024-11-05"))
    assert market.end_date == datetime(2024, 11, 5, 12, tzinfo=UTC)


def test_no_first_outcome_order_is_kept_with_prices_aligned() -> None:
    market = parse_market(raw_market("1", outcomes='["No", "Yes"]', outcomePrices='["0.7", "0.3"]'))

    assert market.market_type == "binary"
    assert market.outcomes == ["No", "Yes"]
    assert market.prices == [Decimal("0.7"), Decimal("0.3")]


def test_named_outcome_markets() -> None:
    closed, open_ = parse_page(load("markets_named_outcomes.json"))

    assert open_.market_type == "named"
    assert open_.outcomes == ["BoomBoys", "Team Spirit"]
    assert open_.prices == [Decimal("0.0005"), Decimal("0.9995")]
    assert open_.liquidity == pytest.approx(837638.47991)
    assert closed.liquidity is None  # the key is absent on the closed market
    assert (
        closed.event_title == "Dota 2: BoomBoys vs Team Spirit (BO3) - The International Playoffs"
    )
    assert closed.group_item_title == "Game 1 Winner"


def test_neg_risk_group_keeps_event_and_group_item_title() -> None:
    trump, harris = parse_page(load("markets_resolved_negrisk_pair.json"))

    for market in (trump, harris):
        assert market.neg_risk is True
        assert market.event_id == "903193"
        assert market.event_slug == "presidential-election-winner-2024"
        assert market.event_title == "Presidential Election Winner 2024"
    assert trump.group_item_title == "Donald Trump"
    assert harris.group_item_title == "Kamala Harris"
    assert harris.active is True and harris.closed is True


def test_unreadable_payloads_are_skipped_and_logged_while_the_page_parses(
    server: GammaServer, make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    page = [
        raw_market("1"),
        {"question": "no id at all", "outcomes": '["Yes", "No"]'},
        raw_market("31", question=""),
        raw_market("32", outcomes="{not json"),
        raw_market("33", outcomes='["Only one"]', outcomePrices='["1"]'),
        raw_market("34", outcomes="[1, 2]"),
        raw_market("35", outcomes='["Yes", "Yes"]'),
        "not even an object",
        raw_market("2"),
    ]
    server.script(KEYSET_PATH, Reply(body={"markets": page}))

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        markets = make_client().top_markets()

    assert ids_of(markets) == ["1", "2"]
    for market_id in ("31", "32", "33", "34", "35"):
        assert f"skipping Gamma market {market_id}:" in caplog.text
    assert "no id" in caplog.text


def test_parse_market_errors_name_the_market() -> None:
    with pytest.raises(MarketParseError) as caught:
        parse_market(raw_market("77", outcomes='["Only"]'))
    assert caught.value.market_id == "77"
    assert "at least 2" in caught.value.reason
