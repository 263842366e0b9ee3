"""`arena verify`'s late-entry marks rule (`replay.late_marks`) on a hand-made replay: a run
mark is the side's frozen price of the run in its slot, a carried mark the previous one (the
entry price before any), a CLOB-history mark taken as recorded; anything else is a mismatch.

Pure: the bundle's tables as `verify.Replay` holds them, no database (the end-to-end case is
`test_late_entry_bundles`; the finished test season has run marks only).
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from arena.analytics.replay.figures import Book
from arena.analytics.replay.format import PORTFOLIO_COLUMNS
from arena.analytics.replay.late_marks import check_late_values
from arena.analytics.replay.marks import mark_runs, runs_by_agent
from arena.analytics.replay.prices import BookState
from arena.core.accounting import BetLimits, Holding

AGENT, PID = 1, 7
SLOTS = ("2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-18T00:00:00Z")
HOLDING = Holding(shares=Decimal(200), cost_basis=Decimal(100))  # entry price 0.5


@dataclass
class Tables:
    """What the check reads of a replay (`late_marks.LateReplay`)."""

    curve: list[list[str]]
    cohort: dict[str, Any] = field(
        default_factory=lambda: {"constants": {"snapshot_interval_minutes": 10}}
    )
    snapshots: dict[int, dict[str, Any]] = field(
        default_factory=lambda: {
            5: {  # the first run's frozen universe, taken 3 minutes into the first slot
                "id": 5,
                "taken_at": "2026-01-04T00:03:00Z",
                "items": [
                    {
                        "market_id": "m1",
                        "market_type": "binary",
                        "outcomes": ["Yes", "No"],
                        "prices": ["0.6", "0.4"],
                    }
                ],
            }
        }
    )
    positions: dict[int, dict[str, Any]] = field(
        default_factory=lambda: {PID: {"market_id": "m1", "side": "NO"}}
    )
    decisions: list[dict[str, Any]] = field(default_factory=list)
    trades: list[dict[str, Any]] = field(default_factory=list)
    at: dict[str, int] = field(
        default_factory=lambda: {c: i for i, c in enumerate(PORTFOLIO_COLUMNS)}
    )
    books: dict[int, Book] = field(default_factory=dict)
    states: dict[int, list[BookState]] = field(
        default_factory=lambda: {
            AGENT: [
                BookState(None, Decimal(1000), {}),
                BookState(datetime(2026, 1, 4, 0, 3, tzinfo=UTC), Decimal(900), {PID: HOLDING}),
            ]
        }
    )
    cash_before: dict[int, Decimal] = field(default_factory=dict)
    limits: BetLimits = field(default_factory=lambda: BetLimits(Decimal(50), Decimal("0.25")))
    walks: bool = False
    source_rules: bool = False


def check(marks: list[tuple[str, str]]) -> Any:
    """The check over one valuation row per slot, each marking the position (source, price)
    and valued at shares × price."""
    curve, rows = [], []
    for slot, (source, price) in zip(SLOTS, marks, strict=False):
        value = HOLDING.shares * Decimal(price)
        curve.append([str(AGENT), slot, slot, "900", str(value), str(900 + value), "0", "", "0"])
        rows.append((AGENT, slot, {str(PID): {"source": source, "price": price}}))
    return check_late_values(Tables(curve), runs_by_agent(mark_runs(rows)))


def test_run_carried_and_history_marks_by_the_rule() -> None:
    result = check([("run", "0.400000"), ("carried", "0.400000"), ("clob_history", "0.3")])
    assert result.ok, result.mismatches
    # three values, a run mark and a carried mark compared; the history mark noted
    assert result.compared == 5
    assert result.notes == [f"agent {AGENT}: 1 CLOB-history mark(s) taken as recorded"]


def test_a_carried_mark_before_any_mark_is_the_entry_price() -> None:
    result = check([("carried", "0.5")])
    assert result.ok, result.mismatches


@pytest.mark.parametrize(
    ("marks", "named"),
    [
        ([("run", "0.6")], "run mark"),  # YES's price for a NO position
        ([("run", "0.4"), ("carried", "0.45")], "carried mark"),
        ([("carried", "0.4")], "carried mark"),  # not the entry price
        ([("run", "0.4"), ("run", "0.4")], "run mark"),  # no run in the second slot
        ([("gamma", "0.4")], "gamma mark"),
    ],
)
def test_a_mark_off_the_rule_is_named(marks: list[tuple[str, str]], named: str) -> None:
    result = check(marks)
    assert not result.ok
    assert any(f"position {PID} {named}" in line for line in result.mismatches), result.mismatches
