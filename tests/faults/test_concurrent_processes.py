"""Real processes racing on one database: schedulers with a manual run, readers with a writer.

1. Two `scheduler.py --catch-up` processes and one `arena decide` start at the same instant
   on a fresh week (SQLite and PostgreSQL): one cohort, one decision per agent, each
   job × slot claimed once, and the books balance.
2. The dashboard's read path (a reader engine and the analytics read models) reads in a tight
   loop while another process writes snapshots (SQLite WAL): no error and no "database is
   locked" on either side, and the reader sees the writes land.
3. `arena export` piped into a pager that stopped reading (SQLite): the scheduler still
   commits, and the export, once read, holds the rows of its first read.
"""

import os
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timedelta
from decimal import Decimal as D
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.analytics.views.curves import portfolio_curves
from arena.analytics.views.database import overview, row_count
from arena.engine.market_sync import upsert_markets
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import init_db
from arena.storage.models import Agent, Cohort, Decision, JobRun, PortfolioSnapshot
from tests.engine.test_decisions import MARKETS
from tests.engine.test_two_processes import BASELINES
from tests.factories import WEEK1, new_cohort_agents, trade_into
from tests.faults.invariants import assert_books_balance, assert_no_duplicates
from tests.markets.gamma_server import Reply, serve
from tests.test_jobs import gamma_market

ROOT = Path(__file__).resolve().parents[2]

WRITER = """
import sys, time
from datetime import datetime, timedelta
from arena.storage.db import create_db_engine
from arena.engine.snapshots import take_snapshots

url, first, seconds = sys.argv[1], datetime.fromisoformat(sys.argv[2]), float(sys.argv[3])
engine = create_db_engine(url)
deadline = time.monotonic() + seconds
slots = 0
while time.monotonic() < deadline:
    take_snapshots(engine, first + timedelta(minutes=10 * slots))
    slots += 1
print(slots)
"""


def _clean_env(**extra: str) -> dict[str, str]:
    """The parent's environment without any ARENA_* or API key, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.pop("OPENROUTER_API_KEY", None)
    return {**env, "ARENA_RECORD_BOOKS": "0", **extra}  # no CLOB: the suite is offline


def test_two_schedulers_and_a_manual_decide_at_once(
    engine: Engine, db_url: str, tmp_path: Path
) -> None:
    """Sunday 00:05 on a week with no cohort yet: three processes race to start and decide it."""
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(BASELINES)
    with session_scope(engine) as s:
        upsert_markets(s, MARKETS, WEEK1)  # a fresh universe: decide need not wait for a sync
    at = (WEEK1 + timedelta(minutes=5)).isoformat()
    with serve() as gamma:
        body = {"markets": [gamma_market(m) for m in MARKETS], "next_cursor": None}
        gamma.script("/markets/keyset", Reply(200, body))
        env = _clean_env(
            ARENA_DATABASE_URL=db_url, ARENA_LINEUP=str(lineup), ARENA_GAMMA_URL=gamma.url
        )
        scheduler = [sys.executable, str(ROOT / "scheduler.py"), "--catch-up", "--at", at]
        commands = [scheduler, scheduler, [sys.executable, "-m", "arena", "decide", "--at", at]]
        procs = [
            subprocess.Popen(cmd, env=env, cwd=ROOT, text=True, stdout=-1, stderr=-1)
            for cmd in commands
        ]
        outputs = [(proc, *proc.communicate(timeout=120)) for proc in procs]
    for proc, out, err in outputs:
        assert proc.returncode == 0, (proc.args, out, err)

    with session_scope(engine) as s:
        cohorts = s.exec(select(Cohort)).all()
        assert [(c.number, c.week_start) for c in cohorts] == [(1, WEEK1)]
        agents = s.exec(select(Agent)).all()
        assert sorted(a.family_id for a in agents) == [
            "baseline-cash",
            "baseline-favorite",
            "baseline-random",
        ]
        decisions = s.exec(select(Decision)).all()
        assert Counter(d.agent_id for d in decisions) == Counter(a.id for a in agents)
        assert {d.status for d in decisions} == {"ok"}
        runs = s.exec(select(JobRun)).all()
        per_slot = Counter((r.job, r.slot) for r in runs)
        assert runs and max(per_slot.values()) == 1, per_slot
        assert {r.status for r in runs} == {"ok"}, [(r.job, r.status, r.error) for r in runs]
        assert s.exec(select(func.count()).select_from(Decision)).one() == 3
    assert_no_duplicates(engine)
    assert_books_balance(engine)


def test_dashboard_reads_continuously_while_the_engine_writes(tmp_path: Path) -> None:
    """WAL: a reader loop never sees "database is locked" and sees new snapshots arrive."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    writer_engine = create_db_engine(url)
    init_db(writer_engine)
    with session_scope(writer_engine) as s:
        upsert_markets(s, MARKETS, WEEK1)
    agents = new_cohort_agents(writer_engine, ("gpt-5.1", "baseline-cash", "baseline-random"))
    for agent in agents:
        trade_into(writer_engine, agent, "100", "YES", "500", "0.5", WEEK1)
    writer_engine.dispose()

    # A short busy timeout: a reader blocked behind the writer would raise "database is
    # locked" within 200 ms instead of silently waiting, so "no exception" proves "no block".
    reader = create_db_engine(url, role="reader", busy_timeout_ms=200)
    first_slot = WEEK1 + timedelta(days=1)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, url, first_slot.isoformat(), "5"],
        env=_clean_env(),
        cwd=ROOT,
        text=True,
        stdout=-1,
        stderr=-1,
    )
    seen: list[int] = []
    reads = 0
    try:
        while writer.poll() is None:
            seen.append(row_count(overview(reader), "portfolio_snapshots"))
            portfolio_curves(reader, "ALL")
            reads += 1
        out, err = writer.communicate(timeout=60)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.communicate()
    final = row_count(overview(reader), "portfolio_snapshots")
    reader.dispose()

    assert writer.returncode == 0, err
    assert "locked" not in err.lower(), err
    slots = int(out.strip())
    assert slots > 10, out
    assert seen == sorted(seen), "a reader saw the snapshot count go down"
    assert len(set(seen)) >= 3, (reads, sorted(set(seen)))  # it saw writes land while reading
    assert final == slots * len(agents)
    check = create_db_engine(url)
    with session_scope(check) as s:
        rows = s.exec(select(PortfolioSnapshot)).all()
        assert len({r.slot for r in rows}) == slots
    assert_no_duplicates(check)
    assert_books_balance(check)
    check.dispose()


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)


def test_an_export_piped_into_a_stalled_pager_never_holds_off_the_scheduler(
    tmp_path: Path,
) -> None:
    """`arena export snapshots | less`, the pager left open: the export blocks on the full
    pipe with its cursor open mid-table. A writer with a 500 ms busy timeout still commits
    (it failed with "database is locked" while `arena export` ran on a writer engine, whose
    transaction took SQLite's write lock as it began), and the CSV, once read, is the
    database as of the export's first read."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    engine = create_db_engine(url)
    init_db(engine)
    agents = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash", "baseline-random"))
    slots = [WEEK1 + timedelta(minutes=10 * i) for i in range(1_500)]  # ~400 kB of CSV
    with session_scope(engine) as s:
        s.add_all(_flat_snapshot(agent, slot) for slot in slots for agent in agents)
    engine.dispose()

    export = subprocess.Popen(
        [sys.executable, "-m", "arena", "export", "snapshots"],
        env=_clean_env(ARENA_DATABASE_URL=url),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert export.stdout is not None
        header = export.stdout.readline()  # rows are flowing: the export's read has begun
        time.sleep(0.5)  # it fills the pipe (64 kB) and blocks, its cursor open
        assert export.poll() is None, "the export ended before the pipe could fill"
        scheduler = create_db_engine(url, busy_timeout_ms=500)
        with session_scope(scheduler) as s:
            s.add(_flat_snapshot(agents[0], slots[-1] + timedelta(minutes=10)))
        scheduler.dispose()
        rest, err = export.communicate(timeout=60)
    finally:
        if export.poll() is None:
            export.kill()
            export.communicate()
    assert export.returncode == 0, err.decode()
    assert header.startswith(b"cohort_number,family_id,snapshot_timestamp")
    assert len(rest.decode().splitlines()) == len(slots) * len(agents)


def _flat_snapshot(agent_id: int, slot: datetime) -> PortfolioSnapshot:
    """An agent's snapshot of an untouched $10,000 (for bulk, not accounting)."""
    cash = D("10000")
    return PortfolioSnapshot(
        agent_id=agent_id,
        slot=slot,
        snapshot_timestamp=slot,
        cash_balance=cash,
        positions_value=D("0"),
        total_value=cash,
        total_pnl=D("0"),
        total_pnl_percent=0.0,
    )
