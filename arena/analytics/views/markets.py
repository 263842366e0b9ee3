"""Read models of markets: search and filters, one market's price path, who held it, its scores.

The price path comes from our own records, not from Polymarket: every frozen universe a
decision run showed (market_snapshot_items, the prices agents could trade at) plus the latest
synced price. That is the evidence the benchmark used; finer history is not stored.
"""

from typing import Any
from urllib.parse import quote

import pandas as pd
from sqlalchemy import Select, String, cast, func, or_, select
from sqlalchemy.engine import Engine

from arena.analytics.query.frames import (
    FLOAT,
    INT,
    OBJECT,
    TEXT,
    TIME,
    Kinds,
    columns_frame,
    json_as_stored,
    json_texts,
    query_columns,
)
from arena.analytics.query.scope import live_cohort_of
from arena.analytics.query.selects import fetch, typed_frame
from arena.analytics.views.agents import positions as agent_positions
from arena.analytics.views.agents import trades as agent_trades
from arena.storage.tables import AGENTS, COHORTS, MARKETS
from arena.storage.tables import BRIER_SCORES as BRIERS
from arena.storage.tables import MARKET_HOLDINGS as HOLDINGS
from arena.storage.tables import MARKET_SNAPSHOT_ITEMS as UNIVERSE_ITEMS
from arena.storage.tables import MARKET_SNAPSHOTS as UNIVERSES

DEFAULT_LIMIT = 1_000
SEARCH_MAX_CHARS = 200

MARKET_COLUMNS: dict[str, str] = {
    "market_id": TEXT,
    "question": TEXT,
    "event_title": TEXT,
    "category": TEXT,
    "market_type": TEXT,
    "status": TEXT,
    "outcomes": TEXT,
    "prices": TEXT,
    "volume": FLOAT,
    "end_date": TIME,
    "resolution_outcome": TEXT,
    "positions": INT,
    "open_positions": INT,
    "agents": INT,
    "updated_at": TIME,
}
LIST_COLUMNS: dict[str, str] = {
    **MARKET_COLUMNS,
    "first_seen_at": TIME,
    "slug": TEXT,
    "event_slug": TEXT,
    "source": TEXT,
}


# The Markets list's orders (`markets(order=...)`): link value → what a person reads.
ORDERS: dict[str, str] = {
    "held": "Most held",
    "volume": "Volume",
    "closing": "Closing first",
    "closing-last": "Closing last",
    "newest": "Newest",
}


def _like_pattern(text: str) -> str:
    """A LIKE pattern matching `text` literally anywhere (%, _ and \\ escaped)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped.lower()}%"


def _listed_columns() -> tuple[Any, ...]:
    """The market's own columns that the list and the detail both show, in their order."""
    return (
        MARKETS.c.id.label("market_id"),
        MARKETS.c.question,
        MARKETS.c.event_title,
        MARKETS.c.category,
        MARKETS.c.market_type,
        MARKETS.c.status,
        json_as_stored(MARKETS.c.outcomes),
        json_as_stored(MARKETS.c.prices),
        MARKETS.c.volume,
        MARKETS.c.end_date,
        MARKETS.c.resolution_outcome,
    )


def markets(
    engine: Engine,
    *,
    search: str | None = None,
    status: str | None = None,
    category: str | None = None,
    market_type: str | None = None,
    held: bool | None = None,
    order: str = "held",
    limit: int = DEFAULT_LIMIT,
) -> pd.DataFrame:
    """Markets matching every given filter, in `order` (`ORDERS`: by default most positions
    first, then by volume); ≤ `limit` rows.

    `search` matches the question, event title or market id, case-insensitively (as a
    literal: bound parameter, wildcards escaped). `held`: True → markets any agent has ever
    held, False → never held. Columns: ``market_id``, ``question``, ``event_title``,
    ``category``, ``market_type`` (binary | named), ``status`` (open | closed | resolved |
    cancelled), ``outcomes`` and ``prices`` (JSON text, as last synced), ``volume``,
    ``end_date``, ``resolution_outcome``; ``positions`` (ever opened), ``open_positions``,
    ``agents`` (distinct agents that held it); ``updated_at`` (last sync); ``first_seen_at``
    (first synced); ``slug``, ``event_slug``, ``source`` and ``polymarket_url``
    (`polymarket_url`).
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {tuple(ORDERS)}, not {order!r}")
    opened = func.coalesce(HOLDINGS.c.position_count, 0)
    query = (
        select(
            *_listed_columns(),
            *_holding_counts(),
            MARKETS.c.updated_at,
            MARKETS.c.first_seen_at,
            MARKETS.c.slug,
            MARKETS.c.event_slug,
            MARKETS.c.source,
        )
        .select_from(MARKETS)
        .outerjoin(HOLDINGS, HOLDINGS.c.market_id == MARKETS.c.id)
        .order_by(*_ordering(order, opened))
        .limit(limit)
    )
    if search:
        query = query.where(_matching(search))
    if status is not None:
        query = query.where(MARKETS.c.status == status)
    if category is not None:
        query = query.where(MARKETS.c.category == category)
    if market_type is not None:
        query = query.where(MARKETS.c.market_type == market_type)
    if held is True:
        query = query.where(opened > 0)
    elif held is False:
        query = query.where(opened == 0)
    return with_polymarket_url(priced_frame(engine, query, LIST_COLUMNS))


def _ordering(order: str, opened: Any) -> tuple[Any, ...]:
    """ORDER BY of `order`; the market id last, so equal keys keep a stable order. Close
    dates: markets without one last either way. Newest: first synced, most recent first."""
    if order == "volume":
        return (MARKETS.c.volume.desc(), MARKETS.c.id)
    if order == "closing":
        return (MARKETS.c.end_date.is_(None), MARKETS.c.end_date, MARKETS.c.id)
    if order == "closing-last":
        return (MARKETS.c.end_date.is_(None), MARKETS.c.end_date.desc(), MARKETS.c.id)
    if order == "newest":
        return (MARKETS.c.first_seen_at.desc(), MARKETS.c.volume.desc(), MARKETS.c.id)
    return (opened.desc(), MARKETS.c.volume.desc(), MARKETS.c.id)


POLYMARKET = "https://polymarket.com"


def polymarket_url(source: Any, event_slug: Any, slug: Any) -> str | None:
    """The market's page on Polymarket: ``/event/<event slug>`` (the page of its event,
    which lists the market), else ``/market/<market slug>``; None for a simulated market
    (its slugs name nothing on Polymarket) or when no slug is stored."""
    if source != "gamma":
        return None
    for path, value in (("event", event_slug), ("market", slug)):
        if isinstance(value, str) and value.strip():
            return f"{POLYMARKET}/{path}/{quote(value.strip(), safe='-_.~')}"
    return None


def with_polymarket_url(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (with ``source``, ``event_slug``, ``slug``) plus ``polymarket_url``."""
    urls = [
        polymarket_url(source, event_slug, slug)
        for source, event_slug, slug in zip(
            frame["source"], frame["event_slug"], frame["slug"], strict=True
        )
    ]
    return frame.assign(polymarket_url=pd.Series(urls, index=frame.index, dtype="string"))


def _holding_counts() -> tuple[Any, ...]:
    """``positions``, ``open_positions`` and ``agents`` of a market, from `market_holdings`
    (joined on the market id), kept by triggers on `positions`: counted at read time, they
    grouped every position ever opened (16 ms a year, and growing)."""
    return (
        HOLDINGS.c.position_count.label("positions"),
        HOLDINGS.c.open_position_count.label("open_positions"),
        HOLDINGS.c.holder_count.label("agents"),
    )


def _matching(search: str) -> Any:
    """SQL: the market's question, event title or id contains `search` (trimmed, at most
    `SEARCH_MAX_CHARS`), case-insensitively and literally."""
    pattern = _like_pattern(search.strip()[:SEARCH_MAX_CHARS])
    return or_(
        func.lower(MARKETS.c.question).like(pattern, escape="\\"),
        func.lower(func.coalesce(MARKETS.c.event_title, "")).like(pattern, escape="\\"),
        func.lower(cast(MARKETS.c.id, String)).like(pattern, escape="\\"),
    )


def priced_frame(engine: Engine, query: Select[Any], kinds: Kinds) -> pd.DataFrame:
    """`read_frame` for rows with a market's ``outcomes`` and ``prices`` (selected with
    `json_as_stored`): those as canonical JSON text, outcome names unescaped.

    The JSON is made canonical on the driver's lists, before the frame is built: iterating a
    frame's column (Arrow-backed text) cost twice as much.
    """
    with engine.connect() as conn:
        columns, rows = query_columns(conn, query, {**kinds, "outcomes": OBJECT, "prices": OBJECT})
    columns["outcomes"] = json_texts(columns["outcomes"], [], ensure_ascii=False).array
    columns["prices"] = json_texts(columns["prices"], []).array
    return columns_frame(columns, kinds, rows)


def categories(engine: Engine) -> list[str]:
    """The distinct market categories (for a filter), alphabetically."""
    query = (
        select(MARKETS.c.category)
        .distinct()
        .where(MARKETS.c.category.is_not(None))
        .order_by(MARKETS.c.category)
    )
    with engine.connect() as conn:
        return [str(value) for value in conn.execute(query).scalars()]


DETAIL_COLUMNS: dict[str, str] = {
    **{k: v for k, v in MARKET_COLUMNS.items() if k not in ("positions", "open_positions")},
    "description": TEXT,
    "event_id": TEXT,
    "slug": TEXT,
    "event_slug": TEXT,
    "neg_risk": TEXT,
    "uma_resolution_status": TEXT,
    "resolved_at": TIME,
    "source": TEXT,
}


def market_detail(engine: Engine, market_id: str) -> pd.DataFrame:
    """One row for `market_id` (no row when unknown): everything `markets` shows plus
    ``description``, ``event_id``, ``slug``, ``event_slug``, ``neg_risk``,
    ``uma_resolution_status``, ``resolved_at``, ``source`` (gamma | simulated) and
    ``polymarket_url``."""
    query = (
        select(
            *_listed_columns(),
            func.coalesce(HOLDINGS.c.holder_count, 0).label("agents"),
            MARKETS.c.updated_at,
            MARKETS.c.description,
            MARKETS.c.event_id,
            MARKETS.c.slug,
            MARKETS.c.event_slug,
            MARKETS.c.neg_risk,
            MARKETS.c.uma_resolution_status,
            MARKETS.c.resolved_at,
            MARKETS.c.source,
        )
        .outerjoin(HOLDINGS, HOLDINGS.c.market_id == MARKETS.c.id)
        .where(MARKETS.c.id == market_id)
    )
    frame = priced_frame(engine, query, {**DETAIL_COLUMNS, "neg_risk": OBJECT})
    frame["neg_risk"] = pd.Series(["yes" if v else "no" for v in frame["neg_risk"]], dtype="string")
    return with_polymarket_url(frame)


PRICE_COLUMNS: dict[str, str] = {
    "at": TIME,
    "source": TEXT,
    "snapshot_id": INT,
    "outcome": TEXT,
    "price": FLOAT,
}


def price_path(engine: Engine, market_id: str) -> pd.DataFrame:
    """The market's prices as we recorded them, one row per instant × outcome, oldest first.

    Columns: ``at``; ``source`` ("snapshot" — a frozen universe shown to agents, or "latest
    sync" — the markets table now); ``snapshot_id`` (0 for the latest sync); ``outcome``
    (the outcome's name); ``price`` (0-1).
    """
    shown = (
        select(
            UNIVERSES.c.taken_at.label("at"),
            UNIVERSES.c.id.label("snapshot_id"),
            UNIVERSE_ITEMS.c.outcomes,
            UNIVERSE_ITEMS.c.prices,
        )
        .join(UNIVERSES, UNIVERSES.c.id == UNIVERSE_ITEMS.c.snapshot_id)
        .where(UNIVERSE_ITEMS.c.market_id == market_id)
        .order_by(UNIVERSES.c.taken_at)
    )
    now = select(MARKETS.c.updated_at.label("at"), MARKETS.c.outcomes, MARKETS.c.prices).where(
        MARKETS.c.id == market_id
    )
    with engine.connect() as conn:
        points = [{**row, "source": "snapshot"} for row in fetch(conn, shown)]
        points += [{**row, "source": "latest sync", "snapshot_id": 0} for row in fetch(conn, now)]
    rows = []
    for point in points:
        for outcome, price in zip(point["outcomes"] or [], point["prices"] or [], strict=False):
            try:
                value = float(price)
            except (TypeError, ValueError):
                continue
            rows.append({**point, "outcome": outcome, "price": value})
    return typed_frame(rows, PRICE_COLUMNS)


def market_positions(engine: Engine, market_id: str) -> pd.DataFrame:
    """Every agent's position in `market_id` (the columns of
    `arena.analytics.views.agents.positions`)."""
    return agent_positions(engine, market_id=market_id)


def market_trades(engine: Engine, market_id: str) -> pd.DataFrame:
    """Every trade in `market_id` (columns of `arena.analytics.views.agents.trades`)."""
    return agent_trades(engine, market_id=market_id)


BRIER_COLUMNS: dict[str, str] = {
    "trade_id": INT,
    "cohort_number": INT,
    "family_id": TEXT,
    "side": TEXT,
    "forecast_probability": FLOAT,
    "market_price": FLOAT,
    "actual_outcome": INT,
    "brier_score": FLOAT,
    "market_brier": FLOAT,
    "created_at": TIME,
}


def market_brier(engine: Engine, market_id: str) -> pd.DataFrame:
    """The Brier rows of `market_id`: one per BUY trade once the market resolved.

    Columns: ``trade_id``, ``cohort_number``, ``family_id``, ``side``,
    ``forecast_probability`` (v1 implied confidence), ``market_price`` (the price paid: the
    market's own forecast for that side), ``actual_outcome`` (1 = the side won),
    ``brier_score`` and ``market_brier`` ((market_price − outcome)²), ``created_at``.
    """
    query = (
        select(
            BRIERS.c.trade_id,
            COHORTS.c.number.label("cohort_number"),
            AGENTS.c.family_id,
            BRIERS.c.side,
            BRIERS.c.forecast_probability,
            BRIERS.c.market_price,
            BRIERS.c.actual_outcome,
            BRIERS.c.brier_score,
            BRIERS.c.created_at,
        )
        .join(AGENTS, AGENTS.c.id == BRIERS.c.agent_id)
        .join(COHORTS, live_cohort_of(AGENTS.c.cohort_id))
        .where(BRIERS.c.market_id == market_id)
        .order_by(BRIERS.c.trade_id)
    )
    with engine.connect() as conn:
        rows = fetch(conn, query)
    for row in rows:
        price = row["market_price"]
        row["market_brier"] = (
            None if price is None else (float(price) - float(row["actual_outcome"])) ** 2
        )
    return typed_frame(rows, BRIER_COLUMNS)
