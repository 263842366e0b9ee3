"""Stored analyses: the hourly job stores exactly what the read models compute, pages get the
stored frame while it is current and a live computation once the data moved on, and a
completed cohort is stored once more after it completed, then left alone."""

from datetime import timedelta
from decimal import Decimal as D
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import delete, event, select, update
from sqlalchemy.engine import Engine
from sqlmodel import col

from arena.analytics import stored
from arena.config import STALE_AFTER, load_settings
from arena.engine import analyses
from arena.engine.jobs import ANALYSES, JobContext, run_job, slot_for
from arena.engine.snapshots import take_snapshots
from arena.lineup import Lineup
from arena.storage.db import create_db_engine, session_scope
from arena.storage.models import PortfolioSnapshot
from arena.storage.tables import ANALYSIS_RESULTS, COHORTS
from tests.analytics import build_book
from tests.factories import WEEK1

AT = WEEK1 + timedelta(days=8)  # both cohorts started
# Frames one run stores for the scopes all, cohort:1 and cohort:2: every analysis for all
# cohorts, the per-cohort ones (all but the overview) for each cohort.
STORED = len(stored.ANALYSES) + 2 * sum(a.per_cohort for a in stored.ANALYSES.values())


@pytest.fixture
def book(engine: Engine) -> Engine:
    build_book(engine)
    take_snapshots(engine, AT)
    return engine


def test_stored_frames_equal_the_live_read_models(book: Engine) -> None:
    outcome = analyses.store_analyses(book, AT)
    assert outcome.scopes == ["all", "cohort:1", "cohort:2"]
    assert outcome.stored == STORED  # the overview has one scope: all cohorts
    for name, compute in stored.ANALYSES.items():
        for cohort in (None, 1, 2) if compute.per_cohort else (None,):
            frame, used = stored.current_or_live(book, name, cohort=cohort)
            assert used is not None and used.computed_at == AT
            pd.testing.assert_frame_equal(frame, compute(book, cohort=cohort))


def test_a_stale_stored_frame_gives_way_to_a_live_one(book: Engine) -> None:
    analyses.store_analyses(book, AT)
    kept = stored.stored_result(book, "leaderboard")
    assert kept is not None and kept.data_as_of is not None
    with session_scope(book) as s:
        agent_id = s.execute(select(col(PortfolioSnapshot.agent_id))).scalars().first()
        assert agent_id is not None
        later = kept.data_as_of + STALE_AFTER + timedelta(minutes=10)
        s.add(
            PortfolioSnapshot(
                agent_id=agent_id,
                slot=later,
                snapshot_timestamp=later,
                cash_balance=D(1),
                positions_value=D(0),
                total_value=D(1),
                total_pnl=D(-9999),
                total_pnl_percent=-99.99,
            )
        )
    frame, used = stored.current_or_live(book, "leaderboard")
    assert used is None
    pd.testing.assert_frame_equal(frame, stored.ANALYSES["leaderboard"](book))


def test_a_completed_cohort_is_stored_once_after_it_completed(book: Engine) -> None:
    analyses.store_analyses(book, AT)
    with book.begin() as conn:
        conn.execute(
            update(COHORTS)
            .where(COHORTS.c.number == 1)
            .values(status="completed", completed_at=AT + timedelta(hours=1))
        )
    later = AT + timedelta(hours=2)
    assert analyses.store_analyses(book, later).scopes == ["all", "cohort:1", "cohort:2"]
    assert analyses.store_analyses(book, later + timedelta(hours=1)).scopes == ["all", "cohort:2"]


def test_the_analyses_job_runs_once_per_slot(book: Engine) -> None:
    settings = load_settings(database_url=str(book.url))
    ctx = JobContext(book, settings, Lineup(families=[]), None, lambda family: None)  # type: ignore[arg-type]
    at = AT + timedelta(minutes=31)
    first = run_job(ctx, ANALYSES, slot_for(ANALYSES, at), at)
    again = run_job(ctx, ANALYSES, slot_for(ANALYSES, at), at)
    assert (first.status, again.status) == ("ok", "skipped")
    assert first.slot == AT + timedelta(minutes=30)
    assert first.counts["stored"] == STORED
    with book.connect() as conn:
        scopes = set(conn.execute(select(ANALYSIS_RESULTS.c.scope)).scalars())
    assert scopes == {"all", "cohort:1", "cohort:2"}


def test_the_analyses_command_stores_and_says_what(book: Engine) -> None:
    from typer.testing import CliRunner

    from arena.app.cli import app

    result = CliRunner().invoke(
        app, ["analyses", "--at", AT.isoformat()], env={"ARENA_DATABASE_URL": str(book.url)}
    )
    assert result.exit_code == 0, result.output
    assert f"stored {STORED} frame(s) for all, cohort:1, cohort:2" in result.output


def test_the_overview_is_stored_once_for_all_cohorts(book: Engine) -> None:
    from arena.analytics.views.database import overview

    analyses.store_analyses(book, AT)
    frame, used = stored.current_or_live(book, "overview")
    assert used is not None and used.scope == "all"
    pd.testing.assert_frame_equal(frame, overview(book))
    assert stored.stored_result(book, "overview", cohort=1) is None
    with pytest.raises(ValueError, match="per-cohort"):
        stored.ANALYSES["overview"](book, cohort=1)


def test_a_completed_cohort_missing_an_analysis_is_stored_again(book: Engine) -> None:
    """A completed cohort stored by an older version (without a newer analysis) gets it."""
    with book.begin() as conn:
        conn.execute(
            update(COHORTS)
            .where(COHORTS.c.number == 1)
            .values(status="completed", completed_at=AT - timedelta(hours=1))
        )
    analyses.store_analyses(book, AT)
    assert analyses.store_analyses(book, AT + timedelta(hours=1)).scopes == ["all", "cohort:2"]
    with book.begin() as conn:  # as if "brier_over_time" had not existed back then
        conn.execute(
            delete(ANALYSIS_RESULTS).where(
                ANALYSIS_RESULTS.c.scope == "cohort:1",
                ANALYSIS_RESULTS.c.name == "brier_over_time",
            )
        )
    later = AT + timedelta(hours=2)
    assert analyses.store_analyses(book, later).scopes == ["all", "cohort:1", "cohort:2"]
    _frame, used = stored.current_or_live(book, "brier_over_time", cohort=1)
    assert used is not None and used.computed_at == later


def test_the_analyses_job_reads_without_holding_off_the_writers(book: Engine, db_url: str) -> None:
    """With the scheduler's reader engine, another writer commits while the analyses read
    (a 100 ms busy timeout would fail it if they held SQLite's write lock), and what is
    stored is what the writer engine would have stored."""
    reader = create_db_engine(db_url, role="reader")
    other = create_db_engine(db_url, busy_timeout_ms=100)
    commits: list[int] = []

    def commit_meanwhile(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if len(commits) < 3 and statement.lstrip().upper().startswith("SELECT"):
            with other.begin() as conn:
                conn.execute(update(COHORTS).values(constants=COHORTS.c.constants))
            commits.append(1)

    settings = load_settings(database_url=db_url)
    ctx = JobContext(book, settings, Lineup(families=[]), None, lambda f: None, reader=reader)  # type: ignore[arg-type]
    event.listen(reader, "after_cursor_execute", commit_meanwhile)
    try:
        outcome = run_job(ctx, ANALYSES, slot_for(ANALYSES, AT), AT)
    finally:
        event.remove(reader, "after_cursor_execute", commit_meanwhile)
        reader.dispose()
        other.dispose()
    assert outcome.status == "ok" and commits == [1, 1, 1]
    for name, compute in stored.ANALYSES.items():
        frame, used = stored.current_or_live(book, name)
        assert used is not None
        pd.testing.assert_frame_equal(frame, compute(book))
