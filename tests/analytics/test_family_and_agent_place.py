"""The read models behind the Family and Agent pages and their charts: a family's place in
each cohort (rank of N, against the cohort's average, best and worst), the cheap family ranking
that chooses the pages' default, which short curve ranges would draw flat lines, and the
decision runs marked on the curves. Hand-made frames for the pure helpers, then the shared
season (`tests.analytics.season`), where they must agree with the standings and the
leaderboard."""

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.views import agents, cohorts, curves
from arena.storage.db import create_db_engine
from tests.analytics.season import LLM_A, LLM_B, sqlite_season


def standings(returns: dict[str, float], kinds: dict[str, str] | None = None) -> pd.DataFrame:
    """A `cohort_standings`-shaped frame: family → return, ranked like the read model."""
    frame = pd.DataFrame(
        {
            "family_id": list(returns),
            "display_name": [f.upper() for f in returns],
            "kind": [(kinds or {}).get(f, "llm") for f in returns],
            "return_pct": list(returns.values()),
        }
    )
    frame["rank"] = frame["return_pct"].rank(method="min", ascending=False).fillna(0).astype(int)
    return frame.sort_values(["rank", "family_id"], kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Pure helpers


def test_a_family_s_place_in_its_cohort() -> None:
    frame = standings({"a": 10.0, "b": -5.0, "cash": 0.0, "oracle": 40.0})

    place = cohorts.cohort_field(frame, "a")

    assert (place["rank"], place["agents"]) == (2, 4)
    assert place["cohort_mean_return"] == pytest.approx(11.25)
    assert (place["cohort_best"], place["cohort_best_return"]) == ("ORACLE", 40.0)
    assert (place["cohort_worst"], place["cohort_worst_return"]) == ("B", -5.0)
    assert place["vs_mean"] == pytest.approx(-1.25)
    assert (place["vs_best"], place["vs_worst"]) == (-30.0, 15.0)
    assert cohorts.cohort_field(frame, "nobody") == {}


def test_ties_share_a_rank_and_the_best_is_the_first_in_order() -> None:
    frame = standings({"b": 5.0, "a": 5.0, "c": 1.0})
    assert frame["rank"].tolist() == [1, 1, 3]
    place = cohorts.cohort_field(frame, "b")
    assert place["rank"] == 1 and place["cohort_best"] == "A"  # family id breaks the tie
    assert place["vs_best"] == 0.0


def test_a_cohort_without_returns_yet_has_no_best_or_worst() -> None:
    frame = standings({"a": np.nan, "b": np.nan})
    place = cohorts.cohort_field(frame, "a")
    assert place["rank"] == 0 and place["agents"] == 2
    assert np.isnan(place["cohort_mean_return"]) and np.isnan(place["vs_best"])
    assert pd.isna(place["cohort_best"])


def test_the_best_llm_is_never_a_baseline() -> None:
    frame = standings(
        {"oracle": 50.0, "cash": 0.0, "a": -1.0, "b": -3.0},
        kinds={"oracle": "baseline", "cash": "baseline"},
    )
    assert cohorts.best_llm(frame) == "a"
    only_baselines = standings({"cash": 0.0}, kinds={"cash": "baseline"})
    assert cohorts.best_llm(only_baselines) is None


def curve(rows: list[tuple[str, int, float, int]]) -> pd.DataFrame:
    """A `portfolio_curves`-shaped frame from (family, minute, value, agents) rows."""
    start = pd.Timestamp("2026-01-20 22:00", tz="UTC")
    return pd.DataFrame(
        {
            "family_id": [r[0] for r in rows],
            "at": [start + pd.Timedelta(minutes=r[1]) for r in rows],
            "total_value": [r[2] for r in rows],
            "total_pnl": [r[2] - 10_000 * r[3] for r in rows],
            "agents": [r[3] for r in rows],
        }
    )


def test_the_last_change_of_a_curve() -> None:
    still = curve([("a", 0, 10_000, 1), ("a", 10, 10_000, 1), ("b", 0, 9_000, 1)])
    assert curves.last_change(still) is None
    assert curves.last_change(curve([])) is None

    moved = curve([("a", 0, 10_000, 1), ("a", 10, 10_050, 1), ("a", 20, 10_050, 1)])
    assert curves.last_change(moved) == datetime(2026, 1, 20, 22, 10, tzinfo=UTC)

    # A line that begins after the first bucket (a new cohort's agent) is a change; a second
    # agent joining a family's sum is one too, even with its P/L at zero.
    begins = curve([("a", 0, 10_000, 1), ("b", 30, 10_000, 1)])
    assert curves.last_change(begins) == datetime(2026, 1, 20, 22, 30, tzinfo=UTC)
    joins = curve([("a", 0, 10_000, 1), ("a", 40, 20_000, 2)])
    assert curves.last_change(joins) == datetime(2026, 1, 20, 22, 40, tzinfo=UTC)


# --------------------------------------------------------------------------------------------
# On the season


@pytest.fixture(scope="module")
def season_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = create_db_engine(sqlite_season(tmp_path_factory.getbasetemp()).url, role="reader")
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def empty_engine(
    sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    path = tmp_path_factory.mktemp("family-empty") / "arena.db"
    shutil.copy(sqlite_template, path)
    engine = create_db_engine(f"sqlite:///{path}", role="reader")
    yield engine
    engine.dispose()


def test_family_returns_rank_like_the_leaderboard(season_engine: Engine) -> None:
    cheap = agents.family_returns(season_engine)
    board = leaderboard(season_engine, replicates=20, null_seeds=0)

    assert list(cheap.columns) == list(agents.FAMILY_RETURN_COLUMNS)
    assert cheap["family_id"].tolist() == board["family_id"].tolist()
    assert cheap["rank"].tolist() == board["rank"].tolist()
    mine = cheap.set_index("family_id")
    theirs = board.set_index("family_id")
    for column in ("total_pnl", "return_pct", "cohorts"):
        assert mine[column].to_numpy() == pytest.approx(theirs.loc[mine.index, column].to_numpy())
    # The oracle and the cash baseline rank above the models here: the default is a model.
    assert agents.best_llm_family(cheap) == LLM_B


def test_family_cohorts_agree_with_each_cohort_s_standings(season_engine: Engine) -> None:
    frame = agents.family_cohorts(season_engine, LLM_A)

    assert list(frame.columns) == list(agents.FAMILY_COHORT_COLUMNS)
    assert frame["cohort_number"].tolist() == [2, 1]  # newest first
    for row in frame.itertuples():
        table = cohorts.cohort_standings(season_engine, row.cohort_number)
        me = table.set_index("family_id").loc[LLM_A]
        assert (row.rank, row.agents) == (me["rank"], len(table))
        assert row.return_pct == pytest.approx(me["return_pct"])
        assert row.cohort_mean_return == pytest.approx(table["return_pct"].mean())
        assert row.cohort_best_return == pytest.approx(table["return_pct"].max())
        assert row.vs_worst == pytest.approx(me["return_pct"] - table["return_pct"].min())
        assert (row.decisions, row.api_cost_usd) == (me["decisions"], me["api_cost_usd"])
        assert row.status in ("deciding", "tracking", "completed")
    board = leaderboard(season_engine, replicates=20, null_seeds=0).set_index("family_id")
    assert agents.pooled_brier(frame) == pytest.approx(board.loc[LLM_A, "brier"])
    assert np.isnan(agents.pooled_brier(agents.family_cohorts(season_engine, LLM_B)))
    # Cohort 1: Model A is 5th of 6, the oracle best.
    first = frame.set_index("cohort_number").loc[1]
    assert (first["rank"], first["cohort_best"]) == (5, "Oracle (simulation only)")


def test_standings_by_family_keep_the_cohort_standings(season_engine: Engine) -> None:
    every = cohorts.family_standings(season_engine, LLM_B)
    assert sorted(set(every["cohort_number"])) == [1, 2]
    for number in (1, 2):
        one = every[every["cohort_number"] == number].drop(columns="cohort_number")
        expected = cohorts.cohort_standings(season_engine, number)
        pd.testing.assert_frame_equal(one.reset_index(drop=True), expected)
    assert cohorts.family_standings(season_engine, "nobody").empty
    assert agents.family_cohorts(season_engine, "nobody").empty


def test_flat_short_ranges_on_the_season(season_engine: Engine) -> None:
    # The season's portfolios last moved at the 18:10 snapshot of its last day (00:00 next).
    still = curves.flat_ranges(season_engine)
    assert still.latest == datetime(2026, 1, 21, tzinfo=UTC)
    assert still.last_change == datetime(2026, 1, 20, 18, 10, tzinfo=UTC)
    assert still.flat == ("10M", "1H")
    # A cash agent never moves: every short range would be a flat line.
    cash = curves.flat_ranges(season_engine, cohort=1, family="baseline-cash")
    assert (cash.last_change, cash.flat) == (None, ("10M", "1H", "1D"))


def test_flat_ranges_without_snapshots(empty_engine: Engine) -> None:
    assert curves.flat_ranges(empty_engine) == curves.Stillness(None, None, ())


def test_decision_runs_on_the_season(season_engine: Engine) -> None:
    runs = curves.decision_runs(season_engine)

    assert list(runs.columns) == list(curves.DECISION_RUN_COLUMNS)
    assert runs["at"].tolist() == [
        pd.Timestamp("2026-01-04 00:05", tz="UTC"),
        pd.Timestamp("2026-01-11 00:05", tz="UTC"),
    ]
    # One weekly run decides for every deciding cohort: cohort 1's week 2 and cohort 2's week 1.
    assert runs["runs"].tolist() == ["cohort 1 week 1", "cohort 1 week 2, cohort 2 week 1"]
    assert runs["decisions"].tolist() == [6, 12]

    one = curves.decision_runs(season_engine, cohort=2, family=LLM_A)
    assert one["runs"].tolist() == ["cohort 2 week 1"] and one["decisions"].tolist() == [1]
    later = curves.decision_runs(season_engine, start=datetime(2026, 1, 5, tzinfo=UTC))
    assert later["runs"].tolist() == ["cohort 1 week 2, cohort 2 week 1"]
    assert curves.decision_runs(season_engine, end=datetime(2026, 1, 4, tzinfo=UTC)).empty


def test_empty_database(empty_engine: Engine) -> None:
    assert agents.family_returns(empty_engine).empty
    assert curves.decision_runs(empty_engine).empty
    assert list(curves.decision_runs(empty_engine).columns) == list(curves.DECISION_RUN_COLUMNS)
