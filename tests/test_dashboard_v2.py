"""The dashboard's methodology v2 read side in AppTest (real entry script, real SQLite files):
the sidebar's methodology selector, the v2 leaderboard, and a v1-only database unchanged.

The mixed database is the season of `tests.analytics.season` with every cohort copied as a v2
cohort (`tests.test_v2_scope.add_v2_season`), its analyses stored by the real hourly job.
"""

import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.stored import stored_result
from arena.analytics.views.provenance import provenance_text, trade_provenance, universe_provenance
from arena.dashboard import fmt
from arena.engine.analyses import store_analyses
from arena.storage.db import create_db_engine
from arena.storage.tables import DECISIONS, TRADES
from tests.analytics.season import Season
from tests.dashboard.apptest import all_text, run_page
from tests.dashboard_caches import clear_dashboard_caches
from tests.stated_season import DemoSeasons
from tests.test_dashboard_apptest import _ok
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
    at = run_page("leaderboard")
    _ok(at)
    assert "Methodology" not in _selectors(at)
    at.session_state["_live:leaderboard:None"] = True  # as after "Compute the leaderboard now"
    at.run()
    _ok(at)
    assert "**Methodology v" not in all_text(at)  # no version caption on the page
    assert "portfolio_value" not in at.dataframe[0].value.columns
    bad = run_page("leaderboard", methodology="v2")  # this database ran no v2 cohort
    assert "methodology='v2'" in " ".join(str(w.value) for w in bad.warning)


def test_the_selector_picks_the_version_of_every_all_cohort_figure(
    mixed_url: str, use_database: Callable[[str], None]
) -> None:
    use_database(mixed_url)
    v1 = run_page("leaderboard")
    _ok(v1)
    assert "Methodology" in _selectors(v1)
    assert v1.sidebar.selectbox[0].value == "v1"
    sidebar = " ".join(str(c.value) for c in v1.sidebar.caption)
    assert "ran protocol extensions" not in sidebar  # v2 cohorts are not called extended
    assert "**Methodology v1** (archived)" in all_text(v1)
    v1_table = v1.dataframe[0].value
    assert "portfolio_value" not in v1_table.columns

    v2 = run_page("leaderboard", methodology="v2")
    _ok(v2)
    assert v2.sidebar.selectbox[0].value == "v2"
    assert "**Methodology v2**" in all_text(v2)
    assert "Brier is shown as a diagnostic only" in all_text(v2)
    assert "by dollar P/L summed over cohorts" in all_text(v2)  # the original's rules
    table = v2.dataframe[0].value
    assert list(table.columns[:5]) == ["family", "pnl", "return", "portfolio_value", "brier_text"]
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
    assert fmt.escaped("methodology=v2") not in all_text(v2)  # no bad-link warning
    assert not v2.warning or all("methodology" not in str(w.value) for w in v2.warning)

    bad = run_page("leaderboard", methodology="v9")
    assert "methodology='v9'" in " ".join(str(w.value) for w in bad.warning)


def test_calibration_follows_the_selector(
    mixed_url: str, use_database: Callable[[str], None]
) -> None:
    use_database(mixed_url)
    v1, v2 = run_page("calibration"), run_page("calibration", methodology="v2")
    for at in (v1, v2):
        _ok(at)
        assert "Methodology" in _selectors(at)
    assert "**Methodology v2**" in all_text(v2) and "**Methodology v1**" in all_text(v1)
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


@pytest.fixture(scope="module")
def v2_url(demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A copy of the suite's v2 demo season (`tests.stated_season`): prices from the simulated
    CLOB through the real client, provenance on every universe item and trade."""
    return demo_seasons.v2(tmp_path_factory.mktemp("v2_demo_dashboard"))


def traded_decision(url: str) -> tuple[int, int]:
    """(decision id, its market snapshot id) of the first decision that traded."""
    engine = create_db_engine(url, role="reader")
    try:
        with engine.connect() as conn:
            row = conn.execute(
                select(DECISIONS.c.id, DECISIONS.c.market_snapshot_id)
                .join(TRADES, TRADES.c.decision_id == DECISIONS.c.id)
                .order_by(DECISIONS.c.id)
                .limit(1)
            ).one()
    finally:
        engine.dispose()
    return int(row[0]), int(row[1])


def test_a_v2_decision_shows_where_each_price_came_from(
    v2_url: str, use_database: Callable[[str], None]
) -> None:
    use_database(v2_url)
    decision_id, snapshot_id = traded_decision(v2_url)
    engine = create_db_engine(v2_url, role="reader")
    try:
        trades = trade_provenance(engine, decision_id)
        universe = universe_provenance(engine, snapshot_id)
    finally:
        engine.dispose()
    assert len(trades) > 0 and trades["price_source"].notna().all()
    assert set(trades["price_source"]) == {"clob_mid"}  # the original's rules: never Gamma's
    assert trades["frozen_price"].notna().all()  # the price the prompt showed, beside
    assert len(universe) > 0 and universe["price_status"].notna().all()

    at = run_page("decisions", decision=decision_id)
    _ok(at)
    frames = [f.value for f in at.dataframe if "provenance" in f.value.columns]
    assert len(frames) == 2  # the trades, then the frozen universe
    shown_trades, shown_universe = frames
    assert "frozen_price" in shown_trades.columns
    assert shown_trades["provenance"].tolist() == [
        provenance_text(s, st, r)
        for s, st, r in zip(
            trades["price_source"], trades["price_status"], trades["fallback_reason"], strict=True
        )
    ]
    assert "Gamma display price (v1)" not in shown_universe["provenance"].tolist()
    assert any(text.startswith("Order-book midpoint") for text in shown_universe["provenance"])

    markets = run_page("markets", snapshot=snapshot_id)
    _ok(markets)
    snapshot = [f.value for f in markets.dataframe if "provenance" in f.value.columns]
    assert len(snapshot) == 1 and len(snapshot[0]) == len(universe)


def test_a_v1_decision_reads_gamma_display_price(
    season: Season, use_database: Callable[[str], None]
) -> None:
    use_database(season.url)
    decision_id, _ = traded_decision(season.url)
    at = run_page("decisions", decision=decision_id)
    _ok(at)
    frames = [f.value for f in at.dataframe if "provenance" in f.value.columns]
    assert frames and all(
        set(frame["provenance"]) == {"Gamma display price (v1)"} for frame in frames
    )


def test_provenance_in_words() -> None:
    assert provenance_text(None, None) == "Gamma display price (v1)"
    assert provenance_text("clob_mid", "accepted") == "Order-book midpoint, accepted"
    assert provenance_text("gamma", "fallback_gamma", "empty_book") == (
        "Gamma display price, fell back to Gamma (the book is empty)"
    )
    assert provenance_text("clob_mid", "accepted_with_gamma_disagreement").endswith(
        "Gamma disagrees by more than 0.05"
    )
    assert provenance_text("clob_book", "new_status", "new_reason") == (
        "clob_book, new_status (new_reason)"  # an unknown value is shown as stored
    )


def test_cohorts_group_v1_as_archived_once_v2_runs(
    mixed_url: str, season: Season, use_database: Callable[[str], None]
) -> None:
    use_database(mixed_url)
    at = run_page("cohorts")
    _ok(at)
    assert [h.value for h in at.subheader][:2] == ["Methodology v2", "Archived (v1)"]
    v2_list, v1_list = at.dataframe[0].value, at.dataframe[1].value
    assert set(v2_list["methodology_version"]) == {"v2"}
    assert set(v1_list["methodology_version"]) == {"v1"}
    assert len(v1_list) == len(v2_list) > 0  # the season and its v2 copy

    use_database(season.url)
    alone = run_page("cohorts")
    _ok(alone)
    assert "Archived (v1)" not in [h.value for h in alone.subheader]
    assert set(alone.dataframe[0].value["methodology_version"]) == {"v1"}
