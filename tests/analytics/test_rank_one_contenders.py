"""P(rank #1) among the contenders (the model families), the better-is-up edge over the
market, and stored leaderboards from before those columns: recomputed by the hourly job."""

import math
from collections.abc import Iterator
from datetime import timedelta

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import Engine

from arena.analytics import stored
from arena.analytics.stats import leaderboard as lb
from arena.analytics.stats.cost import COST_COLUMNS, cost_frame, scope_spend
from arena.analytics.views.status import leaders
from arena.engine import analyses
from arena.engine.snapshots import take_snapshots
from arena.storage.db import create_db_engine
from arena.storage.tables import ANALYSIS_RESULTS, COHORTS
from tests.analytics import build_book
from tests.analytics.season import LLM_A, LLM_B, sqlite_season
from tests.factories import WEEK1

AT = WEEK1 + timedelta(days=8)


def test_the_oracle_does_not_take_the_models_first_place() -> None:
    # three replicates × (oracle, model a, model b): the oracle is always best
    reps = np.array([[9.0, 2.0, 1.0], [9.0, 1.0, 2.0], [9.0, 3.0, 1.0]])
    contenders = np.array([False, True, True])
    shares = lb.contender_p_rank_1(reps, contenders)
    assert math.isnan(shares[0])
    assert shares[1:] == pytest.approx([2 / 3, 1 / 3])
    # no model in scope: nobody contends
    assert np.isnan(lb.contender_p_rank_1(reps, np.zeros(3, dtype=bool))).all()


@pytest.fixture(scope="module")
def season_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = create_db_engine(sqlite_season(tmp_path_factory.getbasetemp()).url, role="reader")
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def board(season_engine: Engine) -> pd.DataFrame:
    return lb.leaderboard(season_engine, replicates=300, null_seeds=0)


def test_the_season_board_ranks_the_models_among_themselves(board: pd.DataFrame) -> None:
    models = board[board["kind"] == lb.CONTENDER_KIND]
    refs = board[board["kind"] != lb.CONTENDER_KIND]
    assert set(models["family_id"]) == {LLM_A, LLM_B} and "oracle" in set(refs["family_id"])
    assert models["p_rank_1_contenders"].sum() == pytest.approx(1.0)
    assert refs["p_rank_1_contenders"].isna().all()
    # the all-rows figure is unchanged (its sum is still one over every row)
    assert board["p_rank_1"].sum() == pytest.approx(1.0)
    for _, row in models.iterrows():
        assert row["p_rank_1_contenders"] >= row["p_rank_1"] - 1e-12
    assert list(board.columns) == list(lb.LEADERBOARD_COLUMNS)
    assert lb.LEADERBOARD_COLUMNS[-1] == "p_rank_1_contenders"  # a new column goes last


def test_the_edge_over_the_market_is_the_skill_upside_down(board: pd.DataFrame) -> None:
    edged = lb.with_edge(board)
    assert list(edged.columns) == [*board.columns, *lb.EDGE_COLUMNS]
    pd.testing.assert_frame_equal(edged[list(board.columns)], board)  # nothing else changes
    skill = board.set_index("family_id")
    edge = edged.set_index("family_id")
    pd.testing.assert_series_equal(
        edge["edge_over_market"], -skill["skill_vs_market"], check_names=False
    )
    pd.testing.assert_series_equal(
        edge["edge_over_market_ci_low"], -skill["skill_vs_market_ci_high"], check_names=False
    )
    known = edge.dropna(subset=["edge_over_market"])
    assert (known["edge_over_market_ci_low"] <= known["edge_over_market"] + 1e-12).all()
    # a frame stored before the contenders' figure reads with it missing, not failing
    old = lb.with_edge(board.drop(columns="p_rank_1_contenders"))
    assert old["p_rank_1_contenders"].isna().all()


def test_the_cost_table_gains_the_edge_per_dollar_last(board: pd.DataFrame) -> None:
    cost = cost_frame(board).set_index("family_id")
    assert list(COST_COLUMNS[-6:]) == [
        "edge_over_market",
        "edge_over_market_ci_low",
        "edge_over_market_ci_high",
        "edge_per_dollar",
        "edge_per_dollar_ci_low",
        "edge_per_dollar_ci_high",
    ]
    assert COST_COLUMNS[:3] == ("family_id", "display_name", "kind")
    paid = cost[cost["paid"] & cost["skill_per_dollar"].notna()]
    assert len(paid)
    pd.testing.assert_series_equal(
        paid["edge_per_dollar"], -paid["skill_per_dollar"], check_names=False
    )
    pd.testing.assert_series_equal(
        paid["edge_per_dollar_ci_high"], -paid["skill_per_dollar_ci_low"], check_names=False
    )
    assert cost.loc["oracle", ["edge_per_dollar"]].isna().all()  # $0: undefined
    assert scope_spend(cost_frame(board)) == pytest.approx(board["api_cost_usd"].sum())
    assert scope_spend(cost_frame(board)) > 0


def test_the_leader_ties_on_the_models_figure() -> None:
    base = {"too_early": False}
    board = pd.DataFrame(
        [
            {**base, "family_id": "oracle", "kind": "baseline", "rank": 1, "p_rank_1": 0.9},
            {**base, "family_id": "a", "kind": "llm", "rank": 2, "p_rank_1": 0.06},
            {**base, "family_id": "b", "kind": "llm", "rank": 2, "p_rank_1": 0.04},
        ]
    )
    # among the models b is first more often, though a is over all rows (ties split apart)
    board["p_rank_1_contenders"] = [np.nan, 0.4, 0.6]
    found = leaders(board)
    assert found.model is not None and found.model["family_id"] == "b"
    assert found.top is not None and found.top["family_id"] == "oracle"


@pytest.fixture
def book(engine: Engine) -> Engine:
    build_book(engine)
    take_snapshots(engine, AT)
    return engine


def test_a_stored_leaderboard_without_the_new_column_is_recomputed(book: Engine) -> None:
    with book.begin() as conn:
        conn.execute(
            update(COHORTS)
            .where(COHORTS.c.number == 1)
            .values(status="completed", completed_at=AT - timedelta(hours=1))
        )
    analyses.store_analyses(book, AT)
    assert analyses.store_analyses(book, AT + timedelta(hours=1)).scopes == ["all", "cohort:2"]
    found = stored.stored_result(book, "leaderboard", cohort=1)
    assert found is not None
    old = stored.frame_bytes(found.frame.drop(columns="p_rank_1_contenders"))
    where = (ANALYSIS_RESULTS.c.scope == "cohort:1") & (ANALYSIS_RESULTS.c.name == "leaderboard")
    with book.begin() as conn:  # as an earlier version stored it
        conn.execute(update(ANALYSIS_RESULTS).where(where).values(frame=old))
        assert analyses.outdated_scopes(conn) == {"cohort:1"}
    later = AT + timedelta(hours=2)
    assert analyses.store_analyses(book, later).scopes == ["all", "cohort:1", "cohort:2"]
    with book.connect() as conn:
        data = conn.execute(select(ANALYSIS_RESULTS.c.frame).where(where)).one()[0]
        frame = stored.bytes_frame(data)
        assert analyses.outdated_scopes(conn) == set()
    assert "p_rank_1_contenders" in frame.columns
