"""The protocol in force and its version history, for the Home and Methodology pages.

Why here: the dashboard may not import the engine (tests/test_layers.py), yet a person wants
to see when the next decision run is and which constants the cohorts run under. The clock the
methodology fixes is restated here (`DECISION_WEEKDAY`, `DECISION_TIME`, `SNAPSHOT_MINUTES`);
tests/analytics/test_status.py holds them equal to the scheduler's trigger table
(`arena.engine.jobs.SCHEDULES`), so the two cannot drift apart silently.

`protocol_constants` lists the methodology constants (`arena.config.Methodology`, as stamped
on a cohort) and the fixed statistical rules (bootstrap, random null, evidence rule) as rows a
person reads; `methodology_versions` says which methodology versions exist and which cohorts
ran under which (and under which constants). Nothing here reads the clock or writes.
"""

from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pandas as pd
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.stats.leaderboard import DEFAULT_MIN_RESOLVED
from arena.analytics.stats.random_null import DEFAULT_NULL_SEEDS
from arena.config import STALE_AFTER, Methodology
from arena.core import stats
from arena.core.timeutil import week_start
from arena.storage.tables import COHORTS, METHODOLOGY_VERSIONS, live_cohort

# The methodology's clock (UTC), as the scheduler runs it (`arena.engine.jobs.SCHEDULES`):
# a cohort starts Sunday 00:00, its agents decide Sunday 00:05 (retried hourly that Sunday).
DECISION_WEEKDAY = 6  # Sunday (Monday = 0)
DECISION_TIME = time(0, 5)
DECISION_SCHEDULE = "Sundays 00:05 UTC"
COHORT_SCHEDULE = "Sundays 00:00 UTC"
ANALYSES_SCHEDULE = "hourly at :30"


def next_decision_run(at: datetime) -> datetime:
    """The first weekly decision run (Sunday 00:05 UTC) strictly after `at`."""
    this_week = week_start(at) + timedelta(hours=DECISION_TIME.hour, minutes=DECISION_TIME.minute)
    return this_week if at < this_week else this_week + timedelta(weeks=1)


PROTOCOL_COLUMNS: tuple[str, ...] = ("constant", "raw", "label", "value", "meaning", "anchor")


def _money(value: Decimal) -> str:
    return f"${value:,.0f}" if value == value.to_integral_value() else f"${value:,.2f}"


def protocol_constants(methodology: Methodology) -> pd.DataFrame:
    """The rules a result was produced under, one row each, in the order a reader needs them.

    Columns: ``constant`` (stable key: a `Methodology` field, or a fixed rule's name),
    ``raw`` (the number or text as configured, for a CSV: ``10000``, ``0.25``),
    ``label`` (what a person calls it), ``value`` (the value as a person reads it, e.g.
    ``$10,000``), ``meaning`` (one sentence), ``anchor`` (the docs/methodology.md heading
    that defines it, as a slug). Methodology constants come from `methodology` (a cohort's
    stamp, or the settings); the fixed rules from the code that applies them.
    """
    m = methodology
    share = f"{float(m.max_bet_fraction) * 100:g}%"
    raw: dict[str, object] = {
        **m.model_dump(mode="json"),
        "decision_schedule": f"weekday={DECISION_WEEKDAY} time={DECISION_TIME:%H:%M} UTC",
        "brier": "(implied_confidence - outcome)^2",
        "bootstrap": f"confidence={stats.CONFIDENCE} replicates={stats.DEFAULT_REPLICATES}",
        "random_null": DEFAULT_NULL_SEEDS,
        "min_resolved": DEFAULT_MIN_RESOLVED,
        "stored_analyses": f"hourly at :30, stale after {STALE_AFTER.total_seconds():g} s",
    }
    rows: list[tuple[str, str, str, str, str]] = [
        (
            "version",
            "Methodology version",
            m.version,
            "Every cohort is stamped with the version and the constants it ran under.",
            "21-version-history",
        ),
        (
            "starting_balance",
            "Starting capital",
            _money(m.starting_balance),
            "Virtual cash each agent starts every cohort with.",
            "5-starting-capital-and-constraints",
        ),
        (
            "max_bet_fraction",
            "Largest bet",
            f"{share} of cash",
            f"A bet may be at most {share} of the agent's cash just before it.",
            "5-starting-capital-and-constraints",
        ),
        (
            "min_bet",
            "Smallest bet",
            _money(m.min_bet),
            "A smaller bet is rejected (the rest of the answer still runs).",
            "5-starting-capital-and-constraints",
        ),
        (
            "decision_schedule",
            "Decisions",
            f"weekly, {DECISION_SCHEDULE}",
            f"Each agent answers once a week, in decision weeks 1–{m.decision_window_weeks} "
            f"of its cohort; a new cohort starts {COHORT_SCHEDULE}.",
            "3-2-schedule",
        ),
        (
            "snapshot_interval_minutes",
            "Portfolio snapshots",
            f"every {m.snapshot_interval_minutes} minutes",
            "Every portfolio is valued at the latest market prices (the curves).",
            "12-1-cadence",
        ),
        (
            "market_universe_size",
            "Markets shown",
            f"top {m.market_universe_size:,}",
            "The markets every agent sees in its weekly prompt, frozen at decision time.",
            "6-2-selection-rule",
        ),
        (
            "malformed_retries",
            "Retries of a malformed answer",
            f"{m.malformed_retries}",
            f"An unreadable answer is asked again up to {m.malformed_retries} times, then "
            "counts as HOLD.",
            "8-5-response-validation",
        ),
        (
            "transport_attempts",
            "Attempts per request",
            f"{m.transport_attempts}",
            "Timeouts and provider errors are retried up to this many attempts in all.",
            "8-5-response-validation",
        ),
        (
            "brier",
            "Brier score",
            "(implied confidence − outcome)²",
            # 0.25 is what a constant 50% forecast scores; v1's forecast is a bet's size, so a
            # family that bets small scores about its win rate however well it picks.
            f"Implied confidence = bet ÷ ({share} of cash); outcome 1 if the side won, else 0. "
            "Mean over resolved bets; lower is better, 0 is perfect. 0.25 is what a constant "
            "50% forecast scores, not a coin-flip benchmark here: confidence is bet size, so a "
            "family that bets small scores about its win rate (a winning 0.05 bet scores 0.90) "
            "however well it picks. Compare it with the market price's Brier on the same bets "
            "(Calibration page).",
            "11-1-brier-score",
        ),
        (
            "bootstrap",
            "Intervals",
            f"{stats.CONFIDENCE:.0%}, {stats.DEFAULT_REPLICATES:,} replicates",
            "Cluster bootstrap over Polymarket events within each cohort, seeded; "
            "percentile intervals, and P(rank #1) from the same replicates.",
            "19-statistics-honest-uncertainty",
        ),
        (
            "random_null",
            "Random-trader null",
            f"{DEFAULT_NULL_SEEDS} seeds",
            "A family's return as a percentile among random traders on the same markets.",
            "19-statistics-honest-uncertainty",
        ),
        (
            "min_resolved",
            "Too early to rank",
            f"under {DEFAULT_MIN_RESOLVED} resolved bets",
            "Such families are shown greyed, never hidden.",
            "19-statistics-honest-uncertainty",
        ),
        (
            "stored_analyses",
            "Stored analyses",
            ANALYSES_SCHEDULE,
            "The leaderboard and calibration are computed by the hourly job and shown while "
            f"within {STALE_AFTER.total_seconds() / 3600:g} hours of the newest snapshot.",
            "17-constants-and-where-they-live",
        ),
    ]
    return pd.DataFrame(
        [(key, str(raw[key]), *rest) for key, *rest in rows], columns=list(PROTOCOL_COLUMNS)
    ).astype("string")


def stamped_methodology(stamp: dict[str, Any] | None) -> Methodology | None:
    """The `Methodology` a cohort's constants stamp describes (None when unreadable)."""
    if not stamp:
        return None
    try:
        constants = {k: v for k, v in stamp.items() if k not in ("is_default", "extensions")}
        return Methodology.model_validate(constants)
    except ValidationError:
        return None


def latest_stamp(engine: Engine) -> tuple[int, Methodology] | None:
    """(number, constants) of the newest cohort whose stamp is readable, or None."""
    query = select(COHORTS.c.number, COHORTS.c.constants).where(live_cohort())
    query = query.order_by(COHORTS.c.number.desc())
    with engine.connect() as conn:
        for number, stamp in conn.execute(query.limit(1)):
            methodology = stamped_methodology(stamp)
            if methodology is not None:
                return int(number), methodology
    return None


VERSION_COLUMNS: tuple[str, ...] = (
    "methodology_version",
    "title",
    "is_default",
    "overrides",
    "cohorts",
    "cohort_numbers",
    "first_week_start",
    "last_week_start",
)


def methodology_versions(engine: Engine) -> pd.DataFrame:
    """Which methodology versions exist and which cohorts ran under which constants.

    One row per version × distinct constants stamp, newest version first, then by first
    cohort; a version no cohort ran under yet has one row with ``cohorts`` 0. Columns:
    ``methodology_version``, ``title`` (the versions table's), ``is_default`` (the stamp
    equals that version's stock constants), ``overrides`` (``name=value`` of every constant
    that differs from stock, comma-separated, and ``extensions=a+b`` for a cohort stamped
    with protocol extensions; empty when stock), ``cohorts`` (how many),
    ``cohort_numbers`` (e.g. ``1–8`` or ``1–3, 5``), ``first_week_start`` /
    ``last_week_start`` (Sunday 00:00 UTC; NaT without cohorts).
    """
    with engine.connect() as conn:
        versions = conn.execute(
            select(
                METHODOLOGY_VERSIONS.c.version,
                METHODOLOGY_VERSIONS.c.title,
                METHODOLOGY_VERSIONS.c.constants,
            )
        ).all()
        cohort_rows = conn.execute(
            select(
                COHORTS.c.number,
                COHORTS.c.week_start,
                COHORTS.c.methodology_version,
                COHORTS.c.constants,
            )
            .where(live_cohort())
            .order_by(COHORTS.c.number)
        ).all()
    stock = {str(version): dict(constants or {}) for version, _, constants in versions}
    titles = {str(version): str(title) for version, title, _ in versions}
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for number, week, version, constants in cohort_rows:
        stamp = {k: v for k, v in (constants or {}).items() if k != "is_default"}
        key = (str(version), repr(sorted(stamp.items())))
        group = groups.setdefault(
            key, {"version": str(version), "stamp": stamp, "numbers": [], "weeks": []}
        )
        group["numbers"].append(int(number))
        group["weeks"].append(week)
    rows: list[dict[str, Any]] = []
    for group in groups.values():
        reference = {k: v for k, v in stock.get(group["version"], {}).items() if k != "is_default"}
        overrides = [
            _override(name, value)
            for name, value in group["stamp"].items()
            if reference and reference.get(name) != value
        ]
        rows.append(
            {
                "methodology_version": group["version"],
                "title": titles.get(group["version"], ""),
                "is_default": not overrides,
                "overrides": ", ".join(overrides),
                "cohorts": len(group["numbers"]),
                "cohort_numbers": number_ranges(group["numbers"]),
                "first_week_start": min(group["weeks"]),
                "last_week_start": max(group["weeks"]),
            }
        )
    used = {row["methodology_version"] for row in rows}
    for version in stock:
        if version not in used:
            rows.append(
                {
                    "methodology_version": version,
                    "title": titles[version],
                    "is_default": True,
                    "overrides": "",
                    "cohorts": 0,
                    "cohort_numbers": "",
                    "first_week_start": None,
                    "last_week_start": None,
                }
            )
    # Newest version first; within a version, by its first cohort.
    rows.sort(key=lambda r: (_version_key(r["methodology_version"]), -_first(r)), reverse=True)
    frame = pd.DataFrame(rows, columns=list(VERSION_COLUMNS))
    for column in ("first_week_start", "last_week_start"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame.astype(
        {
            "methodology_version": "string",
            "title": "string",
            "is_default": "bool",
            "overrides": "string",
            "cohorts": "int64",
            "cohort_numbers": "string",
        }
    )


def _override(name: str, value: Any) -> str:
    """One difference from the stock stamp: `min_bet=100`, or `extensions=stated_probability`
    (a protocol extension's names joined by `+`)."""
    if name == "extensions" and isinstance(value, list):
        return f"extensions={'+'.join(map(str, value))}"
    return f"{name}={value}"


def _first(row: dict[str, Any]) -> int:
    """The first cohort number of a version row (0 when no cohort ran under it)."""
    first = str(row["cohort_numbers"]).split(",")[0].split("–")[0]
    return int(first) if first.isdigit() else 0


def _version_key(version: str) -> tuple[int, str]:
    """v2 after v1, v10 after v9; other names by text."""
    digits = version.lstrip("vV")
    return (int(digits), version) if digits.isdigit() else (-1, version)


def number_ranges(numbers: list[int]) -> str:
    """Sorted integers as runs: [1, 2, 3, 5] → ``1–3, 5``."""
    runs: list[str] = []
    ordered = sorted(set(numbers))
    start = previous = None
    for number in ordered:
        if previous is not None and number == previous + 1:
            previous = number
            continue
        if start is not None:
            runs.append(_run(start, previous))
        start = previous = number
    if start is not None:
        runs.append(_run(start, previous))
    return ", ".join(runs)


def _run(start: int, end: int | None) -> str:
    return str(start) if end is None or end == start else f"{start}–{end}"
