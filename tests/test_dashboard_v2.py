"""The dashboard's methodology v2 read side in AppTest (real entry script, real SQLite files):
the sidebar's methodology selector, the v2 leaderboard, and a v1-only database unchanged.

The mixed database is the season of `tests.analytics.season` with every cohort copied as a v2
cohort (`tests.test_v2_scope.add_v2_season`), its analyses stored by the real hourly job.
"""

import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from streamlit.testing.v1 import AppTest

from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.stored import stored_result
from arena.dashboard import fmt
from arena.engine.analyses import store_analyses
from arena.storage.db import create_db_engine
from tests.analytics.season import Season, sqlite_season
from tests.dashboard_caches import clear_dashboard_caches
from tests.test_dashboard_apptest import _all_text, _ok, _run
from tests.test_v2_scope import add_v2_season


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    clear_dashboard_caches()
    yield
    clear_dashboard_caches()


@pytest.fixture
def use_database(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    def _use(url: str) -> None:
        monkeypatch.setenv("ARENA_DATABASE_URL", url)
        clear_dashboard_caches()

    return _use


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Season:
    return sqlite_season(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def mixed_url(season: Season, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The season plus its v2 copy, with the hourly job's stored analyses (v1's and v2's)."""
    path = tmp_path_factory.mktemp("v2_dashboard") / "mixed.db"
    shutil.copy(season.url.removeprefix("sqlite:///"), path)
    url = f"sqlite:///{path}"
    engine = create_db_engine(url)
    try:
        add_v2_season(engine)
        store_analyses(engine, datetime(2030, 1, 1, tzinfo=UTC))
    finally:
        engine.dispose()
    return url


def _selectors(at: AppTest) -> list[str]:
    return [str(box.label) for box in at.sidebar.selectbox]


def test_a_v1_only_database_shows_no_selector(
    season: Season, use_database: Callable[[str], None]
) -> None:
    use_database(season.url)
    at = _run("leaderboard")
    _ok(at)
    assert "Methodology" not in _selectors(at)
    at.session_state["_live:leaderboard:None"] = True  # as after "Compute the leaderboard now"
    at.run()
    _ok(at)
    assert "**Methodology v" not in _all_text(at)  # no version caption on the page
    assert "portfolio_value" not in at.dataframe[0].value.columns
    bad = _run("leaderboard", methodology="v2")  # this database ran no v2 cohort
    assert "methodology='v2'" in " ".join(str(w.value) for w in bad.warning)


def test_the_selector_picks_the_version_of_every_all_cohort_figure(
    mixed_url: str, use_database: Callable[[str], None]
) -> None:
    use_database(mixed_url)
    v1 = _run("leaderboard")
    _ok(v1)
    assert "Methodology" in _selectors(v1)
    assert v1.sidebar.selectbox[0].value == "v1"
    assert "**Methodology v1** (archived)" in _all_text(v1)
    v1_table = v1.dataframe[0].value
    assert "portfolio_value" not in v1_table.columns

    v2 = _run("leaderboard", methodology="v2")
    _ok(v2)
    assert v2.sidebar.selectbox[0].value == "v2"
    assert "**Methodology v2**" in _all_text(v2)
    assert "Brier is shown as a diagnostic only" in _all_text(v2)
    table = v2.dataframe[0].value
    assert list(table.columns[:4]) == ["family", "portfolio_value", "return", "brier_text"]
    engine = create_db_engine(mixed_url, role="reader")
    try:
        stored = stored_result(engine, "leaderboard", methodology="v2")
        assert stored is not None
        board = stored.frame
        values = dict(
            zip(board["display_name"], board["capital"] + board["total_pnl"], strict=True)
        )
        for name, value in zip(table["family"], table["portfolio_value"], strict=True):
            assert value == pytest.approx(values[name])
        # v2's figures are the v2 cohorts' alone: the copy, so v1's P/L, not twice it
        v1_board = leaderboard(engine, replicates=50, null_seeds=0)
        assert sorted(board["total_pnl"].round(6)) == sorted(v1_board["total_pnl"].round(6))
    finally:
        engine.dispose()
    assert fmt.escaped("methodology=v2") not in _all_text(v2)  # no bad-link warning
    assert not v2.warning or all("methodology" not in str(w.value) for w in v2.warning)

    bad = _run("leaderboard", methodology="v9")
    assert "methodology='v9'" in " ".join(str(w.value) for w in bad.warning)


def test_calibration_follows_the_selector(
    mixed_url: str, use_database: Callable[[str], None]
) -> None:
    use_database(mixed_url)
    v1, v2 = _run("calibration"), _run("calibration", methodology="v2")
    for at in (v1, v2):
        _ok(at)
        assert "Methodology" in _selectors(at)
    assert "**Methodology v2**" in _all_text(v2) and "**Methodology v1**" in _all_text(v1)
    engine = create_db_engine(mixed_url, role="reader")
    try:
        stored_v2 = stored_result(engine, "calibration_summary", methodology="v2")
        stored_v1 = stored_result(engine, "calibration_summary")
    finally:
        engine.dispose()
    assert stored_v1 is not None and stored_v2 is not None
    # each page's table has its version's stored rows (the copy: as many resolved bets)
    assert len(v2.dataframe[0].value) == len(stored_v2.frame) > 0
    assert int(stored_v2.frame["resolved_bets"].sum()) == int(
        stored_v1.frame["resolved_bets"].sum()
    )
