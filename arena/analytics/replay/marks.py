"""`marks.jsonl`: methodology v2's valuation provenance in a replay bundle, as runs.

A v2 valuation row records every open position's mark and where it came from
(`portfolio_snapshots.price_provenance`: price, source, status, Gamma and CLOB prices,
disagreement, fallback reason, mark), so `arena verify` can recompute each row's positions
value from the recorded marks. One line per position per slot would be millions of lines for
a long cohort (a year's cohort of ten agents: ~177,000 rows of some ten open positions each,
over the bundle's per-file cap), yet a position's record mostly stays the same from one
10-minute slot to the next. So the file holds **runs**: one line per position and stretch of
consecutive rows of its agent over which its record did not change,

    {"agent_id", "position_id", "from_slot", "to_slot", "provenance"}

(`from_slot` and `to_slot` inclusive, in the bundle's instant spelling; lines ordered by
agent, position, `from_slot`). Lossless: the record of row (agent, slot) is every run of the
agent with `from_slot` ≤ slot ≤ `to_slot` (`MarkRuns`). A v1 bundle has no such file.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from arena.analytics.replay.format import jsonl_bytes, plain
from arena.storage.tables import PORTFOLIO_SNAPSHOTS

MARKS = "marks.jsonl"
RUN_KEYS = ("agent_id", "position_id", "from_slot", "to_slot", "provenance")

Row = tuple[int, str, Mapping[str, Any] | None]  # (agent_id, slot as spelled, price_provenance)


def mark_runs(rows: Iterable[Row]) -> list[dict[str, Any]]:
    """The runs of `rows` (agent, spelled slot, provenance by position id), given in agent
    then slot order: pure, so the builder and the tests share it."""
    runs: list[dict[str, Any]] = []
    open_runs: dict[int, dict[str, Any]] = {}
    agent: int | None = None
    for agent_id, slot, provenance in rows:
        if agent_id != agent:
            runs.extend(open_runs.values())
            open_runs, agent = {}, agent_id
        seen = (provenance or {}).items()
        current = {int(pid): record for pid, record in seen}
        for pid in [p for p in open_runs if p not in current]:
            runs.append(open_runs.pop(pid))
        for pid, record in current.items():
            run = open_runs.get(pid)
            if run is not None and run["provenance"] == record:
                run["to_slot"] = slot
                continue
            if run is not None:
                runs.append(run)
            open_runs[pid] = {
                "agent_id": agent_id,
                "position_id": pid,
                "from_slot": slot,
                "to_slot": slot,
                "provenance": record,
            }
    runs.extend(open_runs.values())
    runs.sort(key=lambda run: (run["agent_id"], run["position_id"], run["from_slot"]))
    return runs


def marks_jsonl(conn: Connection, agent_ids: Sequence[int]) -> bytes:
    """`marks.jsonl` of the agents' valuation rows. Its strings are the engine's own words
    (sources, statuses, reasons) and decimal text, never copied free text: nothing to redact."""
    columns = PORTFOLIO_SNAPSHOTS.c
    query = (
        select(columns.agent_id, columns.slot, columns.price_provenance)
        .where(columns.agent_id.in_(agent_ids))
        .order_by(columns.agent_id, columns.slot)
    )
    rows = ((agent, str(plain(slot)), record) for agent, slot, record in conn.execute(query))
    return jsonl_bytes(mark_runs(rows))


@dataclass
class MarkRuns:
    """The runs of one agent, read back slot by slot (`at`, slots in increasing order);
    `problems` names runs that overlap or that no row of the agent reads."""

    runs: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list)
    started: list[int] = field(default_factory=list)  # positions whose run the last slot began
    version: int = 0  # moves whenever the records read change (a cache key)
    _starts: list[dict[str, Any]] = field(default_factory=list)
    _next: int = 0
    _active: dict[int, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._starts = sorted(self.runs, key=lambda run: (run["from_slot"], run["position_id"]))

    def at(self, slot: str) -> dict[int, dict[str, Any]]:
        """Each position's recorded provenance at `slot`."""
        self.started = []
        for pid in [p for p, run in self._active.items() if run["to_slot"] < slot]:
            del self._active[pid]
            self.version += 1
        while self._next < len(self._starts) and self._starts[self._next]["from_slot"] <= slot:
            run = self._starts[self._next]
            self._next += 1
            pid = int(run["position_id"])
            if run["from_slot"] != slot:  # not picked up at its own slot: no row there
                self.problems.append(
                    f"position {pid}: a run from {run['from_slot']} starts at no row"
                )
                continue
            if pid in self._active:
                self.problems.append(f"position {pid}: two runs cover slot {slot}")
            self._active[pid] = run
            self.started.append(pid)
            self.version += 1
        return {pid: run["provenance"] for pid, run in self._active.items()}

    def finish(self) -> list[str]:
        """The problems, with every run no row read (past the agent's last row)."""
        for run in self._starts[self._next :]:
            self.problems.append(
                f"position {run['position_id']}: a run from {run['from_slot']} starts at no row"
            )
        self._next = len(self._starts)
        return self.problems


def runs_by_agent(runs: Iterable[dict[str, Any]]) -> dict[int, MarkRuns]:
    """The file's runs grouped by agent, each ready to read slot by slot."""
    grouped: dict[int, list[dict[str, Any]]] = {}
    for run in runs:
        grouped.setdefault(int(run["agent_id"]), []).append(run)
    return {agent: MarkRuns(agent_runs) for agent, agent_runs in grouped.items()}
