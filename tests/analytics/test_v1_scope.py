"""All cohorts means all v1 cohorts (methodology §18), on SQLite and PostgreSQL.

The analytics season (three v1 cohorts of the baselines and the oracle) is copied twice: once
with cohort 3 re-stamped as a `stated_probability` cohort ("mixed"), once with cohort 3 deleted
("without"). Every all-cohort statistic of the mixed database (leaderboard with its bootstrap
and random null, calibration, risk, paired comparisons, the family returns, the curves) must
equal the database without the extended cohort, to the last bit; cohort 3 chosen by number
must still read, and read as it did before it was re-stamped. The stamp itself is read alike
by SQL on both backends and by `stamped_extensions`, whatever its `extensions` holds.
"""

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Engine

from arena.analytics.query.scope import cohort_id_of, excluded_cohorts, in_scope
from arena.analytics.stats import calibration, paired, risk
from arena.analytics.stats import leaderboard as lb
from arena.analytics.stats.random_null import database_random_null
from arena.analytics.views import agents, curves
from arena.config import Methodology, cohort_stamp, stamped_extensions
from arena.storage.db import create_db_engine, dispose_engines
from arena.storage.tables import (
    AGENTS,
    BRIER_SCORES,
    COHORTS,
    DECISION_ATTEMPTS,
    DECISIONS,
    PORTFOLIO_ROLLUPS,
    PORTFOLIO_SNAPSHOTS,
    POSITIONS,
    TRADES,
)
from tests.analytics import season_url
from tests.backends import BACKENDS
from tests.pg import PostgresCluster

EXTENDED = 3  # the cohort re-stamped in the mixed copy
FAST: dict[str, Any] = {"replicates": 200, "seed": 3}


def copy_of(backend: str, url: str, request: pytest.FixtureRequest, folder: Path) -> str:
    """A copy of the database at `url`: a whole SQLite file, or a PostgreSQL database
    created from it as a template."""
    if backend == "sqlite":
        target = folder / f"copy-{len(list(folder.iterdir()))}.db"
        source = url.removeprefix("sqlite:///")
        with sqlite3.connect(source) as origin, sqlite3.connect(target) as copy:
            origin.backup(copy)  # the WAL included
        return f"sqlite:///{target}"
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    dispose_engines()  # a template database must have no other connection
    return cluster.new_database(template=url.rsplit("/", 1)[1])


def restamp(engine: Engine, number: int) -> None:
    """Cohort `number` stamped as a `stated_probability` cohort, everything else kept."""
    with engine.begin() as conn:
        stamp = conn.execute(
            select(COHORTS.c.constants).where(COHORTS.c.number == number)
        ).scalar_one()
        extended = {k: v for k, v in stamp.items() if k != "is_default"}
        extended.update(extensions=["stated_probability"], is_default=False)
        conn.execute(update(COHORTS).where(COHORTS.c.number == number).values(constants=extended))


def drop_cohort(engine: Engine, number: int) -> None:
    """Cohort `number` and everything of its agents deleted, as if it never ran."""
    with engine.begin() as conn:
        cid = conn.execute(select(COHORTS.c.id).where(COHORTS.c.number == number)).scalar_one()
        theirs = select(AGENTS.c.id).where(AGENTS.c.cohort_id == cid)
        decided = select(DECISIONS.c.id).where(DECISIONS.c.cohort_id == cid)
        for table in (BRIER_SCORES, TRADES, POSITIONS, PORTFOLIO_SNAPSHOTS, PORTFOLIO_ROLLUPS):
            conn.execute(delete(table).where(table.c.agent_id.in_(theirs)))
        conn.execute(delete(DECISION_ATTEMPTS).where(DECISION_ATTEMPTS.c.decision_id.in_(decided)))
        conn.execute(delete(DECISIONS).where(DECISIONS.c.cohort_id == cid))
        conn.execute(delete(AGENTS).where(AGENTS.c.cohort_id == cid))
        conn.execute(delete(COHORTS).where(COHORTS.c.id == cid))


@pytest.fixture(params=BACKENDS, scope="module")
def seasons(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Engine]]:
    """The season as played, mixed (cohort 3 extended) and without cohort 3."""
    backend = request.param
    if backend == "postgres":
        new_database = request.getfixturevalue("pg_cluster").new_database
    else:

        def new_database() -> str:
            raise AssertionError("SQLite needs no server database")

    folder = tmp_path_factory.getbasetemp() / "analytics-season"
    folder.mkdir(exist_ok=True)
    played = season_url(backend, new_database, folder)
    copies = tmp_path_factory.mktemp("v1-scope")
    urls = {
        "mixed": copy_of(backend, played, request, copies),
        "without": copy_of(backend, played, request, copies),
    }
    engines = {name: create_db_engine(url) for name, url in urls.items()}
    restamp(engines["mixed"], EXTENDED)
    drop_cohort(engines["without"], EXTENDED)
    engines["played"] = create_db_engine(played)
    try:
        yield engines
    finally:
        for engine in engines.values():
            engine.dispose()
        if backend == "postgres":
            cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
            for url in urls.values():
                cluster.drop_database(url)


def test_the_mixed_database_has_one_extended_cohort(seasons: dict[str, Engine]) -> None:
    assert excluded_cohorts(seasons["mixed"]) == [EXTENDED]
    assert excluded_cohorts(seasons["played"]) == excluded_cohorts(seasons["without"]) == []
    with seasons["mixed"].connect() as conn:
        query = in_scope(select(AGENTS.c.cohort_id).distinct(), None)
        in_all = sorted(conn.execute(query).scalars())
        chosen = conn.execute(
            in_scope(select(AGENTS.c.cohort_id).distinct(), cohort_id_of(conn, EXTENDED))
        ).scalars()
        assert [cohort_id_of(conn, n) for n in (1, 2)] == in_all
        assert list(chosen) == [cohort_id_of(conn, EXTENDED)]


def test_the_all_cohort_leaderboard_leaves_the_extended_cohort_out(
    seasons: dict[str, Engine],
) -> None:
    """Point estimates, bootstrap intervals, P(rank #1) and the random null: all the same as
    on the database that never had cohort 3; and cohort 3 mattered (the season's differs)."""
    mixed = lb.leaderboard(seasons["mixed"], null_seeds=20, **FAST)
    without = lb.leaderboard(seasons["without"], null_seeds=20, **FAST)
    pd.testing.assert_frame_equal(mixed, without, check_exact=True)
    assert set(mixed["cohorts"]) == {2}
    assert mixed["random_null_percentile"].notna().any()
    played = lb.leaderboard(seasons["played"], null_seeds=20, **FAST)
    assert set(played["cohorts"]) == {3}
    assert not played["total_pnl"].equals(mixed["total_pnl"])
    null = database_random_null(seasons["mixed"], seeds=range(3))
    assert sorted(set(null["cohort_number"])) == [1, 2]


def test_the_extended_cohort_chosen_by_number_reads_as_before(seasons: dict[str, Engine]) -> None:
    board = lb.leaderboard(seasons["mixed"], cohort=EXTENDED, null_seeds=20, **FAST)
    before = lb.leaderboard(seasons["played"], cohort=EXTENDED, null_seeds=20, **FAST)
    assert len(board) == 4 and set(board["cohorts"]) == {1}
    pd.testing.assert_frame_equal(board, before, check_exact=True)
    summary = calibration.calibration_summary(seasons["mixed"], cohort=EXTENDED, **FAST)
    assert not summary.empty
    pd.testing.assert_frame_equal(
        summary,
        calibration.calibration_summary(seasons["played"], cohort=EXTENDED, **FAST),
        check_exact=True,
    )
    pd.testing.assert_frame_equal(
        risk.family_risk(seasons["mixed"], cohort=EXTENDED),
        risk.family_risk(seasons["played"], cohort=EXTENDED),
    )
    curve = curves.portfolio_curves(seasons["mixed"], "ALL", cohort=EXTENDED)
    assert not curve.empty
    pd.testing.assert_frame_equal(
        curve, curves.portfolio_curves(seasons["played"], "ALL", cohort=EXTENDED)
    )


def test_calibration_risk_and_paired_leave_it_out(seasons: dict[str, Engine]) -> None:
    mixed, without = seasons["mixed"], seasons["without"]
    summary = calibration.calibration_summary(mixed, **FAST)
    assert not summary.empty and summary["resolved_bets"].sum() > 0
    pd.testing.assert_frame_equal(
        summary, calibration.calibration_summary(without, **FAST), check_exact=True
    )
    played = calibration.calibration_summary(seasons["played"], **FAST)
    assert played["resolved_bets"].sum() > summary["resolved_bets"].sum()
    for forecaster in ("implied", "market"):
        pd.testing.assert_frame_equal(
            calibration.reliability(mixed, forecaster=forecaster),
            calibration.reliability(without, forecaster=forecaster),
        )
    pd.testing.assert_frame_equal(
        calibration.brier_over_time(mixed), calibration.brier_over_time(without)
    )
    pd.testing.assert_frame_equal(risk.agent_risk(mixed), risk.agent_risk(without))
    pd.testing.assert_frame_equal(risk.family_risk(mixed), risk.family_risk(without))
    assert set(risk.agent_risk(mixed)["cohort_number"]) == {1, 2}
    pd.testing.assert_frame_equal(
        paired.family_comparison(mixed, "oracle", "baseline-random", **FAST),
        paired.family_comparison(without, "oracle", "baseline-random", **FAST),
        check_exact=True,
    )


def test_family_returns_and_curves_across_cohorts_leave_it_out(
    seasons: dict[str, Engine],
) -> None:
    mixed, without = seasons["mixed"], seasons["without"]
    pd.testing.assert_frame_equal(agents.family_returns(mixed), agents.family_returns(without))
    for family in (None, "oracle"):
        for range_key in ("ALL", "1D"):
            shown = curves.portfolio_curves(mixed, range_key, family=family)
            assert not shown.empty
            pd.testing.assert_frame_equal(
                shown, curves.portfolio_curves(without, range_key, family=family)
            )
        assert curves.curve_window(mixed, family=family) == curves.curve_window(
            without, family=family
        )
        pd.testing.assert_frame_equal(
            curves.decision_runs(mixed, family=family),
            curves.decision_runs(without, family=family),
        )
    # The listings still show the extended cohort: one family's cohorts, its agents.
    assert 3 in set(agents.family_cohorts(mixed, "oracle")["cohort_number"])
    assert 3 in set(agents.agent_index(mixed)["cohort_number"])
    assert agents.family_returns(seasons["played"])["cohorts"].max() == 3


def test_a_family_only_in_extended_cohorts_is_listed_unranked(seasons: dict[str, Engine]) -> None:
    """Every cohort extended: the family returns list every family, none ranked."""
    engine = seasons["mixed"]
    with engine.begin() as conn:
        stamps = dict(conn.execute(select(COHORTS.c.number, COHORTS.c.constants)).all())
    try:
        for number in (1, 2):
            restamp(engine, number)
        returns = agents.family_returns(engine)
        assert len(returns) == 4 and (returns["rank"] == 0).all()
        assert (returns["cohorts"] == 0).all() and returns["return_pct"].isna().all()
        assert agents.best_llm_family(returns) is None  # the season has no LLM family
        assert lb.leaderboard(engine, null_seeds=0, **FAST).empty
        assert excluded_cohorts(engine) == [1, 2, 3]
    finally:
        with engine.begin() as conn:
            for number in (1, 2):
                conn.execute(
                    update(COHORTS)
                    .where(COHORTS.c.number == number)
                    .values(constants=stamps[number])
                )
    assert excluded_cohorts(engine) == [EXTENDED]


STAMPS: list[dict[str, Any]] = [
    Methodology().stamp(),
    cohort_stamp(Methodology(), ["stated_probability"]),
    cohort_stamp(Methodology(), (), replicates=3),
    {**Methodology().stamp(), "extensions": []},
    {**Methodology().stamp(), "extensions": None},
    {**Methodology().stamp(), "extensions": "stated_probability"},
    {**Methodology().stamp(), "extensions": {"0": "stated_probability"}},
    {},
    {"extensions": ["stated_probability", "replicates"], "replicates": 2},
]


def test_sql_reads_the_stamp_as_stamped_extensions_does(engine: Engine) -> None:
    """Whatever `extensions` holds, SQL on both backends calls a cohort extended exactly when
    `stamped_extensions` names an extension (a v1 stamp has no key at all)."""
    start = datetime(2026, 1, 4, tzinfo=UTC)
    with engine.begin() as conn:
        for number, stamp in enumerate(STAMPS, start=1):
            conn.execute(
                insert(COHORTS).values(
                    number=number,
                    week_start=start + timedelta(weeks=number),
                    methodology_version="v1",
                    constants=stamp,
                    status="deciding",
                )
            )
    expected = [n for n, stamp in enumerate(STAMPS, start=1) if stamped_extensions(stamp)]
    assert expected == [2, 3, 9]
    assert excluded_cohorts(engine) == expected
    with engine.connect() as conn:
        assert excluded_cohorts(conn) == expected


def test_the_note_names_what_is_left_out() -> None:
    from arena.dashboard import notices

    assert notices.left_out_text([]) == ""
    assert notices.left_out_text([3]) == (
        "1 extended cohort (#3) is left out of these v1 figures; "
        "choose it in the cohort filter to see it."
    )
    assert notices.left_out_text([3, 4]) == (
        "2 extended cohorts (#3, #4) are left out of these v1 figures; "
        "choose one in the cohort filter to see it."
    )
