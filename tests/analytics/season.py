"""A small but complete simulated season, built through the real jobs, for dashboard tests.

Why: the dashboard's read models and pages must be tested on data the engine really writes —
job runs and system logs, frozen market snapshots, decisions with retried attempts, rejected
legs and a fallback HOLD, settlements and Brier rows, and a curve of portfolio snapshots — yet
`arena demo` takes minutes. This runs two cohorts over a 60-market simulated world with 3-hourly
snapshots (10-minute ones in the last hours), in a few seconds.

The LLM families are served by the loopback OpenAI-compatible server of the engine tests:
``llm-a`` first fails with a 500, then answers malformed prose, then a BET with one good leg
and one leg under the $50 minimum; ``llm-b`` always answers prose (a fallback HOLD). Scripted,
not the simulated model server's personas: the read-model, dashboard and browser tests assert
exactly this attempt sequence, rejected leg and fallback HOLD, which personas give only by
chance.
"""

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Connection, Engine

from arena.agents.responders import default_responders
from arena.app.demo import ORACLE
from arena.config import load_settings
from arena.engine.analyses import store_analyses
from arena.engine.jobs import (
    DECIDE,
    RESOLVE,
    SNAPSHOT,
    START_COHORT,
    SYNC_MARKETS,
    JobContext,
    run_job,
    slot_for,
)
from arena.lineup import FamilySpec, Lineup
from arena.markets.types import EndWindow, ParsedMarket
from arena.sim.world import SimulatedWorld
from arena.storage.db import create_db_engine, get_engine
from arena.storage.migrate import init_db
from arena.storage.seed import sync_families
from tests.agents.llm_server import Reply
from tests.engine.chat_server import answer, serve_models

START = datetime(2026, 1, 4, tzinfo=UTC)  # a Sunday: cohort 1's week start
WEEKS = 2
DAYS = 17  # two decision weeks and three days of settling
SEED = 11
LLM_A = "llm-a"
LLM_B = "llm-b"
MALFORMED = "I would buy YES on the first market, it looks cheap."
FAIL_AFTER = timedelta(days=3, minutes=10)  # the sync-markets run that fails (an outage)
FAMILY_IDS = (LLM_A, LLM_B, "baseline-cash", "baseline-favorite", "baseline-random", "oracle")


@dataclass(frozen=True)
class Season:
    """What the tests need to know about the built season."""

    url: str
    end: datetime
    families: tuple[str, ...]
    failed_job_at: datetime


class FlakySource:
    """The simulated world, except that one instant's top-markets call fails (a job failure)."""

    name = "simulated"

    def __init__(self, world: SimulatedWorld, fail_at: datetime) -> None:
        self.world = world
        self.fail_at = fail_at

    def top_markets(
        self, at: datetime, limit_total: int, ending: EndWindow | None = None
    ) -> list[ParsedMarket]:
        if at == self.fail_at:
            raise ConnectionError("simulated outage: Gamma did not answer")
        return self.world.top_markets(at, limit_total, ending)

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None:
        return self.world.get_market(market_id, at)


def lineup(llm_url: str) -> Lineup:
    """Three baselines, the oracle and two LLM families on the loopback endpoint."""
    baselines = [
        FamilySpec(
            id=f"baseline-{name}",
            display_name=f"Baseline: {name}",
            provider="Forecaster Arena",
            model=f"baseline/{name}",
            kind="baseline",
            strategy=name,
        )
        for name in ("cash", "favorite", "random")
    ]
    llms = [
        FamilySpec(
            id=fid,
            display_name=name,
            provider="Test",
            model=f"test/{fid}",
            base_url=llm_url,
        )
        for fid, name in ((LLM_A, "Model A"), (LLM_B, "Model B"))
    ]
    return Lineup(families=[*llms, *baselines, ORACLE])


def _bet(market: ParsedMarket, amount: float) -> dict[str, Any]:
    side = "YES" if market.market_type == "binary" else market.outcomes[0]
    return {"market_id": market.id, "side": side, "amount": amount}


def script_models(server: Any, world: SimulatedWorld) -> None:
    """llm-a: transport error, malformed, then a BET with a rejected leg; llm-b: prose."""
    top = world.top_markets(START, 60)
    later = world.top_markets(START + timedelta(weeks=1), 60)
    good = json.dumps(
        {
            "action": "BET",
            "bets": [_bet(top[0], 400), _bet(top[1], 10), _bet(later[2], 250)],
            "reasoning": "Two cheap favourites; the <b>second</b> is a token bet.",
        }
    )
    server.script_model(
        f"test/{LLM_A}",
        Reply(500, {"error": {"message": "upstream overloaded"}}),
        answer(MALFORMED, f"test/{LLM_A}"),
        answer(good, f"test/{LLM_A}", cost=0.0042),
    )
    server.script_model(f"test/{LLM_B}", answer(MALFORMED, f"test/{LLM_B}", cost=0.002))


def schedule(end: datetime) -> list[tuple[datetime, tuple[str, ...]]]:
    """The instants the jobs run at: weekly cohorts and decisions, 8-hourly sync and
    resolve, 3-hourly snapshots, 10-minute snapshots over the last two hours."""
    ticks: dict[datetime, list[str]] = {}
    for week in range(WEEKS):
        sunday = START + timedelta(weeks=week)
        ticks.setdefault(sunday, []).extend([START_COHORT, SYNC_MARKETS])
        ticks.setdefault(sunday + timedelta(minutes=5), []).append(DECIDE)
    at = START + timedelta(minutes=10)
    while at <= end:
        jobs = ticks.setdefault(at, [])
        if (at - START) % timedelta(hours=8) == timedelta(minutes=10):
            jobs += [SYNC_MARKETS, RESOLVE]
        if (at - START) % timedelta(hours=3) == timedelta(minutes=10) or end - at < timedelta(
            hours=2
        ):
            jobs.append(SNAPSHOT)
        at += timedelta(minutes=10)
    return sorted((at, tuple(jobs)) for at, jobs in ticks.items() if jobs)


def build_season(url: str) -> Season:
    """Migrate `url` and play the season into it through `run_job`."""
    engine = create_db_engine(url)
    end = START + timedelta(days=DAYS)
    fail_at = START + FAIL_AFTER
    try:
        init_db(engine)
        world = SimulatedWorld(SEED, START, n_initial=60, new_per_day=3, days=DAYS + 1)
        with serve_models() as server:
            script_models(server, world)
            players = lineup(server.url)
            sync_families(engine, players)
            settings = load_settings(database_url=url, llm_base_url=server.url)
            responders, close = default_responders(
                settings, SEED, probability=world.hidden_probability, sleep=lambda _s: None
            )
            ctx = JobContext(
                engine, settings, players, FlakySource(world, fail_at), responders, owner="season"
            )
            try:
                _play(ctx, end)
            finally:
                close()
    finally:
        engine.dispose()
    assert tuple(f.id for f in players.families) == FAMILY_IDS
    return Season(url, end, FAMILY_IDS, fail_at)


def _play(ctx: JobContext, end: datetime) -> None:
    for at, jobs in schedule(end):
        for name in jobs:
            run_job(ctx, name, slot_for(name, at), at)


def season_engine(url: str) -> Engine:
    """A read-only engine on a built season, as the dashboard opens it."""
    return create_db_engine(url, role="reader")


def sqlite_season(base: Path) -> Season:
    """The session's SQLite season under `base` (pytest's basetemp), built on first use.

    AppTest, browser and read-model tests share it read-only, so it is built once per run.
    """
    folder = base / "season"
    done = folder / "built"
    url = f"sqlite:///{folder / 'arena.db'}"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        for leftover in ("arena.db", "arena.db-wal", "arena.db-shm"):  # a crashed build
            (folder / leftover).unlink(missing_ok=True)
        built = build_season(url)
        done.write_text(built.end.isoformat())
    end = datetime.fromisoformat(done.read_text())
    return Season(url, end, FAMILY_IDS, START + FAIL_AFTER)


def writable_copy(built: Season, path: Path) -> str:
    """A private copy of the shared season at `path` (SQLite's backup API: the WAL folded
    in) for a test that writes, such as a migration taken down and up; returns its URL."""
    source = sqlite3.connect(built.url.removeprefix("sqlite:///"))
    try:
        with sqlite3.connect(path) as target:
            source.backup(target)
    finally:
        source.close()
    return f"sqlite:///{path}"


def analysed_copy(
    source_url: str, path: Path, at: datetime, change: Callable[[Connection], None] | None = None
) -> str:
    """A copy of the SQLite database at `source_url` at `path` (SQLite's backup API: the WAL
    folded in), `change(conn)` applied to it if given, then the hourly `analyses` job's
    frames stored as of `at`, as a scheduler's database has them; its URL."""
    source = sqlite3.connect(source_url.removeprefix("sqlite:///"))
    try:
        with sqlite3.connect(path) as target:
            source.backup(target)
    finally:
        source.close()
    url = f"sqlite:///{path}"
    engine = get_engine(url)
    try:
        if change is not None:
            with engine.begin() as conn:
                change(conn)
        store_analyses(engine, at)
    finally:
        engine.dispose()
    return url


if __name__ == "__main__":  # python -m tests.analytics.season PATH: build one to look at
    import sys
    import time

    started = time.monotonic()
    built = build_season(f"sqlite:///{sys.argv[1]}")
    print(f"built {built.url} in {time.monotonic() - started:.1f}s")
