"""The scheduler's clock and start-up checks, without the wall clock.

The trigger table is walked with `get_next_fire_time` over simulated fortnights (one containing
Europe's spring DST change, one its autumn change): every job fires exactly at its UTC slots,
once each, and the slots `arena.engine.jobs` records agree with the fire times.
"""

import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from arena.app import scheduler
from arena.config import load_settings
from arena.engine.jobs import (
    ANALYSES,
    BUNDLE,
    DECIDE,
    RESOLVE,
    SNAPSHOT,
    START_COHORT,
    SYNC_MARKETS,
    slot_for,
)
from arena.lineup import parse_lineup

ROOT = Path(__file__).resolve().parents[1]
EUROPE_DST_SPRING = datetime(2026, 3, 29, tzinfo=UTC)  # a Sunday: Europe moves clocks forward
EUROPE_DST_AUTUMN = datetime(2026, 10, 25, tzinfo=UTC)  # a Sunday: Europe moves clocks back


def fire_times(trigger: object, start: datetime, end: datetime) -> list[datetime]:
    """Every fire time of `trigger` in [start, end), computed as APScheduler would."""
    times: list[datetime] = []
    previous = None
    now = start
    while True:
        nxt = trigger.get_next_fire_time(previous, now)  # type: ignore[attr-defined]
        if nxt is None or nxt >= end:
            return times
        times.append(nxt.astimezone(UTC))
        previous = now = nxt


def fortnight_of(sunday: datetime) -> tuple[datetime, datetime]:
    """The fortnight from the Sunday before `sunday` (so both Sundays are inside)."""
    start = sunday - timedelta(weeks=1)
    return start, start + timedelta(weeks=2)


def every(start: datetime, end: datetime, step: timedelta) -> list[datetime]:
    out, at = [], start
    while at < end:
        out.append(at)
        at += step
    return out


@pytest.mark.parametrize("dst_sunday", [EUROPE_DST_SPRING, EUROPE_DST_AUTUMN], ids=str)
def test_a_fortnight_fires_exactly_the_methodology_slots(dst_sunday: datetime) -> None:
    start, end = fortnight_of(dst_sunday)
    assert start.weekday() == 6 and dst_sunday.weekday() == 6  # both Sundays
    fired = {job: fire_times(trigger, start, end) for job, trigger in scheduler.trigger_table()}
    sundays = [start, dst_sunday]

    assert fired[START_COHORT] == sundays
    assert fired[DECIDE] == [
        sunday + timedelta(minutes=5, hours=h) for sunday in sundays for h in range(24)
    ]
    assert fired[SNAPSHOT] == every(start, end, timedelta(minutes=10))
    assert fired[SYNC_MARKETS] == every(start, end, timedelta(minutes=5))
    assert fired[RESOLVE] == every(start, end, timedelta(hours=1))
    assert fired[ANALYSES] == every(start + timedelta(minutes=30), end, timedelta(hours=1))
    assert fired[BUNDLE] == every(start + timedelta(minutes=45), end, timedelta(hours=1))

    # Decide opens each week at Sunday 00:05 UTC exactly, DST Sunday included.
    firsts = [t for t in fired[DECIDE] if t.hour == 0]
    assert firsts == [start + timedelta(minutes=5), dst_sunday + timedelta(minutes=5)]
    # 144 snapshots per UTC day, the DST day too.
    per_day = Counter(t.date() for t in fired[SNAPSHOT])
    assert set(per_day.values()) == {144} and len(per_day) == 14
    assert per_day[dst_sunday.date()] == 144

    # Once each, and each fire time is the slot the job run records.
    for job, times in fired.items():
        assert len(times) == len(set(times)), job
        assert [slot_for(job, t) for t in times] == times, job


def test_triggers_are_utc_and_sunday_is_sun_not_zero() -> None:
    table = dict(scheduler.trigger_table())
    assert set(table) == {START_COHORT, DECIDE, SNAPSHOT, SYNC_MARKETS, RESOLVE, ANALYSES, BUNDLE}
    for trigger in table.values():
        assert trigger.timezone == UTC
    # APScheduler's day_of_week=0 would be Monday: the first fire after a Saturday is a Sunday.
    saturday = datetime(2026, 1, 3, 12, tzinfo=UTC)
    first = table[START_COHORT].get_next_fire_time(None, saturday)
    assert first == datetime(2026, 1, 4, tzinfo=UTC) and first.weekday() == 6


def test_slots_of_late_runs_and_what_a_catch_up_runs() -> None:
    sunday = datetime(2026, 1, 4, tzinfo=UTC)
    tuesday = sunday + timedelta(days=2, hours=14, minutes=23)
    assert slot_for(START_COHORT, tuesday) == sunday
    assert slot_for(DECIDE, tuesday) == sunday + timedelta(hours=23, minutes=5)
    last_week = sunday - timedelta(weeks=1) + timedelta(hours=23, minutes=5)
    assert slot_for(DECIDE, sunday + timedelta(minutes=4)) == last_week
    assert slot_for(SNAPSHOT, tuesday) == tuesday.replace(minute=20)
    assert slot_for(SYNC_MARKETS, tuesday) == tuesday.replace(minute=20)
    assert slot_for(RESOLVE, tuesday) == tuesday.replace(minute=0)
    assert slot_for(ANALYSES, tuesday) == tuesday.replace(minute=30) - timedelta(hours=1)
    assert slot_for(BUNDLE, tuesday) == tuesday.replace(minute=45) - timedelta(hours=1)
    # Between Sunday 00:00 and 00:05 the new week's decisions are not due yet.
    assert DECIDE not in scheduler.due_now(sunday + timedelta(minutes=2))
    assert scheduler.due_now(sunday + timedelta(minutes=5))[0] == START_COHORT
    assert DECIDE in scheduler.due_now(tuesday)


def test_the_apscheduler_wiring_coalesces_and_never_overlaps_a_job() -> None:
    from arena.engine.jobs import JobContext

    settings = load_settings()
    ctx = JobContext(None, settings, parse_lineup(BASELINE), None, lambda f: None)  # type: ignore[arg-type]
    jobs = {job.id: job for job in scheduler.build_scheduler(ctx).get_jobs()}
    assert set(jobs) == {START_COHORT, DECIDE, SNAPSHOT, SYNC_MARKETS, RESOLVE, ANALYSES, BUNDLE}
    for job in jobs.values():
        assert job.coalesce is True and job.max_instances == 1
    assert jobs[DECIDE].misfire_grace_time == 7 * 24 * 3600
    assert jobs[START_COHORT].misfire_grace_time == 7 * 24 * 3600
    assert jobs[SNAPSHOT].misfire_grace_time < 600


# --------------------------------------------------------------------------------------------
# Start-up configuration check (real processes)

BASELINE = """
[[family]]
id = "baseline-cash"
display_name = "Cash"
provider = "Arena"
model = "baseline/cash"
kind = "baseline"
strategy = "cash"
"""
LLM = """
[[family]]
id = "m-a"
display_name = "Model A"
provider = "Test"
model = "test/a"
kind = "llm"
"""


def run_scheduler(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENROUTER_API_KEY", "ARENA_LLM_API_KEY", "ARENA_LINEUP")
        and (not k.startswith("ARENA_") or k == "ARENA_RECORD_BOOKS")  # off: the suite is offline
    }
    return subprocess.run(
        [sys.executable, str(ROOT / "scheduler.py"), *args],
        env={**clean, **env},
        cwd=ROOT,
        text=True,
        capture_output=True,
        timeout=120,
    )


def test_llm_families_without_a_key_are_refused_in_one_line(tmp_path: Path) -> None:
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(LLM + BASELINE)
    env = {
        "ARENA_LINEUP": str(lineup),
        "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}",
    }
    result = run_scheduler(env, "--catch-up")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "no API key (m-a)" in lines[0] and "--skip-unconfigured" in lines[0]
    assert "OPENROUTER_API_KEY" in lines[0]
    assert "m-a" in result.stdout and "NOT READY" in result.stdout
    assert not (tmp_path / "arena.db").exists()  # refused before touching the database


def test_skip_unconfigured_runs_the_baselines(tmp_path: Path) -> None:
    from arena.storage.db import create_db_engine
    from arena.storage.migrate import init_db
    from tests.markets.gamma_server import Reply, serve

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    engine = create_db_engine(url)
    init_db(engine)
    engine.dispose()
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(LLM + BASELINE)
    from tests.engine.test_decisions import MARKETS
    from tests.test_jobs import gamma_market

    with serve() as gamma:
        body = {"markets": [gamma_market(m) for m in MARKETS], "next_cursor": None}
        gamma.script("/markets/keyset", Reply(200, body))
        env = {"ARENA_LINEUP": str(lineup), "ARENA_DATABASE_URL": url, "ARENA_GAMMA_URL": gamma.url}
        result = run_scheduler(
            env, "--catch-up", "--skip-unconfigured", "--at", "2026-01-04T00:05:00Z"
        )
    assert result.returncode == 0, result.stderr
    assert "m-a" in result.stdout and "SKIPPED" in result.stdout
    assert "start-cohort [slot 2026-01-04 00:00] ok" in result.stdout
    assert "decide [slot 2026-01-04 00:05] ok" in result.stdout
    assert "failed" not in result.stdout


def test_the_plan_never_shows_the_database_password(tmp_path: Path) -> None:
    password = "Sup3r-s3cret-pw"
    env = {
        "ARENA_DATABASE_URL": f"postgresql+psycopg://arena:{password}@127.0.0.1:9/arena",
        "ARENA_LLM_API_KEY": "sk-or-test-key-123",
    }
    result = run_scheduler(env, "--catch-up")
    output = result.stdout + result.stderr
    assert "postgresql database arena on 127.0.0.1:9 as arena" in result.stdout
    assert "API key set" in result.stdout
    assert password not in output and "sk-or-test-key-123" not in output
    assert result.returncode != 0  # nothing listens on port 9: one clear line, no traceback
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in output


def test_describe_database_hides_credentials() -> None:
    assert scheduler.describe_database("sqlite:///data/arena.db") == "sqlite file data/arena.db"
    text = scheduler.describe_database("postgresql+psycopg://u:pw@db.example:5433/arena")
    assert text == "postgresql database arena on db.example:5433 as u"
    assert "pw" not in text


def test_at_without_catch_up_is_refused(tmp_path: Path) -> None:
    result = run_scheduler(
        {"ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"},
        "--skip-unconfigured",
        "--at",
        "2026-01-04T00:00:00Z",
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "scheduler: error: --at only applies to --catch-up — add --catch-up or drop --at"
    ]


def test_sigterm_stops_the_scheduler_cleanly_after_its_catch_up(tmp_path: Path) -> None:
    import signal
    import threading

    from arena.storage.db import create_db_engine
    from arena.storage.migrate import init_db
    from tests.engine.test_decisions import MARKETS
    from tests.markets.gamma_server import Reply, serve
    from tests.test_jobs import gamma_market

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    engine = create_db_engine(url)
    init_db(engine)
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(BASELINE)
    with serve() as gamma:
        body = {"markets": [gamma_market(m) for m in MARKETS], "next_cursor": None}
        gamma.script("/markets/keyset", Reply(200, body))
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        env.update(
            ARENA_RECORD_BOOKS="0",
            ARENA_DATABASE_URL=url,
            ARENA_LINEUP=str(lineup),
            ARENA_GAMMA_URL=gamma.url,
        )
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "scheduler.py")],
            env=env,
            cwd=ROOT,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            # A reader thread, not select() on the pipe: lines already read into the text
            # buffer would never make the descriptor ready again (a flaky 60 s wait).
            seen: list[str] = []
            running = threading.Event()

            def read_lines() -> None:
                for line in proc.stdout:  # type: ignore[union-attr]
                    seen.append(line)
                    if "scheduler: running" in line:
                        running.set()

            threading.Thread(target=read_lines, daemon=True).start()
            assert running.wait(120) and proc.poll() is None, "".join(seen)
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            err = proc.stderr.read()  # type: ignore[union-attr]
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, err
    assert "stopping after the running job(s) finish" in err
    assert "Traceback" not in err
    catch_up = "".join(seen)
    assert "start-cohort [slot" in catch_up and "sync-markets [slot" in catch_up
    from sqlmodel import Session, select

    from arena.storage.models import JobRun

    with Session(engine) as session:
        runs = session.exec(select(JobRun)).all()
    assert runs and {run.status for run in runs} == {"ok"}
    engine.dispose()
