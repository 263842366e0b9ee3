"""Bounded slices of the benchmark's tables as CSV (contract §6), shared by CLI and dashboard.

Each exportable table is an `ExportSpec`: its columns (the contract's, then extras), a
query honouring the filters, and an optional per-row enrichment. Rows stream from the
database; a row cap stops runaway exports and the result says whether it was hit. Only
live cohorts are exported: a late entrant's shadow cohort never is (`live_cohort`).

Price provenance (methodology v2, docs/methodology-v2.md): trades carry the quote each BUY and
SELL executed at (`PROVENANCE_COLUMNS`), snapshots each valuation's marks with their provenance
(`price_provenance`), markets their CLOB tokens, as raw values: the stored text of each price,
the engine's words for sources, statuses and reasons. They are in every export, whatever its
scope (only `readable`'s names and notes come after them), empty on v1 rows (which never record
them), so a header is the same for every scope and a v1 row's other cells are as before v2.
"""

import csv
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, TextIO

from sqlalchemy import ColumnElement, Select, exists, select
from sqlalchemy.engine import Connection, Engine, RowMapping

from arena.analytics.export.legs import LEG_COLUMNS, leg_rows
from arena.analytics.export.readable import EXPORT_DESCRIPTIONS as EXPORT_DESCRIPTIONS
from arena.analytics.export.readable import (
    NAME_COLUMNS,
    TRADE_COLUMNS,
    named,
    trade_note,
    with_question,
)
from arena.analytics.query.scope import live_cohort_of
from arena.config import executes_on_books, is_v2
from arena.core.accounting import TradeRejected, choose_mark, mark_value, side_price
from arena.core.csvsafe import cell
from arena.core.errors import InputError
from arena.storage.db import consistent_read
from arena.storage.tables import (
    AGENTS,
    BRIER_SCORES,
    COHORTS,
    DECISIONS,
    MARKETS,
    PORTFOLIO_SNAPSHOTS,
    POSITIONS,
    TRADES,
    live_cohort,
)

A = AGENTS.c
C = COHORTS.c
D = DECISIONS.c
T = TRADES.c
P = POSITIONS.c
S = PORTFOLIO_SNAPSHOTS.c
B = BRIER_SCORES.c
M = MARKETS.c


@dataclass(frozen=True)
class ExportFilters:
    """Filters every export accepts; each table applies them to its own columns."""

    cohort: int | None = None
    family: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    replicate: int | None = None  # one replicate of the family (a replicated cohort)

    def describe(self) -> dict[str, str]:
        return {k: cell(v) for k, v in vars(self).items() if v is not None}  # type: ignore[misc]


@dataclass(frozen=True)
class ExportResult:
    rows: int
    truncated: bool
    cap: int


Row = RowMapping  # a result row, by column label


@dataclass(frozen=True)
class ExportSpec:
    """How to export one table."""

    name: str
    columns: tuple[str, ...]
    query: Callable[[ExportFilters], Select[Any]]
    enrich: Callable[[Row], dict[str, Any]] | None = None
    # One query row gives any number of export rows (the legs of a decision); the row cap then
    # counts export rows, so the query itself is not limited.
    expand: Callable[[Row], Iterator[dict[str, Any]]] | None = None


def _agent_filters(filters: ExportFilters, time_column: ColumnElement[Any]) -> list[Any]:
    clauses: list[Any] = []
    if filters.cohort is not None:
        clauses.append(C.number == filters.cohort)
    if filters.family is not None:
        clauses.append(A.family_id == filters.family)
    if filters.replicate is not None:
        clauses.append(A.replicate == filters.replicate)
    if filters.since is not None:
        clauses.append(time_column >= filters.since)
    if filters.until is not None:
        clauses.append(time_column < filters.until)
    return clauses


def _cohorts(f: ExportFilters) -> Select[Any]:
    query = select(
        C.number.label("cohort_number"),
        C.week_start,
        C.status,
        C.methodology_version,
        C.constants,
        C.created_at,
        C.completed_at,
    )
    if f.family is not None:
        query = query.where(exists().where(A.cohort_id == C.id, A.family_id == f.family))
    clauses = _agent_filters(ExportFilters(f.cohort, None, f.since, f.until), C.week_start)
    return query.where(live_cohort(), *clauses).order_by(C.number)


def _decisions(f: ExportFilters) -> Select[Any]:
    return (
        select(
            D.id.label("decision_id"),
            C.number.label("cohort_number"),
            A.family_id,
            D.decision_week,
            D.action,
            D.status,
            D.attempts,
            D.prompt_system,
            D.prompt_user,
            D.raw_response,
            D.parsed_response,
            D.error,
            D.tokens_in,
            D.tokens_out,
            D.cost_usd,
            D.created_at,
            D.market_snapshot_id,
            D.validation_errors,
            D.legs,
            D.latency_ms,
            D.served_model,
            D.provider,
            D.decided_at,
            A.model_id,
            A.replicate,
        )
        .join(AGENTS, A.id == D.agent_id)
        .join(COHORTS, live_cohort_of(A.cohort_id))
        .where(*_agent_filters(f, D.created_at))
        .order_by(D.id)
    )


def _trades(f: ExportFilters) -> Select[Any]:
    return (
        select(
            T.id.label("trade_id"),
            T.decision_id,
            C.number.label("cohort_number"),
            A.family_id,
            T.market_id,
            T.position_id,
            T.trade_type,
            T.side,
            T.amount,
            T.price,
            T.shares,
            T.implied_confidence,
            T.realized_pnl,
            T.created_at,
            T.cash_before,
            T.leg_index,
            T.probability,
            A.replicate,
            T.price_source,
            T.price_quote.label("_price_quote"),
        )
        .join(AGENTS, A.id == T.agent_id)
        .join(COHORTS, live_cohort_of(A.cohort_id))
        .where(*_agent_filters(f, T.created_at))
        .order_by(T.id)
    )


# The trade's quote (methodology v2), flattened: `price_source` is its own column; the rest
# are the stored quote's fields (`trades.price_quote`), as stored. `frozen_price` (v2's
# original rule set): the price the prompt showed, the trade having filled at the re-read one.
QUOTE_FIELDS = {
    "price_status": "status",
    "gamma_price": "gamma_price",
    "clob_price": "clob_price",
    "disagreement": "disagreement",
    "fallback_reason": "fallback_reason",
    "frozen_price": "frozen_price",
}
PROVENANCE_COLUMNS = ("price_source", *QUOTE_FIELDS)


def _trade_quote(row: Row) -> dict[str, Any]:
    """A trade's stored quote as columns (all empty for a v1 trade and a settlement), and
    its note (`readable.trade_note`)."""
    quote = row["_price_quote"]
    fields = quote if isinstance(quote, dict) else {}
    return {c: fields.get(k) for c, k in QUOTE_FIELDS.items()} | {"note": trade_note(row)}


def _positions(f: ExportFilters) -> Select[Any]:
    return (
        select(
            P.id.label("position_id"),
            C.number.label("cohort_number"),
            A.family_id,
            P.market_id,
            P.side,
            P.status,
            P.shares,
            P.avg_entry_price,
            P.cost_basis,
            P.realized_pnl,
            P.mark_price,
            P.marked_at,
            P.opened_at,
            P.closed_at,
            A.replicate,
            M.market_type.label("_market_type"),
            M.outcomes.label("_outcomes"),
            M.prices.label("_prices"),
            M.status.label("_market_status"),
            C.methodology_version.label("_methodology"),
            C.constants.label("_constants"),
        )
        .join(AGENTS, A.id == P.agent_id)
        .join(COHORTS, live_cohort_of(A.cohort_id))
        .join(MARKETS, M.id == P.market_id)
        .where(*_agent_filters(f, P.opened_at))
        .order_by(P.id)
    )


def _position_values(row: Row) -> dict[str, Any]:
    """current_value / unrealized_pnl: open positions marked by the §12.4 rule, others 0.

    A v2 or `book_execution` position is never marked at Gamma's price: at its last
    order-book mark (the snapshot pass's: v2's mid, `book_execution`'s bid value per share),
    its entry price before it had one (the prior value; the read side reads no order book)."""
    if row["status"] != "open":
        return {"current_value": Decimal("0.000000"), "unrealized_pnl": Decimal("0.000000")}
    if is_v2(row["_methodology"]) or executes_on_books(row["_constants"]):
        mark = row["mark_price"] if row["mark_price"] is not None else row["avg_entry_price"]
        value = mark_value(row["shares"], mark)
        return {
            "current_value": value,
            "unrealized_pnl": value - row["cost_basis"],
            "mark_price": mark,
        }
    try:
        live: Decimal | None = side_price(
            row["_market_type"], row["_outcomes"] or [], row["_prices"] or [], row["side"]
        )
    except TradeRejected:
        live = None
    mark = choose_mark(
        row["_market_status"] == "open", live, row["mark_price"], row["avg_entry_price"]
    )
    value = mark_value(row["shares"], mark)
    return {"current_value": value, "unrealized_pnl": value - row["cost_basis"], "mark_price": mark}


def _snapshots(f: ExportFilters) -> Select[Any]:
    return (
        select(
            C.number.label("cohort_number"),
            A.family_id,
            S.snapshot_timestamp,
            S.cash_balance,
            S.positions_value,
            S.total_value,
            S.total_pnl,
            S.total_pnl_percent,
            S.brier_score,
            S.num_resolved_bets,
            S.slot,
            A.replicate,
            S.price_provenance,
        )
        .join(AGENTS, A.id == S.agent_id)
        .join(COHORTS, live_cohort_of(A.cohort_id))
        .where(*_agent_filters(f, S.snapshot_timestamp))
        .order_by(C.number, A.family_id, A.replicate, S.slot)
    )


def _brier_scores(f: ExportFilters) -> Select[Any]:
    return (
        select(
            C.number.label("cohort_number"),
            A.family_id,
            B.trade_id,
            B.market_id,
            B.side,
            B.forecast_probability,
            B.actual_outcome,
            B.brier_score,
            B.market_price,
            B.created_at,
            A.replicate,
        )
        .join(AGENTS, A.id == B.agent_id)
        .join(COHORTS, live_cohort_of(A.cohort_id))
        .where(*_agent_filters(f, B.created_at))
        .order_by(B.id)
    )


def _markets(f: ExportFilters) -> Select[Any]:
    query = select(
        M.id.label("market_id"),
        M.question,
        M.market_type,
        M.outcomes,
        M.prices,
        M.volume,
        M.end_date.label("close_date"),
        M.status,
        M.resolution_outcome,
        M.liquidity,
        M.category,
        M.event_id,
        M.event_slug,
        M.event_title,
        M.group_item_title,
        M.slug,
        M.uma_resolution_status,
        M.resolved_at,
        M.source,
        M.updated_at,
        M.clob_token_ids,
    )
    if f.cohort is not None or f.family is not None:
        held = (
            select(P.market_id)
            .join(AGENTS, A.id == P.agent_id)
            .join(COHORTS, live_cohort_of(A.cohort_id))
            .where(*_agent_filters(ExportFilters(f.cohort, f.family), P.opened_at))
        )
        query = query.where(M.id.in_(held))
    if f.since is not None:
        query = query.where(M.updated_at >= f.since)
    if f.until is not None:
        query = query.where(M.updated_at < f.until)
    return query.order_by(M.id)


EXPORTS: dict[str, ExportSpec] = {
    spec.name: spec
    for spec in (
        ExportSpec(
            "cohorts",
            (
                "cohort_number",
                "week_start",
                "status",
                "methodology_version",
                "constants",
                "created_at",
                "completed_at",
            ),
            _cohorts,
        ),
        ExportSpec(
            "decisions",
            (
                "decision_id",
                "cohort_number",
                "family_id",
                "decision_week",
                "action",
                "status",
                "attempts",
                "prompt_system",
                "prompt_user",
                "raw_response",
                "parsed_response",
                "error",
                "tokens_in",
                "tokens_out",
                "cost_usd",
                "created_at",
                "market_snapshot_id",
                "validation_errors",
                "legs",
                "latency_ms",
                "served_model",
                "provider",
                "decided_at",
                "model_id",
                "replicate",
                *NAME_COLUMNS,
            ),
            lambda f: named(_decisions(f)),
        ),
        ExportSpec(
            "trades",
            (
                "trade_id",
                "decision_id",
                "cohort_number",
                "family_id",
                "market_id",
                "position_id",
                "trade_type",
                "side",
                "amount",
                "price",
                "shares",
                "implied_confidence",
                "realized_pnl",
                "created_at",
                "cash_before",
                "leg_index",
                "probability",
                "replicate",
                *PROVENANCE_COLUMNS,
                *TRADE_COLUMNS,
            ),
            lambda f: named(with_question(_trades(f))),
            _trade_quote,
        ),
        ExportSpec(
            "positions",
            (
                "position_id",
                "cohort_number",
                "family_id",
                "market_id",
                "side",
                "status",
                "shares",
                "avg_entry_price",
                "cost_basis",
                "current_value",
                "unrealized_pnl",
                "realized_pnl",
                "mark_price",
                "marked_at",
                "opened_at",
                "closed_at",
                "replicate",
                *NAME_COLUMNS,
            ),
            lambda f: named(_positions(f)),
            _position_values,
        ),
        ExportSpec(
            "snapshots",
            (
                "cohort_number",
                "family_id",
                "snapshot_timestamp",
                "cash_balance",
                "positions_value",
                "total_value",
                "total_pnl",
                "total_pnl_percent",
                "brier_score",
                "num_resolved_bets",
                "slot",
                "replicate",
                "price_provenance",
                *NAME_COLUMNS,
            ),
            lambda f: named(_snapshots(f)),
        ),
        ExportSpec(
            "brier_scores",
            (
                "cohort_number",
                "family_id",
                "trade_id",
                "market_id",
                "side",
                "forecast_probability",
                "actual_outcome",
                "brier_score",
                "market_price",
                "created_at",
                "replicate",
                *NAME_COLUMNS,
            ),
            lambda f: named(_brier_scores(f)),
        ),
        ExportSpec(
            "markets",
            (
                "market_id",
                "question",
                "market_type",
                "outcomes",
                "prices",
                "volume",
                "close_date",
                "status",
                "resolution_outcome",
                "liquidity",
                "category",
                "event_id",
                "event_slug",
                "event_title",
                "group_item_title",
                "slug",
                "uma_resolution_status",
                "resolved_at",
                "source",
                "updated_at",
                "clob_token_ids",
            ),
            _markets,
        ),
        ExportSpec("legs", LEG_COLUMNS, lambda f: named(_decisions(f)), expand=leg_rows),
    )
}


def get_spec(table: str) -> ExportSpec:
    try:
        return EXPORTS[table]
    except KeyError:
        raise InputError(
            f"unknown export table {table!r}", f"choose one of: {', '.join(EXPORTS)}"
        ) from None


@contextmanager
def reading(source: Engine | Connection) -> Iterator[Connection]:
    """`source` itself when it is a connection (a caller reading several tables in one
    snapshot), else a `consistent_read` of the engine for this one table."""
    if isinstance(source, Connection):
        yield source
        return
    with consistent_read(source) as conn:
        yield conn


def iter_rows(
    source: Engine | Connection, table: str, filters: ExportFilters, cap: int
) -> Iterator[dict[str, Any]]:
    """Up to `cap` + 1 rows of `table` (the extra row tells the caller the cap was hit),
    streamed in batches; a streaming cursor needs a transaction, which `reading` opens."""
    spec = get_spec(table)
    query = spec.query(filters)
    query = query if spec.expand is not None else query.limit(cap + 1)
    with reading(source) as conn, conn.execution_options(yield_per=1000).execute(query) as rows:
        count = 0
        for row in rows.mappings():
            records = spec.expand(row) if spec.expand is not None else iter([dict(row)])
            for record in records:
                if spec.enrich is not None:
                    record.update(spec.enrich(row))
                yield record
                count += 1
                if count > cap:
                    return


def write_csv(
    source: Engine | Connection, table: str, filters: ExportFilters, out: TextIO, cap: int
) -> ExportResult:
    """Write the header and up to `cap` rows of `table` as CSV to `out`."""
    if cap < 1:
        raise InputError(f"row cap {cap} must be at least 1", "pass --limit 1 or more")
    spec = get_spec(table)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(spec.columns)
    count = 0
    truncated = False
    for record in iter_rows(source, table, filters, cap):
        if count == cap:
            truncated = True
            break
        writer.writerow([cell(record.get(column)) for column in spec.columns])
        count += 1
    return ExportResult(rows=count, truncated=truncated, cap=cap)
