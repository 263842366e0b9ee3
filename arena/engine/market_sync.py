"""`arena sync-markets`: the methodology's universe (top 500 by volume) plus every held market.

While cohorts of the extension `horizon` still decide, the sync also fetches, per distinct
horizon D, the top 500 among the markets ending within (`at`, `at` + D + `HORIZON_MARGIN`]: the
decision run's horizon universe is the top by volume among markets ending within D days of
the run, and many of the overall top end far later (`horizons_to_sync`).

Markets are upserted by Gamma id. A value the source did not send never overwrites a known
one (but a fee schedule: none means fees off, which clears a known one), and a market the
engine has settled (resolved / cancelled) keeps that final status.
A market row of the other kind (simulated for a live source, live for the simulated world) is
never asked about nor overwritten, even when the source lists a market with its id: the sync
counts it as skipped (`arena.engine.sources.foreign_markets`).

One market never aborts a sync: the wire parser skips a market it cannot read (logged with
its id and reason), and a parsed market whose row cannot be built or encoded (a JSON value no
encoder writes) is left out here, named with its field in one WARNING, while the others sync
(`market_rows`).
"""

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import JSON, bindparam, case, func, insert, or_, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from arena.config import stamped_horizon_days
from arena.core.errors import ArenaError
from arena.core.timeutil import week_start
from arena.engine.cohorts import cohorts_deciding
from arena.engine.logs import log_event
from arena.engine.sources import MarketSource, foreign_markets, skipped_line
from arena.markets.types import EndWindow, ParsedMarket
from arena.storage.db import bulk_execute, session_scope
from arena.storage.models import FINAL_STATUSES, Position
from arena.storage.tables import MARKETS as _MARKETS

log = logging.getLogger("arena.engine.market_sync")

# How far past `at` + D a horizon fetch reaches. A decision run filters `run < end <= run + D`
# and refuses a market table synced more than an hour before it (`jobs.FRESH_UNIVERSE`), so the
# run that uses this sync is at most an hour later: one hour covers every market it can show,
# and no more, since every extra hour's markets take places in the fetched top the run drops.
HORIZON_MARGIN = timedelta(hours=1)

_OPTIONAL_FIELDS = (
    "slug",
    "description",
    "event_id",
    "event_slug",
    "event_title",
    "group_item_title",
    "category",
    "volume",
    "liquidity",
    "end_date",
    "uma_resolution_status",
    "clob_token_ids",  # each outcome's CLOB token (methodology v2 reads books by it)
)


@dataclass
class SyncResult:
    """What one sync did, for the job log."""

    top: int = 0
    held_refreshed: int = 0
    inserted: int = 0
    updated: int = 0
    missing: list[str] = field(default_factory=list)
    # Markets of the other kind this sync left alone (not asked about, not overwritten).
    skipped: list[str] = field(default_factory=list)
    # Per horizon D fetched ("14d"), how many markets its window's top brought.
    horizon_top: dict[str, int] = field(default_factory=dict)
    # Markets fetched but left out, each with the field and why (`market_rows`).
    unstorable: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, object]:
        counts: dict[str, object] = {
            "top": self.top,
            "held_refreshed": self.held_refreshed,
            "inserted": self.inserted,
            "updated": self.updated,
            "missing": self.missing,
            "skipped": self.skipped,
        }
        if self.horizon_top:  # a sync without horizon cohorts logs exactly what it did before
            counts["horizon_top"] = self.horizon_top
        if self.unstorable:
            counts["unstorable"] = self.unstorable
        return counts


_PRICES_OR_NULL = JSON(none_as_null=True)  # a missing price list binds as SQL NULL
_JSON_FIELDS = ("outcomes", "prices", "clob_token_ids", "fee_schedule")


def market_rows(
    markets: Iterable[ParsedMarket], at: datetime
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Each market's row values by id, and the markets left out with the field and reason.

    Why per market: a value the parser let through but no row can hold (a number whose JSON
    text Python refuses to write, say) is that market's problem; building every row first,
    one by one, keeps it from failing the whole batched upsert."""
    rows: dict[str, dict[str, Any]] = {}
    failed: dict[str, str] = {}
    for market in markets:
        try:
            values = _values(market, at)
        except (ArithmeticError, ValueError, TypeError) as exc:
            failed[market.id] = _reason("a field", exc)
            continue
        problems = ((name, _json_problem(values[name])) for name in _JSON_FIELDS)
        field_error = next(((name, exc) for name, exc in problems if exc is not None), None)
        if field_error is None:
            rows[market.id] = values
        else:
            failed[market.id] = _reason(*field_error)
    for market_id, reason in failed.items():
        log.warning("market %s left out of the sync: %s", market_id, reason)
    return rows, failed


def _json_problem(value: object) -> Exception | None:
    """Why `value` cannot be written as JSON (the columns' encoder), or None."""
    try:
        json.dumps(value)
    except (ValueError, TypeError, RecursionError) as exc:
        return exc
    return None


def _reason(name: str, exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:200]
    return f"{name}: {type(exc).__name__}: {text}"


def _values(parsed: ParsedMarket, at: datetime) -> dict[str, Any]:
    """The row values `parsed` brings (None where the source sent nothing)."""
    values: dict[str, Any] = {name: getattr(parsed, name) for name in _OPTIONAL_FIELDS}
    values.update(
        id=parsed.id,
        question=parsed.question,
        market_type=parsed.market_type,
        outcomes=list(parsed.outcomes),
        prices=[str(price) for price in parsed.prices] if parsed.prices is not None else None,
        active=parsed.active,
        closed=parsed.closed,
        neg_risk=parsed.neg_risk,
        source=parsed.source,
        status="closed" if parsed.closed else "open",
        # Fees off (None) is a value too: it overwrites a schedule the market no longer has.
        fee_schedule=parsed.fee_schedule.to_json() if parsed.fee_schedule is not None else None,
        updated_at=at,
    )
    return values


def _build_update() -> Any:
    """One UPDATE for every known market: COALESCE keeps a known value the source did not
    send, and a status this engine made final (resolved / cancelled) is never reopened."""
    c = _MARKETS.c
    keep = {
        name: func.coalesce(bindparam(f"b_{name}", type_=c[name].type), c[name])
        for name in (*_OPTIONAL_FIELDS, "question")
    }
    return (
        update(_MARKETS)
        .where(c.id == bindparam("b_id"))
        .values(
            **keep,
            prices=func.coalesce(bindparam("b_prices", type_=_PRICES_OR_NULL), c.prices),
            market_type=bindparam("b_market_type"),
            outcomes=bindparam("b_outcomes", type_=c.outcomes.type),
            active=bindparam("b_active"),
            closed=bindparam("b_closed"),
            neg_risk=bindparam("b_neg_risk"),
            fee_schedule=bindparam("b_fee_schedule", type_=c.fee_schedule.type),
            source=bindparam("b_source"),
            status=case(
                (or_(*(c.status == final for final in FINAL_STATUSES)), c.status),
                else_=bindparam("b_status"),
            ),
            updated_at=bindparam("b_updated_at", type_=c.updated_at.type),
        )
    )


_UPDATE = _build_update()
_INSERT = insert(_MARKETS)


def upsert_markets(
    session: Session,
    markets: Iterable[ParsedMarket],
    at: datetime,
    unstorable: dict[str, str] | None = None,
) -> tuple[int, int]:
    """Insert or update each market, set-based (one select, one insert, one update); returns
    (inserted, updated). A value the source did not send never overwrites a known one, and a
    row listed by the other kind of source (its `source` differs) is never overwritten. A
    market whose row cannot be built is left out (`market_rows`), added to `unstorable`."""
    by_id, failed = market_rows(markets, at)
    if unstorable is not None:
        unstorable.update(failed)
    existing = stored_sources(session, by_id)
    new = [{**values, "first_seen_at": at} for key, values in by_id.items() if key not in existing]
    known = [
        {f"b_{k}": v for k, v in values.items()}
        for key, values in by_id.items()
        if existing.get(key) == values["source"]  # never a row another source listed
    ]
    conn = session.connection()
    if new:
        bulk_execute(conn, _INSERT, [_with_defaults(row) for row in new])
    if known:
        bulk_execute(conn, _UPDATE, known)
    return len(new), len(known)


def _with_defaults(row: dict[str, Any]) -> dict[str, Any]:
    """A new market row: a missing price list is stored as an empty list."""
    return {**row, "prices": row["prices"] if row["prices"] is not None else []}


def stored_sources(session: Session, ids: Iterable[str]) -> dict[str, str]:
    """The stored `source` of each of `ids` that has a market row."""
    wanted = list(ids)
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        query = select(_MARKETS.c.id, _MARKETS.c.source).where(_MARKETS.c.id.in_(chunk))
        found.update((row.id, row.source) for row in session.execute(query))
    return found


def held_market_ids(session: Session) -> set[str]:
    """Markets in which any agent holds an open position."""
    query = select(Position.market_id).where(Position.status == "open").distinct()
    return set(session.exec(query).all())


def horizon_window(at: datetime, days: int) -> EndWindow:
    """The end dates a sync at `at` fetches for horizon D: (at, at + D + `HORIZON_MARGIN`]
    (`at` itself included, as Gamma's filter is; the decision run drops it anyway)."""
    return EndWindow(at, at + timedelta(days=days) + HORIZON_MARGIN)


def horizons_to_sync(
    engine: Engine, at: datetime, default_window: int, configured: int | None = None
) -> list[int]:
    """The distinct horizons (days) a sync at `at` fetches a short-dated top for, ascending.

    Those stamped on the cohorts deciding at `at` (a Sunday's retries) or at the next week
    start (the coming run), plus `configured`, the horizon of the cohort this process would
    start (it may not exist yet when the Sunday 00:00 sync runs). Empty without `horizon`.
    """
    upcoming = week_start(at) + timedelta(weeks=1)
    with session_scope(engine) as session:
        cohorts = {
            cohort.id: cohort
            for instant in (at, upcoming)
            for cohort in cohorts_deciding(session, instant, default_window)
        }
        stamped = {stamped_horizon_days(cohort.constants) for cohort in cohorts.values()}
    return sorted(days for days in stamped | {configured} if days is not None)


def _fetch(
    source: MarketSource,
    at: datetime,
    universe_size: int,
    horizons: Iterable[int],
    result: SyncResult,
) -> list[ParsedMarket]:
    """The overall top, then each horizon's top (deduplicated, first listing wins); every read
    before any write."""
    top = source.top_markets(at, universe_size)
    result.top = len(top)
    fetched = {market.id: market for market in top}
    for days in sorted(set(horizons)):
        short = source.top_markets(at, universe_size, ending=horizon_window(at, days))
        result.horizon_top[f"{days}d"] = len(short)
        for market in short:
            fetched.setdefault(market.id, market)
    return list(fetched.values())


def sync_markets(
    engine: Engine,
    source: MarketSource,
    at: datetime,
    universe_size: int,
    horizons: Iterable[int] = (),
) -> SyncResult:
    """Fetch the top markets (and, per horizon D in `horizons`, the top among those ending
    within D days and `HORIZON_MARGIN`) and refresh every held one, then upsert all in one
    transaction.

    The source is read before anything is written, so a source that is down fails the job
    without a half-written sync. A held market the source no longer knows is logged and its
    row (with its last prices) kept, so its positions keep their valuation. Markets of the
    other kind (held, or listed under an id a market of the other kind has) are left alone
    and counted in `skipped`.
    """
    result = SyncResult()
    top = _fetch(source, at, universe_size, horizons, result)
    with session_scope(engine) as session:
        held = held_market_ids(session)
        stored = stored_sources(session, held | {market.id for market in top})
    foreign = {mid for mid, kind in stored.items() if kind == foreign_markets(source.name)}
    result.skipped = sorted(foreign)
    fetched = {market.id: market for market in top if market.id not in foreign}
    for market_id in sorted(held - fetched.keys() - foreign):
        try:
            refreshed = source.get_market(market_id, at)
        except ArenaError as exc:
            log.warning("held market %s could not be refreshed: %s", market_id, exc.one_line())
            refreshed = None
        if refreshed is None:
            result.missing.append(market_id)
            continue
        fetched[market_id] = refreshed
        result.held_refreshed += 1
    with session_scope(engine) as session:
        result.inserted, result.updated = upsert_markets(
            session, fetched.values(), at, result.unstorable
        )
        if result.unstorable:
            first, reason = next(iter(result.unstorable.items()))
            more = len(result.unstorable) - 1
            log_event(
                session,
                at,
                "WARNING",
                "sync-markets",
                f"{len(result.unstorable)} market(s) left out: market {first}: {reason}"
                + (f" (and {more} more)" if more else ""),
                market_ids=sorted(result.unstorable),
            )
        if result.missing:
            log_event(
                session,
                at,
                "WARNING",
                "sync-markets",
                f"{len(result.missing)} held market(s) not available from {source.name}",
                market_ids=result.missing,
            )
        if result.skipped:
            log_event(
                session,
                at,
                "WARNING",
                "sync-markets",
                skipped_line(len(result.skipped), source.name),
                market_ids=result.skipped,
            )
        log_event(
            session,
            at,
            "INFO",
            "sync-markets",
            f"synced {len(fetched)} markets from {source.name}",
            **result.counts(),
        )
    return result
