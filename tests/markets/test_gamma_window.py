"""The Gamma client's end-date window (extension `horizon`'s live universe) against
the loopback Gamma server, which filters by the window as Gamma does (`GammaServer.catalogue`)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from arena.markets.gamma import KEYSET_PATH, LEGACY_PATH, GammaClient
from arena.markets.types import EndWindow

from .gamma_server import GammaServer, Reply, serve

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "gamma" / "recorded"
# Exactly the query the top-markets sync has always sent (recorded-payload tests pin it too).
V1_QUERY = {"active": "true", "closed": "false", "order": "volumeNum", "ascending": "false"}
AT = datetime(2026, 11, 8, tzinfo=UTC)
WINDOW = EndWindow(AT, AT + timedelta(days=14, hours=1))


def recorded() -> list[dict[str, Any]]:
    """Three real open markets of a recorded `/markets` page (ending 2026-06-01, 2026-12-31)."""
    return list(json.loads((RECORDED / "markets_list.raw.json").read_text()))


def copy(market_id: str, end: datetime | None, volume: float) -> dict[str, Any]:
    """A recorded market under a new id, end date and volume."""
    market = dict(recorded()[1], id=market_id, volumeNum=volume)
    market["endDate"] = end.strftime("%Y-%m-%dT%H:%M:%SZ") if end else None
    market["endDateIso"] = end.strftime("%Y-%m-%d") if end else None
    return market


@pytest.fixture
def server() -> Iterator[GammaServer]:
    with serve() as running:
        yield running


@pytest.fixture
def client(server: GammaServer) -> Iterator[GammaClient]:
    options: dict[str, Any] = {"timeout": 2.0, "min_interval": 0.0, "max_attempts": 1}
    with GammaClient(server.url, sleep=lambda _s: None, rng=random.Random(7), **options) as made:
        yield made


def catalogue() -> list[dict[str, Any]]:
    """By volume: two recorded long-dated markets, then short-dated ones, one without an end,
    one just past the window and one on each of its edges."""
    return [
        copy("90", AT + timedelta(days=200), 9e8),
        *recorded()[1:],
        copy("1", AT + timedelta(days=2), 5e6),
        copy("2", None, 4e6),
        copy("3", WINDOW.latest + timedelta(seconds=1), 3e6),
        copy("4", WINDOW.latest, 2e6),
        copy("5", AT, 1e6),
    ]


def test_without_a_window_the_query_is_unchanged(server: GammaServer, client: GammaClient) -> None:
    server.catalogue(catalogue())
    assert [m.id for m in client.top_markets(3)] == ["90", "703258", "665374"]
    assert [r.query for r in server.requests_to(KEYSET_PATH)] == [{**V1_QUERY, "limit": "100"}]


def test_a_window_asks_gamma_for_the_short_dated_top(
    server: GammaServer, client: GammaClient
) -> None:
    server.catalogue(catalogue())
    assert [m.id for m in client.top_markets(5, WINDOW)] == ["1", "4", "5"]  # both edges in
    assert [m.id for m in client.top_markets(1, WINDOW)] == ["1"]
    window = {"end_date_min": "2026-11-08T00:00:00Z", "end_date_max": "2026-11-22T01:00:00Z"}
    queries = [r.query for r in server.requests_to(KEYSET_PATH)]
    assert queries == [{**V1_QUERY, "limit": "100", **window}] * 2


def test_the_window_stays_on_every_keyset_page_and_on_the_offset_fallback(
    server: GammaServer, client: GammaClient
) -> None:
    many = [copy(str(100 + n), AT + timedelta(days=1), 1e6 - n) for n in range(130)]
    server.catalogue([copy("90", AT + timedelta(days=200), 9e8), *many])
    assert len(client.top_markets(120, WINDOW)) == 120
    pages = [r.query for r in server.requests_to(KEYSET_PATH)]
    assert [q.get("after_cursor") for q in pages] == [None, "100"]
    assert all(q["end_date_max"] == "2026-11-22T01:00:00Z" for q in pages)
    server.reset()
    server.script(KEYSET_PATH, Reply(404, {"error": "not found"}))
    server.catalogue(many)
    assert len(client.top_markets(120, WINDOW)) == 120
    legacy = [r.query for r in server.requests_to(LEGACY_PATH)]
    assert [q["offset"] for q in legacy] == ["0", "100"]
    assert all(q["end_date_min"] == "2026-11-08T00:00:00Z" for q in legacy)


def test_a_server_that_ignores_the_window_yields_fewer_markets_never_wrong_ones(
    server: GammaServer, client: GammaClient
) -> None:
    server.script(KEYSET_PATH, Reply(body={"markets": catalogue()}))  # no filtering at all
    assert [m.id for m in client.top_markets(5, WINDOW)] == ["1", "4", "5"]


def test_an_end_window_refuses_naive_or_reversed_instants() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        EndWindow(datetime(2026, 11, 8), AT)
    with pytest.raises(ValueError, match="ends before it starts"):
        EndWindow(AT, AT - timedelta(seconds=1))
    assert not WINDOW.holds(None) and WINDOW.holds(AT) and not WINDOW.holds(AT - timedelta(1))
