"""The `arena` job commands run through the scheduler's job_runs claim (SQLite and PostgreSQL).

A manual run records a `job_runs` row for the slot of `--at`, like a scheduled run; a run
that finds its slot done (or being done) by another run says so, writes nothing and exits 0;
a failed run is recorded and still ends as one stderr line and a non-zero exit. Four
`arena snapshot --at T` processes started together: one values and writes, three say the
slot was taken, and the counts logged are the rows actually in the table.
"""

import os
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.app.cli import main
from arena.engine.jobs import DECIDE, SNAPSHOT, SYNC_MARKETS, run_job, slot_for
from arena.storage.db import session_scope
from arena.storage.models import Decision, JobRun, PortfolioSnapshot, SystemLog
from tests.engine.test_two_processes import BASELINES
from tests.factories import WEEK1, new_cohort_agents
from tests.faults.invariants import assert_job_run_counts_match
from tests.test_jobs import make_ctx

ROOT = Path(__file__).resolve().parents[1]
AGENTS = 32
AT = WEEK1 + timedelta(days=2, minutes=13)  # a Tuesday, inside the 00:10 snapshot slot
SLOT = slot_for(SNAPSHOT, AT)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def seed_agents(engine: Engine, n: int = AGENTS) -> None:
    new_cohort_agents(engine, tuple(f"fam-{i:02d}" for i in range(n)))


def runs_of(engine: Engine, job: str) -> list[JobRun]:
    with session_scope(engine) as s:
        query = select(JobRun).where(JobRun.job == job).order_by(JobRun.id)  # type: ignore[arg-type]
        return list(s.exec(query))


def snapshot_rows(engine: Engine, slot: datetime) -> int:
    with session_scope(engine) as s:
        query = select(func.count()).select_from(PortfolioSnapshot)
        return int(s.exec(query.where(PortfolioSnapshot.slot == slot)).one())


def snapshot_passes(engine: Engine) -> list[SystemLog]:
    with session_scope(engine) as s:
        return list(s.exec(select(SystemLog).where(SystemLog.source == "snapshot")))


@pytest.fixture
def database(engine: Engine, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Engine:
    monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
    return engine


def test_four_snapshots_at_once_one_writes_and_three_say_the_slot_was_taken(
    database: Engine, db_url: str
) -> None:
    seed_agents(database)
    env = {**os.environ, "ARENA_DATABASE_URL": db_url}
    command = [sys.executable, "-m", "arena", "snapshot", "--at", AT.isoformat()]
    procs = [
        subprocess.Popen(command, env=env, cwd=ROOT, text=True, stdout=-1, stderr=-1)
        for _ in range(4)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    done = [(proc.returncode, out, err) for proc, (out, err) in zip(procs, outputs, strict=True)]
    for code, out, err in done:
        assert code == 0 and err == "", (out, err)

    [run_row] = runs_of(database, SNAPSHOT)
    assert (run_row.slot, run_row.status, run_row.error) == (SLOT, "ok", None)
    assert run_row.counts["agents"] == run_row.counts["rows_written"] == AGENTS

    wrote = [out for _, out, _ in done if "agent(s) valued" in out]
    taken = [out for _, out, _ in done if "agent(s) valued" not in out]
    assert len(wrote) == 1 and len(taken) == 3, [out for _, out, _ in done]
    assert f"{AGENTS} agent(s) valued, {AGENTS} row(s) written" in wrote[0]
    assert f"[job_runs #{run_row.id}, slot 2026-11-03 00:10 UTC]" in wrote[0]
    for out in taken:
        first = out.splitlines()[0]
        # found done, or (in a tight race) still running in the winner's process
        assert re.fullmatch(
            rf"snapshot 2026-11-03 00:10 UTC: slot (already done by|in progress in) another "
            rf"run \(job_runs #{run_row.id}, status (ok|running)[^)]*\); skipped, 0 rows written",
            first,
        ), first

    # What was logged is what the INSERT wrote: one pass, one row per agent, no more.
    assert snapshot_rows(database, SLOT) == AGENTS
    [valuation] = snapshot_passes(database)
    assert valuation.context["rows_written"] == AGENTS
    with session_scope(database) as s:
        jobs_lines = s.exec(select(SystemLog).where(SystemLog.source == "jobs")).all()
    assert [line.message for line in jobs_lines] == [f"snapshot {SLOT.isoformat()}: ok"]
    assert_job_run_counts_match(database)


def test_a_manual_snapshot_records_its_run_and_a_second_one_is_skipped(
    database: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    seed_agents(database, 3)
    code, out, err = run(["snapshot", "--at", AT.isoformat()], capsys)
    assert code == 0 and err == ""
    [row] = runs_of(database, SNAPSHOT)
    assert (row.slot, row.status, row.started_at) == (SLOT, "ok", AT)
    assert row.finished_at is not None and row.counts["rows_written"] == 3
    assert out == (
        "snapshot 2026-11-03 00:10 UTC: 3 agent(s) valued, 3 row(s) written, 0 position(s) "
        "marked at live prices, 0 cohort(s) now tracking, 0 completed "
        f"[job_runs #{row.id}, slot 2026-11-03 00:10 UTC]\n"
    )

    code, out, err = run(["snapshot", "--at", (AT + timedelta(minutes=5)).isoformat()], capsys)
    assert code == 0 and err == ""
    assert out.splitlines() == [
        f"snapshot 2026-11-03 00:10 UTC: slot already done by another run (job_runs #{row.id}, "
        "status ok); skipped, 0 rows written",
        "a finished slot is final and no command re-runs it; the next snapshot slot is "
        "2026-11-03 00:20 UTC",
    ]
    assert [r.id for r in runs_of(database, SNAPSHOT)] == [row.id]
    assert snapshot_rows(database, SLOT) == 3 and len(snapshot_passes(database)) == 1

    # The next slot is a new run.
    code, out, _ = run(["snapshot", "--at", (AT + timedelta(minutes=10)).isoformat()], capsys)
    assert code == 0 and "3 row(s) written" in out
    assert [r.status for r in runs_of(database, SNAPSHOT)] == ["ok", "ok"]
    assert_job_run_counts_match(database)


def test_a_run_in_progress_elsewhere_is_left_alone_and_a_stale_one_is_taken_over(
    database: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    seed_agents(database, 2)
    with session_scope(database) as s:
        s.add(JobRun(job=SNAPSHOT, slot=SLOT, owner="host:4242:abcd", started_at=AT))
    code, out, err = run(["snapshot", "--at", AT.isoformat()], capsys)
    assert code == 0 and err == ""
    assert out.splitlines() == [
        "snapshot 2026-11-03 00:10 UTC: slot in progress in another run (job_runs #1, status "
        "running, owner host:4242:abcd, started 2026-11-03 00:13:00 UTC); skipped, 0 rows "
        "written",
        "if that run's process died, a run of this slot takes its claim over once the claim "
        "is 60 minutes old (ARENA_CLAIM_STALE_MINUTES)",
    ]
    assert snapshot_rows(database, SLOT) == 0

    # The owner died an hour ago: the manual run re-claims the stale claim and does the slot.
    with session_scope(database) as s:
        claim = s.exec(select(JobRun)).one()
        claim.started_at = AT - timedelta(minutes=61)
        s.add(claim)
    code, out, err = run(["snapshot", "--at", AT.isoformat()], capsys)
    assert code == 0 and err == "" and "2 row(s) written" in out and "[job_runs #1," in out
    [row] = runs_of(database, SNAPSHOT)
    assert row.status == "ok" and row.owner != "host:4242:abcd"
    assert snapshot_rows(database, SLOT) == 2


def test_a_failed_manual_run_is_recorded_and_is_one_line(
    database: Engine, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """No market synced: decide refuses as the scheduler's would; one line, exit 1, recorded."""
    at = WEEK1 + timedelta(minutes=20)
    env = {**os.environ, "ARENA_DATABASE_URL": db_url}
    command = [sys.executable, "-m", "arena", "decide", "--at", at.isoformat()]
    failed = subprocess.run(command, env=env, cwd=ROOT, text=True, capture_output=True)
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1, failed.stderr  # the job's own log line is not echoed
    assert failed.stderr.startswith("arena: error: no fresh market universe for the decision run")
    [row] = runs_of(database, DECIDE)
    assert (row.slot, row.status) == (WEEK1 + timedelta(minutes=5), "failed")
    assert row.error is not None and row.error.startswith("no fresh market universe")

    # The failed slot is final; a rerun in it says so (with the error) instead of retrying.
    code, out, err = run(["decide", "--at", (at + timedelta(minutes=1)).isoformat()], capsys)
    assert code == 0 and err == ""
    first, hint = out.splitlines()
    assert first.startswith(
        f"decide 2026-11-01 00:05 UTC: slot already done by another run (job_runs #{row.id}, "
        "status failed: no fresh market universe"
    )
    assert first.endswith("; skipped, 0 rows written")
    assert hint == (
        "a finished slot is final and no command re-runs it; the next decide slot is "
        "2026-11-01 01:05 UTC (it decides what is still undecided and re-runs error / "
        "zero_trade decisions)"
    )


def test_a_manual_decide_in_an_hour_the_scheduler_did_is_skipped_the_next_hour_runs(
    database: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(BASELINES)
    monkeypatch.setenv("ARENA_LINEUP", str(lineup))
    ctx = make_ctx(database)  # the scheduler's context: the same lineup, a static market source
    sunday = WEEK1 + timedelta(minutes=5)
    assert run_job(ctx, SYNC_MARKETS, sunday, sunday).status == "ok"
    scheduled = run_job(ctx, DECIDE, slot_for(DECIDE, sunday), sunday)
    assert scheduled.status == "ok"

    code, out, err = run(["decide", "--at", (sunday + timedelta(minutes=40)).isoformat()], capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[0] == (
        "decide 2026-11-01 00:05 UTC: slot already done by another run "
        f"(job_runs #{scheduled.run_id}, status ok); skipped, 0 rows written"
    )
    assert "the next decide slot is 2026-11-01 01:05 UTC" in out

    later = sunday + timedelta(hours=1, minutes=2)
    assert run_job(ctx, SYNC_MARKETS, later, later).status == "ok"
    code, out, err = run(["decide", "--at", later.isoformat()], capsys)
    assert code == 0 and err == ""
    first, manual = runs_of(database, DECIDE)
    assert (first.id, first.slot, first.status) == (scheduled.run_id, sunday, "ok")
    assert (manual.slot, manual.status) == (sunday + timedelta(hours=1), "ok")
    assert out == (
        "1 cohort(s) deciding: 0 decision(s) made (none), 0 trade(s), 3 already done or in "
        f"progress [job_runs #{manual.id}, slot 2026-11-01 01:05 UTC]\n"
    )
    with session_scope(database) as s:
        assert s.exec(select(func.count()).select_from(Decision)).one() == 3


def test_a_manual_start_cohort_records_its_run(
    database: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(BASELINES)
    monkeypatch.setenv("ARENA_LINEUP", str(lineup))
    code, out, _ = run(["start-cohort", "--at", (WEEK1 + timedelta(days=1)).isoformat()], capsys)
    assert code == 0
    assert out == (
        "cohort 1 created week of 2026-11-01, 3 agents [job_runs #1, slot 2026-11-01 00:00 UTC]\n"
    )
    code, out, _ = run(["start-cohort", "--at", (WEEK1 + timedelta(days=2)).isoformat()], capsys)
    assert code == 0 and out.startswith(
        "start-cohort 2026-11-01 00:00 UTC: slot already done by another run (job_runs #1, "
        "status ok); skipped, 0 rows written\n"
    )
    [row] = runs_of(database, "start-cohort")
    assert row.status == "ok" and row.counts["created"] is True
