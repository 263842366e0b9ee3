"""Job runs claimed per job × slot, on SQLite and PostgreSQL, in one process and in two.

A slot runs once; a failing job is recorded (one line, no secret) and never raises; a claim left
`running` by a crashed process is taken over after the stale timeout, a fresh one is not; and
two real `scheduler.py --catch-up` processes on one database split the slots between them.
"""

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.agents.responders import default_responders
from arena.config import load_settings
from arena.core.errors import error_line
from arena.engine.jobs import (
    DECIDE,
    SNAPSHOT,
    START_COHORT,
    SYNC_MARKETS,
    JobContext,
    known_secrets,
    next_slot,
    run_job,
    slot_for,
    slot_run,
)
from arena.lineup import parse_lineup
from arena.markets.types import EndWindow, ParsedMarket
from arena.storage.db import session_scope
from arena.storage.models import (
    Agent,
    Cohort,
    Decision,
    JobRun,
    PortfolioSnapshot,
    SystemLog,
    Trade,
)
from tests.engine.test_decisions import MARKETS
from tests.engine.test_two_processes import BASELINES
from tests.factories import WEEK1
from tests.faults.invariants import assert_books_balance, assert_job_run_counts_match
from tests.markets.gamma_server import Reply, serve

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-or-v1-very-secret"


class StaticSource:
    """A market source with fixed markets; `fail` makes every call raise (Gamma down)."""

    name = "static"

    def __init__(self, markets: list[ParsedMarket], fail: str | None = None) -> None:
        self.markets = {market.id: market for market in markets}
        self.fail = fail

    def top_markets(
        self, at: datetime, limit_total: int, ending: EndWindow | None = None
    ) -> list[ParsedMarket]:
        if self.fail:
            raise RuntimeError(self.fail)
        listed = [m for m in self.markets.values() if ending is None or ending.holds(m.end_date)]
        return listed[:limit_total]

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None:
        if self.fail:
            raise RuntimeError(self.fail)
        return self.markets.get(market_id)


def make_ctx(engine: Engine, source: Any = None, owner: str = "test-owner") -> JobContext:
    settings = load_settings()
    responders, _close = default_responders(settings)
    return JobContext(
        engine=engine,
        settings=settings,
        lineup=parse_lineup(BASELINES),
        source=source or StaticSource(MARKETS),
        responders=responders,
        owner=owner,
        secrets=(SECRET,),
    )


def job_runs(engine: Engine) -> list[JobRun]:
    with session_scope(engine) as s:
        return list(s.exec(select(JobRun).order_by(JobRun.id)))  # type: ignore[arg-type]


def test_a_slot_runs_once(engine: Engine) -> None:
    ctx = make_ctx(engine)
    first = run_job(ctx, START_COHORT, WEEK1, WEEK1)
    again = run_job(ctx, START_COHORT, WEEK1, WEEK1 + timedelta(minutes=1))
    other = run_job(make_ctx(engine, owner="someone-else"), START_COHORT, WEEK1, WEEK1)

    assert first.status == "ok" and first.counts["created"] is True
    assert first.counts["agents"] == 3
    assert again.status == "skipped" and other.status == "skipped"
    [row] = job_runs(engine)
    assert (row.job, row.slot, row.status, row.owner) == (START_COHORT, WEEK1, "ok", "test-owner")
    assert row.started_at == WEEK1 and row.finished_at == WEEK1  # simulated clock
    assert row.counts["cohort"] == 1 and row.error is None
    with session_scope(engine) as s:
        assert s.exec(select(func.count()).select_from(Cohort)).one() == 1
        logs = s.exec(select(SystemLog).where(SystemLog.source == "jobs")).all()
    assert [(log.level, log.message) for log in logs] == [
        ("INFO", "start-cohort 2026-11-01T00:00:00+00:00: ok")
    ]


def test_a_real_clock_records_when_the_run_finished(engine: Engine) -> None:
    ctx = make_ctx(engine)
    done = WEEK1 + timedelta(seconds=42)
    ctx.clock = lambda: done
    assert run_job(ctx, START_COHORT, WEEK1, WEEK1).status == "ok"
    [row] = job_runs(engine)
    assert row.started_at == WEEK1 and row.finished_at == done


def test_a_failing_job_is_recorded_and_does_not_raise(engine: Engine) -> None:
    source = StaticSource(MARKETS, fail=f"Gamma down\nwhile using key {SECRET}")
    ctx = make_ctx(engine, source)
    at = WEEK1 + timedelta(minutes=5)

    result = run_job(ctx, SYNC_MARKETS, at, at)
    assert result.status == "failed"
    assert result.error == "RuntimeError: Gamma down"
    [row] = job_runs(engine)
    assert row.status == "failed" and row.error == "RuntimeError: Gamma down"
    assert row.finished_at == at and row.counts == {}
    with session_scope(engine) as s:
        [log] = s.exec(select(SystemLog).where(SystemLog.source == "jobs")).all()
    assert log.level == "ERROR" and "Gamma down" in log.message
    # A failed slot is final; the next slot runs normally once the source is back.
    source.fail = None
    assert run_job(ctx, SYNC_MARKETS, at, at).status == "skipped"
    later = at + timedelta(minutes=5)
    assert run_job(ctx, SYNC_MARKETS, later, later).status == "ok"
    assert_job_run_counts_match(engine)


def test_a_run_result_names_its_row_and_carries_outcome_or_exception(engine: Engine) -> None:
    """What the CLI reports from: the run's job_runs row, the job's own result, its exception."""
    ctx = make_ctx(engine, StaticSource(MARKETS, fail="Gamma down"))
    at = WEEK1 + timedelta(minutes=5)
    failed = run_job(ctx, SYNC_MARKETS, at, at)
    assert isinstance(failed.exception, RuntimeError) and failed.outcome is None
    ok = run_job(ctx, START_COHORT, WEEK1, WEEK1)
    assert ok.exception is None and ok.outcome is not None
    assert ok.outcome.counts()["agents"] == 3
    skipped = run_job(ctx, START_COHORT, WEEK1, at)
    assert (skipped.run_id, skipped.outcome, skipped.exception) == (None, None, None)
    rows = {row.job: row for row in job_runs(engine)}
    assert (failed.run_id, ok.run_id) == (rows[SYNC_MARKETS].id, rows[START_COHORT].id)

    held = slot_run(engine, START_COHORT, WEEK1)
    assert held is not None
    assert (held.id, held.status, held.owner, held.error) == (ok.run_id, "ok", "test-owner", None)
    assert held.started_at == WEEK1 and held.finished_at == WEEK1
    sync = slot_run(engine, SYNC_MARKETS, at)
    assert sync is not None and (sync.status, sync.error) == ("failed", "RuntimeError: Gamma down")
    assert slot_run(engine, SNAPSHOT, at) is None


def test_the_next_slot_is_the_next_trigger_fire_time() -> None:
    assert next_slot(SNAPSHOT, WEEK1 + timedelta(minutes=10)) == WEEK1 + timedelta(minutes=20)
    assert next_slot(DECIDE, WEEK1 + timedelta(minutes=5)) == WEEK1 + timedelta(hours=1, minutes=5)
    sunday_last = WEEK1 + timedelta(hours=23, minutes=5)
    assert next_slot(DECIDE, sunday_last) == WEEK1 + timedelta(weeks=1, minutes=5)
    assert next_slot(START_COHORT, WEEK1) == WEEK1 + timedelta(weeks=1)
    for job in (SNAPSHOT, SYNC_MARKETS, DECIDE, START_COHORT):
        slot = slot_for(job, WEEK1 + timedelta(days=3, hours=5, minutes=47))
        assert slot_for(job, next_slot(job, slot)) == next_slot(job, slot) > slot


def test_known_secrets_are_the_password_the_key_and_the_admin_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", "postgresql+psycopg://u:pw-1@db/x")
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)
    monkeypatch.setenv("ARENA_ADMIN_PASSWORD", "admin-2")
    assert set(known_secrets(load_settings())) == {"pw-1", SECRET, "admin-2"}
    monkeypatch.setenv("ARENA_DATABASE_URL", "sqlite:///x.db")
    monkeypatch.delenv("OPENROUTER_API_KEY")
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD")
    assert known_secrets(load_settings()) == ()


def test_error_lines_are_one_line_and_blank_out_secrets() -> None:
    line = error_line(ValueError(f"bad\nsecond line {SECRET}"), [SECRET])
    assert line == "ValueError: bad"
    assert (
        error_line(RuntimeError(f"key {SECRET} leaked"), [SECRET]) == "RuntimeError: key *** leaked"
    )
    assert len(error_line(RuntimeError("x" * 2000))) == 500


def _running_claim(engine: Engine, job: str, slot: datetime, started: datetime) -> None:
    with session_scope(engine) as s:
        s.add(JobRun(job=job, slot=slot, status="running", owner="crashed", started_at=started))


def test_a_stale_running_claim_is_taken_over_and_a_fresh_one_is_not(engine: Engine) -> None:
    ctx = make_ctx(engine)
    at = WEEK1 + timedelta(hours=3)
    stale_slot, fresh_slot = slot_for(SNAPSHOT, at), slot_for(SNAPSHOT, at) - timedelta(minutes=10)
    _running_claim(engine, SNAPSHOT, stale_slot, at - ctx.stale_after - timedelta(seconds=1))
    _running_claim(engine, SNAPSHOT, fresh_slot, at - ctx.stale_after + timedelta(minutes=1))

    assert run_job(ctx, SNAPSHOT, fresh_slot, at).status == "skipped"
    taken = run_job(ctx, SNAPSHOT, stale_slot, at)
    assert taken.status == "ok"
    rows = {row.slot: row for row in job_runs(engine)}
    assert (rows[stale_slot].status, rows[stale_slot].owner) == ("ok", "test-owner")
    assert rows[stale_slot].started_at == at
    assert (rows[fresh_slot].status, rows[fresh_slot].owner) == ("running", "crashed")
    assert_job_run_counts_match(engine)  # the take-over moved one run from running to ok
    with session_scope(engine) as s:
        warnings = s.exec(select(SystemLog).where(SystemLog.level == "WARNING")).all()
    assert any("re-claimed a stale running claim" in w.message for w in warnings)


def test_a_run_whose_claim_was_taken_over_does_not_overwrite_the_new_owner(
    engine: Engine,
) -> None:
    from arena.engine import jobs

    at = WEEK1
    ctx = make_ctx(engine)
    later = at + ctx.stale_after + timedelta(minutes=1)

    original = jobs.JOBS[START_COHORT]

    def slow_start(inner_ctx: JobContext, when: datetime) -> Any:
        # While this run "hangs", another process takes the stale claim and finishes it.
        jobs.JOBS[START_COHORT] = original
        assert run_job(make_ctx(engine, owner="rescuer"), START_COHORT, at, later).status == "ok"
        return original(inner_ctx, when)

    jobs.JOBS[START_COHORT] = slow_start
    try:
        run_job(ctx, START_COHORT, at, at)
    finally:
        jobs.JOBS[START_COHORT] = original
    [row] = job_runs(engine)
    assert (row.owner, row.status, row.started_at) == ("rescuer", "ok", later)


def test_decide_makes_sure_the_week_has_its_cohort(engine: Engine) -> None:
    ctx = make_ctx(engine)
    at = WEEK1 + timedelta(minutes=5)
    assert run_job(ctx, SYNC_MARKETS, at, at).status == "ok"
    result = run_job(ctx, DECIDE, slot_for(DECIDE, at), at)  # start-cohort never ran
    assert result.status == "ok"
    assert result.counts["cohort"]["created"] is True
    assert result.counts["claimed"] == 3 and result.counts["statuses"] == {"ok": 3}
    # The next hourly decide slot finds every decision finished: nothing is redone.
    later = at + timedelta(hours=1)
    again = run_job(ctx, DECIDE, slot_for(DECIDE, later), later)
    assert again.status == "ok" and again.counts["claimed"] == 0 and again.counts["skipped"] == 3


def test_decide_waits_for_a_fresh_market_sync(engine: Engine) -> None:
    source = StaticSource(MARKETS, fail="Gamma down")
    ctx = make_ctx(engine, source)
    sunday = WEEK1
    assert run_job(ctx, SYNC_MARKETS, sunday, sunday).status == "failed"
    at = sunday + timedelta(minutes=5)
    refused = run_job(ctx, DECIDE, slot_for(DECIDE, at), at)
    assert refused.status == "failed"
    assert refused.error is not None and "no fresh market universe" in refused.error
    with session_scope(engine) as s:
        assert s.exec(select(func.count()).select_from(Decision)).one() == 0
    # Gamma is back: the next sync succeeds and the next hourly decide slot decides.
    source.fail = None
    later = at + timedelta(hours=1)
    assert run_job(ctx, SYNC_MARKETS, later, later).status == "ok"
    retried = run_job(ctx, DECIDE, slot_for(DECIDE, later), later)
    assert retried.status == "ok" and retried.counts["statuses"] == {"ok": 3}
    # Markets last synced over an hour before a run are stale too.
    week2 = later + timedelta(weeks=1)
    stale = run_job(ctx, DECIDE, slot_for(DECIDE, week2), week2)
    assert stale.status == "failed" and "last synced" in (stale.error or "")


# --------------------------------------------------------------------------------------------
# Two real scheduler processes on one database


def gamma_market(market: ParsedMarket) -> dict[str, Any]:
    """The Gamma payload of a test market, as the live API would send it."""
    assert market.prices is not None and market.end_date is not None
    return {
        "id": market.id,
        "question": market.question,
        "slug": f"market-{market.id}",
        "outcomes": json.dumps(market.outcomes),
        "outcomePrices": json.dumps([str(p) for p in market.prices]),
        "volumeNum": market.volume,
        "endDate": market.end_date.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "active": True,
        "closed": False,
    }


def catch_up_twice(env: dict[str, str], at: datetime) -> list[str]:
    """Two `scheduler.py --catch-up --at` processes started together; their stdout lines."""
    command = [sys.executable, str(ROOT / "scheduler.py"), "--catch-up", "--at", at.isoformat()]
    procs = [
        subprocess.Popen(command, env=env, cwd=ROOT, text=True, stdout=-1, stderr=-1)
        for _ in range(2)
    ]
    lines: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        lines += [line for line in out.splitlines() if "[slot " in line]
    return lines


def test_two_scheduler_processes_never_do_a_slot_twice(
    engine: Engine, db_url: str, tmp_path: Path
) -> None:
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(BASELINES)
    instants = [WEEK1 + timedelta(minutes=m) for m in (0, 5, 10)]
    with serve() as gamma:
        body = {"markets": [gamma_market(m) for m in MARKETS], "next_cursor": None}
        gamma.script("/markets/keyset", Reply(200, body))
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ARENA_")},
            "ARENA_DATABASE_URL": db_url,
            "ARENA_LINEUP": str(lineup),
            "ARENA_GAMMA_URL": gamma.url,
            "ARENA_RECORD_BOOKS": "0",  # no CLOB: the suite is offline
        }
        env.pop("OPENROUTER_API_KEY", None)
        lines = [line for at in instants for line in catch_up_twice(env, at)]

    # Every job × slot was run by exactly one process; every other attempt saw it taken.
    outcomes: dict[str, list[str]] = {}
    for line in lines:
        key = line.split(" ", 1)[1].split("]")[0]
        outcomes.setdefault(key, []).append(line.rsplit("] ", 1)[1].split(":")[0])
    for key, seen in outcomes.items():
        assert seen.count("ok") == 1 and set(seen) == {"ok", "skipped"}, (key, seen)

    with session_scope(engine) as s:
        runs = s.exec(select(JobRun)).all()
        assert len(runs) == len(outcomes) and {r.status for r in runs} == {"ok"}
        assert s.exec(select(func.count()).select_from(Cohort)).one() == 1
        agents = s.exec(select(Agent)).all()
        decisions = s.exec(select(Decision)).all()
        assert len(agents) == 3 and len(decisions) == 3
        assert {d.status for d in decisions} == {"ok"}
        trades = s.exec(select(Trade)).all()
        assert trades, "the favourite baseline should have bet"
        keys = [(t.decision_id, t.leg_index) for t in trades]
        assert len(keys) == len(set(keys))
        for agent in agents:
            spent = sum((t.amount for t in trades if t.agent_id == agent.id), D(0))
            assert agent.cash_balance == D("10000") - spent
        snapshot_slots = sorted({slot_for(SNAPSHOT, at) for at in instants})
        passes = s.exec(select(SystemLog).where(SystemLog.source == "snapshot")).all()
        assert len(passes) == len(snapshot_slots)  # one valuation pass per slot, not two
        rows = s.exec(select(PortfolioSnapshot)).all()
        assert len({(r.agent_id, r.slot) for r in rows}) == len(rows)
        assert {r.slot for r in rows} <= set(snapshot_slots)
    assert_books_balance(engine)  # incl. market holdings and job-run counts: two writers


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
