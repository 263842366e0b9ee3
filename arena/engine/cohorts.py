"""`arena start-cohort`: one cohort per UTC week start, numbered in order (methodology §3).

Uniqueness lives in the database (a unique week start and number among live cohorts: a late
entrant's shadow repeats an old one's, methodology §20); a second process that loses the race
sees the winner's cohort instead of creating another. Each enabled family gets one agent, or
`replicates` of them.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from arena.config import Methodology, cohort_stamp
from arena.core.errors import ConfigError, InputError
from arena.core.fees import FEE_USDC_ON_TOP, FeeCharged
from arena.core.text import replicate_name
from arena.core.timeutil import week_start
from arena.engine.logs import log_event
from arena.lineup import Lineup
from arena.storage.db import session_scope
from arena.storage.models import Agent, Cohort
from arena.storage.seed import sync_families
from arena.storage.tables import live_cohort


@dataclass(frozen=True)
class CohortResult:
    number: int
    week_start: datetime
    created: bool
    agents: int


def decision_week(cohort_week_start: datetime, at: datetime) -> int:
    """1 + whole weeks since the cohort's week start (contract §5)."""
    return 1 + int((at - cohort_week_start) // timedelta(weeks=1))


def start_cohort(
    engine: Engine,
    at: datetime,
    lineup: Lineup,
    methodology: Methodology,
    extensions: Iterable[str] = (),
    replicates: int = 1,
    *,
    horizon_days: int | None = None,
    fee_charged: FeeCharged = FEE_USDC_ON_TOP,
) -> CohortResult:
    """The cohort of the week containing `at`, created with one agent per enabled family.

    `extensions`: the protocol extensions stamped on a cohort created now (`cohort_stamp`);
    `replicates` > 1 gives each family that many independent agents (replicates 1…N);
    `horizon_days` stamps the extension `horizon`, `fee_charged` how a `book_execution`
    cohort's buys pay the fee (`cohort_stamp`). An existing cohort keeps the stamp and agents
    it was created with.
    """
    extensions = tuple(extensions)
    start = week_start(at)
    sync_families(engine, lineup)
    for _ in range(3):
        try:
            with session_scope(engine) as session:
                existing = _cohort_at(session, start)
                if existing is not None:
                    return _result(session, existing, created=False)
                stamp = cohort_stamp(
                    methodology, extensions, replicates, horizon_days, fee_charged=fee_charged
                )
                cohort = _create(session, start, at, lineup, methodology, stamp, replicates)
                return _result(session, cohort, created=True)
        except IntegrityError:
            continue  # another process created it (or took the number) first: read again
    with session_scope(engine) as session:
        existing = _cohort_at(session, start)
        if existing is None:
            raise InputError(f"could not create the cohort of week {start:%Y-%m-%d}", "retry")
        return _result(session, existing, created=False)


def _cohort_at(session: Session, start: datetime) -> Cohort | None:
    return session.exec(select(Cohort).where(Cohort.week_start == start, live_cohort())).first()


def _create(
    session: Session,
    start: datetime,
    at: datetime,
    lineup: Lineup,
    methodology: Methodology,
    stamp: dict[str, Any],
    replicates: int,
) -> Cohort:
    # live cohorts only: a late entrant's shadow repeats an old number and week (methodology §20)
    latest = session.exec(
        select(Cohort).where(live_cohort()).order_by(col(Cohort.week_start).desc())
    ).first()
    if latest is not None and latest.week_start > start:
        raise InputError(
            f"the week of {start:%Y-%m-%d} is before the latest cohort "
            f"(#{latest.number}, week of {latest.week_start:%Y-%m-%d})",
            "cohorts are numbered in week order; pick a later --at",
        )
    families = lineup.enabled()
    if not families:  # a cohort is never without agents: pages and filters rely on it
        raise ConfigError(
            f"no family of the lineup is enabled: the cohort of week {start:%Y-%m-%d} would "
            "have no agents",
            "enable at least one [[family]] in the lineup",
        )
    number = (session.exec(select(func.max(Cohort.number)).where(live_cohort())).one() or 0) + 1
    cohort = Cohort(
        number=number,
        week_start=start,
        methodology_version=methodology.version,
        constants=stamp,
        status="deciding",
        created_at=at,
    )
    session.add(cohort)
    session.flush()
    for family in families:
        for replicate in range(1, replicates + 1):
            session.add(
                Agent(
                    cohort_id=cohort.id,  # type: ignore[arg-type]
                    family_id=family.id,
                    replicate=replicate,
                    model_id=family.model,
                    display_name=replicate_name(family.display_name, replicate, replicates),
                    starting_balance=methodology.starting_balance,
                    cash_balance=methodology.starting_balance,
                    created_at=at,
                )
            )
    session.flush()
    log_event(
        session,
        at,
        "INFO",
        "start-cohort",
        f"cohort {number} created for the week of {start:%Y-%m-%d}",
        agents=[family.id for family in families],
    )
    return cohort


def _result(session: Session, cohort: Cohort, created: bool) -> CohortResult:
    agents = session.exec(select(func.count()).where(Agent.cohort_id == cohort.id)).one()
    return CohortResult(cohort.number, cohort.week_start, created, int(agents))


class _Stamped(Protocol):
    @property
    def constants(self) -> Mapping[str, Any]: ...


def window_weeks_of(cohort: _Stamped, default: int) -> int:
    """The decision window the cohort (model or Core row) was stamped with (research runs may
    differ)."""
    return int(cohort.constants.get("decision_window_weeks", default))


def cohorts_deciding(session: Session, at: datetime, default_window: int) -> list[Cohort]:
    """Live cohorts whose decision weeks 1…W include `at`, oldest first (a late entrant's
    shadow is played by `arena late-entry`, never by the weekly decision run)."""
    query = (
        select(Cohort)
        .where(col(Cohort.week_start) <= at, Cohort.status != "completed", live_cohort())
        .order_by(col(Cohort.number))
    )
    return [
        cohort
        for cohort in session.exec(query)
        if 1 <= decision_week(cohort.week_start, at) <= window_weeks_of(cohort, default_window)
    ]
