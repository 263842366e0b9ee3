"""The Home page's read models: the arena's status at an instant the caller passes, the next
decision run (held equal to the scheduler's own trigger table), and the leader picked out of a
stored leaderboard frame."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal as D

import pandas as pd
import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine

from arena.analytics.views import status as status_model
from arena.analytics.views.protocol import DECISION_TIME, DECISION_WEEKDAY, next_decision_run
from arena.analytics.views.status import LIVE_WITHIN, arena_status, leaders
from arena.app.demo import DEMO_OWNER
from arena.engine.jobs import BUNDLE, DECIDE, SCHEDULES, next_slot
from arena.storage.db import session_scope
from arena.storage.models import JobRun, PortfolioSnapshot
from arena.storage.tables import COHORTS
from tests.factories import WEEK1, new_cohort_agents

T0 = WEEK1 + timedelta(days=3, hours=12)  # a Wednesday, mid-cohort


def _run(engine: Engine, job: str, slot: datetime, owner: str = "host:1") -> None:
    with session_scope(engine) as s:
        s.add(JobRun(job=job, slot=slot, status="ok", owner=owner, started_at=slot))


def _snapshot(engine: Engine, agent_id: int, slot: datetime) -> None:
    with session_scope(engine) as s:
        s.add(
            PortfolioSnapshot(
                agent_id=agent_id,
                slot=slot,
                snapshot_timestamp=slot,
                cash_balance=D("10000"),
                positions_value=D("0"),
                total_value=D("10000"),
                total_pnl=D("0"),
                total_pnl_percent=0.0,
                num_resolved_bets=0,
            )
        )


def test_an_empty_database_has_no_cohort_yet(engine: Engine) -> None:
    found = arena_status(engine, T0)

    assert found.state == "no_cohort" and found.label == "No cohort yet"
    assert found.cohorts == 0 and found.by_status == {}
    assert found.latest_snapshot is None and found.last_job_run is None
    assert found.next_decision is None


def test_recent_jobs_and_a_fresh_snapshot_are_live(engine: Engine) -> None:
    (agent,) = new_cohort_agents(engine, ("baseline-cash",))
    _snapshot(engine, agent, T0 - timedelta(minutes=10))
    _run(engine, "snapshot", T0 - timedelta(minutes=10))
    _run(engine, "sync-markets", T0 - timedelta(minutes=5))

    found = arena_status(engine, T0)

    assert found.state == "live"
    assert found.latest_snapshot == T0 - timedelta(minutes=10)
    assert (found.last_job_run, found.last_job) == (T0 - timedelta(minutes=5), "sync-markets")
    assert found.by_status == {"deciding": 1} and found.running_cohorts == 1
    assert found.next_decision == WEEK1 + timedelta(weeks=1, minutes=5)
    assert found.last_data == found.latest_snapshot


def test_recent_jobs_with_an_old_snapshot_are_catching_up(engine: Engine) -> None:
    (agent,) = new_cohort_agents(engine, ("baseline-cash",))
    _snapshot(engine, agent, T0 - timedelta(hours=3))
    _run(engine, "resolve", T0 - timedelta(minutes=1))

    assert arena_status(engine, T0).state == "catching_up"
    # exactly LIVE_WITHIN behind the newest job run still counts as live
    _snapshot(engine, agent, T0 - timedelta(minutes=1) - LIVE_WITHIN)
    assert arena_status(engine, T0).state == "live"


def test_recent_jobs_without_any_snapshot_are_catching_up(engine: Engine) -> None:
    new_cohort_agents(engine, ("baseline-cash",))
    _run(engine, "start-cohort", T0 - timedelta(minutes=2))

    found = arena_status(engine, T0)

    assert found.state == "catching_up" and found.last_data == T0 - timedelta(minutes=2)


def test_no_recent_job_is_stopped_while_cohorts_run_and_finished_after(engine: Engine) -> None:
    (agent,) = new_cohort_agents(engine, ("baseline-cash",))
    last = T0 - LIVE_WITHIN - timedelta(minutes=1)
    _snapshot(engine, agent, last)
    _run(engine, "snapshot", last)

    stopped = arena_status(engine, T0)
    assert stopped.state == "stopped" and stopped.next_decision is None
    assert arena_status(engine, last + LIVE_WITHIN).state == "live"  # as judged back then

    with session_scope(engine) as s:
        s.execute(update(COHORTS).values(status="completed"))
    finished = arena_status(engine, T0)
    assert finished.state == "finished" and not finished.demo
    assert finished.by_status == {"completed": 1} and finished.running_cohorts == 0


def test_the_demo_season_is_finished_once_its_clock_stopped(engine: Engine) -> None:
    (agent,) = new_cohort_agents(engine, ("baseline-cash",))
    _snapshot(engine, agent, T0)
    _run(engine, "snapshot", T0, owner=DEMO_OWNER)
    _run(engine, "bundle", T0 + timedelta(minutes=1), owner=DEMO_OWNER)  # its final run

    assert arena_status(engine, T0 + timedelta(minutes=5)).state == "live"
    found = arena_status(engine, T0 + timedelta(days=200))
    assert found.state == "finished" and found.demo and found.running_cohorts == 1
    assert found.last_data == T0


def test_a_demo_season_without_its_final_run_is_still_playing(engine: Engine) -> None:
    """`make demo` serves while the season plays: no final bundle run yet."""
    (agent,) = new_cohort_agents(engine, ("baseline-cash",))
    _snapshot(engine, agent, T0)
    _run(engine, "snapshot", T0, owner=DEMO_OWNER)
    _run(engine, "bundle", T0 - timedelta(hours=1), owner="host:1")  # not the demo's end

    found = arena_status(engine, T0 + timedelta(days=200))

    assert found.state == "playing" and found.demo and found.decisions == 0
    assert found.latest_snapshot == T0 and found.label == "Demo season playing"


def test_the_demo_owner_is_the_demos() -> None:
    assert status_model.DEMO_OWNER == DEMO_OWNER
    assert status_model.DEMO_FINAL_JOB == BUNDLE


@pytest.mark.parametrize(
    "at",
    [
        WEEK1,  # Sunday 00:00, before the run
        WEEK1 + timedelta(minutes=5),  # the run's own minute: the next is a week on
        WEEK1 + timedelta(minutes=4, seconds=59),
        WEEK1 + timedelta(hours=5),  # a Sunday retry hour
        WEEK1 + timedelta(days=6, hours=23, minutes=59),  # Saturday night
        datetime(2026, 12, 31, 23, 0, tzinfo=UTC),
    ],
)
def test_the_next_decision_run_is_the_schedulers(at: datetime) -> None:
    """The scheduler's decide job fires Sunday 00:05 and hourly after it that day (retries);
    the weekly decision run is its first fire of a Sunday."""
    (decide,) = [s for s in SCHEDULES if s.job == DECIDE]
    assert decide.cron["day_of_week"] == "sun" and decide.cron["minute"] == str(
        DECISION_TIME.minute
    )
    fire = at
    while True:
        fire = next_slot(DECIDE, fire)
        if fire.hour == DECISION_TIME.hour:
            break
    assert next_decision_run(at) == fire
    assert fire.weekday() == DECISION_WEEKDAY


def _board(rows: list[dict[str, object]]) -> pd.DataFrame:
    base = {"p_rank_1": 0.0, "too_early": False}
    return pd.DataFrame([{**base, **row} for row in rows])


def test_the_leader_is_the_best_ranked_model_with_any_reference_row_above_it() -> None:
    board = _board(
        [
            {"family_id": "oracle", "kind": "baseline", "rank": 1, "p_rank_1": 0.9},
            {"family_id": "b", "kind": "llm", "rank": 2, "p_rank_1": 0.04},
            {"family_id": "a", "kind": "llm", "rank": 2, "p_rank_1": 0.06},
            {"family_id": "baseline-cash", "kind": "baseline", "rank": 4},
        ]
    )

    found = leaders(board)

    assert found.model is not None and found.model["family_id"] == "a"  # tie: higher P(#1)
    assert found.top is not None and found.top["family_id"] == "oracle"
    assert found.families == 4


def test_a_model_on_top_has_no_row_above_it_and_no_model_no_leader() -> None:
    top = leaders(_board([{"family_id": "a", "kind": "llm", "rank": 1}]))
    assert top.model is not None and top.top is None

    only_baselines = leaders(_board([{"family_id": "cash", "kind": "baseline", "rank": 1}]))
    assert only_baselines.model is None and only_baselines.top is not None

    empty = leaders(pd.DataFrame())
    assert (empty.model, empty.top, empty.families) == (None, None, 0)
