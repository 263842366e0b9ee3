"""Live: the real Gamma API still sends what `arena.markets.gamma` assumes (`pytest -m live`).

The client's keyset envelope was written from Polymarket's docs, not from a recorded page (see
the module notes of `arena/markets/gamma.py`): these checks ask the real API, through the
project's own `GammaClient`, for a few markets and check the envelope, the fields the parser
relies on, that every market parses, and that the filter and the cursor behave as assumed.
"""

import logging
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from arena.markets import gamma
from arena.markets.gamma import KEYSET_PATH, GammaClient, parse_market
from arena.markets.types import EndWindow
from tests.live.network import require_network

pytestmark = pytest.mark.live

GAMMA_URL = "https://gamma-api.polymarket.com"  # the real API, whatever ARENA_GAMMA_URL says
LIMIT = 5
# What the parser and the engine need from every open market (alternative spellings grouped).
REQUIRED = (
    ("id",),
    ("question",),
    ("outcomes",),
    ("outcomePrices",),
    ("active",),
    ("closed",),
    ("volumeNum", "volume"),
)
# Optional per market (a missing close date is allowed), but its name must still be in use.
ON_THE_PAGE = (("endDate", "endDateIso"),)


@pytest.fixture
def client() -> Iterator[GammaClient]:
    with GammaClient(GAMMA_URL, timeout=20.0, max_attempts=2) as live:
        yield live


def _params(**extra: str) -> dict[str, str]:
    return {**gamma.TOP_MARKET_FILTER, "limit": str(LIMIT), **extra}


def _missing(raw: Mapping[str, Any], fields: tuple[tuple[str, ...], ...]) -> list[str]:
    return ["/".join(names) for names in fields if all(raw.get(n) in (None, "") for n in names)]


def test_keyset_envelope_fields_and_cursor(client: GammaClient) -> None:
    require_network(GAMMA_URL)
    body = client._get_json(KEYSET_PATH, _params())
    assert isinstance(body, dict), f"keyset answered a {type(body).__name__}, not an object"
    items = body.get("markets", body.get("data"))
    assert isinstance(items, list) and items, f"no markets list in keys {sorted(body)}"
    assert len(items) <= LIMIT, f"limit={LIMIT} was ignored: {len(items)} markets"
    cursor = body.get("next_cursor", body.get("nextCursor"))
    assert isinstance(cursor, str) and cursor, f"no next cursor in keys {sorted(body)}"

    missing = {str(raw.get("id")): _missing(raw, REQUIRED) for raw in items}
    assert not any(missing.values()), f"fields the parser relies on are absent: {missing}"
    unseen = set.intersection(*(set(_missing(raw, ON_THE_PAGE)) for raw in items))
    assert not unseen, f"no market of the page has {sorted(unseen)}"
    parsed = [parse_market(raw) for raw in items]  # MarketParseError names the market
    for market in parsed:
        assert market.prices is not None, f"market {market.id}: outcomePrices unusable"
        assert len(market.prices) == len(market.outcomes)
        assert market.active and not market.closed, f"market {market.id} is not open"
        assert market.volume is not None, f"market {market.id}: volume unusable"
    volumes = [market.volume or 0.0 for market in parsed]
    assert volumes == sorted(volumes, reverse=True), f"not by volume, descending: {volumes}"

    # The client's own reading of the envelope pages on with the cursor, to new markets.
    following, _ = client._keyset_page(_params(after_cursor=cursor))
    first_ids = {str(raw.get("id")) for raw in items}
    assert following, "the page after the cursor is empty"
    assert not first_ids & {str(raw.get("id")) for raw in following}, "the cursor was ignored"


def test_top_markets_and_one_market_by_id(
    client: GammaClient, caplog: pytest.LogCaptureFixture
) -> None:
    require_network(GAMMA_URL)
    with caplog.at_level(logging.WARNING, logger="arena.markets.gamma"):
        top = client.top_markets(limit_total=LIMIT)
    assert len(top) == LIMIT and len({m.id for m in top}) == LIMIT
    fallbacks = [r.getMessage() for r in caplog.records if "falling back" in r.getMessage()]
    assert not fallbacks, f"keyset paging failed, the legacy list answered: {fallbacks}"

    one = client.get_market(top[0].id)  # how resolution reads a held market
    assert one is not None and one.id == top[0].id and one.question == top[0].question


def test_the_end_date_window_is_honoured_by_gamma_itself(client: GammaClient) -> None:
    """The horizon sync sends `end_date_min` / `end_date_max`. The client drops a
    market outside the window, so a Gamma that ignored them would only shrink the universe
    silently: this asks the raw page, before the client's own check, and needs every market
    on it to end inside the window."""
    require_network(GAMMA_URL)
    now = datetime.now(UTC).replace(microsecond=0)
    window = EndWindow(now, now + timedelta(days=14))
    params = {**gamma._top_query(window), "limit": str(LIMIT)}
    body = client._get_json(KEYSET_PATH, params)
    items = body.get("markets", body.get("data")) if isinstance(body, dict) else None
    assert isinstance(items, list) and items, f"no markets in a 14-day window: {body!r:.300}"
    ends = {str(raw.get("id")): parse_market(raw).end_date for raw in items}
    outside = {mid: end for mid, end in ends.items() if not window.holds(end)}
    assert not outside, f"Gamma ignored the end-date window {window}: {outside}"
