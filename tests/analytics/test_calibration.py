"""Calibration read models on SQLite and PostgreSQL: the hand-computed book and the season."""

import math
from datetime import date

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine

from arena.analytics.stats import calibration as cal
from arena.analytics.stats import leaderboard as lb
from arena.core import stats
from arena.core.errors import InputError
from tests.analytics import AT, build_book, season_fixture

season = season_fixture()

# the book's Brier rows (forecast, won, market price) per family, worked out by hand
A_ROWS = [(500 / 2500, 1, 0.4), (200 / 2375, 0, 0.3), (100 / 2500, 1, 0.8)]
B_ROWS = [(1000 / 2500, 0, 0.6), (100 / 2250, 1, 0.8)]


@pytest.fixture
def book(engine: Engine) -> Engine:
    build_book(engine)
    return engine


def test_reliability_table_by_hand(book: Engine) -> None:
    table = cal.reliability(book)
    assert list(table.columns) == list(cal.RELIABILITY_COLUMNS)
    assert len(table) == 2 * 10  # every bin of each family with resolved bets
    a = table[table["family_id"] == "m-a"].set_index("bin")
    assert a["count"].tolist() == [2, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    assert a.loc[0, "mean_forecast"] == pytest.approx((200 / 2375 + 0.04) / 2)
    assert a.loc[0, "observed_rate"] == 0.5 and a.loc[2, "observed_rate"] == 1.0
    assert math.isnan(a.loc[5, "mean_forecast"])
    market = cal.reliability(book, forecaster="market", bins=5)
    a_market = market[market["family_id"] == "m-a"].set_index("bin")
    assert a_market["count"].tolist() == [0, 1, 1, 0, 1]  # prices 0.3, 0.4, 0.8
    with pytest.raises(ValueError):
        cal.reliability(book, forecaster="oracle")


def test_summary_by_hand_and_identical_to_the_leaderboard(book: Engine) -> None:
    summary = cal.calibration_summary(book, replicates=500, seed=4).set_index("family_id")
    assert list(summary.reset_index().columns) == list(cal.CALIBRATION_COLUMNS)
    board = lb.leaderboard(book, replicates=500, seed=4, null_seeds=0).set_index("family_id")
    for fid, rows in (("m-a", A_ROWS), ("m-b", B_ROWS)):
        forecasts = [f for f, _, _ in rows]
        outcomes = [o for _, o, _ in rows]
        got = summary.loc[fid]
        expected = stats.murphy_decomposition(forecasts, outcomes)
        assert got["brier"] == pytest.approx(np.mean([(f - o) ** 2 for f, o, _ in rows]))
        assert got["reliability"] - got["resolution"] + got["uncertainty"] + got[
            "residual"
        ] == pytest.approx(got["brier"], abs=1e-12)
        assert got["ece"] == pytest.approx(expected.ece)
        assert got["market_brier"] == pytest.approx(np.mean([(p - o) ** 2 for _, o, p in rows]))
        for column in (
            "brier",
            "brier_ci_low",
            "brier_ci_high",
            "market_brier",
            "market_brier_ci_low",
            "skill_vs_market",
            "skill_vs_market_ci_high",
        ):
            assert got[column] == pytest.approx(board.loc[fid, column]), column
        assert got["resolved_bets"] == board.loc[fid, "resolved_bets"]
    assert "baseline-cash" not in summary.index  # no resolved bet, no calibration row


def test_brier_over_time_by_utc_date(book: Engine) -> None:
    series = cal.brier_over_time(book)
    assert list(series.columns) == list(cal.BRIER_OVER_TIME_COLUMNS)
    a = series[series["family_id"] == "m-a"].reset_index(drop=True)
    # m1 and m2 settled at 23:30 UTC on AT's date, m3 on the next date
    assert a["date"].tolist() == [AT.date(), date.fromordinal(AT.date().toordinal() + 1)]
    assert a["resolved_bets"].tolist() == [2, 3]
    first = [(f - o) ** 2 for f, o, _ in A_ROWS[:2]]
    assert a.loc[0, "cumulative_brier"] == pytest.approx(sum(first) / 2)
    everything = [(f - o) ** 2 for f, o, _ in A_ROWS]
    assert a.loc[1, "cumulative_brier"] == pytest.approx(sum(everything) / 3)
    assert a.loc[1, "cumulative_market_brier"] == pytest.approx((0.36 + 0.09 + 0.04) / 3)


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_utc_dates_do_not_follow_the_postgres_session_time_zone(book: Engine, db_url: str) -> None:
    """A session in Auckland (UTC+13) must still group 23:30 UTC under the UTC date."""
    far = create_engine(db_url, connect_args={"options": "-c timezone=Pacific/Auckland"})
    try:
        pd.testing.assert_frame_equal(cal.brier_over_time(far), cal.brier_over_time(book))
    finally:
        far.dispose()


def test_an_empty_scope_and_an_unknown_cohort(engine: Engine) -> None:
    assert cal.reliability(engine).empty and cal.calibration_summary(engine).empty
    assert cal.brier_over_time(engine).empty
    with pytest.raises(InputError):
        cal.reliability(engine, cohort=3)


def test_season_calibration_agrees_with_the_rows(season: Engine) -> None:
    rows = cal.brier_rows(season)
    table = cal.reliability(season)
    summary = cal.calibration_summary(season, replicates=300).set_index("family_id")
    over_time = cal.brier_over_time(season)
    for fid, group in rows.groupby("family_id"):
        mine = table[table["family_id"] == fid]
        assert mine["count"].sum() == len(group)
        naive = group.assign(bin=np.minimum((group["forecast_probability"] * 10).astype(int), 9))
        rates = naive.groupby("bin")["actual_outcome"].mean()
        for k, rate in rates.items():
            assert mine.set_index("bin").loc[k, "observed_rate"] == pytest.approx(rate)
        got = summary.loc[fid]
        assert got["brier"] == pytest.approx(group["brier_score"].mean())
        total = got["reliability"] - got["resolution"] + got["uncertainty"] + got["residual"]
        assert total == pytest.approx(got["brier"], abs=1e-12)
        last = over_time[over_time["family_id"] == fid].iloc[-1]
        assert last["cumulative_brier"] == pytest.approx(got["brier"])
        assert last["resolved_bets"] == len(group)
        assert over_time[over_time["family_id"] == fid]["resolved_bets"].is_monotonic_increasing


EDGE_FORECASTS = [0.0, 0.05, 0.1, 0.3, 0.7, 0.9, 0.99999, 1 - 2**-53, 1.0, 0.2999999999999999]


@pytest.mark.parametrize("bins", [1, 3, 10, 20])
def test_sql_bins_agree_with_numpy_on_edge_forecasts(engine: Engine, bins: int) -> None:
    """The SQL binning multiplies the same doubles numpy does (0.3·10 > 3, 1 − 2⁻⁵³ → last)."""
    from sqlalchemy import Float, literal, select

    with engine.connect() as conn:
        got = [
            conn.execute(
                select(cal.bin_of(literal(f, Float(precision=53)), bins, engine.dialect.name))
            ).scalar_one()
            for f in EDGE_FORECASTS
        ]
    assert got == stats.bin_index(np.array(EDGE_FORECASTS), bins).tolist()


@pytest.mark.parametrize("forecaster", cal.FORECASTERS)
def test_season_reliability_equals_numpy_bins(season: Engine, forecaster: str) -> None:
    """The table summed in SQL is `stats.reliability_bins` over the family's own rows."""
    rows = cal.brier_rows(season)
    table = cal.reliability(season, forecaster=forecaster)
    assert sorted(set(table["family_id"])) == sorted(set(rows["family_id"]))
    for fid, group in rows.groupby("family_id"):
        expected = stats.reliability_bins(*cal._forecasts(group, forecaster))
        mine = table[table["family_id"] == fid]
        assert mine["count"].tolist() == expected.count.tolist()
        np.testing.assert_allclose(mine["mean_forecast"], expected.mean_forecast, rtol=1e-12)
        np.testing.assert_allclose(mine["observed_rate"], expected.observed_rate, rtol=1e-12)
        np.testing.assert_array_equal(mine["bin_low"], expected.low)
