"""What each dashboard page asks the database on first load, as plain read-model calls.

Why a catalog: `bench/run.py` times a page as the sum of the read models it runs (Streamlit
runs them one after another), without Streamlit and without `reads.read`'s cache. Each entry
replays the page script's `reads.read(...)` / `portfolio.curve_section(...)` /
`reads.stored_or_offer(...)` / `notices.simulated_notice(...)` reads in order, with the
arguments the page passes when nothing is selected yet (no query-string links): the same
defaults, derived from the same earlier results (e.g. the newest cohort from `cohorts`).
Every page also pays dashboard.py's `schema_revision` gate first, and so does its entry here.

Clicks worth timing (open one decision, one market, one frozen snapshot) are separate
entries marked "(click)"; they time only the reads that the click adds. The Leaderboard,
Calibration and Overview pages (and the Family page's headline numbers, and Home's leader) show
the hourly `analyses` job's stored frame while it is current (`current_stored`); otherwise they
offer to compute it live and compute nothing until the person clicks, so a first load reads
`current_stored` only: the live computations are timed as entries of their own. Curves are
also timed per range key at "all cohorts" scope, since users click through the ranges.

Keep this in step with app_pages/*.py: when a page changes its reads, change its entry here.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from time import perf_counter
from typing import Any

import pandas as pd
from sqlalchemy.engine import Engine

from arena.analytics import stored as stored_rm
from arena.analytics.stats import calibration as calibration_rm
from arena.analytics.stats import paired as paired_rm
from arena.analytics.stats import stated as stated_rm
from arena.analytics.views import agents as agents_rm
from arena.analytics.views import cohorts as cohorts_rm
from arena.analytics.views import curves as curves_rm
from arena.analytics.views import decisions as decisions_rm
from arena.analytics.views import markets as markets_rm
from arena.analytics.views import operations as operations_rm
from arena.analytics.views import simulated as simulated_rm
from arena.analytics.views import status as status_rm
from arena.analytics.views.database import schema_revision

RANGE_KEYS: tuple[str, ...] = tuple(curves_rm.RANGES)


@dataclass
class Timed:
    """One read-model call of a page run: its label and wall time."""

    label: str
    ms: float


@dataclass
class Reader:
    """Calls read models on one engine like `reads.read` (minus the cache), timing each call.

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
        """Whether `current_stored` served a stored frame (False: none was current, so the
        page offered the live computation; None: the page did not ask)."""
        found = [v for k, v in self.results.items() if k.split("#")[0] == "current_stored"]
        return any(v is not None for v in found) if found else None


def _label(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items() if v is not None]
    return f"{name}({', '.join(shown)})"


def this_minute() -> datetime:
    """Now, to the minute: the instant the Home page judges the arena at."""
    return datetime.now(UTC).replace(second=0, microsecond=0)


@dataclass(frozen=True)
class Selection:
    """What a user clicks on: resolved once per database, outside any timing. `now` is the
    minute the pages load at (Home's `arena_status` argument), fixed so that repeated runs
    read the same; it does not take part in comparisons."""

    decision_id: int | None
    market_id: str | None
    snapshot_id: int | None
    now: datetime = field(default_factory=this_minute, compare=False)


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
    """dashboard.py, before every page: the schema gate on the reader engine, then the
    sidebar's note on cohorts run under a protocol extension."""
    read(schema_revision)
    read(stated_rm.extended_cohorts)


def _stored(read: Reader, name: str, cohort: int | None = None) -> Any:
    """`reads.stored_or_offer` on first load: the current stored result, or None (the page then
    offers the live computation and computes nothing unasked)."""
    return read(stored_rm.current_stored, name, cohort)


def _simulated(read: Reader) -> None:
    """`notices.simulated_notice`: which families the simulated model server answered."""
    read(simulated_rm.simulated_families)


def _curve(read: Reader, range_key: str, *, cohort: int | None, family: str | None) -> None:
    """One range of `portfolio.curve_section`: the curve; then, when it has points, its window
    and the decision runs marked on it (from one bucket before the window's start)."""
    frame = read(curves_rm.portfolio_curves, range_key, cohort=cohort, family=family)
    if frame.empty:
        return
    window = read(curves_rm.curve_window, range_key, cohort=cohort, family=family)
    since = window.start - pd.Timedelta(seconds=window.bucket_seconds) if window.start else None
    read(
        curves_rm.decision_runs,
        cohort=cohort,
        family=family,
        start=since,
        end=window.end,
    )


def curve_section(read: Reader, *, cohort: int | None = None, family: str | None = None) -> None:
    """`portfolio.curve_section` with its default range (ALL, never flat): which short ranges are
    flat, then the curve, its window and its decision runs."""
    read(curves_rm.flat_ranges, cohort=cohort, family=family)
    _curve(read, "ALL", cohort=cohort, family=family)


def home_page(read: Reader, sel: Selection) -> None:
    """The status strip at this minute, the simulated badge, and the leader from the stored
    leaderboard (never computed here) once a cohort exists."""
    _entry(read)
    status = read(status_rm.arena_status, sel.now)
    _simulated(read)
    if status.cohorts:
        _stored(read, "leaderboard")


def overview_page(read: Reader, _sel: Selection) -> None:
    """The stored row counts when current (the hourly `analyses` job), else the offer."""
    _entry(read)
    read(cohorts_rm.cohort_numbers)
    _stored(read, "overview")


def overview_live(read: Reader, _sel: Selection) -> None:
    """The row counts counted live: the page's "compute now" click and the hourly job's cost."""
    read(stored_rm.live, "overview")


def leaderboard_page(read: Reader, _sel: Selection) -> None:
    """The stored leaderboard when current (the hourly `analyses` job), else the offer; the
    curve either way."""
    _entry(read)
    if not read(cohorts_rm.cohort_numbers):
        return
    stored = _stored(read, "leaderboard")
    if stored is not None:
        if stored.frame.empty:
            return
        _simulated(read)
    curve_section(read, cohort=None)


def leaderboard_live(read: Reader, _sel: Selection) -> None:
    """The leaderboard computed live: the page's "compute now" click when no stored result is
    current, and the hourly job's cost per scope."""
    read(stored_rm.live, "leaderboard", cohort=None)


def compare_page(read: Reader, _sel: Selection) -> None:
    """All cohorts, no pair picked: the page lists the families and waits for two."""
    _entry(read)
    read(agents_rm.agent_index)


def compare_click(read: Reader, _sel: Selection) -> None:
    """Two families picked: the first two in the page's order (models first, then baselines,
    each by display name), compared over all cohorts."""
    index: pd.DataFrame = read(agents_rm.agent_index)
    if index.empty:
        return
    ordered = index.drop_duplicates("family_id").sort_values(
        ["kind", "display_name"], key=lambda c: c.ne("llm") if c.name == "kind" else c.str.lower()
    )
    families = [str(f) for f in ordered["family_id"]]
    if len(families) < 2:
        return
    _simulated(read)
    read(paired_rm.family_comparison, families[0], families[1], cohort=None)


def family_page(read: Reader, _sel: Selection) -> None:
    """The best-ranked LLM family by return; its headline row from the stored leaderboard
    (the point numbers alone when none is current: no offer stops the page)."""
    _entry(read)
    returns: pd.DataFrame = read(agents_rm.family_returns)
    if returns.empty:
        return
    ordered = pd.concat(
        [returns[returns["kind"] != "baseline"], returns[returns["kind"] == "baseline"]]
    )
    family = agents_rm.best_llm_family(returns) or str(ordered["family_id"].iloc[0])
    _simulated(read)
    read(agents_rm.family_cohorts, family)
    _stored(read, "leaderboard")
    curve_section(read, family=family)


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
    """The newest cohort's best-ranked LLM agent by return (the first standing without one)."""
    _entry(read)
    index: pd.DataFrame = read(agents_rm.agent_index)
    if index.empty:
        return
    cohort = max(int(n) for n in index["cohort_number"])
    standings: pd.DataFrame = read(cohorts_rm.cohort_standings, cohort)
    family = cohorts_rm.best_llm(standings) or str(standings["family_id"].iloc[0])
    _simulated(read)
    read(agents_rm.agent_summary, cohort, family)
    curve_section(read, cohort=cohort, family=family)
    read(agents_rm.positions, cohort=cohort, family=family)
    read(agents_rm.trades, cohort=cohort, family=family)
    read(decisions_rm.decisions, cohort=cohort, family=family)


def calibration_page(read: Reader, _sel: Selection) -> None:
    """All cohorts; the stored summary, then (the default families: up to three models) the
    stored reliability frames and Brier over time. Each one not current stops the page at its
    offer."""
    _entry(read)
    if not read(cohorts_rm.cohort_numbers):
        return
    summary = _stored(read, "calibration_summary")
    if summary is None or summary.frame.empty:
        return
    read(calibration_rm.family_names)
    _simulated(read)
    for name in ("reliability", "reliability_market", "brier_over_time"):
        if _stored(read, name) is None:
            return


def calibration_live(read: Reader, _sel: Selection) -> None:
    """The calibration summary computed live (the "compute now" click and hourly job, as
    above)."""
    read(stored_rm.live, "calibration_summary", cohort=None)


def stated_page(read: Reader, _sel: Selection) -> None:
    """All extended cohorts; the stored stated-probability figures (a database without an
    extended cohort stops after the list of them, as the page does)."""
    _entry(read)
    if not read(stated_rm.extended_cohorts):
        return
    figures = _stored(read, "stated_probability")
    if figures is None or figures.frame.empty:
        return
    _simulated(read)


def stated_live(read: Reader, _sel: Selection) -> None:
    """The stated-probability figures computed live (the "compute now" click)."""
    read(stored_rm.live, "stated_probability", cohort=None)


def decisions_page(read: Reader, _sel: Selection) -> None:
    _entry(read)
    if not read(agents_rm.filter_options).cohorts:
        return
    _simulated(read)
    read(calibration_rm.family_names)
    read(decisions_rm.decision_weeks)
    read(
        decisions_rm.decisions,
        cohort=None,
        family=None,
        week=None,
        action=None,
        status=None,
        limit=decisions_rm.DEFAULT_LIMIT,
    )


def decision_click(read: Reader, sel: Selection) -> None:
    _entry(read)
    if sel.decision_id is not None:
        read(decisions_rm.decision_detail, sel.decision_id)


def markets_page(read: Reader, _sel: Selection) -> None:
    """No filter, the default sort (most held first)."""
    _entry(read)
    read(markets_rm.categories)
    read(
        markets_rm.markets,
        search=None,
        status=None,
        category=None,
        market_type=None,
        held=None,
        order="held",
    )


def market_click(read: Reader, sel: Selection) -> None:
    _entry(read)
    if sel.market_id is None:
        return
    detail = read(markets_rm.market_detail, sel.market_id)
    if detail.empty:
        return
    read(calibration_rm.family_names)
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
    read(calibration_rm.family_names)


def curves_at(range_key: str) -> PageRun:
    """A range-key click on the Leaderboard's curve at "All cohorts" scope (the flat ranges
    were read on first load)."""

    def run(read: Reader, _sel: Selection) -> None:
        _curve(read, range_key, cohort=None, family=None)

    return run


@dataclass(frozen=True)
class Page:
    """A catalog entry: display name, the replay, and what it times."""

    name: str
    run: PageRun
    kind: str = "page"  # page | click | live (a page's "compute now" read) | curve


PAGES: tuple[Page, ...] = (
    Page("home", home_page),
    Page("leaderboard", leaderboard_page),
    Page("leaderboard() computed live", leaderboard_live, "live"),
    Page("compare", compare_page),
    Page("compare: two families (click)", compare_click, "click"),
    Page("family", family_page),
    Page("cohorts", cohorts_page),
    Page("agent", agent_page),
    Page("calibration", calibration_page),
    Page("calibration_summary() computed live", calibration_live, "live"),
    Page("stated", stated_page),
    Page("stated_probability() computed live", stated_live, "live"),
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
