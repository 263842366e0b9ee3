"""P(rank #1) among the model families on the Leaderboard, Family and Home pages (one number
for one family everywhere; a baseline reads "reference"), the edge over the market read
better-is-up, and the scope's API spend on the Leaderboard (AppTest over the analysed season)."""

from collections.abc import Iterator

import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats.leaderboard import with_edge
from arena.analytics.stored import stored_result
from arena.dashboard import fmt
from arena.storage.db import create_db_engine
from tests.dashboard.apptest import all_text, read, run_page
from tests.dashboard.test_family_page import metric_text, ok


@pytest.fixture
def board(on_analysed: str) -> Iterator[pd.DataFrame]:
    """The stored all-cohort leaderboard the pages read."""
    engine: Engine = create_db_engine(on_analysed, role="reader")
    try:
        found = stored_result(engine, "leaderboard")
        assert found is not None
        yield with_edge(found.frame).set_index("family_id")
    finally:
        engine.dispose()


def test_the_leaderboard_ranks_models_among_themselves_and_shows_the_spend(
    board: pd.DataFrame,
) -> None:
    at = ok(run_page("leaderboard"))
    shown = at.dataframe[0].value.set_index("family")
    names = board.reset_index().set_index("display_name")
    models = names[names["kind"] == "llm"]
    assert models["p_rank_1_contenders"].sum() == pytest.approx(1.0)
    for name, row in names.iterrows():
        expected = fmt.share(row["p_rank_1_contenders"], 1) if row["kind"] == "llm" else "reference"
        assert shown.loc[name, "first"] == expected, name
        edge = fmt.prob_interval(
            -row["skill_vs_market"],
            -row["skill_vs_market_ci_high"],
            -row["skill_vs_market_ci_low"],
            signed=True,
        )
        assert shown.loc[name, "edge"] == edge, name
    assert (names["kind"] == "baseline").any()
    text = read(all_text(at))
    assert "among the model families" in text and "never contend" in text
    # the scope's spend: every family's summed, in dollars
    (spend,) = [m for m in at.metric if m.label == "API spend, all cohorts"]
    assert spend.value == fmt.money(board["api_cost_usd"].sum())
    assert board["api_cost_usd"].sum() > 0
    cost = at.dataframe[1].value.set_index("family")
    assert "edge_per_dollar" in cost and "skill_per_dollar" not in cost


def test_the_family_page_shows_the_leaderboards_figure(board: pd.DataFrame) -> None:
    model = board[board["kind"] == "llm"].sort_values("rank").index[0]
    at = ok(run_page("family", family=model))
    assert metric_text(at, "P(rank #1)") == fmt.share(board.loc[model, "p_rank_1_contenders"], 1)
    edge = metric_text(at, "Edge over market ↑")
    assert edge.startswith(fmt.signed_prob(-board.loc[model, "skill_vs_market"]))

    oracle = ok(run_page("family", family="oracle"))
    assert metric_text(oracle, "P(rank #1)").startswith("reference")


def test_home_shows_the_leading_models_figure_among_models(board: pd.DataFrame) -> None:
    at = ok(run_page("home"))
    models = board[board["kind"] == "llm"].sort_values(
        ["rank", "p_rank_1_contenders"], ascending=[True, False]
    )
    best = models.iloc[0]
    shown = read(all_text(at))
    assert fmt.escaped(best["display_name"]) in all_text(at)
    assert fmt.share(best["p_rank_1_contenders"], 1) in shown
    # the all-rows figure the oracle crowds out is not what Home shows
    assert best["p_rank_1_contenders"] > best["p_rank_1"]
