"""What `arena verify` reports: each kind of recomputed number (`Check`), the files against
the manifest (`Report`), and how both are shown in a terminal (every cell `printable`).
"""

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from arena.analytics.replay.format import FileCheck, plain
from arena.core.text import printable

FLOAT_TOLERANCE = 1e-9
MAX_SHOWN = 5  # mismatches listed per check


@dataclass
class Check:
    """One kind of recomputed number: how many were compared, and the first mismatches."""

    name: str
    compared: int = 0
    mismatches: list[str] = field(default_factory=list)
    mismatch_count: int = 0
    notes: list[str] = field(default_factory=list)

    def expect(self, what: str, published: Any, recomputed: Any) -> bool:
        """Compare one published value with its recomputation; record a mismatch."""
        self.compared += 1
        if _same(published, recomputed):
            return True
        self.mismatch_count += 1
        if len(self.mismatches) < MAX_SHOWN:
            self.mismatches.append(f"{what}: published {published!r}, recomputed {recomputed!r}")
        return False

    def note(self, what: str) -> None:
        """Something not compared, and why (shown beside the table, never a mismatch)."""
        self.notes.append(what)

    def fail(self, what: str) -> None:
        """A mismatch with no single value to show (a row missing or unexpected)."""
        self.compared += 1
        self.mismatch_count += 1
        if len(self.mismatches) < MAX_SHOWN:
            self.mismatches.append(what)

    @property
    def ok(self) -> bool:
        return self.mismatch_count == 0


@dataclass
class Report:
    """What `verify` found: the files against the manifest, then each recomputed number."""

    bundle_hash: str
    cohort: int | None
    files: list[FileCheck]
    checks: list[Check]
    late_entry: dict[str, Any] | None = None  # a late entrant's shadow: its manifest record

    @property
    def title(self) -> str:
        """ "Replay bundle of cohort N: HASH"; a late entrant's names its family (and says
        CONTAMINATED first thing after it when it is)."""
        late = self.late_entry
        who = f"cohort {self.cohort}"
        if isinstance(late, dict):
            taint = " (CONTAMINATED)" if late.get("contaminated") else ""
            who += f", late entrant {late.get('family')}{taint}"
        return f"Replay bundle of {who}: {self.bundle_hash}"

    @property
    def tampered(self) -> list[FileCheck]:
        return [f for f in self.files if f.status != "ok"]

    @property
    def ok(self) -> bool:
        return not self.tampered and all(check.ok for check in self.checks)


def _same(published: Any, recomputed: Any) -> bool:
    """Equal as published: Decimals by value (`50` is `50.000000`), floats within 1e-9."""
    if isinstance(recomputed, Decimal) and published is not None:
        try:
            return Decimal(str(published)) == recomputed
        except ArithmeticError:
            return False
    published, recomputed = plain(published), plain(recomputed)
    if isinstance(published, float) or isinstance(recomputed, float):
        if published is None or recomputed is None:
            return published is None and recomputed is None
        try:
            a, b = float(published), float(recomputed)
        except (TypeError, ValueError):  # a published value that is no number: differs
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=FLOAT_TOLERANCE, abs_tol=FLOAT_TOLERANCE)
    return bool(published == recomputed)


def report_table(report: Report) -> Any:
    """A rich Table: each file's hash, then each recomputed kind of number, matched or not.

    Every cell is a `Text` of `printable` text: a name from the bundle can neither drive the
    terminal (escape sequences) nor style itself (Rich markup such as `[bold red]`)."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=_cell(report.title),
        box=box.SIMPLE_HEAD,
    )
    table.add_column("check")
    table.add_column("compared", justify="right")
    table.add_column("mismatched", justify="right")
    table.add_column("result")
    changed = report.tampered
    table.add_row(
        _cell("files against MANIFEST.json"),
        _cell(str(len(report.files))),
        _cell(str(len(changed))),
        _cell("ok" if not changed else "; ".join(f"{f.path} {f.status}" for f in changed)),
    )
    for check in report.checks:
        table.add_row(
            _cell(check.name),
            _cell(f"{check.compared:,}"),
            _cell(f"{check.mismatch_count:,}"),
            _cell("ok" if check.ok else "MISMATCH"),
        )
    return table


def _cell(text: str) -> Any:
    from rich.text import Text

    return Text(printable(text))


def mismatch_lines(report: Report, shown: Callable[[str], None]) -> None:
    """The first mismatches of each failed check, one per line, each `printable`: names and
    values come from the bundle's files."""
    for line in _mismatch_lines(report):
        shown(printable(line))


def _mismatch_lines(report: Report) -> Iterable[str]:
    for file in report.tampered:
        yield f"file {file.path}: {file.status} (expected {file.expected}, found {file.actual})"
    for check in report.checks:
        for line in check.mismatches:
            yield f"{check.name}: {line}"
        if check.mismatch_count > len(check.mismatches):
            yield f"{check.name}: … and {check.mismatch_count - len(check.mismatches)} more"
        for line in check.notes:
            yield f"{check.name} (not compared): {line}"
