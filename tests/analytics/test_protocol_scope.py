"""Protocol groups (arena.analytics.query.scope): a read scoped to one group pools exactly its
cohorts, never a plain cohort and never a group with another parameter (horizon
cohorts are never pooled with unstamped ones, and a 7-day horizon never with a 14-day one).

The database holds the baselines' nine-day v1 season and the same cohorts copied twice under
later numbers: once stamped `horizon` with 14 days, once with 7. A leaderboard of the 14-day
group must be the v1 season's own to the cent (same agents, bets and marks), v1's all-cohort
figures must not move, and the 7-day group must stay out of both.
"""

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.query.scope import (
    excluded_cohorts,
    protocol_key,
    protocol_label,
    protocols_present,
)
from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.stored import stored_result
from arena.config import Methodology, cohort_stamp
from arena.core.errors import InputError
from arena.engine.analyses import store_analyses
from arena.storage.db import create_db_engine
from tests.stated_season import BASELINE_DAYS, BASELINES, DemoSeasons, checkpoint
from tests.test_v2_scope import add_v2_season


def _horizon(days: int) -> dict[str, Any]:
    stamp = cohort_stamp(Methodology(), ["horizon"])
    del stamp["is_default"]
    return {**stamp, "horizon_days": days, "is_default": False}


def test_a_protocol_key_names_version_extensions_and_parameters() -> None:
    assert protocol_key("v1", Methodology().stamp()) == "v1"
    assert protocol_key("v2", Methodology(version="v2").stamp()) == "v2"
    assert protocol_key("v1", None) == "v1"
    assert protocol_key("v1", _horizon(14)) == "v1+horizon-14d"
    replicated = cohort_stamp(Methodology(), ["stated_probability"], replicates=3)
    assert protocol_key("v1", replicated) == "v1+replicates-3+stated_probability"
    assert protocol_label("v1+horizon-14d") == "v1 + horizon 14d"


def test_book_execution_groups_by_how_its_buys_paid_the_fee() -> None:
    """A `book_execution` cohort stamped before `fee_charged` took its fees in shares; it is
    never pooled with one whose buys pay the fee in USDC on top (CLOB V2)."""
    walks = cohort_stamp(Methodology(), ["book_execution"])
    assert walks["fee_charged"] == "usdc_on_top"
    assert protocol_key("v1", walks) == "v1+book_execution"
    before = {k: v for k, v in walks.items() if k != "fee_charged"}
    assert protocol_key("v1", before) == "v1+book_execution+fee_in_shares"
    named = cohort_stamp(Methodology(), ["book_execution"], fee_charged="in_shares")
    assert protocol_key("v1", named) == protocol_key("v1", before)


@pytest.fixture(scope="module")
def groups(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, Engine, list[int], list[int]]]:
    """(the v1 season alone, the database with both horizon copies, the 14-day numbers, the
    7-day numbers)."""

    def add_copies(into: Path) -> tuple[list[int], list[int]]:
        engine = create_db_engine(demo_seasons.copy(into, BASELINES, "", BASELINE_DAYS))
        try:
            return add_v2_season(engine, "v1", _horizon(14)), add_v2_season(
                engine, "v1", _horizon(7)
            )
        finally:
            engine.dispose()
            checkpoint(into / "demo.db")

    built, (fourteen, seven) = demo_seasons.once("the v1 season and two horizon copies", add_copies)
    folder = tmp_path_factory.mktemp("protocol_scope")
    shutil.copyfile(built / "demo.db", folder / "demo.db")
    v1_only = create_db_engine(demo_seasons.copy(folder / "v1", BASELINES, "", BASELINE_DAYS))
    both = create_db_engine(f"sqlite:///{folder / 'demo.db'}")
    try:
        yield v1_only, both, fourteen, seven
    finally:
        v1_only.dispose()
        both.dispose()


def test_each_group_pools_its_own_cohorts_alone(
    groups: tuple[Engine, Engine, list[int], list[int]],
) -> None:
    v1_only, both, fourteen, seven = groups
    present = protocols_present(both)
    assert list(present) == ["v1", "v1+horizon-14d", "v1+horizon-7d"]
    assert present["v1+horizon-14d"] == fourteen and present["v1+horizon-7d"] == seven
    assert excluded_cohorts(both) == fourteen + seven
    args: dict[str, Any] = {"replicates": 200, "null_seeds": 0}
    plain = leaderboard(v1_only, **args)
    pd.testing.assert_frame_equal(leaderboard(both, **args), plain)
    grouped = leaderboard(both, methodology="v1+horizon-14d", **args)
    money = ["family_id", "cohorts", "total_pnl", "return_pct", "brier", "resolved_bets", "bets"]
    pd.testing.assert_frame_equal(grouped[money], plain[money])


def test_an_unknown_group_names_the_groups_run(
    groups: tuple[Engine, Engine, list[int], list[int]],
) -> None:
    _, both, _, _ = groups
    with pytest.raises(InputError, match="no cohort ran protocol 'v1\\+horizon-30d'") as found:
        leaderboard(both, methodology="v1+horizon-30d", replicates=10, null_seeds=0)
    assert "v1+horizon-14d" in str(found.value.hint)


def test_the_hourly_job_stores_each_group_apart(
    groups: tuple[Engine, Engine, list[int], list[int]],
) -> None:
    """`arena analyses` stores every extended group's all-cohort scope (``all:<key>``), so a
    page shows a horizon season's pooled figures without computing them."""
    _, both, _, _ = groups
    at = datetime(2026, 3, 1, tzinfo=UTC)
    outcome = store_analyses(both, at)
    assert {"all", "all:v1+horizon-14d", "all:v1+horizon-7d"} <= set(outcome.scopes)
    found = stored_result(both, "leaderboard", methodology="v1+horizon-7d")
    assert found is not None
    live = leaderboard(both, methodology="v1+horizon-7d")
    pd.testing.assert_frame_equal(found.frame, live, check_dtype=False)
