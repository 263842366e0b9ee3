"""The `legs` export: one row per leg of every decision, executed or refused, with its reason.

Why its own table: a decision row holds its legs as one JSON column, and a researcher asking
"which legs were refused, and why?" (a v2 leg refused for want of a CLOB price, a rolled-back
batch, a leg below the minimum or in a closed market) needs them as rows. Under v2's original
rule set a leg that reached its price also carries its market's quotes at execution
(`execution_quotes`, JSON, one per outcome in the market's outcome order).
"""

from collections.abc import Iterator
from typing import Any

from sqlalchemy.engine import RowMapping

LEG_COLUMNS = (
    "decision_id",
    "cohort_number",
    "family_id",
    "decision_week",
    "leg_index",
    "kind",
    "executed",
    "reason",
    "message",
    "market_id",
    "side",
    "amount",
    "percentage",
    "position_id",
    "price",
    "shares",
    "replicate",
    "execution_quotes",
    "display_name",
    "model",
)


def leg_rows(row: RowMapping) -> Iterator[dict[str, Any]]:
    """A decision's legs as export rows (none for a HOLD or a fallback)."""
    for leg in row["legs"] or ():
        request = leg.get("request") or {}
        yield {
            "decision_id": row["decision_id"],
            "cohort_number": row["cohort_number"],
            "family_id": row["family_id"],
            "decision_week": row["decision_week"],
            "leg_index": leg.get("index"),
            "kind": leg.get("kind"),
            "executed": leg.get("executed"),
            "reason": leg.get("reason"),
            "message": leg.get("message"),
            "market_id": leg.get("market_id") or request.get("market_id"),
            "side": leg.get("side") or request.get("side"),
            "amount": leg.get("amount") or request.get("amount"),
            "percentage": request.get("percentage"),
            "position_id": leg.get("position_id") or request.get("position_id"),
            "price": leg.get("price"),
            "shares": leg.get("shares"),
            "replicate": row["replicate"],
            "execution_quotes": leg.get("quotes"),
            "display_name": row["display_name"],
            "model": row["model"],
        }
