"""`arena demo`: a simulated season through the real jobs, reproducible, with the oracle ahead.

One real `arena demo --weeks 2 --seed 1` process builds a database, offline (the suite's guard
armed in it records no connection outside loopback); a second run of the same season (in
process) must write exactly the same trades.
"""

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.app.demo import (
    DEMO_START,
    ORACLE,
    demo_lineup,
    due_jobs,
    leaderboard,
    run_demo,
    season_ticks,
)
from arena.config import load_settings
from arena.engine.jobs import DECIDE, RESOLVE, SNAPSHOT, START_COHORT, SYNC_MARKETS
from arena.lineup import load_lineup, parse_lineup
from arena.storage.book_models import DecisionBook
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db
from arena.storage.models import (
    Agent,
    BrierScore,
    Cohort,
    Decision,
    JobRun,
    Market,
    PortfolioSnapshot,
    Trade,
)
from tests import offline_guard
from tests.stated_season import DemoSeasons, checkpoint

ROOT = Path(__file__).resolve().parents[1]
WEEKS, SEED = 2, 1


def arena_demo(url: str, *args: str, guard: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`arena demo` in its own process (the offline guard armed in it, as in every child;
    `guard`: the file it records into instead of the test's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.pop("OPENROUTER_API_KEY", None)
    env["ARENA_DATABASE_URL"] = url
    if guard is not None:
        env.update(offline_guard.child_env(guard))
    return subprocess.run(
        [sys.executable, "-m", "arena", "demo", *args],
        env=env,
        cwd=ROOT,
        text=True,
        capture_output=True,
        timeout=280,
    )


@pytest.fixture(scope="module")
def season(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, str]]:
    """A copy of the database of one real `arena demo --weeks 2 --seed 1` run, and its stdout.

    Played once per test run (`DemoSeasons.once`), not once per xdist worker running one of
    these tests: the process plays the whole season and its tail, half a minute."""

    def play(folder: Path) -> str:
        url = f"sqlite:///{folder / 'demo.db'}"
        guard = folder / "offline-guard.jsonl"
        result = arena_demo(url, "--weeks", str(WEEKS), "--seed", str(SEED), guard=guard)
        assert result.returncode == 0, result.stderr
        # Offline: the demo process was guarded and reached nothing outside loopback (its
        # books recorded from its simulated CLOB, its LLM families from its model server).
        offline_guard.guarded_and_offline(guard, "demo")
        checkpoint(folder / "demo.db")
        return result.stdout

    played, stdout = demo_seasons.once(f"arena demo --weeks {WEEKS} --seed {SEED}", play)
    copy = tmp_path_factory.mktemp("demo") / "demo.db"
    shutil.copyfile(played / "demo.db", copy)
    engine = create_db_engine(f"sqlite:///{copy}")
    try:
        yield engine, stdout
    finally:
        engine.dispose()


def count(engine: Engine, model: Any, *where: Any) -> int:
    with engine.connect() as conn:
        query = select(func.count()).select_from(model.__table__).where(*where)
        return int(conn.execute(query).scalar_one())


def trades_of(engine: Engine) -> list[tuple[Any, ...]]:
    """Every trade as plain values (who, what, when): what a replay must reproduce."""
    t, a, c = Trade.__table__, Agent.__table__, Cohort.__table__  # type: ignore[attr-defined]
    query = (
        select(
            c.c.number,
            a.c.family_id,
            t.c.trade_type,
            t.c.market_id,
            t.c.side,
            t.c.amount,
            t.c.price,
            t.c.shares,
            t.c.realized_pnl,
            t.c.created_at,
        )
        .join(a, a.c.id == t.c.agent_id)
        .join(c, c.c.id == a.c.cohort_id)
        .order_by(t.c.id)
    )
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(query)]


def test_the_season_fills_every_table(season: tuple[Engine, str]) -> None:
    engine, _ = season
    assert count(engine, Cohort) == WEEKS
    # Eleven agents (the seven LLM families on the simulated model server, cash, favourite,
    # random, oracle); cohort 1 decides in weeks 1 and 2. A persona's malformed answers may end
    # as a fallback HOLD; no decision fails.
    assert count(engine, Decision) == (2 + 1) * 11
    assert count(engine, Decision, Decision.status.not_in(("ok", "fallback_hold"))) == 0  # type: ignore[attr-defined]
    assert count(engine, Trade, Trade.trade_type == "BUY") > 10
    assert count(engine, Trade, Trade.trade_type.in_(("SETTLE", "REFUND"))) > 0  # type: ignore[attr-defined]
    assert count(engine, Market, Market.status == "resolved") > 0
    assert count(engine, BrierScore) > 0
    assert count(engine, PortfolioSnapshot) > WEEKS * 4 * 1008 / 2
    assert count(engine, JobRun, JobRun.status != "ok") == 0


def test_snapshots_are_every_ten_simulated_minutes(season: tuple[Engine, str]) -> None:
    engine, _ = season
    s = PortfolioSnapshot.__table__  # type: ignore[attr-defined]
    with engine.connect() as conn:
        slots = list(conn.execute(select(s.c.slot).distinct().order_by(s.c.slot)).scalars())
    assert slots[0] == DEMO_START
    gaps = {later - earlier for earlier, later in pairwise(slots)}
    assert gaps == {timedelta(minutes=10)}


def test_the_oracle_beats_the_random_baseline(season: tuple[Engine, str]) -> None:
    engine, stdout = season
    board = {row.family_id: row for row in leaderboard(engine)}
    assert set(board) == {f.id for f in load_lineup(None).enabled()} | {"oracle"}
    assert board["oracle"].total_pnl > board["baseline-random"].total_pnl
    assert board["oracle"].total_pnl > 0
    assert board["baseline-cash"].total_pnl == Decimal(0)
    assert board["oracle"].resolved_bets > 0
    # The printed summary: counts and the leaderboard with the oracle on top.
    assert "cohorts: 2" in stdout and "trades:" in stdout and "markets resolved:" in stdout
    assert "served by the simulated-model-server" in stdout
    first_row = next(line for line in stdout.splitlines() if line.strip().startswith("1 "))
    assert "oracle" in first_row


def test_the_same_seed_gives_the_same_trades(season: tuple[Engine, str], tmp_path: Path) -> None:
    """A second run of the same seed writes the same trades (amounts, prices, instants).

    The world and the engine are causal, so the replay covers the season's first two days
    (the week's decisions and the first settlements) and must match every trade the full run
    made in them — the same check as a full replay, at a fraction of its time.
    """
    engine, _ = season
    url = f"sqlite:///{tmp_path / 'again.db'}"
    again = create_db_engine(url)
    until = DEMO_START + timedelta(days=2)
    try:
        init_db(again)
        # The season recorded its books (the `arena demo` default: the simulated CLOB, v1
        # included); the replay does not: recording changes no v1 trade.
        settings = load_settings(database_url=url, llm_api_key=None, record_books=False)
        run_demo(again, settings, load_lineup(None), weeks=WEEKS, seed=SEED, stop_at=until)
        replayed = trades_of(again)
        assert len(replayed) > 10
        assert replayed == [trade for trade in trades_of(engine) if trade[-1] < until]
        assert count(engine, DecisionBook, DecisionBook.status == "ok") > 100
        assert count(again, DecisionBook) == 0
    finally:
        again.dispose()


def test_a_database_with_a_season_is_refused_in_one_line(season: tuple[Engine, str]) -> None:
    engine, _ = season
    result = arena_demo(str(engine.url), "--weeks", "1")
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert "already holds 2 cohort(s)" in line and "ARENA_DATABASE_URL" in line


def test_the_demo_clock() -> None:
    ticks = list(season_ticks(DEMO_START, weeks=1, tail_weeks=1))
    runs: dict[str, int] = {}
    for tick in ticks:
        for job in tick.jobs:
            runs[job] = runs.get(job, 0) + 1
    # One week deciding, one settling; the tail ends on the first tick of week 3.
    assert runs[START_COHORT] == 1 and runs[DECIDE] == 1
    assert runs[SNAPSHOT] == 2 * 1008 + 1
    assert runs[SYNC_MARKETS] == runs[RESOLVE] == 2 * 28 + 1  # every 6 hours
    assert due_jobs(DEMO_START, deciding=True) == (START_COHORT, SYNC_MARKETS, RESOLVE, SNAPSHOT)
    assert due_jobs(DEMO_START + timedelta(minutes=5), deciding=True) == (DECIDE,)
    assert due_jobs(DEMO_START + timedelta(minutes=5), deciding=False) == ()
    assert due_jobs(DEMO_START + timedelta(weeks=1), deciding=False) == (
        SYNC_MARKETS,
        RESOLVE,
        SNAPSHOT,
    )


LLMS = """
[[family]]
id = "remote"
display_name = "Remote"
provider = "Test"
model = "test/remote"

[[family]]
id = "local"
display_name = "Local"
provider = "Test"
model = "test/local"
base_url = "http://127.0.0.1:9/v1"

[[family]]
id = "off"
display_name = "Off"
provider = "Test"
model = "test/off"
enabled = false

[[family]]
id = "baseline-cash"
display_name = "Cash"
provider = "Arena"
model = "baseline/cash"
kind = "baseline"
strategy = "cash"
"""


def test_who_plays_in_the_demo() -> None:
    """Every enabled family plays (LLM families on the simulated model server, whatever their
    configured endpoint or key), plus the oracle."""
    lineup = parse_lineup(LLMS)
    ids = [f.id for f in demo_lineup(lineup).families]
    assert ids == ["remote", "local", "baseline-cash", "oracle"]
    assert demo_lineup(lineup).families[-1] == ORACLE
