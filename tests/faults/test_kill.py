"""SIGKILL in the middle of the engine's work: on restart the run completes, nothing doubles.

Each test runs the real `arena` CLI in a child process that kills itself (SIGKILL) at a
precise point (tests/faults/killer.py), then runs the command again normally. The LLM family
is answered by the simulated model server (`arena.sim.model_server`): `test/a` is its
generalist persona, and with no world its beliefs start at the market prices; seeded so that it
bets on both runs' prompts.
"""

import os
import signal
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal as D
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.parsing import parse_decision
from arena.config import Methodology
from arena.engine.cohorts import start_cohort
from arena.engine.market_sync import upsert_markets
from arena.lineup import parse_lineup
from arena.markets.gamma import parse_market
from arena.sim.model_server import LoggedRequest, ModelServer
from arena.storage.db import session_scope
from arena.storage.models import (
    Agent,
    Decision,
    DecisionAttempt,
    Market,
    PortfolioSnapshot,
    Position,
    Trade,
)
from tests.engine.sources import fixture_markets, reopened
from tests.engine.test_decisions import MARKETS
from tests.factories import WEEK1, new_cohort_agents, trade_into
from tests.faults.invariants import assert_books_balance, assert_no_duplicates
from tests.markets.gamma_server import Reply, serve

ROOT = Path(__file__).resolve().parents[2]
LINEUP = """
[[family]]
id = "m-a"
display_name = "Model A"
provider = "Test"
model = "test/a"

[[family]]
id = "baseline-favorite"
display_name = "Favourite"
provider = "Arena"
model = "baseline/favorite"
kind = "baseline"
strategy = "favorite"
"""
SEED = 3  # the generalist persona bets, cleanly and without a fault, at every instant used


def arena(
    env: dict[str, str], *args: str, kill_at: str | None = None
) -> subprocess.CompletedProcess[str]:
    command = (
        [sys.executable, "-m", "tests.faults.killer", kill_at, "--", *args]
        if kill_at
        else [sys.executable, "-m", "arena", *args]
    )
    return subprocess.run(
        command, env={**os.environ, **env}, cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def model_a_decision(engine: Engine) -> tuple[Decision, list[DecisionAttempt]]:
    """The LLM family's decision and its attempts, in order."""
    with session_scope(engine) as s:
        decision = s.exec(
            select(Decision)
            .join(Agent, col(Agent.id) == Decision.agent_id)
            .where(Agent.family_id == "m-a")
        ).one()
        attempts = s.exec(
            select(DecisionAttempt)
            .where(DecisionAttempt.decision_id == decision.id)
            .order_by(col(DecisionAttempt.attempt_no))
        ).all()
        return decision, list(attempts)


def assert_paid_for_every_answer_and_traded_the_last(
    engine: Engine, requests: list[LoggedRequest]
) -> None:
    """One stored attempt per request the server answered (the crashed run's kept and counted),
    and trades for the legs of the last answer only, once."""
    decision, attempts = model_a_decision(engine)
    assert [(r.model, r.status) for r in requests] == [("test/a", 200)] * 2
    assert [a.outcome for a in attempts] == ["valid", "valid"]
    assert all(a.tokens_in > 0 for a in attempts)
    assert decision.tokens_in == sum(a.tokens_in for a in attempts)  # both answers paid for
    assert decision.raw_response == attempts[-1].raw_response
    answered = parse_decision(decision.raw_response or "").ok
    assert answered is not None and answered.action == "BET"
    assert len(decision.legs) == len(answered.bets)
    executed = [
        (leg["index"], leg["market_id"], leg["side"], D(leg["amount"]))
        for leg in decision.legs
        if leg["executed"]
    ]
    with session_scope(engine) as s:
        trades = s.exec(
            select(Trade).where(Trade.decision_id == decision.id).order_by(col(Trade.id))
        ).all()
        assert executed, "the persona's answer traded nothing: the test would be vacuous"
        assert [(t.leg_index, t.market_id, t.side, t.amount) for t in trades] == executed


def test_killed_between_the_answer_and_its_trades(
    engine: Engine, db_url: str, tmp_path: Path
) -> None:
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(LINEUP)
    with session_scope(engine) as s:
        upsert_markets(s, MARKETS, WEEK1)
    start_cohort(engine, WEEK1, parse_lineup(LINEUP), Methodology())
    at = WEEK1 + timedelta(minutes=5)
    with ModelServer(seed=SEED, latency_scale=0) as llm:
        env = {
            "ARENA_DATABASE_URL": db_url,
            "ARENA_LINEUP": str(lineup),
            "OPENROUTER_API_KEY": "sk-test",
            "ARENA_LLM_BASE_URL": llm.base_url,
        }

        crashed = arena(env, "decide", "--at", at.isoformat(), kill_at="before_trades")
        assert crashed.returncode == -signal.SIGKILL
        with session_scope(engine) as s:
            (decision,) = s.exec(select(Decision)).all()  # the baseline never got its turn
            assert decision.status == "in_progress"
            assert s.exec(select(Trade)).all() == []
            (kept,) = s.exec(select(DecisionAttempt)).all()  # the answer was kept
            crashed_answer = parse_decision(kept.raw_response or "").ok
        assert crashed_answer is not None and crashed_answer.action == "BET"  # trades were lost

        soon = arena(env, "decide", "--at", (at + timedelta(minutes=10)).isoformat())
        assert soon.returncode == 0, soon.stderr  # the fresh claims are respected…
        assert "slot in progress in another run" in soon.stdout  # (the hour's job_runs claim)
        assert len(llm.log) == 1  # (the model was not asked again)
        with session_scope(engine) as s:  # decide trades on a universe synced within the hour
            upsert_markets(s, MARKETS, at + timedelta(minutes=70))
        later = arena(env, "decide", "--at", (at + timedelta(minutes=70)).isoformat())
        assert later.returncode == 0, later.stderr  # …and taken over once stale (next hour)
        requests = list(llm.log)
    with session_scope(engine) as s:
        decisions = s.exec(select(Decision)).all()
        assert sorted(d.status for d in decisions) == ["ok", "ok"]
    assert_paid_for_every_answer_and_traded_the_last(engine, requests)
    assert_no_duplicates(engine)
    assert_books_balance(engine)


def test_killed_in_the_middle_of_a_settlement(engine: Engine, db_url: str) -> None:
    raw = fixture_markets()
    with session_scope(engine) as s:
        upsert_markets(s, [parse_market({**reopened(raw["842093"]), "closed": True})], WEEK1)
    a, b = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    trade_into(engine, a, "842093", "YES", "500", "0.4", WEEK1)
    trade_into(engine, b, "842093", "NO", "1000", "0.6", WEEK1)
    at = (WEEK1 + timedelta(days=20)).isoformat()
    with serve() as gamma:
        gamma.script("/markets/842093", Reply(body=raw["842093"]))
        env = {"ARENA_DATABASE_URL": db_url, "ARENA_GAMMA_URL": gamma.url}
        crashed = arena(env, "resolve", "--at", at, kill_at="mid_settlement")
        assert crashed.returncode == -signal.SIGKILL
        with session_scope(engine) as s:
            assert {p.status for p in s.exec(select(Position))} == {"open"}
            assert s.exec(select(Trade).where(Trade.trade_type == "SETTLE")).all() == []
            market = s.get(Market, "842093")
            assert market is not None and market.status == "closed"
        same = arena(env, "resolve", "--at", at)  # the dead run's claim holds its hour
        assert same.returncode == 0 and "slot in progress in another run" in same.stdout
        next_hour = (WEEK1 + timedelta(days=20, hours=1)).isoformat()
        again = arena(env, "resolve", "--at", next_hour)
        assert again.returncode == 0, again.stderr
        twice = arena(env, "resolve", "--at", (WEEK1 + timedelta(days=20, hours=2)).isoformat())
        assert twice.returncode == 0 and "0 resolved" in twice.stdout
    with session_scope(engine) as s:
        assert sorted(p.status for p in s.exec(select(Position))) == ["lost", "won"]
    assert_no_duplicates(engine)
    assert_books_balance(engine)


def test_killed_in_the_middle_of_a_snapshot(engine: Engine, db_url: str) -> None:
    """Marks were already updated in the transaction when the process died: all rolled back."""
    with session_scope(engine) as s:
        upsert_markets(s, MARKETS, WEEK1)
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    trade_into(engine, agent, "100", "YES", "500", "0.5", WEEK1)  # market price is 0.40 now
    at = (WEEK1 + timedelta(minutes=20)).isoformat()
    env = {"ARENA_DATABASE_URL": db_url}
    crashed = arena(env, "snapshot", "--at", at, kill_at="mid_snapshot")
    assert crashed.returncode == -signal.SIGKILL
    with session_scope(engine) as s:
        assert s.exec(select(PortfolioSnapshot)).all() == []
        (position,) = s.exec(select(Position)).all()
        assert position.mark_price == D("0.5")  # the fill's: the 0.40 mark died with the pass
    same = arena(env, "snapshot", "--at", at)  # the dead run's claim holds its slot
    assert same.returncode == 0 and "slot in progress in another run" in same.stdout
    for _ in range(2):  # the next slot: written once
        done = arena(env, "snapshot", "--at", (WEEK1 + timedelta(minutes=30)).isoformat())
        assert done.returncode == 0, done.stderr
    with session_scope(engine) as s:
        (row,) = s.exec(select(PortfolioSnapshot)).all()
        assert row.total_value == D("9900")  # 9500 cash + 1000 shares × 0.40
    assert_no_duplicates(engine)
    assert_books_balance(engine)


def test_the_scheduler_killed_mid_decision_run_then_restarted(
    engine: Engine, db_url: str, tmp_path: Path
) -> None:
    """`scheduler.py --catch-up` dies between an answer and its trades; the next catch-up an
    hour later (a new hourly decide slot, the decision claim now stale) completes the run."""
    from tests.test_jobs import gamma_market

    lineup = tmp_path / "lineup.toml"
    lineup.write_text(LINEUP)
    with session_scope(engine) as s:
        upsert_markets(s, MARKETS, WEEK1)
    sunday = WEEK1 + timedelta(minutes=5)
    with ModelServer(seed=SEED, latency_scale=0) as llm, serve() as gamma:
        gamma.script("/markets/keyset", Reply(body={"markets": [gamma_market(m) for m in MARKETS]}))
        env = {
            "ARENA_DATABASE_URL": db_url,
            "ARENA_LINEUP": str(lineup),
            "OPENROUTER_API_KEY": "sk-test",
            "ARENA_LLM_BASE_URL": llm.base_url,
            "ARENA_GAMMA_URL": gamma.url,
        }
        crashed = arena(
            env, "scheduler.py", "--catch-up", "--at", sunday.isoformat(), kill_at="before_trades"
        )
        assert crashed.returncode == -signal.SIGKILL
        with session_scope(engine) as s:
            assert [d.status for d in s.exec(select(Decision))] == ["in_progress"]
            assert s.exec(select(Trade)).all() == []
        later = sunday + timedelta(minutes=70)
        restarted = subprocess.run(
            [sys.executable, "scheduler.py", "--catch-up", "--at", later.isoformat()],
            env={**os.environ, **env},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert restarted.returncode == 0, restarted.stderr
        requests = list(llm.log)
    with session_scope(engine) as s:
        assert sorted(d.status for d in s.exec(select(Decision))) == ["ok", "ok"]
    assert_paid_for_every_answer_and_traded_the_last(engine, requests)
    assert_no_duplicates(engine)
    assert_books_balance(engine)
