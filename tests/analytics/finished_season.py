"""The test season (`season.py`) played to its end: every traded market resolved, both cohorts
completed, their replay bundles kept by the real `bundle` job.

Why: a cohort finishes only once its decision window is over and every position has settled,
which the demo's months-long simulated markets rarely allow in a test's time. So the shared
season (retries, a fallback HOLD, a rejected leg, sells, settlements) is copied and carried on
through the real jobs: Gamma (a source of this module) then reports every traded market
closed and resolved by UMA, one of them void (0.5 / 0.5, so its positions are refunded), the
resolve job settles them and scores the BUYs, a snapshot pass after the window completes the
cohorts, and the bundle job keeps their bundles.
"""

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Integer, select
from sqlalchemy.engine import Engine

from arena.agents.baselines import BaselineInput
from arena.agents.llm import AttemptRecord, ChatResult
from arena.agents.responders import Messages
from arena.config import load_settings
from arena.engine.decisions import run_decisions
from arena.engine.jobs import BUNDLE, RESOLVE, SNAPSHOT, JobContext, run_job, slot_for
from arena.lineup import Lineup
from arena.markets.types import EndWindow, ParsedMarket
from arena.storage.db import create_db_engine, dispose_engines
from arena.storage.tables import MARKETS, TRADES
from tests.analytics.season import LLM_A, START, Season, sqlite_season, writable_copy
from tests.analytics.season import lineup as season_lineup

FINISHED_AT = START + timedelta(weeks=30)  # past the 5-week window and every market's end
SELL_AT = START + timedelta(weeks=3, minutes=5)  # cohort 1's week 4, cohort 2's week 3


class SellingResponder:
    """llm-a after the season: sells what it holds (half of the first position, the rest in
    full) and names one position it does not hold."""

    def respond(self, messages: Messages, context: BaselineInput) -> ChatResult:
        held = [p.position_id for p in context.portfolio.positions]
        sells = [
            {"position_id": pid, "percentage": 50 if i == 0 else 100} for i, pid in enumerate(held)
        ]
        answer = {
            "action": "SELL",
            "sells": [*sells, {"position_id": 999999, "percentage": 10}],
            "reasoning": "Taking profit before resolution.",
        }
        record = AttemptRecord(1, 200, "ok", 12, 900, 40, 0.0011, "test/llm-a", "scripted")
        return ChatResult(json.dumps(answer), "stop", [record])


def sell_out(engine: Engine, url: str) -> None:
    """One decision run in which only llm-a answers, selling (`SellingResponder`)."""
    players = season_lineup("http://127.0.0.1:9/v1")  # never called: the responder is local
    seller = SellingResponder()
    result = run_decisions(
        engine,
        SELL_AT,
        Lineup(families=[f for f in players.families if f.id == LLM_A]),
        load_settings(database_url=url).methodology,
        lambda family: seller if family.id == LLM_A else None,
        owner="finish",
    )
    assert result.trades > 0, result.counts()


class ResolvedSource:
    """Gamma after the season: every market it is asked about closed and resolved by UMA.

    The winner is a fixed function of the market id; `void` is resolved as a 0.5/0.5 void.
    """

    name = "simulated"  # it answers for the season's simulated markets (a live source skips them)

    def __init__(self, engine: Engine, void: str) -> None:
        self.engine = engine
        self.void = void

    def top_markets(
        self, at: datetime, limit_total: int, ending: EndWindow | None = None
    ) -> list[ParsedMarket]:
        return []

    def get_market(self, market_id: str, at: datetime) -> ParsedMarket | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(MARKETS).where(MARKETS.c.id == market_id)).mappings().one()
        outcomes = list(row["outcomes"])
        if market_id == self.void:
            prices = [Decimal("0.5")] * len(outcomes)
        else:
            winner = int(hashlib.sha256(market_id.encode()).hexdigest(), 16) % len(outcomes)
            prices = [Decimal(1 if i == winner else 0) for i in range(len(outcomes))]
        return ParsedMarket(
            id=market_id,
            question=row["question"],
            market_type=row["market_type"],
            outcomes=outcomes,
            prices=prices,
            event_id=row["event_id"],
            end_date=row["end_date"],
            active=False,
            closed=True,
            uma_resolution_status="resolved",
            source="simulated",
        )


def finish(url: str) -> None:
    """Resolve every traded market, complete the cohorts and keep their bundles."""
    engine = create_db_engine(url)
    try:
        sell_out(engine, url)
        with engine.connect() as conn:
            traded = conn.execute(select(TRADES.c.market_id).distinct()).scalars().all()
        ctx = JobContext(
            engine,
            load_settings(database_url=url),
            Lineup(families=[]),
            ResolvedSource(engine, void=sorted(traded)[0]),
            lambda family: None,
            owner="finish",
        )
        for name, at in (
            (RESOLVE, FINISHED_AT),
            (SNAPSHOT, FINISHED_AT + timedelta(minutes=10)),
            (BUNDLE, FINISHED_AT + timedelta(minutes=45)),
        ):
            result = run_job(ctx, name, slot_for(name, at), at)
            assert result.status == "ok", (name, result.error)
    finally:
        engine.dispose()


def finished_season(base: Path) -> Season:
    """The session's finished season under `base`, built on first use (read-only for tests)."""
    folder = base / "finished-season"
    done = folder / "built"
    path = folder / "arena.db"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        built = sqlite_season(base)
        path.unlink(missing_ok=True)
        finish(writable_copy(built, path))
        done.write_text("ok")
    season = sqlite_season(base)
    return Season(f"sqlite:///{path}", FINISHED_AT, season.families, season.failed_job_at)


# Tables the migrations' triggers keep (position counts per market, job runs per status): a
# copy inserts their sources and lets the triggers count.
TRIGGER_KEPT = ("market_holdings", "job_run_counts")


def copy_database(source_url: str, target_url: str) -> None:
    """Every row of a migrated database into another migrated one (any backends), ids kept:
    the same season on SQLite and on PostgreSQL. PostgreSQL's id sequences are moved past the
    copied ids, so the target's jobs can insert after them."""
    from sqlmodel import SQLModel

    source, target = create_db_engine(source_url), create_db_engine(target_url)
    tables = [t for t in SQLModel.metadata.sorted_tables if t.name not in TRIGGER_KEPT]
    try:
        with source.connect() as read, target.begin() as write:
            for table in reversed(tables):
                write.execute(table.delete())
            for table in tables:
                rows = [dict(row) for row in read.execute(select(table)).mappings()]
                if rows:
                    write.execute(table.insert(), rows)
            if target.dialect.name == "postgresql":
                for table in tables:
                    if "id" in table.c and isinstance(table.c.id.type, Integer):
                        write.exec_driver_sql(
                            f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                            f"coalesce((SELECT max(id) FROM {table.name}), 0) + 1, false)"
                        )
    finally:
        source.dispose()
        target.dispose()


@contextmanager
def finished_copy(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A writable copy of the finished season on the backend `request.param` names
    ("sqlite" or "postgres": a database of the suite's cluster, dropped after)."""
    season = finished_season(request.getfixturevalue("tmp_path_factory").getbasetemp())
    if request.param == "sqlite":
        yield writable_copy(season, tmp_path / "finished-copy.db")
        return
    cluster = request.getfixturevalue("pg_cluster")
    url = cluster.new_database(template=request.getfixturevalue("pg_template"))
    try:
        copy_database(season.url, url)
        yield url
    finally:
        dispose_engines()
        cluster.drop_database(url)
