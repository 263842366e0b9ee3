"""Methodology v2 on the read side: "all cohorts" is per version.

The database holds a v1 season and the same season copied as v2 cohorts (`add_v2_season`):
v1's all-cohort figures are exactly the v1-only database's, and v2's all-cohort figures are
the copy's alone, so they equal the v1-only database's too (never the pooled, doubled season).
The hourly job stores v2's all-cohort scope apart (``all:v2``), leaving v1's ``all`` rows as
they were.
"""

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.query.scope import versions_present
from arena.analytics.stats.calibration import brier_over_time, brier_rows, calibration_summary
from arena.analytics.stats.leaderboard import RANKED_BY, leaderboard, portfolio_value, ranked
from arena.analytics.stats.risk import family_risk
from arena.analytics.stored import current_or_live, scope_of, stored_result
from arena.core.errors import InputError
from arena.engine.analyses import store_analyses
from arena.storage.tables import ANALYSIS_RESULTS
from tests.stated_season import DemoSeasons
from tests.test_v2_scope import v1_and_v2_seasons

ARGS: dict[str, Any] = {"replicates": 200, "null_seeds": 5}


@pytest.fixture(scope="module")
def seasons(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, Engine, list[int]]]:
    with v1_and_v2_seasons(demo_seasons, tmp_path_factory.mktemp("v2_read")) as found:
        yield found


def test_each_version_reads_its_own_cohorts(seasons: tuple[Engine, Engine, list[int]]) -> None:
    v1_only, both, _ = seasons
    assert versions_present(v1_only) == ["v1"] and versions_present(both) == ["v1", "v2"]
    v1 = leaderboard(v1_only, **ARGS)
    pd.testing.assert_frame_equal(leaderboard(both, methodology="v1", **ARGS), v1)
    v2 = leaderboard(both, methodology="v2", **ARGS)
    # the copy alone: the same P/L on the same capital, one season's bets (not two)
    assert list(v2["family_id"]) == list(v1["family_id"])
    for column in ("total_pnl", "return_pct", "capital", "resolved_bets", "brier", "cohorts"):
        pd.testing.assert_series_equal(v2[column], v1[column])
    assert len(brier_rows(both, methodology="v2")) == len(brier_rows(v1_only)) > 0
    pd.testing.assert_frame_equal(
        calibration_summary(both, replicates=200), calibration_summary(v1_only, replicates=200)
    )
    assert len(brier_over_time(both, methodology="v2")) == len(brier_over_time(v1_only))
    assert len(family_risk(both, methodology="v2")) == len(family_risk(v1_only))


def test_a_v1_only_database_has_an_empty_v2_scope(
    seasons: tuple[Engine, Engine, list[int]],
) -> None:
    v1_only, _, _ = seasons
    assert leaderboard(v1_only, methodology="v2", **ARGS).empty
    assert brier_rows(v1_only, methodology="v2").empty
    with pytest.raises(InputError, match="methodology 'v3' does not exist"):
        leaderboard(v1_only, methodology="v3", **ARGS)


def test_the_job_stores_v2_apart_and_v1_as_before(
    seasons: tuple[Engine, Engine, list[int]],
) -> None:
    v1_only, both, _ = seasons
    at = datetime(2027, 1, 1, tzinfo=UTC)
    alone = store_analyses(v1_only, at)
    mixed = store_analyses(both, at)
    assert "all:v2" not in alone.scopes and mixed.scopes.count("all:v2") == 1
    assert scope_of(None) == "all" and scope_of(None, "v2") == "all:v2"
    with both.connect() as conn:
        names = set(
            conn.execute(
                select(ANALYSIS_RESULTS.c.name).where(ANALYSIS_RESULTS.c.scope == "all:v2")
            ).scalars()
        )
    # the v1 statistics, the execution sensitivity (every cohort, whatever its version) and
    # the detectability figures per version; the overview and the extensions' figures are not
    assert names == {
        "leaderboard",
        "calibration_summary",
        "reliability",
        "reliability_market",
        "brier_over_time",
        "execution_sensitivity",
        "detectability",
    }
    for name in ("leaderboard", "calibration_summary", "brier_over_time"):
        ours, theirs = stored_result(both, name), stored_result(v1_only, name)
        assert ours is not None and theirs is not None
        pd.testing.assert_frame_equal(ours.frame, theirs.frame)  # v1's "all" as before
    v2 = stored_result(both, "leaderboard", methodology="v2")
    assert v2 is not None
    frame, stored = current_or_live(both, "leaderboard", methodology="v2")
    assert stored is not None and frame.equals(v2.frame)


def test_v2_orders_by_summed_pnl_frozen_quotes_by_value_per_dollar_v1_by_rank() -> None:
    """`ranked` is a pure reordering keyed by protocol: v1 by its return rank, v2 (the
    original's rules) by dollar P/L summed over cohorts, v2's frozen-quotes cohorts by
    portfolio value (capital + P/L) on the capital given; no column changes."""
    frame = pd.DataFrame(
        {
            "family_id": ["a", "b", "c"],
            "rank": [1, 2, 3],  # v1 order as given, to see which key each version reads
            "capital": [20000.0, 10000.0, 10000.0],
            "total_pnl": [1000.0, 800.0, -50.0],
            "brier": [0.10, 0.30, 0.20],
        }
    )
    assert ranked(frame, "v1")["family_id"].tolist() == ["a", "b", "c"]
    v2 = ranked(frame.iloc[::-1], "v2")
    # P/L 1,000 / 800 / −50 in dollars, whatever the capital; Brier plays no part
    assert v2["family_id"].tolist() == ["a", "b", "c"]
    assert list(v2.columns) == list(frame.columns)
    frozen = ranked(frame, "v2+frozen-quotes")
    # values 21,000 / 10,800 / 9,950: per dollar 1.05, 1.08, 0.995
    assert frozen["family_id"].tolist() == ["b", "a", "c"]
    assert portfolio_value(frozen).tolist() == [10800.0, 21000.0, 9950.0]
    assert ranked(frame, "v2+frozen-quotes+horizon-14d")["family_id"].tolist() == ["b", "a", "c"]
    assert ranked(frame.iloc[::-1], "v2+horizon-14d")["family_id"].tolist() == ["a", "b", "c"]
    assert RANKED_BY == {
        "v1": "return_pct",
        "v2": "total_pnl",
        "v2+frozen-quotes": "return_pct",
    }
    with pytest.raises(KeyError):
        ranked(frame, "v3")
