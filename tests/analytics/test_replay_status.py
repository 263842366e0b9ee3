"""Why a cohort has no kept replay bundle yet, on a real SQLite database: its status in plain
words, the BUYs in markets not resolved yet once it is completed, and the kept hash once the
bundle job kept one; the job's minute is the scheduler's."""

import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Table, insert, update
from sqlalchemy.engine import Engine

from arena.analytics.replay.status import BUNDLE_MINUTE, BUNDLE_SCHEDULE, bundle_status
from arena.engine.jobs import BUNDLE, SCHEDULES
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import init_db
from arena.storage.tables import COHORTS, MARKETS, REPLAY_BUNDLES
from tests.factories import WEEK1, market, new_cohort_agents, trade_into


@pytest.fixture
def engine(sqlite_template: Path, tmp_path: Path) -> Iterator[Engine]:
    path = tmp_path / "arena.db"
    shutil.copyfile(sqlite_template, path)
    eng = create_db_engine(f"sqlite:///{path}")
    init_db(eng)
    try:
        yield eng
    finally:
        eng.dispose()


def _set(engine: Engine, table: Table, values: dict[str, object]) -> None:
    with engine.begin() as conn:
        conn.execute(update(table).values(**values))


def test_the_bundle_job_minute_is_the_schedulers() -> None:
    (job,) = [s for s in SCHEDULES if s.job == BUNDLE]
    assert job.cron == {"minute": str(BUNDLE_MINUTE)}
    assert BUNDLE_SCHEDULE == ":45 past each hour"


def test_an_unknown_cohort_has_no_status(engine: Engine) -> None:
    assert bundle_status(engine, 1) is None


def test_a_cohort_says_why_it_has_no_bundle_until_one_is_kept(engine: Engine) -> None:
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    with session_scope(engine) as s:
        s.add(market("842093"))
    trade_into(engine, agent, "842093", "YES", "500", "0.4", WEEK1 + timedelta(minutes=5))

    deciding = bundle_status(engine, 1)
    assert deciding is not None and not deciding.finished and deciding.kept_hash is None
    assert deciding.why is not None and deciding.why.startswith("still deciding")
    assert deciding.unsettled_buys == 0  # not counted before the cohort completes

    _set(engine, COHORTS, {"status": "tracking"})
    tracking = bundle_status(engine, 1)
    assert tracking is not None and tracking.why is not None
    assert tracking.why.startswith("tracking (its decision weeks are over")

    _set(engine, COHORTS, {"status": "completed"})
    waiting = bundle_status(engine, 1)
    assert waiting is not None and not waiting.finished and waiting.unsettled_buys == 1
    assert waiting.why == (
        "completed, but not every market it bought into has resolved yet "
        "(1 BUY awaits its Brier row)"
    )

    _set(engine, MARKETS, {"status": "resolved"})
    finished = bundle_status(engine, 1)
    assert finished is not None and finished.finished and finished.unsettled_buys == 0
    assert finished.why == (
        "finished: the hourly bundle job keeps its bundle at its next run (:45 past each hour)"
    )

    with engine.begin() as conn:
        conn.execute(
            insert(REPLAY_BUNDLES).values(
                cohort_id=1,
                bundle_hash="ab" * 32,
                project_version="0.1.0",
                file_count=13,
                size_bytes=1000,
                zip=b"PK",
                built_at=WEEK1 + timedelta(weeks=8),
            )
        )
    kept = bundle_status(engine, 1)
    assert kept is not None and kept.kept_hash == "ab" * 32 and kept.why is None


def test_several_waiting_buys_are_counted(engine: Engine) -> None:
    agents = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    with session_scope(engine) as s:
        s.add(market("842093"))
    for agent in agents:
        trade_into(engine, agent, "842093", "YES", "500", "0.4", WEEK1 + timedelta(minutes=5))
    _set(engine, COHORTS, {"status": "completed"})

    status = bundle_status(engine, 1)

    assert status is not None and status.unsettled_buys == 2
    assert status.why is not None and status.why.endswith("(2 BUYs await their Brier rows)")
