"""Read models for operators: job runs and their failures, the system log, the markets
settlement left for a person, API spend.

Shown only on the dashboard's locked Operations page. Nothing here exposes configuration: job
errors and log lines are stored secret-free by the engine (`arena.core.errors.error_line`), and the
database URL or API keys are never part of any row.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import pandas as pd
from sqlalchemy import BigInteger, Select, cast, func, literal_column, select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.frames import (
    FLOAT,
    INT,
    TEXT,
    TIME,
    columns_frame,
    epoch_times,
    json_as_stored,
    query_frame,
    raw_rows,
)
from arena.analytics.query.scope import live_cohort_of
from arena.analytics.query.selects import typed_frame
from arena.storage.models import FINAL_STATUSES, LOG_LEVELS
from arena.storage.sqltime import epoch_seconds
from arena.storage.tables import AGENTS, COHORTS, DECISIONS, FAMILIES, MARKETS
from arena.storage.tables import JOB_RUN_COUNTS as COUNTS
from arena.storage.tables import JOB_RUNS as RUNS
from arena.storage.tables import SYSTEM_LOGS as LOGS

DEFAULT_LIMIT = 1_000

JOB_HEALTH_COLUMNS: dict[str, str] = {
    "job": TEXT,
    "runs": INT,
    "ok": INT,
    "failed": INT,
    "running": INT,
    "last_run": TIME,
    "last_status": TEXT,
    "last_success": TIME,
    "last_failure": TIME,
    "last_error": TEXT,
}


def job_health(engine: Engine) -> pd.DataFrame:
    """One row per job name: run counts by status, the last run, success and failure.

    Columns: ``job``; ``runs``, ``ok``, ``failed``, ``running``; ``last_run`` (slot of the
    latest run) and its ``last_status``; ``last_success`` / ``last_failure`` (slots); and
    ``last_error`` (the latest failure's one-line error).
    """
    jobs: dict[str, dict[str, Any]] = {}
    with engine.connect() as conn:
        for job, status, n, last in conn.execute(_runs_by_status()):
            row = jobs.setdefault(
                job, {"job": job, "runs": 0, "ok": 0, "failed": 0, "running": 0, "last": {}}
            )
            row["runs"] += n
            row[status] = n
            row["last"][status] = last
        for row in jobs.values():
            row["last_error"] = _last_error(conn, row["job"]) if row["failed"] else None
    rows = []
    for job in sorted(jobs):
        row = jobs[job]
        latest: dict[str, Any] = row.pop("last")
        # (job, slot) is unique, so exactly one status holds the newest slot
        row["last_status"], row["last_run"] = max(latest.items(), key=lambda item: item[1])
        row["last_success"], row["last_failure"] = latest.get("ok"), latest.get("failed")
        rows.append(row)
    return typed_frame(rows, JOB_HEALTH_COLUMNS)


def _runs_by_status() -> Select[Any]:
    """(job, status, runs, latest slot) for every job × status that has runs.

    The counts are the trigger-kept `job_run_counts` (counted at read time, they walked every
    run ever claimed); the latest slot is one seek each on the job/status/slot index.
    """
    last_slot = (
        select(func.max(RUNS.c.slot))
        .where(RUNS.c.job == COUNTS.c.job, RUNS.c.status == COUNTS.c.status)
        .scalar_subquery()
    )
    return select(COUNTS.c.job, COUNTS.c.status, COUNTS.c.runs, last_slot).where(COUNTS.c.runs > 0)


def _last_error(conn: Connection, job: str) -> Any:
    """The one-line error of `job`'s latest failed run: one seek on the job/status/slot
    index."""
    return conn.execute(
        select(RUNS.c.error)
        .where(RUNS.c.job == job, RUNS.c.status == "failed")
        .order_by(RUNS.c.slot.desc())
        .limit(1)
    ).scalar()


JOB_RUN_COLUMNS: dict[str, str] = {
    "run_id": INT,
    "job": TEXT,
    "slot": TIME,
    "status": TEXT,
    "started_at": TIME,
    "finished_at": TIME,
    "duration_s": FLOAT,
    "owner": TEXT,
    "error": TEXT,
    "counts": TEXT,
}


def job_runs(
    engine: Engine,
    *,
    job: str | None = None,
    status: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> pd.DataFrame:
    """Job runs, newest slot first, at most `limit`.

    Columns: ``run_id``, ``job``, ``slot``, ``status`` (running | ok | failed),
    ``started_at``, ``finished_at``, ``duration_s`` (NaN while running), ``owner`` (the
    claiming process), ``error`` (one line, failures only), ``counts`` (JSON text: what the
    run did).
    """
    query = (
        select(
            RUNS.c.id.label("run_id"),
            RUNS.c.job,
            RUNS.c.slot,
            RUNS.c.status,
            RUNS.c.started_at,
            RUNS.c.finished_at,
            RUNS.c.owner,
            RUNS.c.error,
            json_as_stored(RUNS.c.counts, "{}"),
        )
        .order_by(RUNS.c.slot.desc(), RUNS.c.id.desc())
        .limit(limit)
    )
    if job is not None:
        query = query.where(RUNS.c.job == job)
    if status is not None:
        query = query.where(RUNS.c.status == status)
    with engine.connect() as conn:
        frame = query_frame(conn, query, JOB_RUN_COLUMNS)
    frame["duration_s"] = (frame["finished_at"] - frame["started_at"]).dt.total_seconds()
    return frame


LOG_COLUMNS: dict[str, str] = {
    "log_id": INT,
    "at": TIME,
    "level": TEXT,
    "source": TEXT,
    "message": TEXT,
    "context": TEXT,
}


def levels_at_least(minimum: str) -> tuple[str, ...]:
    """The log levels at or above `minimum` (DEBUG < INFO < WARNING < ERROR < CRITICAL)."""
    if minimum not in LOG_LEVELS:
        return LOG_LEVELS
    return LOG_LEVELS[LOG_LEVELS.index(minimum) :]


def system_log(
    engine: Engine,
    *,
    levels: Sequence[str] | None = None,
    source: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> pd.DataFrame:
    """System log lines, newest first, at most `limit`; only `levels` when given.

    Columns: ``log_id``, ``at``, ``level``, ``source`` (the job or component), ``message``,
    ``context`` (JSON text).
    """
    query = (
        select(
            LOGS.c.id.label("log_id"),
            LOGS.c.at,
            LOGS.c.level,
            LOGS.c.source,
            LOGS.c.message,
            json_as_stored(LOGS.c.context, "{}"),
        )
        .order_by(LOGS.c.at.desc(), LOGS.c.id.desc())
        .limit(limit)
    )
    if levels is not None:
        query = query.where(LOGS.c.level.in_(list(levels)))
    if source is not None:
        query = query.where(LOGS.c.source == source)
    with engine.connect() as conn:
        return query_frame(conn, query, LOG_COLUMNS)


def log_sources(engine: Engine) -> list[str]:
    """The distinct log sources, alphabetically (for a filter)."""
    with engine.connect() as conn:
        return sorted(str(s) for s in conn.execute(_distinct_sources()).scalars())


def _distinct_sources() -> Select[Any]:
    """SQL: every distinct log source, by a loose index scan (one seek per source on the
    source/at index) instead of DISTINCT, which reads every log line on PostgreSQL: the log
    grows by ~10k lines a month."""
    walk = select(func.min(LOGS.c.source).label("source")).cte("sources", recursive=True)
    following = (
        select(func.min(LOGS.c.source)).where(LOGS.c.source > walk.c.source).scalar_subquery()
    )
    walk = walk.union_all(select(following).where(walk.c.source.is_not(None)))
    return select(walk.c.source).where(walk.c.source.is_not(None))


SETTLEMENT_FAILURE_COLUMNS: dict[str, str] = {
    "market_id": TEXT,
    "question": TEXT,
    "failures": INT,
    "first_failure": TIME,
    "last_failure": TIME,
    "last_error": TEXT,
}


def settlement_failures(engine: Engine) -> pd.DataFrame:
    """Markets the resolve job could not settle and that are still unsettled, worst first.

    One row per market: how many resolve runs logged an ERROR for it, the first and last of
    them, and the last message (an exception, ambiguous outcomes, a refused position). A
    market drops off the list once it is resolved or cancelled. Read from the system log's
    `resolve` ERROR lines (one seek on the source/at index; a failing market adds one a run).
    """
    query = (
        select(LOGS.c.at, LOGS.c.message, LOGS.c.context)
        .where(LOGS.c.source == "resolve", LOGS.c.level == "ERROR")
        .order_by(LOGS.c.at, LOGS.c.id)
    )
    markets: dict[str, dict[str, Any]] = {}
    with engine.connect() as conn:
        for at, message, context in conn.execute(query):
            market_id = (context or {}).get("market_id")
            if market_id is None:
                continue
            row = markets.setdefault(
                str(market_id), {"market_id": str(market_id), "failures": 0, "first_failure": at}
            )
            row["failures"] += 1
            row["last_failure"] = at
            row["last_error"] = message
        if markets:
            state = select(MARKETS.c.id, MARKETS.c.question, MARKETS.c.status).where(
                MARKETS.c.id.in_(list(markets))
            )
            for market_id, question, status in conn.execute(state):
                if status in FINAL_STATUSES:
                    markets.pop(market_id, None)
                elif market_id in markets:
                    markets[market_id]["question"] = question
    rows = sorted(markets.values(), key=lambda r: (-r["failures"], r["market_id"]))
    return typed_frame(rows, SETTLEMENT_FAILURE_COLUMNS)


WEEK_SECONDS = 7 * 24 * 3600
SPEND_SUMS = ("decisions", "attempts", "tokens_in", "tokens_out", "cost_usd")
WEEKLY_COLUMNS: dict[str, str] = {
    "week": INT,
    "family_id": TEXT,
    "display_name": TEXT,
    "kind": TEXT,
    "decisions": INT,
    "attempts": INT,
    "tokens_in": INT,
    "tokens_out": INT,
    "cost_usd": FLOAT,
}


@cache
def _weekly_spend(dialect: str) -> Select[Any]:
    """Spend per calendar week × family (``week`` in epoch seconds): a few hundred rows a
    year, from one walk of the covering ``ix_decisions_spend`` joined by primary keys.

    Decisions drive the join: driven by agents, SQLite would fetch each agent's decision
    rows, and on SQLite a decision row carries its prompts inline, in overflow pages. Built
    once per dialect (`cache`): built per call, it doubled the query's time (1.2 ms against
    0.65 ms at 8 weeks on SQLite).
    """
    week = _calendar_week(dialect)
    return (
        select(
            week,
            AGENTS.c.family_id,
            func.max(func.coalesce(FAMILIES.c.display_name, AGENTS.c.display_name)).label(
                "display_name"
            ),
            func.max(func.coalesce(FAMILIES.c.kind, "llm")).label("kind"),
            func.count().label("decisions"),
            _int_sum(DECISIONS.c.attempts),
            _int_sum(DECISIONS.c.tokens_in),
            _int_sum(DECISIONS.c.tokens_out),
            func.sum(DECISIONS.c.cost_usd).label("cost_usd"),
        )
        .select_from(DECISIONS)
        .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
        .join(COHORTS, live_cohort_of(DECISIONS.c.cohort_id))
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .group_by(week, AGENTS.c.family_id)
        .order_by(week, AGENTS.c.family_id)
    )


def _calendar_week(dialect: str) -> Any:
    """SQL, labelled ``week``: the epoch second the calendar week of a decision starts, its
    cohort's week start + (decision_week − 1) weeks. Literals, not bound parameters: GROUP BY
    and ORDER BY must see one expression."""
    return (
        epoch_seconds(COHORTS.c.week_start, dialect)
        + (DECISIONS.c.decision_week - literal_column("1")) * literal_column(str(WEEK_SECONDS))
    ).label("week")


def _int_sum(column: Any) -> Any:
    """SQL: the sum of an integer column, cast back to an integer and labelled as the column:
    PostgreSQL sums bigints as numeric, and `raw_rows` hands the driver's values on as they
    are (a Decimal, not an int)."""
    return cast(func.sum(column), BigInteger).label(column.name)


# A family's totals: the weekly columns summed over the weeks, and the cost per decision.
SPEND_FAMILY_COLUMNS: dict[str, str] = {
    **{name: kind for name, kind in WEEKLY_COLUMNS.items() if name != "week"},
    "cost_per_decision": FLOAT,
}


@dataclass(frozen=True)
class ApiSpend:
    """The Operations page's two spend tables, from one read of the weekly sums."""

    by_family: pd.DataFrame
    by_week: pd.DataFrame


def api_spend(engine: Engine) -> ApiSpend:
    """API spend per family (`spend_by_family`) and per week (`spend_by_week`) at once: both
    add up the same weekly rows, so the page reads them once."""
    with engine.connect() as conn:
        weekly = raw_rows(conn, _weekly_spend(engine.dialect.name))
    return ApiSpend(_family_totals(weekly), _weeks(weekly))


def spend_by_family(engine: Engine) -> pd.DataFrame:
    """API spend per family over all cohorts, most expensive first.

    Columns: ``family_id``, ``display_name``, ``kind``; ``decisions``; ``attempts`` (model
    answers, retries included); ``tokens_in``, ``tokens_out``, ``cost_usd`` (sums over every
    attempt, failed ones included); ``cost_per_decision``.
    """
    return api_spend(engine).by_family


def _family_totals(weekly: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """The `_weekly_spend` rows summed per family, most expensive first."""
    families: dict[str, dict[str, Any]] = {}
    for _week, family_id, name, kind, *sums in weekly:  # a few hundred rows a year
        family = families.get(family_id)
        if family is None:  # not `setdefault`: its default would be built for every row
            family = families[family_id] = {
                "family_id": family_id,
                "display_name": name,
                "kind": kind,
                **dict.fromkeys(SPEND_SUMS, 0),
            }
        family["display_name"] = max(family["display_name"], name)
        family["kind"] = max(family["kind"], kind)
        for key, value in zip(SPEND_SUMS, sums, strict=True):
            family[key] += value
    rows = sorted(families.values(), key=lambda f: (-f["cost_usd"], f["family_id"]))
    for family in rows:
        family["cost_per_decision"] = family["cost_usd"] / family["decisions"]
    return typed_frame(rows, SPEND_FAMILY_COLUMNS)


SPEND_WEEK_COLUMNS: dict[str, str] = {
    "week_start": TIME,
    "family_id": TEXT,
    "decisions": INT,
    "tokens_in": INT,
    "tokens_out": INT,
    "cost_usd": FLOAT,
}


def spend_by_week(engine: Engine) -> pd.DataFrame:
    """API spend per calendar week (the week the decisions ran in) and family, oldest first.

    A decision of week k of a cohort ran in the week starting week_start + (k − 1) weeks.
    Columns: ``week_start`` (Sunday 00:00 UTC), ``family_id``, ``decisions``,
    ``tokens_in``, ``tokens_out``, ``cost_usd``.
    """
    return api_spend(engine).by_week


def _weeks(weekly: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """The `_weekly_spend` rows as the per-week frame, transposed into columns."""
    columns = dict(zip(WEEKLY_COLUMNS, map(list, zip(*weekly, strict=True)), strict=False))
    columns["week_start"] = epoch_times(columns.pop("week", []))
    return columns_frame(columns, SPEND_WEEK_COLUMNS, len(weekly))
