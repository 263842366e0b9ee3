"""Risk read models on SQLite and PostgreSQL: curves with hand-computed drawdown and Sharpe."""

import math
import statistics
from datetime import datetime, timedelta
from decimal import Decimal as D

import pandas as pd
import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine

from arena.analytics.stats import risk
from arena.core.errors import InputError
from arena.engine.rollups import rebuild_rollups
from arena.storage.db import session_scope
from arena.storage.models import PortfolioSnapshot
from tests.analytics import season_fixture
from tests.factories import WEEK1, new_cohort_agents

season = season_fixture()
DAY = timedelta(days=1)

# agent X of cohort 1: (time after WEEK1, total value); end-of-day values 10200, 9500, 11000
X_CURVE = [
    (timedelta(minutes=10), "10000"),
    (timedelta(hours=12), "10500"),
    (timedelta(hours=23, minutes=50), "10200"),
    (DAY, "9000"),
    (DAY + timedelta(hours=23, minutes=50), "9500"),
    (2 * DAY + timedelta(hours=12), "11000"),
]
# agent Y of cohort 2 (same family), from day 2: end-of-day values 10100, 9999
Y_CURVE = [
    (DAY + timedelta(hours=23, minutes=50), "10100"),
    (2 * DAY + timedelta(hours=12), "9999"),
]


def add_curve(engine: Engine, agent_id: int, curve: list[tuple[timedelta, str]]) -> None:
    with session_scope(engine) as s:
        for offset, value in curve:
            at: datetime = WEEK1 + offset
            s.add(
                PortfolioSnapshot(
                    agent_id=agent_id,
                    slot=at,
                    snapshot_timestamp=at,
                    cash_balance=D(value),
                    positions_value=D(0),
                    total_value=D(value),
                    total_pnl=D(value) - D(10000),
                    total_pnl_percent=float((D(value) - D(10000)) / 100),
                )
            )


@pytest.fixture
def curves(engine: Engine) -> Engine:
    (x,) = new_cohort_agents(engine, ("fam",), number=1)
    (y,) = new_cohort_agents(engine, ("fam",), number=2)
    add_curve(engine, x, X_CURVE)
    add_curve(engine, y, Y_CURVE)
    rebuild_rollups(engine)  # written by hand, not by the snapshot job that keeps them
    return engine


def _sharpe_ses(returns: list[float]) -> tuple[float, float]:
    """Annualised Mertens (2002) and Lo (2002) SEs by hand, with population moments."""
    n, mean, sd = len(returns), statistics.mean(returns), statistics.stdev(returns)
    sr = mean / sd
    m2, m3, m4 = (sum((r - mean) ** k for r in returns) / n for k in (2, 3, 4))
    skew, kurt = m3 / m2**1.5, m4 / m2**2
    mertens = math.sqrt((1 + sr**2 / 2 - skew * sr + (kurt - 3) / 4 * sr**2) / n)
    return math.sqrt(365) * mertens, math.sqrt(365) * math.sqrt((1 + sr**2 / 2) / n)


def test_daily_values_take_the_last_snapshot_of_each_utc_date(curves: Engine) -> None:
    daily = risk.daily_values(curves)
    x = daily[daily["cohort_number"] == 1]
    assert x["total_value"].tolist() == [10200.0, 9500.0, 11000.0]
    assert [d.isoformat() for d in x["date"]] == ["2026-11-01", "2026-11-02", "2026-11-03"]
    assert daily[daily["cohort_number"] == 2]["total_value"].tolist() == [10100.0, 9999.0]


def test_agent_risk_by_hand(curves: Engine) -> None:
    frame = risk.agent_risk(curves)
    assert list(frame.columns) == list(risk.AGENT_RISK_COLUMNS)
    x = frame[frame["cohort_number"] == 1].iloc[0]
    returns = [10200 / 10000 - 1, 9500 / 10200 - 1, 11000 / 9500 - 1]
    mean, sd = statistics.mean(returns), statistics.stdev(returns)
    assert x["days"] == 3
    assert x["return_pct"] == pytest.approx(10.0)
    assert x["max_drawdown"] == pytest.approx((10500 - 9000) / 10500)  # intraday trough
    assert x["volatility"] == pytest.approx(sd * math.sqrt(365))
    assert x["sharpe"] == pytest.approx(mean / sd * math.sqrt(365))
    assert (x["sharpe_se"], x["sharpe_se_iid"]) == pytest.approx(_sharpe_ses(returns))
    assert x["sharpe_se_iid"] == pytest.approx(
        math.sqrt(365) * math.sqrt((1 + 0.5 * (mean / sd) ** 2) / 3)
    )
    y = frame[frame["cohort_number"] == 2].iloc[0]
    assert y["max_drawdown"] == pytest.approx((10100 - 9999) / 10100)


def test_family_risk_is_the_combined_book_by_hand(curves: Engine) -> None:
    frame = risk.family_risk(curves)
    assert list(frame.columns) == list(risk.FAMILY_RISK_COLUMNS)
    fam = frame.iloc[0]
    # day 1: X alone +200 on 10000; day 2: X −700, Y +100 (its first day) on 10200 + 10000;
    # day 3: X +1500, Y −101 on 9500 + 10100
    returns = [200 / 10000, -600 / 20200, 1399 / 19600]
    mean, sd = statistics.mean(returns), statistics.stdev(returns)
    assert (fam["cohorts"], fam["days"]) == (2, 3)
    assert fam["sharpe"] == pytest.approx(mean / sd * math.sqrt(365))
    assert fam["volatility"] == pytest.approx(sd * math.sqrt(365))
    assert (fam["sharpe_se"], fam["sharpe_se_iid"]) == pytest.approx(_sharpe_ses(returns))
    assert fam["max_drawdown"] == pytest.approx(600 / 20200)
    series = risk.combined_daily_returns(risk.daily_values(curves))
    assert series.tolist() == pytest.approx(returns)


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_daily_values_ignore_the_postgres_session_time_zone(curves: Engine, db_url: str) -> None:
    far = create_engine(db_url, connect_args={"options": "-c timezone=Pacific/Auckland"})
    try:
        pd.testing.assert_frame_equal(risk.daily_values(far), risk.daily_values(curves))
    finally:
        far.dispose()


def test_cohort_scope(curves: Engine) -> None:
    one = risk.agent_risk(curves, cohort=2)
    assert one["cohort_number"].tolist() == [2]
    with pytest.raises(InputError):
        risk.family_risk(curves, cohort=7)


def test_empty_database(engine: Engine) -> None:
    assert risk.agent_risk(engine).empty and risk.family_risk(engine).empty


def test_season_risk_is_consistent_with_the_snapshots(season: Engine) -> None:
    agents = risk.agent_risk(season)
    families = risk.family_risk(season)
    assert len(agents) == 12 and len(families) == 4
    cash = agents[agents["family_id"] == "baseline-cash"]
    assert (cash["max_drawdown"] == 0).all() and (cash["volatility"] == 0).all()
    assert ((agents["max_drawdown"] >= 0) & (agents["max_drawdown"] <= 1)).all()
    daily = risk.daily_values(season)
    for _, row in agents.iterrows():
        mine = daily[daily["agent_id"] == row["agent_id"]]
        assert row["days"] == len(mine)
        curve = [10000.0, *mine["total_value"]]
        worst_daily = max(
            (max(curve[: i + 1]) - v) / max(curve[: i + 1]) for i, v in enumerate(curve)
        )
        assert row["max_drawdown"] >= worst_daily - 1e-12  # the 10-minute curve sees more
