"""Two real `arena` processes at once on one database: no duplicate cohort, decision or trade."""

import os
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal as D
from pathlib import Path

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.config import Methodology
from arena.engine.cohorts import start_cohort
from arena.engine.market_sync import upsert_markets
from arena.lineup import parse_lineup
from arena.storage.db import session_scope
from arena.storage.models import Agent, Cohort, Decision, Trade
from tests.engine.test_decisions import MARKETS
from tests.factories import WEEK1

BASELINES = """
[[family]]
id = "baseline-favorite"
display_name = "Favourite"
provider = "Arena"
model = "baseline/favorite"
kind = "baseline"
strategy = "favorite"

[[family]]
id = "baseline-random"
display_name = "Random"
provider = "Arena"
model = "baseline/random"
kind = "baseline"
strategy = "random"

[[family]]
id = "baseline-cash"
display_name = "Cash"
provider = "Arena"
model = "baseline/cash"
kind = "baseline"
strategy = "cash"
"""


def run_together(
    db_url: str, lineup: Path, *commands: list[str]
) -> list[subprocess.CompletedProcess[str]]:
    env = {**os.environ, "ARENA_DATABASE_URL": db_url, "ARENA_LINEUP": str(lineup)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "arena", *args],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for args in commands
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def test_two_deciders_and_two_cohort_starters_at_once(
    engine: Engine, db_url: str, tmp_path: Path
) -> None:
    lineup_path = tmp_path / "lineup.toml"
    lineup_path.write_text(BASELINES)
    with session_scope(engine) as s:
        upsert_markets(s, MARKETS, WEEK1)
    start_cohort(engine, WEEK1, parse_lineup(BASELINES), Methodology())

    at = (WEEK1 + timedelta(minutes=5)).isoformat()
    week2 = (WEEK1 + timedelta(weeks=1)).isoformat()
    results = run_together(
        db_url,
        lineup_path,
        ["decide", "--at", at],
        ["decide", "--at", at],
        ["start-cohort", "--at", week2],
        ["start-cohort", "--at", week2],
    )
    for result in results:
        assert result.returncode == 0, result.stderr

    with session_scope(engine) as s:
        assert s.exec(select(func.count()).select_from(Cohort)).one() == 2
        decisions = s.exec(select(Decision)).all()
        cohort1_agents = s.exec(select(Agent).join(Cohort).where(Cohort.number == 1)).all()
        assert len(decisions) == len(cohort1_agents) == 3
        assert {d.status for d in decisions} == {"ok"}
        trades = s.exec(select(Trade)).all()
        assert trades, "the favourite baseline should have bet"
        keys = [(t.decision_id, t.leg_index) for t in trades]
        assert len(keys) == len(set(keys))
        for agent in cohort1_agents:
            spent = sum((t.amount for t in trades if t.agent_id == agent.id), D(0))
            assert agent.cash_balance == D("10000") - spent
