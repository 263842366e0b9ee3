"""The columns that let a researcher read an export alone, without the database or the code.

An export's rows name families by their stable id (`family_id`, for joins and URLs); these add,
as the last columns, what a person reads: the family's `display_name` (as the lineup names it
now), the exact `model` its agent ran (`agents.model_id`, configured when the cohort started:
"GPT-5.2" may be family `gpt-5.1`), a trade's market `question` and, for a row that is not a
plain fill, a `note` saying in words what it is (a losing SETTLE has amount 0 and price 0 by
design: the shares paid nothing).
"""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from sqlalchemy import Select, func

from arena.storage.tables import AGENTS, FAMILIES, MARKETS, TRADES

# What one row of each export is (the Exports page says it of each table).
EXPORT_DESCRIPTIONS: dict[str, str] = {
    "cohorts": "one weekly cohort, with its methodology version and constants",
    "decisions": "one agent's weekly decision: prompts, raw response, legs, tokens, cost",
    "trades": "one BUY, SELL, settlement or refund",
    "positions": "one holding of one side of one market, with its current value",
    "snapshots": "one agent's portfolio at one 10-minute slot",
    "brier_scores": "one resolved bet, scored against its outcome",
    "markets": "one market (with a cohort or family filter: the markets its agents held)",
    "legs": "one leg of a decision, executed or refused, with the reason",
}

NAME_COLUMNS = ("display_name", "model")
TRADE_COLUMNS = ("question", *NAME_COLUMNS, "note")


def named(query: Select[Any]) -> Select[Any]:
    """`query` (which has `agents` in its FROM) with `display_name` and `model` added."""
    return query.outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id).add_columns(
        func.coalesce(FAMILIES.c.display_name, AGENTS.c.display_name).label("display_name"),
        AGENTS.c.model_id.label("model"),
    )


def with_question(query: Select[Any]) -> Select[Any]:
    """`query` (over `trades`) with the traded market's `question` added."""
    return query.outerjoin(MARKETS, MARKETS.c.id == TRADES.c.market_id).add_columns(
        MARKETS.c.question
    )


def trade_note(row: Mapping[Any, Any]) -> str | None:
    """What a trade row is in words, when it is not a plain BUY or SELL fill (else None).

    Settlement (engine/settlement.py, core/accounting.py `settle`/`refund`): a SETTLE pays
    $1 a share on the winning side (price 1, amount = shares) and nothing on the losing one
    (price 0, amount 0, realized_pnl = minus the remaining cost basis); a REFUND (the market
    was cancelled: void or no determinable winner) gives back the remaining cost basis at
    the average entry price, with no gain or loss and no Brier row."""
    kind = row["trade_type"]
    if kind == "SETTLE":
        if row["price"] is not None and Decimal(row["price"]) > 0:
            return "settled at 1: the outcome won; each share paid $1"
        return "settled at 0: the outcome lost; the shares paid nothing (amount 0)"
    if kind == "REFUND":
        return (
            "refunded: the market was cancelled (void or no winner); the remaining cost "
            "basis came back at the average entry price, no gain or loss"
        )
    if kind in ("BUY", "SELL"):
        return None
    return f"trade type {kind}"
