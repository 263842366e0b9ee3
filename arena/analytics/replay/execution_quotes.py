"""v2's original rule set in `arena verify`: the quotes each decision executed at.

A decision of a `source-7c78b0c` cohort executes at CLOB midpoints re-read after the model
answered (`arena.engine.requote`). Each leg that reached its price records its market's quotes
as read (`quotes` in the decision's `legs`), so from the bundle alone:

- `execution_quotes` gives the planner the quotes a decision's legs met, by market, and the
  replay fills every leg at them (or refuses it, "No validated CLOB price available");
- `check_execution_quotes` recomputes each recorded set by the original's validation rule from
  the Gamma and CLOB prices it records, as `replay.prices.check_quotes` does the frozen ones.

Taken as recorded, as for the frozen quotes: the prices the CLOB and Gamma gave.
"""

from collections.abc import Mapping
from typing import Any

from arena.analytics.replay.prices import compare_quotes
from arena.analytics.replay.report import Check


def execution_quotes(decision: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The quotes recorded on a decision's legs, by market (every leg that met quotes names
    its market, refused or not)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for leg in decision.get("legs") or ():
        quotes = leg.get("quotes")
        if quotes is None:
            continue
        if leg.get("market_id") is not None:
            out[str(leg["market_id"])] = list(quotes)
    return out


def check_execution_quotes(
    decisions: list[dict[str, Any]], snapshots: Mapping[int, Mapping[str, Any]]
) -> Check:
    """Every leg's quotes read at execution follow the validation rule and give its price
    (its market's type and outcomes from the universe its decision saw)."""
    check = Check("execution-time prices follow their quotes")
    for decision in decisions:
        snapshot = snapshots.get(decision.get("market_snapshot_id") or -1) or {}
        items = {str(item["market_id"]): item for item in snapshot.get("items") or ()}
        for leg in decision.get("legs") or ():
            quotes = leg.get("quotes")
            if quotes is None:
                continue
            market = items.get(str(leg.get("market_id")))
            where = f"decision {decision['id']} leg {leg['index']}"
            if market is None:
                check.fail(f"{where}: its quotes name no market of its decision's universe")
                continue
            compare_quotes(check, where, {**market, "quotes": quotes})
    return check
