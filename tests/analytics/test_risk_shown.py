"""Risk where a researcher reads it: the leaderboard's columns (frame, CSV, `arena leaderboard`),
their v1 scope, pooled replicates, and the Risk section's words; hand-computed curves."""

import io
import math
import statistics
from datetime import timedelta
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine

from arena.analytics.stats import leaderboard as lb
from arena.analytics.stats import risk
from arena.app.cli import main
from arena.config import Methodology, cohort_stamp
from arena.dashboard.risk_section import agent_figures, risk_figures
from arena.engine.rollups import rebuild_rollups
from arena.storage.db import session_scope
from arena.storage.models import Agent, PortfolioSnapshot
from arena.storage.tables import COHORTS
from tests.factories import WEEK1, new_cohort_agents

DAY = timedelta(days=1)
EVENING = timedelta(hours=23, minutes=50)
FAST: dict[str, Any] = {"replicates": 50, "null_seeds": 0}

# v1 cohort 1, family "fam": end-of-day 10500, 9450, 9900 (+5%, −10%, +4.76%), an intraday
# high of 10800 on day 1. "other": flat at 10000 (no volatility: no Sharpe).
A_CURVE = [(timedelta(hours=12), "10800"), (EVENING, "10500"), (DAY + EVENING, "9450")]
A_CURVE += [(2 * DAY + EVENING, "9900")]
OTHER_CURVE = [(EVENING, "10000"), (DAY + EVENING, "10000"), (2 * DAY + EVENING, "10000")]
# Extended cohort 2 (two replicates of "fam", week 2): r1 11000 then 8000, r2 9000 then 9000.
WEEK2 = timedelta(weeks=1)
R1_CURVE = [(WEEK2 + EVENING, "11000"), (WEEK2 + DAY + EVENING, "8000")]
R2_CURVE = [(WEEK2 + EVENING, "9000"), (WEEK2 + DAY + EVENING, "9000")]


def add_curve(engine: Engine, agent_id: int, curve: list[tuple[timedelta, str]]) -> None:
    with session_scope(engine) as s:
        for offset, value in curve:
            at = WEEK1 + offset
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


def add_replicate(engine: Engine, like: int) -> int:
    """A second agent (replicate 2) of agent `like`'s family in its cohort."""
    with session_scope(engine) as s:
        first = s.get(Agent, like)
        assert first is not None
        agent = Agent(
            cohort_id=first.cohort_id,
            family_id=first.family_id,
            model_id=first.model_id,
            display_name=f"{first.display_name} · r2",
            replicate=2,
            starting_balance=D("10000"),
            cash_balance=D("10000"),
        )
        s.add(agent)
        s.flush()
        assert agent.id is not None
        return agent.id


@pytest.fixture
def curves(engine: Engine) -> Engine:
    a, other = new_cohort_agents(engine, ("fam", "other"), number=1)
    (r1,) = new_cohort_agents(engine, ("fam",), number=2)
    r2 = add_replicate(engine, r1)
    stamp = cohort_stamp(Methodology(), replicates=2)
    with engine.begin() as conn:
        conn.execute(update(COHORTS).where(COHORTS.c.number == 2).values(constants=stamp))
    for agent, curve in ((a, A_CURVE), (other, OTHER_CURVE), (r1, R1_CURVE), (r2, R2_CURVE)):
        add_curve(engine, agent, curve)
    rebuild_rollups(engine)
    return engine


def sharpe_by_hand(returns: list[float]) -> float:
    return statistics.mean(returns) / statistics.stdev(returns) * math.sqrt(365)


def test_all_cohorts_are_v1_only_and_equal_the_database_without_the_extended_one(
    curves: Engine,
) -> None:
    frame = risk.leaderboard_risk(curves)
    fam = frame.loc["fam"]
    assert fam["max_drawdown_pct"] == pytest.approx(10.0)  # 1.05 → 0.945 on the daily index
    assert fam["sharpe"] == pytest.approx(sharpe_by_hand([0.05, -0.10, 450 / 9450]))
    assert fam["sharpe_days"] == 3
    assert frame.loc["other", "max_drawdown_pct"] == 0.0
    # Cohort 1 alone is the database without the extended cohort 2: the very same figures.
    pd.testing.assert_frame_equal(frame, risk.leaderboard_risk(curves, cohort=1))


def test_a_chosen_extended_cohort_reads_as_it_is_with_its_replicates_pooled(
    curves: Engine,
) -> None:
    fam = risk.leaderboard_risk(curves, cohort=2).loc["fam"]
    # Day 1: (+1000 − 1000) / 20000 = 0; day 2: (−3000 + 0) / 20000 = −15%.
    assert fam["max_drawdown_pct"] == pytest.approx(15.0)
    assert fam["sharpe"] == pytest.approx(sharpe_by_hand([0.0, -0.15]))
    assert fam["sharpe_days"] == 2
    agents = risk.agent_risk(curves, cohort=2, family="fam", replicate=1)
    assert len(agents) == 1
    assert agents.iloc[0]["max_drawdown"] == pytest.approx(3000 / 11000)


def test_the_leaderboard_carries_the_risk_columns(curves: Engine) -> None:
    board = lb.leaderboard(curves, **FAST).set_index("family_id")
    at = lb.LEADERBOARD_COLUMNS.index(risk.LEADERBOARD_RISK_COLUMNS[0])
    assert list(risk.LEADERBOARD_RISK_COLUMNS) == list(lb.LEADERBOARD_COLUMNS[at : at + 4])
    expected = risk.leaderboard_risk(curves)
    pd.testing.assert_frame_equal(
        board[list(risk.LEADERBOARD_RISK_COLUMNS)].sort_index(),
        expected.sort_index(),
        check_names=False,
    )
    chosen = lb.leaderboard(curves, cohort=2, **FAST).set_index("family_id")
    assert chosen.loc["fam", "max_drawdown_pct"] == pytest.approx(15.0)


def test_the_csv_has_the_raw_risk_columns(curves: Engine) -> None:
    out = io.StringIO()
    lb.write_leaderboard_csv(lb.leaderboard(curves, **FAST), out)
    parsed = pd.read_csv(io.StringIO(out.getvalue())).set_index("family_id")
    header = out.getvalue().splitlines()[0].split(",")
    at = header.index("max_drawdown_pct")
    assert header[at : at + 4] == ["max_drawdown_pct", "sharpe", "sharpe_se", "sharpe_days"]
    assert parsed.loc["fam", "max_drawdown_pct"] == pytest.approx(10.0)
    assert parsed.loc["fam", "sharpe_days"] == 3
    assert math.isnan(parsed.loc["other", "sharpe"])  # flat: an empty cell, no Sharpe
    assert parsed.loc["other", "max_drawdown_pct"] == 0.0


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    out, _ = capsys.readouterr()
    return int(exited.value.code or 0), out


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_arena_leaderboard_shows_drawdown_and_sharpe(
    curves: Engine,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
    code, out = run(["leaderboard"], capsys)
    assert code == 0 and "max DD %" in out and "Sharpe" in out
    flat = next(line for line in out.splitlines() if " other " in line)
    assert "0.0" in flat and "—" in flat
    fam = next(line for line in out.splitlines() if " fam " in line)
    sharpe = sharpe_by_hand([0.05, -0.10, 450 / 9450])
    assert "10.0" in fam and f"{sharpe:.2f} ± " in fam
    assert max(len(line) for line in out.splitlines()) <= 240
    code, out = run(["leaderboard", "--cohort", "2"], capsys)
    assert code == 0 and "15.0" in next(line for line in out.splitlines() if " fam " in line)


def test_the_section_s_words() -> None:
    shown = risk_figures(
        {"max_drawdown_pct": 8.44, "sharpe": 0.4234, "sharpe_se": 0.18, "sharpe_days": 36},
        drawdown_on="its curve",
    )
    assert [(f.label, f.value, f.note) for f in shown] == [
        ("Max drawdown", "−8.4%", None),
        ("Sharpe (annualised)", "0.42 ± 0.18", "daily, n = 36"),
    ]
    empty = risk_figures({}, drawdown_on="its curve")
    assert [(f.value, f.note) for f in empty] == [("—", None), ("—", "no daily return yet")]
    agent = agent_figures({"max_drawdown": 0.25, "sharpe": -1.0, "sharpe_se": 2.0, "days": 1})
    assert [f.value for f in risk_figures(agent, drawdown_on="x")] == ["−25.0%", "−1.00 ± 2.00"]


def test_an_empty_database(engine: Engine, tmp_path: Path) -> None:
    assert risk.leaderboard_risk(engine).empty
    assert list(risk.leaderboard_risk(engine).columns) == list(risk.LEADERBOARD_RISK_COLUMNS)
