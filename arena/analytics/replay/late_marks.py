"""A late entrant's marks in `arena verify` (methodology §20): each valuation row of its
shadow recomputed at the marks it records, and each mark by the late entry's rule.

Why its own check: a late entrant is valued between the original's runs at the run's frozen
price where the run's universe has the market, else the CLOB's price history at the run's
time, else its last mark (`arena.engine.late_entry_runs`), and each valuation row records
which, by position (`portfolio_snapshots.price_provenance`: {"source": "run" |
"clob_history" | "carried", "price": "..."}; `marks.jsonl` in its bundle, whatever its
methodology version). So, from the bundle alone:

- each row's cash and open positions are a state of the replayed books, and its positions
  value is Σ shares × the recorded price (`money`-rounded, as the engine sums);
Every mark of every row is checked (a shadow has one valuation row per run, and one after its
last settlement, not one every slot):

- a ``run`` mark is the position's side price (`core.accounting.side_price`) in the frozen
  snapshot of the run at that row's slot (a snapshot of the bundle, taken in that slot);
- a ``carried`` mark is the position's previous recorded mark, or its entry price before it
  had one.

Taken as recorded: a ``clob_history`` price (the CLOB's history is not in the bundle).
"""

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from arena.analytics.replay.format import plain
from arena.analytics.replay.marks import MarkRuns
from arena.analytics.replay.prices import PricedReplay, _Walk, matched_row, rows_by_agent
from arena.analytics.replay.report import Check
from arena.core.accounting import TradeRejected, side_price
from arena.core.timeutil import slot_start

RUN, CLOB_HISTORY, CARRIED = "run", "clob_history", "carried"


class LateReplay(PricedReplay, Protocol):
    """What the check reads besides the priced replay's tables: the published positions."""

    positions: dict[int, dict[str, Any]]


def with_marks(runs: Mapping[int, MarkRuns]) -> dict[int, MarkRuns]:
    """The runs with each record's price as its `mark` (what the value walk reads)."""
    out = {}
    for agent_id, agent_runs in runs.items():
        marked = [
            {**run, "provenance": {**run["provenance"], "mark": run["provenance"].get("price")}}
            for run in agent_runs.runs
        ]
        out[agent_id] = MarkRuns(marked)
    return out


def run_snapshots(replay: PricedReplay) -> dict[str, dict[str, Any]]:
    """The bundle's frozen snapshots by the slot they were taken in (the bundle's spelling):
    the slot of the late entrant's valuation row after each replayed run."""
    minutes = int(replay.cohort["constants"]["snapshot_interval_minutes"])
    by_slot = {}
    for snapshot in replay.snapshots.values():
        taken = datetime.fromisoformat(snapshot["taken_at"])
        by_slot[str(plain(slot_start(taken, minutes)))] = snapshot
    return by_slot


def check_late_values(replay: LateReplay, runs: Mapping[int, MarkRuns]) -> Check:
    """Every valuation row at its recorded marks, and every mark by the late entry's rule."""
    check = Check("late entrant's snapshot values at its recorded marks")
    at = replay.at
    rows = rows_by_agent(replay, runs, check)
    marked, snapshots = with_marks(runs), run_snapshots(replay)
    for agent_id, states in replay.states.items():
        walk = _Walk(states, marked.get(agent_id) or MarkRuns([]))
        last: dict[int, Decimal] = {}
        history = 0
        for row in rows.get(agent_id, []):
            matched = matched_row(check, walk, agent_id, row, at)
            if matched is None:
                continue
            where, marks = matched
            slot = row[at["slot"]]
            entry = {pid: h.avg_entry_price for pid, h in walk.states[walk.index].holdings.items()}
            for pid in marks:  # every row's marks (a shadow has a row per run, not per slot)
                prior = last.get(pid, entry.get(pid))
                rule = _expected(replay, snapshots.get(slot), pid, marks[pid], prior)
                if rule is None:
                    history += 1
                    continue
                check.expect(f"{where} position {pid} {marks[pid].get('source')} mark", *rule)
            last.update({pid: Decimal(str(record["mark"])) for pid, record in marks.items()})
        for problem in walk.runs.finish():
            check.fail(f"marks of agent {agent_id}: {problem}")
        if history:
            check.note(f"agent {agent_id}: {history} CLOB-history mark(s) taken as recorded")
    return check


def _expected(
    replay: LateReplay,
    snapshot: dict[str, Any] | None,
    pid: int,
    record: Mapping[str, Any],
    prior: Decimal | None,
) -> tuple[Any, Any] | None:
    """(recorded, recomputed) for one mark where its run starts; None: taken as recorded."""
    recorded = Decimal(str(record.get("price")))
    source = record.get("source")
    if source == CLOB_HISTORY:
        return None
    if source == CARRIED:
        return recorded, prior
    if source != RUN:
        return source, f"one of {RUN}, {CLOB_HISTORY}, {CARRIED}"
    position = replay.positions.get(pid)
    items = {item["market_id"]: item for item in (snapshot or {}).get("items", [])}
    item = items.get(position["market_id"]) if position else None
    if item is None or not item["prices"]:
        return recorded, "no frozen price of the run in this slot"
    assert position is not None
    prices = [Decimal(str(p)) for p in item["prices"]]
    try:
        return recorded, side_price(item["market_type"], item["outcomes"], prices, position["side"])
    except TradeRejected as exc:
        return recorded, f"no side price: {exc}"
