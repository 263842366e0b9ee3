"""v1 and v2 are never pooled: a database holding a v1 season and a v2 season gives exactly
the v1-only database's all-cohort (v1) figures (methodology v2).

The v2 season is the v1 season's cohorts copied under new numbers and later weeks, stamped v2,
every agent, decision, position, trade, Brier row and snapshot with them: if an all-cohort read
pooled them, every figure would move (twice the bets, twice the capital).
"""

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import Connection, Table, insert, select
from sqlalchemy.engine import Engine

from arena.analytics.query.scope import excluded_cohorts
from arena.analytics.stats.calibration import brier_rows, calibration_summary
from arena.analytics.stats.leaderboard import leaderboard
from arena.config import Methodology
from arena.engine.rollups import rebuild_rollups
from arena.storage.db import create_db_engine
from arena.storage.tables import (
    AGENTS,
    BRIER_SCORES,
    COHORTS,
    DECISIONS,
    PORTFOLIO_SNAPSHOTS,
    POSITIONS,
    TRADES,
)
from tests.stated_season import BASELINE_DAYS, BASELINES, DemoSeasons, checkpoint


def _copy(
    conn: Connection, table: Table, where: Any, remap: dict[str, Any], keep_ids: bool = True
) -> dict[int, int]:
    """Insert a copy of `table`'s rows matching `where`, columns in `remap` replaced (a dict
    maps old to new values, anything else is the new value); old id → new id."""
    rows = conn.execute(select(table).where(where).order_by(table.c.id)).mappings().all()
    ids: dict[int, int] = {}
    plain: list[dict[str, Any]] = []
    for row in rows:
        values = {k: v for k, v in row.items() if k != "id"}
        for column, new in remap.items():
            values[column] = new.get(values[column]) if isinstance(new, dict) else new
        if keep_ids:
            ids[row["id"]] = conn.execute(
                insert(table).values(values).returning(table.c.id)
            ).scalar_one()
        else:
            plain.append(values)
    if plain:
        conn.execute(insert(table), plain)
    return ids


def add_v2_season(
    engine: Engine, version: str = "v2", constants: dict[str, Any] | None = None
) -> list[int]:
    """Every cohort again, stamped v2 (or `version` with stamp `constants`), numbered and dated
    after the v1 season; their numbers."""
    numbers: list[int] = []
    with engine.begin() as conn:
        cohorts = conn.execute(select(COHORTS).order_by(COHORTS.c.number)).mappings().all()
        top, last = max(c["number"] for c in cohorts), max(c["week_start"] for c in cohorts)
        for k, cohort in enumerate(cohorts, start=1):
            values = {key: value for key, value in cohort.items() if key != "id"}
            values.update(
                number=top + k,
                week_start=last + timedelta(weeks=10 + k),
                methodology_version=version,
                constants=constants or Methodology(version="v2").stamp(),
            )
            new_id = conn.execute(insert(COHORTS).values(values).returning(COHORTS.c.id))
            cohort_id = new_id.scalar_one()
            numbers.append(top + k)
            agents = _copy(
                conn, AGENTS, AGENTS.c.cohort_id == cohort["id"], {"cohort_id": cohort_id}
            )
            old = list(agents)
            decisions = _copy(
                conn,
                DECISIONS,
                DECISIONS.c.agent_id.in_(old),
                {"agent_id": agents, "cohort_id": cohort_id},
            )
            positions = _copy(conn, POSITIONS, POSITIONS.c.agent_id.in_(old), {"agent_id": agents})
            trades = _copy(
                conn,
                TRADES,
                TRADES.c.agent_id.in_(old),
                {"agent_id": agents, "decision_id": decisions, "position_id": positions},
            )
            _copy(
                conn,
                BRIER_SCORES,
                BRIER_SCORES.c.agent_id.in_(old),
                {"agent_id": agents, "trade_id": trades},
                keep_ids=False,
            )
            _copy(
                conn,
                PORTFOLIO_SNAPSHOTS,
                PORTFOLIO_SNAPSHOTS.c.agent_id.in_(old),
                {"agent_id": agents},
                keep_ids=False,
            )
    rebuild_rollups(engine)
    return numbers


@contextmanager
def v1_and_v2_seasons(
    demo_seasons: DemoSeasons, folder: Path
) -> Iterator[tuple[Engine, Engine, list[int]]]:
    """The baselines' v1 season, and a copy of it with the v2 season added (its numbers).

    Nine days (`BASELINE_DAYS`, the season tests/test_demo_stated.py plays too): both cohorts
    decided and have settled bets, so every figure compared has rows to pool or not. The
    database with both is built once per run too (`DemoSeasons.once`), for this module and
    tests/test_v2_read.py."""

    def add_to_a_copy(into: Path) -> list[int]:
        engine = create_db_engine(demo_seasons.copy(into, BASELINES, "", BASELINE_DAYS))
        try:
            return add_v2_season(engine)
        finally:
            engine.dispose()
            checkpoint(into / "demo.db")

    built, numbers = demo_seasons.once("the baselines' v1 season and its v2 copy", add_to_a_copy)
    (folder / "both").mkdir(parents=True)
    shutil.copyfile(built / "demo.db", folder / "both" / "demo.db")
    v1_only = create_db_engine(demo_seasons.copy(folder / "v1", BASELINES, "", BASELINE_DAYS))
    both = create_db_engine(f"sqlite:///{folder / 'both' / 'demo.db'}")
    try:
        yield v1_only, both, numbers
    finally:
        v1_only.dispose()
        both.dispose()


@pytest.fixture(scope="module")
def seasons(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, Engine, list[int]]]:
    with v1_and_v2_seasons(demo_seasons, tmp_path_factory.mktemp("v2_scope")) as found:
        yield found


def test_the_v1_figures_ignore_the_v2_season(
    seasons: tuple[Engine, Engine, list[int]],
) -> None:
    v1_only, both, v2_numbers = seasons
    assert excluded_cohorts(v1_only) == []
    assert excluded_cohorts(both) == v2_numbers
    args: dict[str, Any] = {"replicates": 200, "null_seeds": 5}
    pd.testing.assert_frame_equal(leaderboard(v1_only, **args), leaderboard(both, **args))
    pd.testing.assert_frame_equal(
        calibration_summary(v1_only, replicates=200), calibration_summary(both, replicates=200)
    )
    pd.testing.assert_frame_equal(brier_rows(v1_only), brier_rows(both))


def test_the_v2_season_is_there_to_leave_out(seasons: tuple[Engine, Engine, list[int]]) -> None:
    """The copy is a real season: chosen by number, a v2 cohort reads as its v1 original."""
    v1_only, both, v2_numbers = seasons
    first_v2 = v2_numbers[0]
    original = brier_rows(v1_only, cohort=1)
    copied = brier_rows(both, cohort=first_v2)
    assert len(original) > 0 and len(copied) == len(original)
    board = leaderboard(both, cohort=first_v2, replicates=200, null_seeds=5)
    assert list(board["family_id"]) == list(
        leaderboard(v1_only, cohort=1, replicates=200, null_seeds=5)["family_id"]
    )
