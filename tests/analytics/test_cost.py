"""The cost-aware ranking: spend per decision and per resolved bet, return and skill per
dollar with the statistic's interval scaled by the spend, the Pareto front of skill against
cost per decision, baselines as $0 reference rows; the spend equals the stored per-attempt
cost, and the leaderboard it is composed from stays exactly as it was."""

import math
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import col

from arena.analytics.stats import leaderboard as lb
from arena.analytics.stats.cost import COST_COLUMNS, cost_frame, cost_ranking, pareto_front
from arena.storage.db import create_db_engine, session_scope
from arena.storage.models import Agent, Cohort, Decision, DecisionAttempt
from arena.storage.tables import AGENTS, COHORTS, DECISION_ATTEMPTS, DECISIONS
from tests.analytics import build_book
from tests.analytics.season import LLM_A, LLM_B, sqlite_season

# --------------------------------------------------------------------------------------------
# The Pareto rule


def front(cost: list[float], skill: list[float], eligible: list[bool] | None = None) -> list[bool]:
    allowed = np.ones(len(cost), dtype=bool) if eligible is None else np.array(eligible)
    return pareto_front(np.array(cost), np.array(skill), eligible=allowed).tolist()


def test_a_dominated_family_is_off_the_front() -> None:
    # C costs more than A and is less skilled: dominated. B buys better skill at a price.
    assert front([1.0, 2.0, 3.0], [-0.01, -0.05, 0.02]) == [True, True, False]
    # as cheap and better, or as good and cheaper: still dominated
    assert front([1.0, 1.0], [-0.02, -0.03]) == [False, True]
    assert front([1.0, 2.0], [-0.03, -0.03]) == [True, False]


def test_families_equal_on_both_share_the_front() -> None:
    assert front([1.0, 1.0, 2.0], [-0.02, -0.02, 0.0]) == [True, True, False]


def test_zero_cost_baselines_are_never_on_the_front_and_dominate_nothing() -> None:
    # The baseline (free, best skill) would dominate both families were it eligible.
    got = front([0.0, 1.0, 2.0], [-0.5, -0.01, -0.02], eligible=[False, True, True])
    assert got == [False, True, True]


def test_a_family_without_a_skill_or_a_cost_is_off_the_front() -> None:
    nan = math.nan
    assert front([1.0, nan, 2.0], [nan, -0.5, -0.01]) == [False, False, True]
    assert front([], []) == []


# --------------------------------------------------------------------------------------------
# Composed from a leaderboard frame, by hand


def board_frame() -> pd.DataFrame:
    """A leaderboard frame's columns the cost frame reads, best return first."""
    nan = math.nan
    return pd.DataFrame(
        {
            "family_id": ["dear", "base", "cheap", "idle"],
            "display_name": ["Dear", "Baseline", "Cheap", "Idle"],
            "kind": ["llm", "baseline", "llm", "llm"],
            "decisions": [10, 10, 10, 0],
            "resolved_bets": [40, 30, 20, 0],
            "api_cost_usd": [2.0, 0.0, 1.0, 0.0],
            "return_pct": [4.0, 1.0, -2.0, 0.0],
            "return_ci_low": [1.0, 0.0, -5.0, nan],
            "return_ci_high": [8.0, 2.0, 1.0, nan],
            "skill_vs_market": [-0.05, -0.2, -0.02, nan],
            "skill_vs_market_ci_low": [-0.08, -0.3, -0.06, nan],
            "skill_vs_market_ci_high": [-0.01, -0.1, 0.02, nan],
            "too_early": [False, False, True, True],
        }
    )


def test_cost_columns_by_hand() -> None:
    board = board_frame()
    kept = board.copy(deep=True)

    frame = cost_frame(board)

    pd.testing.assert_frame_equal(board, kept)  # the leaderboard is read, never changed
    assert list(frame.columns) == list(COST_COLUMNS)
    # paying families cheapest per decision first, then the rest in the board's order
    assert list(frame["family_id"]) == ["cheap", "dear", "base", "idle"]
    rows = frame.set_index("family_id")
    cheap, dear, base, idle = (rows.loc[f] for f in ("cheap", "dear", "base", "idle"))
    assert (cheap["cost_per_decision"], dear["cost_per_decision"]) == (0.1, 0.2)
    assert (cheap["cost_per_resolved_bet"], dear["cost_per_resolved_bet"]) == (0.05, 0.05)
    # return in points per dollar: 4 / 2, its interval [1, 8] / 2
    assert (dear["return_per_dollar"], dear["return_per_dollar_ci_low"]) == (2.0, 0.5)
    assert dear["return_per_dollar_ci_high"] == 4.0
    assert cheap["return_per_dollar"] == -2.0
    assert dear["skill_per_dollar"] == pytest.approx(-0.025)
    assert dear["skill_per_dollar_ci_low"] == pytest.approx(-0.04)
    assert dear["skill_per_dollar_ci_high"] == pytest.approx(-0.005)
    assert cheap["skill_per_dollar_ci_high"] == pytest.approx(0.02)
    # cheap is cheaper, dear more skilled: both on the front
    assert bool(cheap["pareto"]) and bool(dear["pareto"])
    # the baseline spends nothing: $0 per decision, per-dollar figures undefined, off the front
    assert (base["api_cost_usd"], base["cost_per_decision"]) == (0.0, 0.0)
    per_dollar = [c for c in COST_COLUMNS if "per_dollar" in c]
    assert all(math.isnan(base[c]) for c in per_dollar)
    assert not base["paid"] and not base["pareto"]
    # a family that has not decided yet: no cost per decision, nothing per dollar
    assert math.isnan(idle["cost_per_decision"]) and math.isnan(idle["cost_per_resolved_bet"])
    assert not idle["pareto"] and bool(idle["too_early"])
    # the statistics are copied exactly
    for column in ("return_pct", "return_ci_low", "skill_vs_market", "skill_vs_market_ci_high"):
        pd.testing.assert_series_equal(
            rows[column], board.set_index("family_id")[column].loc[rows.index]
        )


def test_an_empty_leaderboard_gives_an_empty_cost_frame() -> None:
    frame = cost_frame(pd.DataFrame(columns=list(lb.LEADERBOARD_COLUMNS)))
    assert frame.empty and list(frame.columns) == list(COST_COLUMNS)
    assert frame["pareto"].dtype == bool and frame["api_cost_usd"].dtype == np.float64


# --------------------------------------------------------------------------------------------
# A hand-built book on each backend: attempts with their costs


ATTEMPT_COSTS = {  # (cohort number, family) → the stored cost of each attempt of its decision
    (1, "m-a"): [0.010, 0.025],  # a retry, then the answer
    (2, "m-a"): [0.015],
    (1, "m-b"): [0.012, 0.008],
}


@pytest.fixture
def book(engine: Engine) -> Engine:
    """`build_book` (cohort 1: m-a and m-b bet; cohort 2: m-a bets; cash holds) with the
    decisions' model calls: each decision's cost is its attempts' sum, as the engine writes it.
    And a decision of m-b still in progress in cohort 2, its one call already stored."""
    build_book(engine)
    with session_scope(engine) as s:
        numbers = {c.id: c.number for c in s.execute(select(Cohort)).scalars()}
        for decision, agent in s.execute(
            select(Decision, Agent).join(Agent, col(Agent.id) == col(Decision.agent_id))
        ):
            costs = ATTEMPT_COSTS.get((numbers[decision.cohort_id], agent.family_id), [])
            for number, cost in enumerate(costs, start=1):
                s.add(
                    DecisionAttempt(
                        decision_id=decision.id, attempt_no=number, outcome="valid", cost_usd=cost
                    )
                )
            decision.cost_usd = sum(costs)
            s.add(decision)
        waiting = s.execute(
            select(Agent)
            .join(Cohort, col(Cohort.id) == col(Agent.cohort_id))
            .where(col(Cohort.number) == 2, col(Agent.family_id) == "m-b")
        ).scalar_one()
        row = Decision(
            agent_id=waiting.id, cohort_id=waiting.cohort_id, decision_week=1, status="in_progress"
        )
        s.add(row)
        s.flush()
        assert row.id is not None
        s.add(
            DecisionAttempt(
                decision_id=row.id, attempt_no=1, outcome="transport_retry", cost_usd=0.5
            )
        )
    return engine


def attempt_spend(engine: Engine, cohort: int | None = None) -> dict[str, float]:
    """Σ decision_attempts.cost_usd per family over finished decisions, read independently."""
    query = (
        select(AGENTS.c.family_id, func.sum(DECISION_ATTEMPTS.c.cost_usd))
        .select_from(DECISION_ATTEMPTS)
        .join(DECISIONS, DECISIONS.c.id == DECISION_ATTEMPTS.c.decision_id)
        .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
        .where(DECISIONS.c.status != "in_progress")
        .group_by(AGENTS.c.family_id)
    )
    if cohort is not None:
        query = query.join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id).where(
            COHORTS.c.number == cohort
        )
    with engine.connect() as conn:
        return {str(f): float(v) for f, v in conn.execute(query)}


def test_spend_per_decision_and_per_bet_by_hand(book: Engine) -> None:
    frame = cost_ranking(book).set_index("family_id")
    a, b, cash = frame.loc["m-a"], frame.loc["m-b"], frame.loc["baseline-cash"]
    # m-a: 0.010 + 0.025 + 0.015 over 2 decisions and 3 resolved bets (m1, m2; m3 in cohort 2)
    assert a["api_cost_usd"] == pytest.approx(0.05) and a["decisions"] == 2
    assert a["cost_per_decision"] == pytest.approx(0.025)
    assert a["cost_per_resolved_bet"] == pytest.approx(0.05 / 3)
    # m-b: 0.012 + 0.008 over 1 finished decision (the one in progress counts neither its call
    # nor itself) and 2 resolved bets (m1, m3)
    assert b["api_cost_usd"] == pytest.approx(0.02) and b["decisions"] == 1
    assert (b["cost_per_decision"], b["cost_per_resolved_bet"]) == pytest.approx((0.02, 0.01))
    for family in ("m-a", "m-b"):
        got = frame.loc[family]
        assert got["return_per_dollar"] == pytest.approx(got["return_pct"] / got["api_cost_usd"])
        assert got["skill_per_dollar_ci_low"] == pytest.approx(
            got["skill_vs_market_ci_low"] / got["api_cost_usd"]
        )
    # skill by hand (test_leaderboard): A 0.5229 − 0.1633 = +0.360, B 0.5366 − 0.2 = +0.337.
    # B is cheaper per decision and more skilled: B dominates A.
    assert b["skill_vs_market"] < a["skill_vs_market"]
    assert bool(b["pareto"]) and not a["pareto"]
    assert cash["api_cost_usd"] == 0.0 and not cash["pareto"] and not cash["paid"]
    assert math.isnan(cash["cost_per_decision"])  # the cash baseline never decided here
    assert math.isnan(cash["return_per_dollar"]) and math.isnan(cash["skill_per_dollar"])


def test_cohort_scope_and_a_front_of_two(book: Engine) -> None:
    frame = cost_ranking(book, cohort=1).set_index("family_id")
    a, b = frame.loc["m-a"], frame.loc["m-b"]
    assert (a["api_cost_usd"], a["cost_per_decision"]) == pytest.approx((0.035, 0.035))
    assert a["cost_per_resolved_bet"] == pytest.approx(0.035 / 2)  # m1 and m2
    # in cohort 1, A (m1 and m2 only) beats the market by more than B but costs more: both
    # are on the front
    assert a["skill_vs_market"] < b["skill_vs_market"]
    assert a["cost_per_decision"] > b["cost_per_decision"]
    assert bool(a["pareto"]) and bool(b["pareto"])


def test_the_spend_is_the_stored_per_attempt_cost(book: Engine) -> None:
    for cohort in (None, 1, 2):
        frame = cost_ranking(book, cohort=cohort)
        spend = dict(zip(frame["family_id"], frame["api_cost_usd"], strict=True))
        by_attempts = attempt_spend(book, cohort)
        for family, total in spend.items():
            assert total == pytest.approx(by_attempts.get(family, 0.0), abs=1e-12), family


# --------------------------------------------------------------------------------------------
# The season of the dashboard tests (loopback LLM families with retries and a fallback HOLD)


@pytest.fixture(scope="module")
def season_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = create_db_engine(sqlite_season(tmp_path_factory.getbasetemp()).url, role="reader")
    yield engine
    engine.dispose()


def test_season_spend_equals_the_attempts_and_the_leaderboard_is_unchanged(
    season_engine: Engine,
) -> None:
    board = lb.leaderboard(season_engine)
    kept = board.copy(deep=True)

    frame = cost_frame(board)

    # v1's columns and numbers: exactly the leaderboard's, before and after
    pd.testing.assert_frame_equal(board, kept)
    pd.testing.assert_frame_equal(board, lb.leaderboard(season_engine))
    assert list(board.columns) == list(lb.LEADERBOARD_COLUMNS)
    added = set(COST_COLUMNS) - set(lb.LEADERBOARD_COLUMNS)
    assert added and not added & set(board.columns)
    # the spend is the stored per-attempt cost (retries and malformed answers included)
    spend = dict(zip(frame["family_id"], frame["api_cost_usd"], strict=True))
    by_attempts = attempt_spend(season_engine)
    assert {f for f, v in by_attempts.items() if v > 0} == {LLM_A, LLM_B}  # baselines: $0
    for family, total in spend.items():
        assert total == pytest.approx(by_attempts.get(family, 0.0), abs=1e-12), family
    assert spend[LLM_A] > 0 and spend[LLM_B] > 0
    # llm-b only ever fell back to HOLD: it paid, but has no bet to judge its skill by
    rows = frame.set_index("family_id")
    assert math.isnan(rows.loc[LLM_B, "skill_vs_market"]) and not rows.loc[LLM_B, "pareto"]
    baselines = frame[frame["kind"] == "baseline"]
    assert (baselines["api_cost_usd"] == 0).all() and not baselines["pareto"].any()
    assert list(frame["family_id"][:2]) == [LLM_A, LLM_B]  # paying families first
    pd.testing.assert_frame_equal(frame, cost_ranking(season_engine))
