"""Dashboard tests with Streamlit's AppTest: the real entry script, real SQLite files.

Each test points ARENA_DATABASE_URL at its own database and clears every cache (settings,
engines, st.cache_data, st.cache_resource), so no test sees another's database. The page tests
run on a season built through the real jobs (`tests.analytics.season`, shared read-only by
the session) and check that what a page shows equals what its read model returns.
"""

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from arena.analytics import agents, cohorts, decisions, markets, operations
from arena.analytics.calibration import calibration_summary
from arena.analytics.leaderboard import leaderboard
from arena.config import get_settings
from arena.dashboard import fmt, ui
from arena.storage.db import create_db_engine
from arena.storage.migrate import head_revision, init_db
from tests.analytics.season import LLM_A, LLM_B, Season, sqlite_season
from tests.dashboard_caches import clear_dashboard_caches
from tests.factories import new_cohort_agents

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboard.py"
NO_DATABASE = "No database yet: run `arena init-db` or `make demo`."
NO_COHORT = "No cohort yet: run `arena start-cohort` or `make demo`."
PAGES = {
    "leaderboard": "Leaderboard",
    "cohorts": "Cohorts",
    "agent": "Agent",
    "decisions": "Decisions",
    "calibration": "Calibration",
    "markets": "Markets",
    "exports": "Exports",
    "overview": "Overview",
    "operations": "Operations",
    "methodology": "Methodology",
}
PASSWORD = "correct horse battery"


@pytest.fixture(autouse=True)
def _isolated_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD", raising=False)
    clear_dashboard_caches()
    yield
    clear_dashboard_caches()


@pytest.fixture
def use_database(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Point the dashboard at `url` for this test."""

    def _use(url: str) -> None:
        monkeypatch.setenv("ARENA_DATABASE_URL", url)
        clear_dashboard_caches()

    return _use


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Season:
    return sqlite_season(tmp_path_factory.getbasetemp())


@pytest.fixture
def season_engine(season: Season, use_database: Callable[[str], None]) -> Iterator[Engine]:
    """The dashboard pointed at the season, and a reader engine for the expected numbers."""
    use_database(season.url)
    engine = create_db_engine(season.url, role="reader")
    yield engine
    engine.dispose()


def _migrated(path: Path, *, with_cohort: bool = False) -> str:
    url = f"sqlite:///{path}"
    engine = create_db_engine(url)
    try:
        init_db(engine)
        if with_cohort:
            new_cohort_agents(engine, ("baseline-cash",))
    finally:
        engine.dispose()
    return url


def _run(page: str | None = None, **params: Any) -> AppTest:
    """Run the dashboard (optionally switched to pages/`page`.py) with deep-link `params`."""
    at = AppTest.from_file(str(DASHBOARD), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = str(value)
    if page is not None:
        # Before the first run AppTest finds the page by file name: the pages keep theirs.
        at.switch_page(f"pages/{page}.py")
    return at.run()


def _sidebar_text(at: AppTest) -> str:
    return " ".join(str(caption.value) for caption in at.sidebar.caption)


def _all_text(at: AppTest) -> str:
    """Every text-bearing element of the page (to prove what is NOT shown)."""
    parts: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "text", "code", "info"):
        parts += [str(getattr(element, "value", "")) for element in at.get(kind)]
    parts += [str(element.value) for element in at.sidebar.caption]
    return "\n".join(parts)


def _widget(at: AppTest, kind: str, label: str) -> Any:
    matches = [w for w in at.get(kind) if getattr(w, "label", None) == label]
    assert matches, f"no {kind} labelled {label!r}"
    return matches[0]


def _ok(at: AppTest) -> None:
    """No exception, no error, and nothing shows the database URL or the admin password."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    shown = _all_text(at)
    url = get_settings().database_url
    assert url not in shown and url.split("///")[-1] not in shown
    assert PASSWORD not in shown


# --------------------------------------------------------------------------------------------
# The entry: database gate and sidebar


def test_empty_migrated_database_shows_the_no_cohort_state(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db"))

    at = _run()

    _ok(at)
    assert [title.value for title in at.title] == ["Leaderboard"]
    assert [info.value for info in at.info] == [NO_COHORT]


def test_every_page_says_what_to_do_on_an_empty_database(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db"))

    for page, title in PAGES.items():
        at = _run(page)
        _ok(at)
        assert [t.value for t in at.title] == [title]
        if page not in ("exports", "operations", "methodology"):
            assert any("arena " in str(i.value) for i in at.info), (
                page,
                [i.value for i in at.info],
            )


def test_overview_counts_rows_and_offers_them_as_csv(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db", with_cohort=True))

    at = _run("overview")

    _ok(at)
    assert not at.info
    frame = at.dataframe[0].value
    assert list(frame.columns) == ["table", "rows"]
    counts = dict(zip(frame["table"], frame["rows"], strict=True))
    assert (counts["cohorts"], counts["agents"], counts["families"]) == (1, 1, 1)
    assert [getattr(b, "label", None) for b in at.get("download_button")] == ["Download CSV"]


def test_sidebar_names_backend_and_methodology_but_not_the_path(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db"))

    sidebar = _sidebar_text(_run())

    assert "Database: sqlite" in sidebar
    assert "Methodology v1" in sidebar
    assert f"Schema revision {head_revision()}" in sidebar
    assert str(tmp_path) not in sidebar


def test_the_entry_guard_still_has_streamlits_private_flag() -> None:
    """`ui.entry_guard` switches off Streamlit's legacy ``pages/`` mode through a private
    flag (its docstring says why no public API does). If this fails after a Streamlit upgrade,
    the guard silently does nothing and a fresh server's first deep link runs its page
    without dashboard.py: find the flag's new name, or move the pages out of ``pages/``."""
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import script_runner

    assert hasattr(PagesManager, "uses_pages_directory"), (
        "Streamlit dropped PagesManager.uses_pages_directory: ui.entry_guard no longer works"
    )
    assert "PagesManager.uses_pages_directory" in inspect.getsource(script_runner), (
        "Streamlit's script runner no longer reads PagesManager.uses_pages_directory: "
        "ui.entry_guard no longer decides the legacy pages/ mode"
    )


def test_a_first_deep_link_runs_through_the_entry(
    tmp_path: Path, use_database: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """AppTest starts like a fresh server (legacy mode on, as `pages/` sits beside
    dashboard.py): the page named in the link runs alone unless the guard switches it off."""
    use_database(_migrated(tmp_path / "arena.db", with_cohort=True))

    guarded = _run("overview", cohort=1)
    _ok(guarded)
    assert [t.value for t in guarded.title] == ["Overview"]
    assert "Methodology v1" in _sidebar_text(guarded)

    monkeypatch.setattr(ui, "entry_guard", lambda: None)
    alone = _run("overview", cohort=1)
    assert [t.value for t in alone.title] == ["Overview"]
    assert _sidebar_text(alone) == "", (
        "without ui.entry_guard the page now runs through dashboard.py: Streamlit's legacy "
        "pages/ mode seems gone, so the guard (and this test) can be removed"
    )


def test_database_without_schema_shows_no_database_yet(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    path = tmp_path / "never-migrated.db"
    path.touch()
    use_database(f"sqlite:///{path}")

    at = _run()

    assert not at.exception
    assert [info.value for info in at.info] == [NO_DATABASE]
    assert not at.dataframe
    assert path.stat().st_size == 0, "the dashboard must not write to the database"


def test_missing_database_file_shows_no_database_yet_and_creates_nothing(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    path = tmp_path / "data" / "arena.db"
    use_database(f"sqlite:///{path}")

    at = _run("decisions")

    assert not at.exception
    assert [info.value for info in at.info] == [NO_DATABASE]
    assert not path.parent.exists()


def test_unreachable_database_is_one_clear_error_without_the_password(
    use_database: Callable[[str], None],
) -> None:
    # Port 1 on loopback refuses at once: no server, no waiting.
    use_database("postgresql+psycopg://arena:s3cret-pw@127.0.0.1:1/arena")

    at = _run()

    assert not at.exception
    assert len(at.error) == 1
    message = str(at.error[0].value)
    assert message.startswith("Cannot read the database")
    assert "s3cret-pw" not in message
    assert "s3cret-pw" not in _sidebar_text(at)
    assert "Database: postgresql" in _sidebar_text(at)


def test_bad_configuration_is_one_clear_error(use_database: Callable[[str], None]) -> None:
    use_database("data/arena.db")  # no scheme

    at = _run()

    assert not at.exception
    assert len(at.error) == 1
    assert "ARENA_DATABASE_URL" in str(at.error[0].value)


# --------------------------------------------------------------------------------------------
# Every page on a season: renders, and shows its read model's numbers


def test_overview_on_a_season_counts_what_the_engine_wrote(season_engine: Engine) -> None:
    at = _run("overview")

    _ok(at)
    counts = dict(zip(at.dataframe[0].value["table"], at.dataframe[0].value["rows"], strict=True))
    assert (counts["cohorts"], counts["agents"], counts["decisions"]) == (2, 12, 18)


def test_leaderboard_shows_the_read_model_and_switches_range(season_engine: Engine) -> None:
    at = _run()

    _ok(at)
    expected = leaderboard(season_engine)
    shown = at.dataframe[0].value
    assert shown["family_id"].tolist() == expected["family_id"].tolist()
    for column in ("total_pnl", "return_pct", "return_ci_low", "p_rank_1", "brier"):
        pd.testing.assert_series_equal(
            shown[column].reset_index(drop=True),
            expected[column].reset_index(drop=True),
            check_names=False,
        )
    assert shown["kind"].tolist().count("baseline") == 4  # reference rows are kept
    assert len(at.get("vega_lite_chart")) == 1
    assert "ALL:" in _all_text(at)

    _widget(at, "button_group", "Range").set_value("1D").run()

    _ok(at)
    assert at.query_params["range"] == "1D"
    assert "1D:" in _all_text(at) and "one point per 10 minutes" in _all_text(at)


def test_leaderboard_deep_link_to_a_cohort(season_engine: Engine) -> None:
    at = _run(cohort=2)

    _ok(at)
    assert _widget(at, "selectbox", "Cohort").value == 2
    expected = leaderboard(season_engine, cohort=2)
    assert at.dataframe[0].value["total_pnl"].tolist() == expected["total_pnl"].tolist()


def test_cohorts_page_shows_the_cohort_view(season_engine: Engine) -> None:
    at = _run("cohorts", cohort=1)

    _ok(at)
    listing, standings, weeks = (frame.value for frame in at.dataframe)
    assert listing["cohort_number"].tolist() == [2, 1]
    assert listing["total_pnl"].tolist() == cohorts.cohorts(season_engine)["total_pnl"].tolist()
    expected = cohorts.cohort_standings(season_engine, 1)
    assert standings["family_id"].tolist() == expected["family_id"].tolist()
    assert standings["total_pnl"].tolist() == expected["total_pnl"].tolist()
    assert list(weeks.columns) == ["family", "week 1", "week 2"]
    by_family = weeks.set_index("family")
    assert by_family.loc["Model B", "week 1"] == "HOLD [fallback_hold]"
    assert "1 rejected" in by_family.loc["Model A", "week 1"]
    assert [m.value for m in at.metric][:1] == ["tracking"] or at.metric[0].value == "deciding"


def test_agent_page_numbers_equal_the_read_models(season_engine: Engine) -> None:
    at = _run("agent", cohort=1, family=LLM_A)

    _ok(at)
    summary = agents.agent_summary(season_engine, 1, LLM_A).iloc[0]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Portfolio value"] == fmt.money(summary["total_value"])
    assert metrics["P/L"] == fmt.money(summary["total_pnl"])
    assert metrics["Cash"] == fmt.money(summary["cash_balance"])
    book = at.dataframe[0].value
    expected = agents.positions(season_engine, cohort=1, family=LLM_A)
    assert book["position_id"].tolist() == expected["position_id"].tolist()
    assert book["outcome"].tolist() == expected["outcome"].tolist()
    trades = at.dataframe[1].value
    assert (
        trades["trade_id"].tolist()
        == agents.trades(season_engine, cohort=1, family=LLM_A)["trade_id"].tolist()
    )
    assert "Model A — cohort 1 — model test/llm-a (llm)" in _all_text(at)


def test_decision_deep_link_shows_every_attempt_as_text(season_engine: Engine) -> None:
    first = decisions.decisions(season_engine, cohort=1, family=LLM_A, week=1).iloc[0]
    decision_id = int(first["decision_id"])

    at = _run("decisions", decision=decision_id)

    _ok(at)
    assert f"Decision {decision_id}" in [h.value for h in at.header]
    detail = decisions.decision_detail(season_engine, decision_id)
    assert detail is not None
    code = [str(c.value) for c in at.code]
    for raw in detail.attempt_log["raw_response"].dropna():
        assert raw in code  # each attempt's raw answer, verbatim, as code (never HTML)
    assert detail.prompt_user in code and detail.prompt_system in code
    markdown = " ".join(str(m.value) for m in at.markdown)
    assert "<b>" not in markdown
    assert "(no response body)" in _all_text(at)  # the 500 had no answer
    legs = next(frame.value for frame in at.dataframe if "reason" in frame.value.columns)
    assert legs["reason"].fillna("").tolist() == ["", "below_min", ""]
    links = [link for link in at.get("page_link")]
    assert any("Market snapshot #" in str(link.proto.label) for link in links)


def test_decision_filters_narrow_the_list(season_engine: Engine) -> None:
    at = _run("decisions")
    _widget(at, "selectbox", "Status").set_value("fallback_hold").run()

    _ok(at)
    shown = at.dataframe[0].value
    expected = decisions.decisions(season_engine, status="fallback_hold")
    assert shown["decision_id"].tolist() == expected["decision_id"].tolist()
    assert set(shown["family_id"]) == {LLM_B}
    assert at.query_params["status"] == "fallback_hold"


def test_a_list_cut_at_its_cap_says_so(
    season_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    everything = decisions.decisions(season_engine)
    at = _run("decisions")
    _ok(at)
    captions = " ".join(str(c.value) for c in at.caption)
    assert f"{len(everything)} decision(s), newest first." in captions
    assert "cap" not in captions

    monkeypatch.setattr(decisions, "DEFAULT_LIMIT", 5)
    at = _run("decisions")
    _ok(at)
    assert at.dataframe[0].value["decision_id"].tolist() == everything["decision_id"][:5].tolist()
    captions = " ".join(str(c.value) for c in at.caption)
    assert "5 decision(s), newest first. That is this list's cap of 5: more may match." in captions


def test_listed_names_the_cap_only_when_reached() -> None:
    assert ui.listed(999, 1000, "market(s)", "by volume") == "999 market(s), by volume."
    assert ui.listed(1000, 1000, "market(s)", "by volume") == (
        "1,000 market(s), by volume. That is this list's cap of 1,000: more may match. Narrow "
        "it with the filters, or download every row from Exports."
    )
    assert ui.listed(1000, 1000, "line(s)", "newest first", exported=False).endswith(
        "more may match. Narrow it with the filters."
    )


def test_calibration_page_shows_the_summary(season_engine: Engine) -> None:
    at = _run("calibration", family="oracle")

    _ok(at)
    expected = calibration_summary(season_engine)
    shown = at.dataframe[0].value
    assert shown["family_id"].tolist() == expected["family_id"].tolist()
    assert shown["brier"].tolist() == expected["brier"].tolist()
    assert shown["brier_ci_high"].tolist() == expected["brier_ci_high"].tolist()
    assert len(at.get("vega_lite_chart")) == 3


def test_markets_page_search_and_market_view(season_engine: Engine) -> None:
    resolved = markets.markets(season_engine, status="resolved", held=True).iloc[0]
    market_id = str(resolved["market_id"])

    at = _run("markets", market=market_id)
    _ok(at)
    assert str(resolved["question"]) in [t.value for t in at.text]
    brier = next(frame.value for frame in at.dataframe if "market_brier" in frame.value.columns)
    assert (
        brier["trade_id"].tolist()
        == markets.market_brier(season_engine, market_id)["trade_id"].tolist()
    )

    _widget(at, "text_input", "Search question, event or id").input("Fed").run()
    _ok(at)
    expected = markets.markets(season_engine, search="Fed")
    assert at.dataframe[0].value["market_id"].tolist() == expected["market_id"].tolist()
    assert at.query_params["search"] == "Fed"


def test_markets_page_opens_a_frozen_snapshot(season_engine: Engine) -> None:
    at = _run("markets", snapshot=1)

    _ok(at)
    shown = at.dataframe[0].value
    assert (
        shown["market_id"].tolist()
        == decisions.snapshot_markets(season_engine, 1)["market_id"].tolist()
    )


def test_exports_page_plans_the_zip(season_engine: Engine) -> None:
    at = _run("exports", cohort=1)

    _ok(at)
    plan = at.dataframe[0].value
    assert plan["file"].tolist()[:2] == ["cohorts.csv", "decisions.csv"]
    labels = [getattr(button, "label", None) for button in at.get("download_button")]
    assert "Download zip" in labels
    assert "cohort=1" in _all_text(at)


def test_operations_is_locked_without_a_password(season_engine: Engine) -> None:
    at = _run("operations")

    _ok(at)
    assert "ARENA_ADMIN_PASSWORD" in str(at.warning[0].value)
    assert not at.dataframe and not at.text_input


def test_operations_unlocks_only_with_the_right_password(
    season_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_ADMIN_PASSWORD", PASSWORD)
    at = _run("operations")
    assert not at.dataframe

    at.text_input(key="admin-password").input("wrong").run()
    assert [e.value for e in at.error] == ["Wrong password."]
    assert not at.dataframe

    at.text_input(key="admin-password").input(PASSWORD).run()
    _ok(at)
    health = at.dataframe[0].value
    expected = operations.job_health(season_engine)
    assert health["job"].tolist() == expected["job"].tolist()
    assert health["failed"].tolist() == expected["failed"].tolist()
    assert PASSWORD not in _all_text(at)


def test_each_page_keeps_its_own_selection(season_engine: Engine) -> None:
    """A cohort picked on one page never filters another; coming back finds it as it was."""
    at = _run("cohorts", cohort=1, family=LLM_A)
    _ok(at)
    assert "family" not in at.query_params  # the Cohorts page has no family filter
    # The sidebar's navigation clears the query string in the browser; AppTest does not.
    at.query_params.clear()
    at.switch_page("pages/leaderboard.py").run()
    _ok(at)
    assert "cohort" not in at.query_params
    assert _widget(at, "selectbox", "Cohort").value == ui.ALL
    at.query_params.clear()
    at.switch_page("pages/cohorts.py").run()
    _ok(at)
    assert at.query_params["cohort"] == "1"


def test_a_link_naming_nothing_warns_and_does_not_fall_back(season_engine: Engine) -> None:
    for page, params, named in [
        ("leaderboard", {"cohort": "99"}, "cohort='99'"),
        ("agent", {"cohort": "1", "family": "gpt-9"}, "family='gpt-9'"),
    ]:
        at = _run(page, **params)
        _ok(at)
        warnings = " ".join(w.value for w in at.warning)
        assert named in warnings, (page, warnings)
        assert not at.dataframe, page  # nothing shown in place of what the link named
