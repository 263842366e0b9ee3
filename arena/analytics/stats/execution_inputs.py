"""What the execution-sensitivity view re-executes, read in one consistent snapshot.

Why its own module: the arithmetic (`arena.analytics.stats.execution`) is pure; here the scope's
rows are read (the same cohort scope as the leaderboard, `query.scope`) and turned into its
`Leg`s and `PositionEnd`s: each executed BUY/SELL with its snapshot's display price, its mid
(v2's stored quote, else the stored book's midpoint) and its stored book (`decision_books`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.scope import CohortScope, cohort_id_of, in_scope
from arena.analytics.stats.execution import (
    NO_BOOKS,
    RULES,
    Leg,
    PositionEnd,
    Rule,
    own_rule,
    re_execute,
    sensitivity_frame,
)
from arena.analytics.stats.leaderboard_inputs import cluster_label
from arena.config import METHODOLOGY_VERSION, stamped_extensions, stamped_fee_charged
from arena.core import stats
from arena.core.accounting import TradeRejected, outcome_index, outcome_key, side_item, side_price
from arena.core.book_text import BookTextError, decode_book
from arena.core.fees import FEE_USDC_ON_TOP, FeeCharged, FeeSchedule
from arena.core.money import ONE, ZERO, to_decimal
from arena.core.order_book import Book, midpoint
from arena.storage.book_models import DecisionBook
from arena.storage.db import consistent_read
from arena.storage.tables import AGENTS, COHORTS, DECISIONS, FAMILIES, MARKETS, POSITIONS, TRADES
from arena.storage.tables import MARKET_SNAPSHOT_ITEMS as ITEMS

BOOKS = DecisionBook.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class ExecutionInputs:
    """The scope's legs in execution order, the positions' ends, and who is who."""

    legs: list[Leg]
    ends: list[PositionEnd]
    agents: list[dict[str, Any]]  # agent_id, family_id, cohort_id, capital
    cohorts: list[dict[str, Any]]  # id, number, version, extensions, books (stored or not)
    clusters: dict[str, str]  # market id → bootstrap cluster
    names: dict[str, tuple[str, str]]  # family id → (display name, kind)


def _json(raw: Any) -> Any:
    """A JSON column as read (text on some drivers, already decoded on others)."""
    return json.loads(raw) if isinstance(raw, str) else raw


def _cohorts(conn: Connection, scope: CohortScope) -> list[dict[str, Any]]:
    query = (
        select(COHORTS.c.id, COHORTS.c.number, COHORTS.c.methodology_version, COHORTS.c.constants)
        .where(COHORTS.c.id.in_(in_scope(select(AGENTS.c.cohort_id), scope)))
        .order_by(COHORTS.c.number)
    )
    return [
        {
            "id": int(row.id),
            "number": int(row.number),
            "version": str(row.methodology_version),
            "extensions": stamped_extensions(_json(row.constants)),
            "fee_charged": counterfactual_fee_charged(_json(row.constants)),
        }
        for row in conn.execute(query)
    ]


def counterfactual_fee_charged(constants: Mapping[str, Any] | None) -> FeeCharged:
    """How the book rule charges a cohort's buys their fee: as its own book walks did (its
    stamp's `fee_charged`), or, for a cohort that walked no books, as the CLOB charges a new
    market buy (`usdc_on_top`), the rule a new `book_execution` cohort runs."""
    return stamped_fee_charged(constants) or FEE_USDC_ON_TOP


def _books(conn: Connection, scope: CohortScope) -> dict[int, dict[tuple[str, str], Any]]:
    """Stored books by snapshot, then (market id, outcome key): the decoded `Book` or, for a
    row without one, its status."""
    # Only the books of markets a decision of the scope traded (a run stores its whole
    # universe, ~1,000 tokens a week; a leg reads one): joined, never all decoded.
    traded = (
        in_scope(
            select(DECISIONS.c.market_snapshot_id, TRADES.c.market_id)
            .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
            .join(TRADES, TRADES.c.decision_id == DECISIONS.c.id),
            scope,
        )
        .distinct()
        .subquery()
    )
    query = select(
        BOOKS.c.snapshot_id,
        BOOKS.c.market_id,
        BOOKS.c.outcome,
        BOOKS.c.status,
        BOOKS.c.bids,
        BOOKS.c.asks,
        BOOKS.c.tick_size,
        BOOKS.c.min_order_size,
    ).join(
        traded,
        (traded.c.market_snapshot_id == BOOKS.c.snapshot_id)
        & (traded.c.market_id == BOOKS.c.market_id),
    )
    found: dict[int, dict[tuple[str, str], Any]] = {}
    for row in conn.execute(query):
        try:
            book: Any = decode_book(row.bids, row.asks, row.tick_size, row.min_order_size)
        except BookTextError:
            book = "malformed"
        entry = book if book is not None else str(row.status)
        found.setdefault(int(row.snapshot_id), {})[(row.market_id, outcome_key(row.outcome))] = (
            entry
        )
    return found


def _recorded(conn: Connection, scope: CohortScope) -> set[int]:
    """The scope's decision snapshots that stored any book (the primary key's index)."""
    snapshots = in_scope(
        select(DECISIONS.c.market_snapshot_id).join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id),
        scope,
    )
    query = select(BOOKS.c.snapshot_id).where(BOOKS.c.snapshot_id.in_(snapshots)).distinct()
    return {int(snapshot) for snapshot in conn.execute(query).scalars()}


def _quote_price(quote: Mapping[str, Any] | None, key: str) -> Decimal | None:
    value = None if quote is None else quote.get(key)
    return None if value in (None, "") else to_decimal(value)


def _display(row: Any, quote: Mapping[str, Any] | None) -> tuple[Decimal | None, str | None]:
    if quote is not None:
        found = _quote_price(quote, "gamma_price")
        return found, None if found is not None else "no_display_price"
    try:
        outcomes, prices = _json(row.item_outcomes) or [], _json(row.item_prices) or []
        return side_price(row.market_type, outcomes, prices, row.side), None
    except TradeRejected:
        return None, "no_display_price"


def _side_book(
    row: Any, outcomes: Sequence[str], stored: Mapping[tuple[str, str], Any] | None
) -> tuple[Book | None, str | None]:
    """The side's stored book, or why there is none (`stored` None: the decision's run stored
    no book at all; {}: it stored some, none of this market)."""
    if stored is None:
        return None, NO_BOOKS
    index = outcome_index(row.market_type, outcomes, row.side)
    entry = None if index is None else stored.get((row.market_id, outcome_key(outcomes[index])))
    if entry is None:
        return None, "no_book_for_token"
    if isinstance(entry, str):
        return None, entry
    return entry, None


def chosen_stake(amount: Any, book_fill: Mapping[str, Any] | None) -> Decimal:
    """The stake the model chose for a BUY: the trade's amount, except in a `book_execution`
    cohort, whose partial fill spent less than it asked (its walk's `requested`)."""
    requested = None if not book_fill else book_fill.get("requested")
    return to_decimal(requested) if requested not in (None, "") else Decimal(amount)


def _leg(
    row: Any,
    fraction: Decimal,
    stored: Mapping[tuple[str, str], Any] | None,
    fee_charged: FeeCharged,
) -> Leg:
    """One trade row as a `Leg`, with its price under each rule."""
    outcomes = list(_json(row.item_outcomes) or _json(row.outcomes) or [])
    quote = side_item(_json(row.quotes), row.market_type, outcomes, row.side)
    display, display_reason = _display(row, quote)
    book, book_reason = _side_book(row, outcomes, stored)
    if quote is not None:
        mid = _quote_price(quote, "clob_price")
        mid_reason = None if mid is not None else f"no_mid:{quote.get('fallback_reason')}"
    elif book is not None:
        mid, mid_reason = midpoint(book.best_bid, book.best_ask)
    else:
        mid, mid_reason = None, book_reason
    fees = _json(row.fee_schedule)
    return Leg(
        agent_id=int(row.agent_id),
        position_id=int(row.position_id),
        market_id=str(row.market_id),
        kind="BUY" if row.trade_type == "BUY" else "SELL",
        stake=chosen_stake(row.amount, _json(row.book_fill)) if row.trade_type == "BUY" else ZERO,
        fraction=fraction,
        display=display,
        display_reason=display_reason,
        mid=mid,
        mid_reason=mid_reason,
        book=book,
        book_reason=book_reason,
        fees=FeeSchedule.from_json(fees) if fees else None,
        fee_charged=fee_charged,
    )


def _trades(conn: Connection, scope: CohortScope) -> list[Any]:
    query = (
        select(
            TRADES.c.agent_id,
            AGENTS.c.cohort_id,
            TRADES.c.position_id,
            TRADES.c.market_id,
            TRADES.c.trade_type,
            TRADES.c.side,
            TRADES.c.amount,
            TRADES.c.shares,
            TRADES.c.book_fill,
            DECISIONS.c.market_snapshot_id,
            MARKETS.c.market_type,
            MARKETS.c.outcomes,
            MARKETS.c.fee_schedule,
            ITEMS.c.outcomes.label("item_outcomes"),
            ITEMS.c.prices.label("item_prices"),
            ITEMS.c.quotes,
        )
        .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
        .join(MARKETS, MARKETS.c.id == TRADES.c.market_id)
        .outerjoin(DECISIONS, DECISIONS.c.id == TRADES.c.decision_id)
        .outerjoin(
            ITEMS,
            (ITEMS.c.snapshot_id == DECISIONS.c.market_snapshot_id)
            & (ITEMS.c.market_id == TRADES.c.market_id),
        )
        .where(TRADES.c.trade_type.in_(("BUY", "SELL")))
        .order_by(TRADES.c.agent_id, TRADES.c.created_at, TRADES.c.leg_index, TRADES.c.id)
    )
    return list(conn.execute(in_scope(query, scope)))


def _ends(conn: Connection, scope: CohortScope) -> list[PositionEnd]:
    """Each position's end as recorded: settled (payout per share), refunded, else its latest
    mark per share (its entry price before any mark)."""
    settled = {
        int(row.position_id): (str(row.trade_type), row.price)
        for row in conn.execute(
            in_scope(
                select(TRADES.c.position_id, TRADES.c.trade_type, TRADES.c.price)
                .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
                .where(TRADES.c.trade_type.in_(("SETTLE", "REFUND"))),
                scope,
            )
        )
    }
    query = in_scope(
        select(POSITIONS.c.id, POSITIONS.c.mark_price, POSITIONS.c.avg_entry_price).join(
            AGENTS, AGENTS.c.id == POSITIONS.c.agent_id
        ),
        scope,
    )
    ends: list[PositionEnd] = []
    for row in conn.execute(query):
        kind, paid = settled.get(int(row.id), (None, None))
        if kind == "REFUND":
            ends.append(PositionEnd(int(row.id), ZERO, refunded=True))
        elif kind == "SETTLE":
            ends.append(PositionEnd(int(row.id), ONE if paid is not None and paid > ZERO else ZERO))
        else:
            mark = row.mark_price if row.mark_price is not None else row.avg_entry_price
            ends.append(PositionEnd(int(row.id), Decimal(mark)))
    return ends


def _legs(
    conn: Connection, scope: CohortScope, charged: Mapping[int, FeeCharged]
) -> tuple[list[Leg], dict[str, str], set[int]]:
    """Legs in execution order; the clusters of their markets; the snapshots with books.
    `charged`: how each cohort's buys pay the fee, by cohort id."""
    books = _books(conn, scope)
    recorded = _recorded(conn, scope)
    held: dict[int, Decimal] = {}
    legs: list[Leg] = []
    clusters: dict[str, str] = {}
    for row in _trades(conn, scope):
        before = held.get(int(row.position_id), ZERO)
        traded = Decimal(row.shares)
        if row.trade_type == "BUY":
            held[int(row.position_id)] = before + traded
            fraction = ZERO
        else:
            held[int(row.position_id)] = before - traded
            fraction = ONE if before <= ZERO or traded >= before else traded / before
        snapshot = row.market_snapshot_id
        stored = None if snapshot is None or int(snapshot) not in recorded else books
        found = None if stored is None else stored.get(int(snapshot), {})
        legs.append(_leg(row, fraction, found, charged[int(row.cohort_id)]))
    markets = {leg.market_id for leg in legs}
    if markets:
        query = select(MARKETS.c.id, MARKETS.c.event_id).where(MARKETS.c.id.in_(sorted(markets)))
        clusters = {str(r.id): cluster_label(r.event_id, r.id) for r in conn.execute(query)}
    return legs, clusters, recorded


def load_execution_inputs(
    engine: Engine, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> ExecutionInputs:
    """The scope's legs, ends, agents and cohorts (unknown cohort → InputError)."""
    with consistent_read(engine) as conn:
        scope = cohort_id_of(conn, cohort, methodology)
        cohorts = _cohorts(conn, scope)
        charged = {c["id"]: c["fee_charged"] for c in cohorts}
        legs, clusters, with_books = _legs(conn, scope, charged)
        ends = _ends(conn, scope)
        snap_query = in_scope(
            select(DECISIONS.c.cohort_id, DECISIONS.c.market_snapshot_id)
            .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
            .distinct(),
            scope,
        )
        recorded = {
            int(r.cohort_id) for r in conn.execute(snap_query) if r.market_snapshot_id in with_books
        }
        agents_query = in_scope(
            select(AGENTS.c.id, AGENTS.c.family_id, AGENTS.c.cohort_id, AGENTS.c.starting_balance),
            scope,
        ).order_by(AGENTS.c.id)
        agents = [
            {
                "agent_id": int(r.id),
                "family_id": str(r.family_id),
                "cohort_id": int(r.cohort_id),
                "capital": float(r.starting_balance),
            }
            for r in conn.execute(agents_query)
        ]
        families = {a["family_id"] for a in agents}
        names = {
            str(r.id): (str(r.display_name), str(r.kind))
            for r in conn.execute(select(FAMILIES.c.id, FAMILIES.c.display_name, FAMILIES.c.kind))
            if str(r.id) in families
        }
    for entry in cohorts:
        entry["books"] = entry["id"] in recorded
    return ExecutionInputs(legs, ends, agents, cohorts, clusters, names)


def scope_own_rule(cohorts: Sequence[Mapping[str, Any]]) -> Rule:
    """The rule the scope's cohorts executed by (a scope never pools versions or extensions,
    so they agree; an empty scope: v1's display)."""
    rules = {own_rule(c["version"], c["extensions"]) for c in cohorts}
    return rules.pop() if len(rules) == 1 else "display"


def execution_sensitivity(
    engine: Engine,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
) -> pd.DataFrame:
    """Per family: return under each execution rule with the leaderboard's cluster-bootstrap
    interval, rank, P(rank #1), the legs each rule left unexecuted, and ``not_robust``
    (`arena.analytics.stats.execution.sensitivity_frame`). Scope as the leaderboard's."""
    data = load_execution_inputs(engine, cohort, methodology)
    outcomes = {rule: re_execute(data.legs, data.ends, rule) for rule in RULES}
    return sensitivity_frame(
        outcomes,
        data.agents,
        data.clusters,
        data.names,
        scope_own_rule(data.cohorts),
        [leg.agent_id for leg in data.legs],
        replicates=replicates,
        seed=seed,
    )


def book_coverage(
    engine: Engine, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> list[dict[str, Any]]:
    """The scope's cohorts (number, version, extensions) and whether any of their decision
    runs stored books: a page says which were decided before book recording."""
    with consistent_read(engine) as conn:
        scope = cohort_id_of(conn, cohort, methodology)
        cohorts = _cohorts(conn, scope)
        query = in_scope(
            select(DECISIONS.c.cohort_id)
            .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
            .where(DECISIONS.c.market_snapshot_id.in_(select(BOOKS.c.snapshot_id).distinct()))
            .distinct(),
            scope,
        )
        recorded = {int(r.cohort_id) for r in conn.execute(query)}
    for entry in cohorts:
        entry["books"] = entry["id"] in recorded
    return cohorts
