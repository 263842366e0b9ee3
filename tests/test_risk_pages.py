"""The Risk section of the Family and Agent pages (AppTest on the season built through the real
jobs): what it shows equals the risk read models, formatted as a person reads it."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from arena.analytics.stats.risk import agent_risk, leaderboard_risk
from arena.dashboard import fmt
from arena.storage.db import create_db_engine
from tests.analytics.season import LLM_A, Season
from tests.dashboard_caches import clear_dashboard_caches

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboard.py"


@pytest.fixture
def season_engine(season: Season, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD", raising=False)
    monkeypatch.setenv("ARENA_DATABASE_URL", season.url)
    clear_dashboard_caches()
    engine = create_db_engine(season.url, role="reader")
    yield engine
    engine.dispose()
    clear_dashboard_caches()


def run(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(str(DASHBOARD), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def shown(at: AppTest) -> dict[str, tuple[str, str | None]]:
    return {m.label: (m.value, m.proto.delta or None) for m in at.metric}


def test_family_page_shows_its_combined_book_risk(season_engine: Engine) -> None:
    at = run("family", family=LLM_A)
    assert "Risk" in [s.value for s in at.subheader]
    expected = leaderboard_risk(season_engine).loc[LLM_A]
    metrics = shown(at)
    assert metrics["Max drawdown"][0] == fmt.drawdown(expected["max_drawdown_pct"]) != fmt.DASH
    assert metrics["Sharpe (annualised)"] == (
        fmt.sharpe(expected["sharpe"], expected["sharpe_se"]),
        f"daily, n = {int(expected['sharpe_days'])}",
    )
    assert any("combined book" in c.value for c in at.caption)
    # With the leaderboard computed (the person asked), the row's figures: the same numbers.
    at.session_state["_live:leaderboard:None"] = True
    at.run()
    assert shown(at)["Max drawdown"] == metrics["Max drawdown"]
    assert shown(at)["Sharpe (annualised)"] == metrics["Sharpe (annualised)"]


def test_agent_page_shows_its_own_risk(season_engine: Engine) -> None:
    at = run("agent", cohort="1", family=LLM_A)
    assert "Risk" in [s.value for s in at.subheader]
    mine = agent_risk(season_engine, cohort=1, family=LLM_A).iloc[0]
    metrics = shown(at)
    assert metrics["Max drawdown"][0] == fmt.drawdown(mine["max_drawdown"] * 100) != fmt.DASH
    assert metrics["Sharpe (annualised)"][0] == fmt.sharpe(mine["sharpe"], mine["sharpe_se"])
    assert metrics["Sharpe (annualised)"][1] == f"daily, n = {int(mine['days'])}"
    assert any("10-minute" in c.value for c in at.caption)
