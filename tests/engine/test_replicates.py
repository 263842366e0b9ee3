"""Replicates, through the real engine on SQLite and PostgreSQL: `ARENA_REPLICATES=N`
starts N labelled agents per family, stamped as an extension; the database refuses a second
agent with the same replicate number; every replicate decides under its own claim, with its
own decision, trades and positions (none shared, even when the answers are identical); an LLM
replicate's requests name their sampling stream (`user`) and a v1 request does not; the random
baseline draws per replicate. The leaderboard pools replicates and shows their spread."""

from datetime import timedelta
from decimal import Decimal as D
from typing import Any

import pandas as pd
import pytest
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from arena.agents.baselines import BaselineInput, random_strategy
from arena.agents.prompts import PortfolioView, PromptMarket
from arena.analytics.replay.bundle import build_bundle
from arena.analytics.replay.format import read_jsonl
from arena.analytics.replay.verify import verify_bundle
from arena.analytics.stats import leaderboard as lb
from arena.config import Methodology, cohort_stamp, load_settings, stamped_replicates
from arena.engine.cohorts import start_cohort
from arena.engine.snapshots import take_snapshots
from arena.lineup import parse_lineup
from arena.storage.db import session_scope
from arena.storage.models import Agent, Cohort, Decision, Position, Trade
from tests.engine.chat_server import answer, serve_models
from tests.engine.test_stated_probability import (
    LINEUP,
    NO_WON,
    RUN,
    YES_WON,
    bets,
    decide,
    open_markets,
)
from tests.factories import WEEK1

# Both replicates of m-a get the same answer: identical portfolios, still separate rows.
A_BET = bets({"market_id": NO_WON, "side": "YES", "amount": 500})
B_BET = bets({"market_id": YES_WON, "side": "YES", "amount": 300})


def agents_of(engine: Engine) -> list[Agent]:
    with session_scope(engine) as s:
        rows = s.exec(select(Agent).order_by(col(Agent.family_id), col(Agent.replicate))).all()
        s.expunge_all()
        return list(rows)


def test_replicates_are_started_labelled_and_stamped(engine: Engine) -> None:
    lineup = parse_lineup(LINEUP)
    result = start_cohort(engine, WEEK1, lineup, Methodology(), replicates=3)
    assert (result.created, result.agents) == (True, 9)
    again = start_cohort(engine, WEEK1 + timedelta(hours=1), lineup, Methodology(), replicates=3)
    assert (again.created, again.agents) == (False, 9)  # idempotent: no fourth replicate
    agents = agents_of(engine)
    assert [(a.family_id, a.replicate, a.display_name) for a in agents if a.family_id == "m-a"] == [
        ("m-a", 1, "Model A · r1"),
        ("m-a", 2, "Model A · r2"),
        ("m-a", 3, "Model A · r3"),
    ]
    assert {a.starting_balance for a in agents} == {D(10000)}
    with session_scope(engine) as s:
        stamp = s.exec(select(Cohort)).one().constants
    assert stamp["extensions"] == ["replicates"] and stamp["replicates"] == 3
    assert stamp["is_default"] is False and stamped_replicates(stamp) == 3
    # with the stated-probability extension too, both are listed
    both = cohort_stamp(Methodology(), ["stated_probability"], 2)
    assert both["extensions"] == ["replicates", "stated_probability"]


def test_one_replicate_is_v1_exactly(engine: Engine) -> None:
    start_cohort(engine, WEEK1, parse_lineup(LINEUP), Methodology(), replicates=1)
    with session_scope(engine) as s:
        assert s.exec(select(Cohort)).one().constants == Methodology().stamp()
    agents = agents_of(engine)
    assert [(a.display_name, a.replicate) for a in agents] == [
        ("Cash", 1),
        ("Model A", 1),
        ("Model B", 1),
    ]
    assert cohort_stamp(Methodology(), (), 1) == Methodology().stamp()
    assert load_settings().replicates == 1


def test_the_database_refuses_a_second_agent_with_the_same_replicate(engine: Engine) -> None:
    start_cohort(engine, WEEK1, parse_lineup(LINEUP), Methodology(), replicates=2)
    agent = next(a for a in agents_of(engine) if a.family_id == "m-a")
    twin = Agent(
        cohort_id=agent.cohort_id,
        family_id="m-a",
        replicate=2,
        model_id="test/a",
        display_name="Model A · r2 again",
        starting_balance=D(10000),
        cash_balance=D(10000),
    )
    with pytest.raises(IntegrityError), session_scope(engine) as s:
        s.add(twin)
        s.flush()


def decide_twice(engine: Engine, replicates: int) -> list[dict[str, Any]]:
    """Start the cohort with `replicates` per family and run its decisions twice (the second
    run must find every decision done); the request bodies the model server got."""
    lineup = parse_lineup(LINEUP)
    open_markets(engine)
    start_cohort(engine, WEEK1, lineup, Methodology(), replicates=replicates)
    with serve_models() as server:
        server.script_model("test/a", answer(A_BET, "test/a"))
        server.script_model("test/b", answer(B_BET, "test/b"))
        decide(engine, server, lineup)
        decide(engine, server, lineup)
        return [r.json for r in server.requests if isinstance(r.json, dict)]


def test_every_replicate_decides_alone_and_shares_nothing(engine: Engine) -> None:
    # one request per LLM agent, none on the second run: claims are per agent, not per family
    users = sorted(body["user"] for body in decide_twice(engine, replicates=2))
    assert users == ["arena:m-a:r1", "arena:m-a:r2", "arena:m-b:r1", "arena:m-b:r2"]
    agents = {int(a.id or 0): a for a in agents_of(engine)}
    with session_scope(engine) as s:
        decisions = s.exec(select(Decision)).all()
        trades = s.exec(select(Trade)).all()
        positions = s.exec(select(Position)).all()
    assert sorted(d.agent_id for d in decisions) == sorted(agents)  # one each, none shared
    assert all(d.status == "ok" for d in decisions)
    per_agent = {a: [t for t in trades if t.agent_id == a] for a in agents}
    for agent_id, agent in agents.items():
        mine = per_agent[agent_id]
        expected = {"m-a": [(NO_WON, D(500))], "m-b": [(YES_WON, D(300))], "baseline-cash": []}
        assert [(t.market_id, t.amount) for t in mine] == expected[agent.family_id]
        assert {t.decision_id for t in mine} <= {d.id for d in decisions if d.agent_id == agent_id}
    held = [(p.agent_id, p.market_id, p.side) for p in positions]
    assert len(held) == len(set(held)) == 4  # two replicates × two families, one each
    assert len({p.id for p in positions}) == 4
    with session_scope(engine) as s:
        cash = {a.id: a.cash_balance for a in s.exec(select(Agent))}
    assert {cash[i] for i, a in agents.items() if a.family_id == "m-a"} == {D(9500)}


def test_a_v1_request_names_no_stream(engine: Engine) -> None:
    bodies = decide_twice(engine, replicates=1)
    assert len(bodies) == 2 and all("user" not in body for body in bodies)


def test_the_random_baseline_draws_per_replicate() -> None:
    markets = [
        PromptMarket(
            f"m{i}", f"Q{i}?", None, None, "binary", ["Yes", "No"], [D("0.5")] * 2, 1e3, None
        )
        for i in range(30)
    ]
    portfolio = PortfolioView(cash=D(10000), max_bet=D(2500), min_bet=D(50), positions=[])
    answers = {
        replicate: random_strategy(
            BaselineInput(RUN, 1, 1, portfolio, markets, replicate=replicate), seed=11
        )
        for replicate in (None, 1, 2, 3)
    }
    assert len(set(answers.values())) == 4
    v1 = random_strategy(BaselineInput(RUN, 1, 1, portfolio, markets), seed=11)
    assert answers[None] == v1


def test_the_leaderboard_pools_replicates_and_shows_their_spread(engine: Engine) -> None:
    lineup = parse_lineup(LINEUP)
    start_cohort(engine, WEEK1, lineup, Methodology(), replicates=2)
    # No positions: an agent's P/L is its cash − its start.
    cash = {("m-a", 1): "11000", ("m-a", 2): "9500", ("m-b", 1): "10200", ("m-b", 2): "10200"}
    with session_scope(engine) as s:
        for agent in s.exec(select(Agent)):
            agent.cash_balance = D(cash.get((agent.family_id, agent.replicate), "10000"))
            s.add(agent)
    frame = lb.leaderboard(engine, cohort=1, replicates=200, null_seeds=0).set_index("family_id")
    a, b, hold = frame.loc["m-a"], frame.loc["m-b"], frame.loc["baseline-cash"]
    assert (a["cohorts"], a["capital"], a["agent_replicates"]) == (1, 20000.0, 2)
    assert a["total_pnl"] == pytest.approx(500.0) and a["return_pct"] == pytest.approx(2.5)
    assert (a["replicate_return_low"], a["replicate_return_high"]) == pytest.approx((-5.0, 10.0))
    assert b["return_pct"] == pytest.approx(2.0)
    assert (b["replicate_return_low"], b["replicate_return_high"]) == pytest.approx((2.0, 2.0))
    assert (hold["replicate_return_low"], hold["replicate_return_high"]) == (0.0, 0.0)
    assert list(frame.index) == ["m-a", "m-b", "baseline-cash"]


def test_replicate_spread_pools_a_replicate_over_cohorts() -> None:
    books = pd.DataFrame(
        {
            "family_id": ["f", "f", "f", "f", "g", "g"],
            "cohort_id": [1, 1, 2, 2, 1, 2],
            "replicate": [1, 2, 1, 2, 1, 1],
            "capital": [10000.0] * 6,
            "pnl": [1000.0, -500.0, -200.0, 300.0, 50.0, 70.0],
        }
    )
    spread = lb.replicate_spread(books)
    # replicate 1: (1000 − 200) / 20000 = 4%; replicate 2: (−500 + 300) / 20000 = −1%
    assert spread.loc["f"].tolist() == pytest.approx([2, -1.0, 4.0])
    assert spread.loc["g", "agent_replicates"] == 1
    assert spread.loc["g", ["low", "high"]].isna().all()  # one agent per cohort: no spread


def test_a_replicated_cohort_bundles_and_verifies(engine: Engine) -> None:
    """Replay bundles carry each agent's replicate and `arena verify` pools them as
    the leaderboard does; its point estimates must match the published ones."""
    decide_twice(engine, replicates=2)
    take_snapshots(engine, RUN + timedelta(minutes=5))
    built = build_bundle(engine, 1, provisional=True)
    report = verify_bundle(built.bundle)
    assert report.ok, [(c.name, c.mismatches) for c in report.checks if not c.ok]
    board = {c.name: c.compared for c in report.checks}["leaderboard point estimates"]
    assert board > 0
    lineup_rows = read_jsonl(built.bundle.files["lineup.jsonl"])
    assert sorted((r["family_id"], r["replicate"]) for r in lineup_rows) == [
        (f, k) for f in ("baseline-cash", "m-a", "m-b") for k in (1, 2)
    ]
