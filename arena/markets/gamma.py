"""Polymarket Gamma API client: paging, retries and parsing as the API really behaves.

Notes for the README (what this module assumes about Gamma, and why):

- **Top markets.** `top_markets` asks `/markets/keyset?active=true&closed=false&order=volumeNum&
  ascending=false&limit=100`, paging with `after_cursor`. No real keyset page was available when
  this was written, so its envelope is assumed from Polymarket's docs and client code: an object
  `{"markets": [...], "next_cursor": "..."}` (`data` is accepted for the list, `nextCursor` for
  the cursor), the cursor absent or empty on the last page.
- **Fallback.** If keyset fails in any way (404/405/410 or any other 4xx, an unrecognised
  envelope, or it stays unavailable after the retries) the client logs a warning and pages the
  legacy `/markets` list instead (a bare JSON array, `offset` paging). Markets already collected
  are kept; the legacy pass dedupes against them. Only if the legacy list fails too does
  `GammaUnavailable` reach the caller.
- **Stopping.** The server clamps `limit` to 100, so a short page is NOT the end: paging stops on
  an empty page, a missing cursor, a cursor seen before (logged), a legacy page that brings no
  new id (the server ignoring `offset`, logged), `page_cap` pages, or `limit_total` markets.
- **End-date window.** `top_markets(..., ending=EndWindow)` adds `end_date_min` and
  `end_date_max` (ISO 8601, `2026-02-15T00:00:00Z`) to both endpoints' queries, the filters
  Gamma's `/markets` and `/markets/keyset` take (public clients send them with `order` and
  `after_cursor`); assumed inclusive at both ends. A market that comes back outside the window
  (or without an end date) is dropped like a closed one, so a server that ignored the filter
  yields fewer markets, never wrong ones. Without a window the queries are exactly as above.
- **Dedupe and rank.** Markets are deduped by id, first occurrence wins; rank is order of
  appearance. A market that comes back closed or inactive despite the filter is dropped.
- **Parsing.** Payloads are read through the Pydantic models of the wire format in
  `arena.markets.gamma_wire` (`parse_market`, `parse_page` and `MarketParseError` live there and
  are re-exported here). `outcomes`, `outcomePrices`, `clobTokenIds`, `umaResolutionStatuses`
  are JSON-encoded strings (real lists are accepted too). Numbers may be strings or numbers;
  `volumeNum`/`liquidityNum` win over `volume`/`liquidity`. Missing fields become None; blank
  strings are treated as missing.
  Timestamps (`...Z` with or without fractions, `YYYY-MM-DD HH:MM:SS+00`, date-only) become
  aware UTC; `endDate` wins over the date-only `endDateIso`. Outcome order is the source's.
- **Prices.** Kept as exact Decimals, unrounded (a leftover 0.99999995 must not round to 1 and
  look like a resolution). A price list that is not a list, has a different length from the
  outcomes, holds a value outside [0, 1] or an unparseable value becomes `prices=None`: the
  market is kept but unusable for trading (the engine must not quote it).
- **Unusable payloads.** A market without an id or a question, or whose outcomes are not a list
  of at least two distinct non-empty strings, is skipped with a warning (logger
  `arena.markets.gamma`); the rest of the page still parses.
- **Retries.** Timeouts, connection errors, 429, 5xx and a 200 whose body is not JSON are
  retried with exponential backoff and full jitter; `Retry-After` (seconds or HTTP-date) is
  honoured on 429/503, capped at `max_backoff`; other 4xx are not retried. Messages name the
  path and the last status/error and never echo more than 200 characters of a body. The loop
  lives in `arena.markets.retrying`, shared with the CLOB client.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from arena.core.backoff import retry_after_seconds
from arena.core.errors import ArenaError
from arena.markets.bounded_http import MIB, ReadLimits
from arena.markets.gamma_wire import (
    MarketParseError,
    decode_list,
    parse_market,
    parse_page,
    parse_timestamp,
    read_id,
)
from arena.markets.http_client import USER_AGENT, OwnsHttpClient, json_http_client
from arena.markets.retrying import RequestFailed, Retrier, RetryPolicy
from arena.markets.retrying import snippet as _snippet
from arena.markets.types import EndWindow, ParsedMarket

__all__ = [
    "KEYSET_PATH",
    "LEGACY_PATH",
    "USER_AGENT",
    "GammaClient",
    "GammaUnavailable",
    "MarketParseError",
    "decode_list",
    "parse_market",
    "parse_page",
    "parse_timestamp",
    "retry_after_seconds",
]

logger = logging.getLogger("arena.markets.gamma")

KEYSET_PATH = "/markets/keyset"
LEGACY_PATH = "/markets"
PAGE_LIMIT = 100
# A page of 100 markets is well under 2 MB; 60 s covers a slow page, not a stalled one.
GAMMA_LIMITS = ReadLimits(max_bytes=32 * MIB, deadline=60.0)
TOP_MARKET_FILTER: dict[str, str] = {
    "active": "true",
    "closed": "false",
    "order": "volumeNum",
    "ascending": "false",
    "limit": str(PAGE_LIMIT),
}


class GammaUnavailable(ArenaError):
    """Gamma could not answer usefully (after retries, or with a non-retryable status)."""

    def __init__(self, message: str, *, path: str, status: int | None = None) -> None:
        super().__init__(message, "check ARENA_GAMMA_URL and the network, then run the job again")
        self.path = path
        self.status = status


def _top_query(ending: EndWindow | None) -> dict[str, str]:
    """The top-markets query: `TOP_MARKET_FILTER`, plus Gamma's end-date filters with a window."""
    if ending is None:
        return dict(TOP_MARKET_FILTER)
    return {
        **TOP_MARKET_FILTER,
        "end_date_min": gamma_instant(ending.earliest),
        "end_date_max": gamma_instant(ending.latest),
    }


def gamma_instant(at: datetime) -> str:
    """An instant as Gamma's date filters take it: UTC, whole seconds, `Z` (`...T00:05:00Z`)."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------
# HTTP
# --------------------------------------------------------------------------------------------


def _page_ids(items: list[Any]) -> set[str]:
    """The ids present on a raw page (to notice a server that ignores `offset`)."""
    ids = (read_id(item.get("id")) for item in items if isinstance(item, Mapping))
    return {market_id for market_id in ids if market_id is not None}


class GammaClient(OwnsHttpClient):
    """A polite, retrying client for the public Gamma API (no credentials needed)."""

    def __init__(
        self,
        base_url: str = "https://gamma-api.polymarket.com",
        *,
        timeout: float = 15.0,
        max_attempts: int = 4,
        backoff_base: float = 0.5,
        max_backoff: float = 30.0,
        min_interval: float = 0.1,
        page_cap: int = 50,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.BaseTransport | None = None,
        limits: ReadLimits = GAMMA_LIMITS,
    ) -> None:
        policy = RetryPolicy(max_attempts, backoff_base, max_backoff, min_interval, limits)
        self.page_cap = page_cap
        self._client = json_http_client(
            base_url=base_url.rstrip("/"),
            timeout=timeout,
            transport=transport,
            follow_redirects=True,
        )
        self._retrier = Retrier(
            self._client,
            policy,
            label="Gamma",
            logger=logger,
            sleep=sleep,
            rng=rng,
            clock=clock,
        )

    # ---- public API ------------------------------------------------------------------------

    def top_markets(
        self, limit_total: int = 500, ending: EndWindow | None = None
    ) -> list[ParsedMarket]:
        """The top `limit_total` open markets by volume, ranked by order of appearance; with
        `ending`, the top among the markets whose end date falls within it."""
        collected: dict[str, ParsedMarket] = {}
        if limit_total <= 0:
            return []
        query = _top_query(ending)
        try:
            self._collect(self._keyset_pages(query), collected, limit_total, ending)
        except GammaUnavailable as keyset_error:
            logger.warning(
                "Gamma keyset paging failed (%s); falling back to the offset list",
                keyset_error.message,
            )
            try:
                self._collect(self._legacy_pages(query), collected, limit_total, ending)
            except GammaUnavailable as legacy_error:
                raise GammaUnavailable(
                    f"{legacy_error.message} (after {keyset_error.message})",
                    path=legacy_error.path,
                    status=legacy_error.status,
                ) from legacy_error
        return list(collected.values())[:limit_total]

    def get_market(self, market_id: str) -> ParsedMarket | None:
        """One market by id (open or closed); None when Gamma says 404.

        Raises MarketParseError when the market exists but its payload cannot be understood,
        and GammaUnavailable when Gamma cannot answer.
        """
        path = f"{LEGACY_PATH}/{quote(str(market_id).strip(), safe='')}"
        try:
            body = self._get_json(path, {})
        except GammaUnavailable as exc:
            if exc.status == 404:
                return None
            raise
        if not isinstance(body, Mapping):
            raise MarketParseError(str(market_id), "the response is not a market object")
        return parse_market(body)

    # ---- paging ----------------------------------------------------------------------------

    def _collect(
        self,
        pages: Iterator[list[Any]],
        collected: dict[str, ParsedMarket],
        limit_total: int,
        ending: EndWindow | None = None,
    ) -> None:
        """Add each page's new open markets (in `ending`, if given) to `collected` until
        `limit_total` is reached."""
        for page in pages:
            for market in parse_page(page):
                if market.id in collected:
                    continue
                if market.closed or not market.active:
                    logger.debug("dropping Gamma market %s: not open", market.id)
                    continue
                if ending is not None and not ending.holds(market.end_date):
                    logger.debug("dropping Gamma market %s: ends outside the window", market.id)
                    continue
                collected[market.id] = market
                if len(collected) >= limit_total:
                    return

    def _keyset_pages(self, query: Mapping[str, str]) -> Iterator[list[Any]]:
        """Raw market lists from `/markets/keyset`, following `next_cursor`."""
        cursor: str | None = None
        seen_cursors: set[str] = set()
        for _ in range(self.page_cap):
            params = dict(query)
            if cursor is not None:
                params["after_cursor"] = cursor
            items, next_cursor = self._keyset_page(params)
            if not items:
                return
            yield items
            if next_cursor is None:
                return
            if next_cursor in seen_cursors:
                logger.warning("Gamma keyset repeated cursor %r; stopping", next_cursor[:40])
                return
            seen_cursors.add(next_cursor)
            cursor = next_cursor
        logger.warning("Gamma keyset paging stopped at the page cap (%d)", self.page_cap)

    def _keyset_page(self, params: dict[str, str]) -> tuple[list[Any], str | None]:
        """One keyset page as (markets, next cursor); an unknown envelope means "unavailable"."""
        body = self._get_json(KEYSET_PATH, params)
        items = body.get("markets", body.get("data")) if isinstance(body, Mapping) else None
        if not isinstance(items, list):
            raise GammaUnavailable(
                f"Gamma GET {KEYSET_PATH} returned an unrecognised envelope "
                f"({_snippet(json.dumps(body))})",
                path=KEYSET_PATH,
            )
        cursor = body.get("next_cursor", body.get("nextCursor"))
        return items, (cursor if isinstance(cursor, str) and cursor else None)

    def _legacy_pages(self, query: Mapping[str, str]) -> Iterator[list[Any]]:
        """Raw market lists from the legacy `/markets` array, paging by offset."""
        offset = 0
        seen_ids: set[str] = set()
        for _ in range(self.page_cap):
            body = self._get_json(LEGACY_PATH, {**query, "offset": str(offset)})
            if not isinstance(body, list):
                raise GammaUnavailable(
                    f"Gamma GET {LEGACY_PATH} did not return a list ({_snippet(json.dumps(body))})",
                    path=LEGACY_PATH,
                )
            if not body:
                return
            ids = _page_ids(body)
            if ids and ids <= seen_ids:
                logger.warning("Gamma offset %d repeated earlier markets; stopping", offset)
                return
            seen_ids |= ids
            yield body
            offset += len(body)
        logger.warning("Gamma offset paging stopped at the page cap (%d)", self.page_cap)

    # ---- transport -------------------------------------------------------------------------

    def _get_json(self, path: str, params: Mapping[str, str]) -> Any:
        """GET and decode JSON through the shared retry loop; GammaUnavailable otherwise."""
        try:
            return self._retrier.request_json("GET", path, params=params)
        except RequestFailed as exc:
            raise GammaUnavailable(exc.message, path=exc.path, status=exc.status) from exc
