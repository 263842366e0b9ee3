"""What each dashboard page asks the database on first load, as plain read-model calls.

Why a catalog: `bench/run.py` times a page as the sum of the read models it runs (Streamlit
runs them one after another), without Streamlit and without `ui.read`'s cache. Each entry
replays the page script's `ui.read(...)` / `ui.curve_section(...)` calls in order, with the
arguments the page passes when nothing is selected yet (no query-string links): the same
defaults, derived from the same earlier results (e.g. the newest cohort from `cohorts`).
Every page also pays dashboard.py's `schema_revision` gate first, and so does its entry here.

Clicks worth timing (open one decision, one market, one frozen snapshot) are separate
entries marked "(click)"; they time only the reads that the click adds. The Leaderboard,
Calibration and Overview pages show the hourly `analyses` job's stored frame while it is current and
compute live otherwise: the live computations are timed as entries of their own. Curves are
also timed per range key at "all cohorts" scope, since users click through the ranges.

Keep this in step with pages/*.py: when a page changes its reads, change its entry here.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

import pandas as pd
from sqlalchemy.engine import Engine

from arena import analytics
from arena.analytics import agents as agents_rm
from arena.analytics import calibration as calibration_rm
from arena.analytics import cohorts as cohorts_rm
from arena.analytics import curves as curves_rm
from arena.analytics import decisions as decisions_rm
from arena.analytics import leaderboard as leaderboard_rm
from arena.analytics import markets as markets_rm
from arena.analytics import operations as operations_rm
from arena.analytics import stored as stored_rm

RANGE_KEYS: tuple[str, ...] = tuple(curves_rm.RANGES)


@dataclass
class Timed:
    """One read-model call of a page run: its label and wall time."""

    label: str
    ms: float


@dataclass
class Reader:
    """Calls read models on one engine like `ui.read` (minus the cache), timing each call.

    Results are kept by function name (``name#2`` for a second call of the same function), so
    a run can tell whether the page was served a stored analysis.
    """

    engine: Engine
    calls: list[Timed] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        began = perf_counter()
        out = fn(self.engine, *args, **kwargs)
        ms = (perf_counter() - began) * 1000.0
        name = fn.__name__
        key, n = name, 1
        while key in self.results:
            n += 1
            key = f"{name}#{n}"
        self.results[key] = out
        self.calls.append(Timed(_label(name, args, kwargs), ms))
        return out

    @property
    def total_ms(self) -> float:
        return sum(call.ms for call in self.calls)

    def used_stored(self) -> bool | None:
        """Whether `current_or_live` served a stored frame (None: the page did not ask)."""
        found = [v for k, v in self.results.items() if k.startswith("current_or_live")]
        return any(v[1] is not None for v in found) if found else None


def _label(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items() if v is not None]
    return f"{name}({', '.join(shown)})"


@dataclass(frozen=True)
class Selection:
    """What a user clicks on: resolved once per database, outside any timing."""

    decision_id: int | None
    market_id: str | None
    snapshot_id: int | None


def resolve_selection(engine: Engine) -> Selection:
    """The newest decision, the first market of the Markets list (most held), the frozen
    universe the newest decision saw — what a visitor is most likely to open."""
    listing = decisions_rm.decisions(engine, limit=1)
    found = markets_rm.markets(engine, limit=1)
    decision_id = int(listing["decision_id"].iloc[0]) if len(listing) else None
    snapshot = int(listing["market_snapshot_id"].iloc[0]) if len(listing) else 0
    market_id = str(found["market_id"].iloc[0]) if len(found) else None
    return Selection(decision_id, market_id, snapshot or None)


PageRun = Callable[[Reader, Selection], None]


def _entry(read: Reader) -> None:
    """dashboard.py, before every page: the schema gate on the reader engine."""
    read(analytics.schema_revision)


def curve_section(read: Reader, *, cohort: int | None = None, family: str | None = None) -> None:
    """`ui.curve_section` with its default range (ALL): the curve, then its window caption."""
    frame = read(curves_rm.portfolio_curves, "ALL", cohort=cohort, family=family)
    if not frame.empty:
        read(curves_rm.curve_window, "ALL", cohort=cohort, family=family)


def overview_page(read: Reader, _sel: Selection) -> None:
    """The stored row counts when current (the hourly `analyses` job), else counted live."""
    _entry(read)
    read(stored_rm.current_or_live, "overview")


def overview_live(read: Reader, _sel: Selection) -> None:
    """The row counts counted live: the page's fallback and the hourly job's cost."""
    read(analytics.overview)


def leaderboard_page(read: Reader, _sel: Selection) -> None:
    """The stored leaderboard when current (the hourly `analyses` job), else computed live."""
    _entry(read)
    if not read(cohorts_rm.cohort_numbers):
        return
    board, _stored = read(stored_rm.current_or_live, "leaderboard", cohort=None)
    if not board.empty:
        curve_section(read, cohort=None)


def leaderboard_live(read: Reader, _sel: Selection) -> None:
    """The leaderboard computed live: the page's fallback when no stored result is current,
    and the hourly job's cost per scope."""
    read(leaderboard_rm.leaderboard, cohort=None)


def cohorts_page(read: Reader, _sel: Selection) -> None:
    _entry(read)
    listing: pd.DataFrame = read(cohorts_rm.cohorts)
    if listing.empty:
        return
    cohort = int(listing["cohort_number"].iloc[0])
    read(cohorts_rm.cohort_standings, cohort)
    curve_section(read, cohort=cohort)
    read(cohorts_rm.decisions_by_week, cohort)


def agent_page(read: Reader, _sel: Selection) -> None:
    _entry(read)
    index: pd.DataFrame = read(agents_rm.agent_index)
    if index.empty:
        return
    cohort = max(int(n) for n in index["cohort_number"])
    family = str(index.loc[index["cohort_number"] == cohort, "family_id"].iloc[0])
    summary = read(agents_rm.agent_summary, cohort, family)
    if summary.empty:
        return
    curve_section(read, cohort=cohort, family=family)
    read(agents_rm.positions, cohort=cohort, family=family)
    read(agents_rm.trades, cohort=cohort, family=family)
    read(decisions_rm.decisions, cohort=cohort, family=family)


def calibration_page(read: Reader, _sel: Selection) -> None:
    _entry(read)
    if not read(cohorts_rm.cohort_numbers):
        return
    summary, _stored = read(stored_rm.current_or_live, "calibration_summary", cohort=None)
    if summary.empty:
        return
    read(stored_rm.current_or_live, "reliability", cohort=None)
    read(stored_rm.current_or_live, "reliability_market", cohort=None)
    read(stored_rm.current_or_live, "brier_over_time", cohort=None)


def calibration_live(read: Reader, _sel: Selection) -> None:
    """The calibration summary computed live (fallback and hourly job, as above)."""
    read(calibration_rm.calibration_summary, cohort=None)


def decisions_page(read: Reader, _sel: Selection) -> None:
    _entry(read)
    if not read(agents_rm.filter_options).cohorts:
        return
    read(decisions_rm.decision_weeks)
    read(decisions_rm.decisions, cohort=None, family=None, week=None, action=None, status=None)


def decision_click(read: Reader, sel: Selection) -> None:
    _entry(read)
    if sel.decision_id is not None:
        read(decisions_rm.decision_detail, sel.decision_id)


def markets_page(read: Reader, _sel: Selection) -> None:
    _entry(read)
    read(markets_rm.categories)
    read(markets_rm.markets, search=None, status=None, category=None, market_type=None, held=None)


def market_click(read: Reader, sel: Selection) -> None:
    _entry(read)
    if sel.market_id is None:
        return
    detail = read(markets_rm.market_detail, sel.market_id)
    if detail.empty:
        return
    read(markets_rm.price_path, sel.market_id)
    read(markets_rm.market_positions, sel.market_id)
    read(markets_rm.market_trades, sel.market_id)
    read(markets_rm.market_brier, sel.market_id)


def snapshot_click(read: Reader, sel: Selection) -> None:
    _entry(read)
    if sel.snapshot_id is None:
        return
    if read(decisions_rm.snapshot_info, sel.snapshot_id) is not None:
        read(decisions_rm.snapshot_markets, sel.snapshot_id)


def operations_page(read: Reader, _sel: Selection) -> None:
    """Unlocked (the password gate is not a read); selectboxes at their defaults."""
    _entry(read)
    health = read(operations_rm.job_health)
    if not health.empty:
        read(operations_rm.job_runs, status="failed", limit=20)
    read(operations_rm.settlement_failures)
    read(operations_rm.job_runs, job=None, status=None)
    read(operations_rm.log_sources)
    read(operations_rm.system_log, levels=operations_rm.levels_at_least("INFO"), source=None)
    read(operations_rm.api_spend)


def exports_page(read: Reader, _sel: Selection) -> None:
    """The zip is built only when the button is clicked; first load reads the filters' choices."""
    _entry(read)
    read(agents_rm.filter_options)


def curves_at(range_key: str) -> PageRun:
    """A range-key click on the Leaderboard's curve at "All cohorts" scope."""

    def run(read: Reader, _sel: Selection) -> None:
        read(curves_rm.portfolio_curves, range_key, cohort=None, family=None)
        read(curves_rm.curve_window, range_key, cohort=None, family=None)

    return run


@dataclass(frozen=True)
class Page:
    """A catalog entry: display name, the replay, and what it times."""

    name: str
    run: PageRun
    kind: str = "page"  # page | click | live (a page's fallback read) | curve


PAGES: tuple[Page, ...] = (
    Page("leaderboard", leaderboard_page),
    Page("leaderboard() computed live", leaderboard_live, "live"),
    Page("cohorts", cohorts_page),
    Page("agent", agent_page),
    Page("calibration", calibration_page),
    Page("calibration_summary() computed live", calibration_live, "live"),
    Page("decisions", decisions_page),
    Page("decisions: one decision (click)", decision_click, "click"),
    Page("markets", markets_page),
    Page("markets: one market (click)", market_click, "click"),
    Page("markets: frozen snapshot (click)", snapshot_click, "click"),
    Page("exports", exports_page),
    Page("overview", overview_page),
    Page("overview() computed live", overview_live, "live"),
    Page("operations", operations_page),
    *(Page(f"curve {key} all cohorts", curves_at(key), "curve") for key in RANGE_KEYS),
)
