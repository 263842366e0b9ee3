"""The data dictionary: what every export column means and its unit, from one table.

`COLUMNS` describes a column by name wherever it appears; `PER_TABLE` only where one name means
something else in one table (`status`, `created_at`, `price`...). Every export zip holds the
dictionary of its tables (`DATA_DICTIONARY.csv`) and `arena export dictionary` prints it whole,
so a researcher reading a CSV alone can look any column up; a test checks every exported column
has an entry and every entry is exported, so it cannot go stale.
"""

import csv
from collections.abc import Iterable
from typing import TextIO

from arena.analytics.export.readable import EXPORT_DESCRIPTIONS as EXPORT_DESCRIPTIONS
from arena.analytics.export.tables import EXPORTS
from arena.core.csvsafe import cell

DICTIONARY_NAME = "DATA_DICTIONARY.csv"
DICTIONARY_COLUMNS = ("table", "column", "meaning", "unit")

TIME = "ISO-8601 UTC"
USD = "USD"
PER_SHARE = "USD per share (0-1)"
PROB = "probability (0-1)"

# column -> (meaning, unit)
COLUMNS: dict[str, tuple[str, str]] = {
    "cohort_number": ("the weekly cohort's number (1, 2, ...)", "id"),
    "week_start": ("the cohort's week start (Sunday 00:00 UTC)", TIME),
    "methodology_version": ("the methodology the cohort ran under (v1, v2)", "text"),
    "constants": ("the methodology constants the cohort ran under", "JSON"),
    "completed_at": ("when the cohort was completed (empty while running)", TIME),
    "decision_id": ("the decision's id (empty on a settlement or refund)", "id"),
    "family_id": ("the family's stable id (joins, URLs); its name is display_name", "id"),
    "decision_week": ("the week of the cohort the decision is for (1 = its first)", "count"),
    "action": ("what the model answered: BET, SELL or HOLD", "text"),
    "attempts": ("LLM calls made for this decision (retries included)", "count"),
    "prompt_system": ("the system prompt sent", "text"),
    "prompt_user": ("the user prompt sent (the frozen market snapshot)", "text"),
    "raw_response": ("the model's answer as received", "text"),
    "parsed_response": ("the answer as parsed", "JSON"),
    "error": ("why the decision failed or fell back (empty when ok)", "text"),
    "tokens_in": ("prompt tokens billed", "tokens"),
    "tokens_out": ("completion tokens billed", "tokens"),
    "cost_usd": ("API cost of the decision", USD),
    "market_snapshot_id": ("the frozen market snapshot the prompt showed", "id"),
    "validation_errors": ("why attempts were rejected as malformed", "JSON"),
    "legs": ("every leg: executed with its numbers or refused with its reason", "JSON"),
    "latency_ms": ("time the LLM call took", "milliseconds"),
    "served_model": ("the model id the endpoint said served this decision", "text"),
    "provider": ("the provider that served this decision", "text"),
    "decided_at": ("when the answer arrived", TIME),
    "model_id": ("the model id configured for the agent when the cohort started", "text"),
    "replicate": ("the agent's number among its family's agents in the cohort (1 in v1)", "id"),
    "display_name": ("the family's name as the lineup names it now", "text"),
    "model": (
        "the exact model id the agent ran (configured when its cohort started; "
        "a decision's served_model is what the endpoint reported)",
        "text",
    ),
    "trade_id": ("the trade's id", "id"),
    "market_id": ("the Polymarket Gamma market id", "id"),
    "position_id": ("the position's id (as the prompt showed it)", "id"),
    "trade_type": ("BUY, SELL, SETTLE (market resolved) or REFUND (market cancelled)", "text"),
    "side": ("the outcome held (YES/NO or the outcome's name)", "text"),
    "shares": ("number of shares", "shares"),
    "implied_confidence": ("stake / (25% of cash before it), at most 1 (methodology §11.2)", PROB),
    "realized_pnl": ("profit or loss realized by this row", USD),
    "cash_before": ("the agent's cash just before the trade", USD),
    "leg_index": ("the leg's position in its decision's answer (0 = first)", "count"),
    "probability": ("the BUY leg's stated probability that its side wins (extension)", PROB),
    "price_source": ("where the fill price came from (clob_mid, gamma, book_walk; v2)", "text"),
    "price_status": ("the quote's status (accepted, fallback_gamma...; v2)", "text"),
    "gamma_price": ("Gamma's price at execution (v2)", PER_SHARE),
    "clob_price": ("the CLOB midpoint at execution (v2)", PER_SHARE),
    "disagreement": ("|gamma_price - clob_price| (v2)", PER_SHARE),
    "fallback_reason": ("why the CLOB price was not used (v2)", "text"),
    "frozen_price": ("the price the prompt showed, when the fill re-read it (v2)", PER_SHARE),
    "question": ("the market's question", "text"),
    "note": ("what the row is in words when it is not a plain BUY/SELL fill", "text"),
    "avg_entry_price": ("average price paid per share", PER_SHARE),
    "cost_basis": ("what the shares still held cost (0 once closed)", USD),
    "current_value": ("open: shares x mark_price; closed: 0", USD),
    "unrealized_pnl": ("current_value - cost_basis (0 once closed)", USD),
    "mark_price": ("the price the position is valued at (1/0 once settled)", PER_SHARE),
    "marked_at": ("when mark_price was taken", TIME),
    "opened_at": ("when the position was opened", TIME),
    "closed_at": ("when it was sold out, settled or refunded (empty while open)", TIME),
    "snapshot_timestamp": ("when the valuation was taken", TIME),
    "cash_balance": ("cash held", USD),
    "positions_value": ("marked value of the open positions", USD),
    "total_value": ("cash_balance + positions_value", USD),
    "total_pnl": ("total_value - the starting balance", USD),
    "total_pnl_percent": ("total_pnl / the starting balance x 100", "percent"),
    "num_resolved_bets": ("BUYs scored so far (resolved markets)", "count"),
    "slot": ("the 10-minute slot the snapshot belongs to", TIME),
    "price_provenance": ("each open position's mark and its source, by position id (v2)", "JSON"),
    "forecast_probability": ("the forecast scored: the BUY's implied confidence", PROB),
    "actual_outcome": ("1 if the side bought won, else 0", "0/1"),
    "market_price": ("the price the BUY paid (the market's forecast)", PER_SHARE),
    "market_type": ("binary or named (one of several named outcomes)", "text"),
    "outcomes": ("the market's outcomes, in order", "JSON"),
    "prices": ("the outcomes' prices as last synced, in order", "JSON"),
    "volume": ("traded volume as Polymarket reports it", USD),
    "close_date": ("when the market closes", TIME),
    "resolution_outcome": ("the winning outcome once resolved (CANCELLED if void)", "text"),
    "liquidity": ("liquidity as Polymarket reports it", USD),
    "category": ("Polymarket's category", "text"),
    "event_id": ("the Polymarket event the market belongs to", "id"),
    "event_slug": ("the event's URL slug", "text"),
    "event_title": ("the event's title", "text"),
    "group_item_title": ("the market's title within its event", "text"),
    "slug": ("the market's URL slug", "text"),
    "uma_resolution_status": ("UMA's resolution status as Polymarket reports it", "text"),
    "resolved_at": ("when the market resolved", TIME),
    "source": ("where the market came from (gamma, or a simulation)", "text"),
    "updated_at": ("when the market was last synced", TIME),
    "clob_token_ids": ("the order-book tokens of its outcomes", "JSON"),
    "kind": ("BET or SELL", "text"),
    "executed": ("whether the leg executed", "true/false"),
    "reason": ("a refused leg's stable reason code (below_min, market_closed...)", "text"),
    "message": ("a refused leg's reason in words", "text"),
    "percentage": ("a SELL leg's share of the position to sell", "percent"),
    "execution_quotes": ("the market's quotes at execution, one per outcome (v2)", "JSON"),
}

# Where one column name means something else in one table.
PER_TABLE: dict[tuple[str, str], tuple[str, str]] = {
    ("cohorts", "status"): ("deciding, tracking or completed", "text"),
    ("decisions", "status"): ("ok, fallback_hold, error, zero_trade or in_progress", "text"),
    ("positions", "status"): ("open, sold, won, lost or cancelled (refunded)", "text"),
    ("markets", "status"): ("open, closed, resolved or cancelled", "text"),
    ("cohorts", "created_at"): ("when the cohort was started", TIME),
    ("decisions", "created_at"): ("when the decision was claimed", TIME),
    ("trades", "created_at"): ("when the trade executed or settled", TIME),
    ("brier_scores", "created_at"): ("when the bet was scored", TIME),
    ("trades", "amount"): (
        "cash paid (BUY) or received (SELL, SETTLE, REFUND); a losing SETTLE is 0",
        USD,
    ),
    ("legs", "amount"): ("the BET leg's stake (asked, or executed)", USD),
    ("trades", "price"): (
        "fill price per share; SETTLE: 1 won, 0 lost; REFUND: the average entry price",
        PER_SHARE,
    ),
    ("legs", "price"): ("the executed leg's fill price", PER_SHARE),
    ("snapshots", "brier_score"): ("mean Brier score of the agent's scored bets so far", "0-1"),
    ("brier_scores", "brier_score"): ("(forecast_probability - actual_outcome)^2", "0-1"),
}


def entry(table: str, column: str) -> tuple[str, str]:
    """(meaning, unit) of `column` in `table`; KeyError when the dictionary lacks it."""
    return PER_TABLE.get((table, column)) or COLUMNS[column]


def dictionary_rows(tables: Iterable[str] | None = None) -> list[tuple[str, str, str, str]]:
    """(table, column, meaning, unit) for every column of `tables` (all exports if None)."""
    rows = []
    for table in EXPORTS if tables is None else dict.fromkeys(tables):
        rows += [(table, c, *entry(table, c)) for c in EXPORTS[table].columns]
    return rows


def write_dictionary(out: TextIO, tables: Iterable[str] | None = None) -> None:
    """The dictionary of `tables` as CSV (header `DICTIONARY_COLUMNS`)."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(DICTIONARY_COLUMNS)
    writer.writerows([cell(v) for v in row] for row in dictionary_rows(tables))
