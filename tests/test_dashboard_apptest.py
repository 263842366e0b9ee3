"""Dashboard tests with Streamlit's AppTest: the real entry script, real SQLite files.

Each test points ARENA_DATABASE_URL at its own database and clears every cache (settings,
engines, st.cache_data, st.cache_resource), so no test sees another's database. The page tests
run on a season built through the real jobs (`tests.analytics.season`, shared read-only by
the session) and check that what a page shows equals what its read model returns.
"""

import json
import re
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from arena.analytics.stats.calibration import calibration_summary, family_names
from arena.analytics.stats.cost import cost_frame
from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.views import agents, cohorts, decisions, markets, operations, realised
from arena.config import get_settings
from arena.dashboard import entry, fmt, links, notices
from arena.storage.db import create_db_engine
from arena.storage.migrate import head_revision
from tests.analytics.season import LLM_A, LLM_B, Season
from tests.dashboard.apptest import DASHBOARD, all_text, read, run_page, widget
from tests.dashboard_caches import clear_dashboard_caches
from tests.factories import new_cohort_agents
from tests.migrated import migrated_sqlite

NO_DATABASE = "No database yet: run `arena init-db` or `make demo`."
NO_COHORT = "No cohort yet: run `arena start-cohort` or `make demo`."
PAGES = {
    "leaderboard": "Leaderboard",
    "compare": "Compare",
    "family": "Family",
    "stated": "Stated probability",
    "replicates": "Replicates",
    "execution": "Execution",
    "detectability": "When will we know?",
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


@pytest.fixture
def season_engine(season: Season, use_database: Callable[[str], None]) -> Iterator[Engine]:
    """The dashboard pointed at the season, and a reader engine for the expected numbers."""
    use_database(season.url)
    engine = create_db_engine(season.url, role="reader")
    yield engine
    engine.dispose()


def _migrated(path: Path, *, with_cohort: bool = False) -> str:
    url = migrated_sqlite(path)
    if with_cohort:
        engine = create_db_engine(url)
        try:
            new_cohort_agents(engine, ("baseline-cash",))
        finally:
            engine.dispose()
    return url


def _sidebar_text(at: AppTest) -> str:
    return " ".join(str(caption.value) for caption in at.sidebar.caption)


def _asked_to_compute(at: AppTest, analysis: str) -> None:
    """Rerun as after a click on `reads.stored_or_offer`'s "Compute … now" button: the session
    flag the click sets (a click through AppTest did not reach the page's button here; the
    browser tests click it)."""
    at.session_state[f"_live:{analysis}:None"] = True
    at.run()


def _ok(at: AppTest) -> None:
    """No exception, no error, and nothing shows the database URL or the admin password."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    shown = all_text(at)
    url = get_settings().database_url
    assert url not in shown and url.split("///")[-1] not in shown
    assert PASSWORD not in shown


# --------------------------------------------------------------------------------------------
# The entry: database gate and sidebar


def test_empty_migrated_database_shows_the_no_cohort_state(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db"))

    at = run_page()

    _ok(at)
    assert [title.value for title in at.title] == ["Forecaster Arena"]  # Home
    assert [info.value for info in at.info] == [NO_COHORT]


def test_every_page_says_what_to_do_on_an_empty_database(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db"))

    for page, title in PAGES.items():
        at = run_page(page)
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
    """Without a stored count the Overview says when the hourly job stores one and counts
    only when asked; the table reads in words (the CSV keeps the table names)."""
    use_database(_migrated(tmp_path / "arena.db", with_cohort=True))

    at = run_page("overview")

    _ok(at)
    assert not at.dataframe
    assert "`arena analyses`" in " ".join(str(i.value) for i in at.info)
    widget(at, "button", "Compute the table counts now")
    _asked_to_compute(at, "overview")
    _ok(at)
    frame = at.dataframe[0].value
    assert list(frame.columns) == ["label", "rows", "meaning"]
    counts = dict(zip(frame["label"], frame["rows"], strict=True))
    assert (counts["Cohorts"], counts["Agents"], counts["Families"]) == (1, 1, 1)
    assert [getattr(b, "label", None) for b in at.get("download_button")] == ["Download CSV"]
    assert "Computed live" in all_text(at)


def test_sidebar_names_backend_and_methodology_but_not_the_path(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db"))

    sidebar = _sidebar_text(run_page())

    assert "Database: sqlite" in sidebar
    assert "New cohorts: methodology v1" in sidebar
    assert f"Schema revision {head_revision()}" in sidebar
    assert str(tmp_path) not in sidebar


def test_no_pages_folder_starts_streamlits_legacy_mode() -> None:
    """A ``pages/`` folder beside dashboard.py would start Streamlit's legacy multipage mode,
    in which a fresh server's first deep link runs its page alone (no database gate, no
    sidebar, no deep-link restore). The pages live in ``app_pages/``: every one is registered
    in dashboard.py, and nothing named ``pages/`` is back."""
    root = DASHBOARD.parent
    assert not (root / "pages").exists()
    registered = set(re.findall(r'st\.Page\(\s*"(app_pages/\w+\.py)"', DASHBOARD.read_text()))
    assert registered == {f"app_pages/{p.name}" for p in (root / "app_pages").glob("*.py")}


@pytest.mark.parametrize("page", ["home", *PAGES])
def test_a_deep_link_lands_on_its_page_through_the_entry(
    page: str, tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    """A first run straight onto a page with a deep link (a fresh session) shows that page,
    under the entry's sidebar, with the link's selection kept in the address."""
    use_database(_migrated(tmp_path / "arena.db", with_cohort=True))

    at = run_page(page, cohort=1)

    _ok(at)
    titles = [t.value for t in at.title]
    assert titles == [PAGES.get(page, "Forecaster Arena")], titles
    assert "New cohorts: methodology v1" in _sidebar_text(at)
    if page not in ("home", "family", "markets", "methodology", "overview", "operations"):
        assert at.query_params.get("cohort") == "1", (page, dict(at.query_params))


def test_database_without_schema_shows_no_database_yet(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    path = tmp_path / "never-migrated.db"
    path.touch()
    use_database(f"sqlite:///{path}")

    at = run_page()

    assert not at.exception
    assert [info.value for info in at.info] == [NO_DATABASE]
    assert not at.dataframe
    assert path.stat().st_size == 0, "the dashboard must not write to the database"


def test_missing_database_file_shows_no_database_yet_and_creates_nothing(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    path = tmp_path / "data" / "arena.db"
    use_database(f"sqlite:///{path}")

    at = run_page("decisions")

    assert not at.exception
    assert [info.value for info in at.info] == [NO_DATABASE]
    assert not path.parent.exists()


def test_unreachable_database_is_one_clear_error_without_the_password(
    use_database: Callable[[str], None],
) -> None:
    # Port 1 on loopback refuses at once: no server, no waiting.
    use_database("postgresql+psycopg://arena:s3cret-pw@127.0.0.1:1/arena")

    at = run_page()

    assert not at.exception
    assert len(at.error) == 1
    message = str(at.error[0].value)
    assert message.startswith("Cannot read the database")
    assert "s3cret-pw" not in message
    assert "s3cret-pw" not in _sidebar_text(at)
    assert "Database: postgresql" in _sidebar_text(at)


def test_bad_configuration_is_one_clear_error(use_database: Callable[[str], None]) -> None:
    use_database("data/arena.db")  # no scheme

    at = run_page()

    assert not at.exception
    assert len(at.error) == 1
    assert "ARENA_DATABASE_URL" in read(str(at.error[0].value))


# --------------------------------------------------------------------------------------------
# Every page on a season: renders, and shows its read model's numbers


def test_overview_on_a_season_counts_what_the_engine_wrote(season_engine: Engine) -> None:
    at = run_page("overview")
    _asked_to_compute(at, "overview")

    _ok(at)
    frame = at.dataframe[0].value
    counts = dict(zip(frame["label"], frame["rows"], strict=True))
    assert (counts["Cohorts"], counts["Agents"], counts["Decisions"]) == (2, 12, 18)
    assert "portfolio_snapshots" not in frame["label"].tolist()


def _shown_text(element: Any) -> pd.DataFrame:
    """What a styled table's cells show (the Styler's display values Streamlit sends)."""
    import pyarrow as pa

    return pa.ipc.open_stream(element.proto.arrow_data.styler.display_values).read_pandas()


def _computed_leaderboard(**params: Any) -> AppTest:
    """The Leaderboard over the season without stored analyses: first the note and no table,
    then, on the person's request, the live table."""
    at = run_page("leaderboard", **params)
    _ok(at)
    assert not at.dataframe
    assert any("No current stored leaderboard" in str(i.value) for i in at.info)
    assert [b.label for b in at.button] == ["Compute the leaderboard now"]
    # What the button's click does (set as the button's handler would).
    at.session_state[f"_live:leaderboard:{params.get('cohort')}"] = True
    at.run()
    _ok(at)
    return at


def test_leaderboard_shows_the_read_model_and_switches_range(season_engine: Engine) -> None:
    at = _computed_leaderboard()

    expected = leaderboard(season_engine)
    shown = at.dataframe[0].value
    assert shown["family"].tolist() == expected["display_name"].tolist()
    for column in ("total_pnl", "random_null_percentile", "resolved_bets"):
        pd.testing.assert_series_equal(
            shown[column].reset_index(drop=True),
            expected[column].reset_index(drop=True),
            check_names=False,
        )
    # P(rank #1) among the model families; the baselines (the oracle too) are reference rows
    firsts = zip(expected["kind"], expected["p_rank_1_contenders"], strict=True)
    assert shown["first"].tolist() == [
        fmt.share(p, 1) if kind == "llm" else "reference" for kind, p in firsts
    ]
    edges = zip(
        -expected["skill_vs_market"],
        -expected["skill_vs_market_ci_high"],
        -expected["skill_vs_market_ci_low"],
        strict=True,
    )
    assert shown["edge"].tolist() == [fmt.prob_interval(*e, signed=True) for e in edges]
    returns = zip(
        expected["return_pct"], expected["return_ci_low"], expected["return_ci_high"], strict=True
    )
    assert shown["return"].tolist() == [fmt.pct_interval(*r) for r in returns]
    cells = _shown_text(at.dataframe[0]).to_numpy().ravel().tolist()
    assert not {"None", "nan", "NaN", "NaT", "<NA>"} & {str(c) for c in cells}
    assert "—" in shown["brier_text"].tolist()  # a family without resolved bets
    # Realised: the split of the same scope, read beside the leaderboard.
    split = realised.realised_by_family(season_engine).set_index("family_id")
    split = split.loc[expected["family_id"]]
    texts = zip(split["resolved_share"], split["marked_share"], strict=True)
    assert shown["realised"].tolist() == [fmt.realised_split(r, m) for r, m in texts]
    assert any(t.endswith("marked") and not t.startswith("0%") for t in shown["realised"])
    # The Cost section: derived from the same frame (no other read), paying families first.
    spend = cost_frame(expected)
    costs = at.dataframe[1].value
    assert costs["family"].tolist() == spend["display_name"].tolist()
    assert costs["api_cost_usd"].tolist() == spend["api_cost_usd"].tolist()
    assert "on the front" in costs["front"].tolist() and "reference ($0)" in costs["front"].tolist()
    cells = _shown_text(at.dataframe[1]).to_numpy().ravel().tolist()
    assert not {"None", "nan", "NaN", "NaT", "<NA>"} & {str(c) for c in cells}
    assert len(at.get("vega_lite_chart")) == 2  # the cost chart, then the curves
    assert "ALL:" in all_text(at)

    widget(at, "button_group", "Range").set_value("1D").run()

    _ok(at)
    assert at.query_params["range"] == "1D"
    assert "1D:" in all_text(at) and "one point per 10 minutes" in all_text(at)


def test_leaderboard_deep_link_to_a_cohort(season_engine: Engine) -> None:
    at = _computed_leaderboard(cohort=2)

    assert widget(at, "selectbox", "Cohort").value == 2
    expected = leaderboard(season_engine, cohort=2)
    assert at.dataframe[0].value["total_pnl"].tolist() == expected["total_pnl"].tolist()


def test_cohorts_page_shows_the_cohort_view(season_engine: Engine) -> None:
    at = run_page("cohorts", cohort=1)

    _ok(at)
    listing, standings, weeks = (frame.value for frame in at.dataframe)
    assert listing["cohort_number"].tolist() == [2, 1]
    assert listing["total_pnl"].tolist() == cohorts.cohorts(season_engine)["total_pnl"].tolist()
    expected = cohorts.cohort_standings(season_engine, 1)
    assert standings["family_id"].tolist() == expected["family_id"].tolist()
    assert standings["total_pnl"].tolist() == expected["total_pnl"].tolist()
    # Realised: each agent's split of its stakes, matched on family and replicate.
    split = realised.realised_by_cohort(season_engine, cohort=1).set_index("family_id")
    split = split.loc[expected["family_id"]]
    texts = zip(split["resolved_share"], split["marked_share"], strict=True)
    assert standings["realised"].tolist() == [fmt.realised_split(r, m) for r, m in texts]
    assert list(weeks.columns) == ["family", "week 1", "week 2"]
    by_family = weeks.set_index("family")
    assert by_family.loc["Model B", "week 1"] == "HOLD [fallback_hold]"
    assert "1 rejected" in by_family.loc["Model A", "week 1"]
    assert [m.value for m in at.metric][:1] == ["tracking"] or at.metric[0].value == "deciding"


def test_agent_page_numbers_equal_the_read_models(season_engine: Engine) -> None:
    at = run_page("agent", cohort=1, family=LLM_A)

    _ok(at)
    summary = agents.agent_summary(season_engine, 1, LLM_A).iloc[0]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Portfolio value"] == fmt.money(summary["total_value"])
    assert metrics["P/L"] == fmt.signed_money(summary["total_pnl"])
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
    assert "Model A — cohort 1 — model test/llm-a (llm)" in all_text(at)


def test_agent_ledgers_are_written_by_the_grid_from_raw_numbers(season_engine: Engine) -> None:
    """Positions, trades and decisions go out as raw numbers with the grid's printf formats
    (`fmt.GRID_FORMATS`), not through a pandas Styler that writes every cell in Python."""
    at = run_page("agent", cohort=1, family=LLM_A)

    _ok(at)
    positions, trades, made = (at.dataframe[i] for i in range(3))
    for table in (positions, trades, made):
        assert not table.proto.arrow_data.HasField("styler")  # no Styler
    columns = json.loads(positions.proto.columns)
    assert columns["cost_basis"]["type_config"]["format"] == fmt.GRID_FORMATS[fmt.money].printf
    assert columns["unrealized_pnl"]["type_config"]["format"] == "dollar"
    assert columns["cost_basis"]["label"] == "Open cost"  # the page's label kept
    assert columns["stake"]["label"] == "Stake"  # what a closed position risked
    assert positions.value["cost_basis"].dtype.kind == "f"  # numbers sort as numbers
    trade_columns = json.loads(trades.proto.columns)
    assert trade_columns["created_at"]["type_config"]["format"] == "YYYY-MM-DD HH:mm"
    ids = trades.value["decision_id"]  # 0 (a settlement: no decision) shows the placeholder
    assert not (ids == 0).any()
    decided = json.loads(made.proto.columns)
    assert decided["latency_ms"]["type_config"]["format"] == "%.1f s"
    expected = decisions.decisions(season_engine, cohort=1, family=LLM_A)["latency_ms"] / 1000
    assert made.value["latency_ms"].tolist() == pytest.approx(expected.tolist(), nan_ok=True)


def test_decision_deep_link_shows_every_attempt_as_text(season_engine: Engine) -> None:
    first = decisions.decisions(season_engine, cohort=1, family=LLM_A, week=1).iloc[0]
    decision_id = int(first["decision_id"])

    at = run_page("decisions", decision=decision_id)

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
    assert "(no response body)" in all_text(at)  # the 500 had no answer
    legs = next(frame.value for frame in at.dataframe if "reason" in frame.value.columns)
    assert legs["reason"].tolist() == ["—", "below_min", "—"]  # a gap reads "—", never None
    # Each leg names its market's question, not only its id; the rationale is text.
    assert legs["question"].tolist() == detail.legs["question"].tolist()
    assert legs["question"].notna().all()
    assert detail.reasoning is not None and detail.reasoning in [t.value for t in at.text]
    links = [link for link in at.get("page_link")]
    assert any("Market snapshot #" in str(link.proto.label) for link in links)


def test_a_decision_link_that_names_nothing_warns(season_engine: Engine) -> None:
    for value in ("999999", "abc"):
        at = run_page("decisions", decision=value)

        assert not at.exception
        assert [w.value for w in at.warning] == [
            f"This link's decision={value!r} names no decision in this database. Pick one "
            "above, or check the link."
        ]
        assert not at.header  # no detail shown for it


def test_decision_filters_narrow_the_list(season_engine: Engine) -> None:
    at = run_page("decisions")
    widget(at, "selectbox", "Status").set_value("fallback_hold").run()

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
    at = run_page("decisions")
    _ok(at)
    captions = " ".join(str(c.value) for c in at.caption)
    assert f"{len(everything)} decision(s), newest first." in captions
    assert "cap" not in captions

    monkeypatch.setattr(decisions, "DEFAULT_LIMIT", 5)
    at = run_page("decisions")
    _ok(at)
    assert at.dataframe[0].value["decision_id"].tolist() == everything["decision_id"][:5].tolist()
    captions = " ".join(str(c.value) for c in at.caption)
    assert "5 decision(s), newest first. That is this list's cap of 5: more may match." in captions


def test_listed_names_the_cap_only_when_reached() -> None:
    assert notices.listed(999, 1000, "market(s)", "by volume") == "999 market(s), by volume."
    assert notices.listed(1000, 1000, "market(s)", "by volume") == (
        "1,000 market(s), by volume. That is this list's cap of 1,000: more may match. Narrow "
        "it with the filters, or download every row from Exports."
    )
    assert notices.listed(1000, 1000, "line(s)", "newest first", exported=False).endswith(
        "more may match. Narrow it with the filters."
    )


def test_calibration_page_shows_the_summary(season_engine: Engine) -> None:
    # No stored analyses in this season: the page offers the live computation, never runs it
    # unasked.
    at = run_page("calibration", family="oracle")
    _ok(at)
    assert not at.dataframe
    assert [b.label for b in at.button] == ["Compute the calibration summary now"]

    # The button's click, as the Leaderboard's test does it: once, and the page's other
    # frames follow without asking again.
    at.session_state["_live:calibration_summary:None"] = True
    at.run()

    _ok(at)
    assert not at.button
    expected = calibration_summary(season_engine)
    shown = at.dataframe[0].value
    names = family_names(season_engine)
    assert shown["family"].tolist() == [names[f] for f in expected["family_id"]]
    assert shown["brier"].tolist() == [
        fmt.prob_interval(v, lo, hi)
        for v, lo, hi in zip(
            expected["brier"], expected["brier_ci_low"], expected["brier_ci_high"], strict=True
        )
    ]
    assert len(at.get("vega_lite_chart")) >= 2
    assert at.query_params["family"] == "oracle"


def test_markets_page_search_and_market_view(season_engine: Engine) -> None:
    resolved = markets.markets(season_engine, status="resolved", held=True).iloc[0]
    market_id = str(resolved["market_id"])

    at = run_page("markets", market=market_id)
    _ok(at)
    assert str(resolved["question"]) in [t.value for t in at.text]
    brier = next(frame.value for frame in at.dataframe if "market_brier" in frame.value.columns)
    assert (
        brier["trade_id"].tolist()
        == markets.market_brier(season_engine, market_id)["trade_id"].tolist()
    )

    widget(at, "text_input", "Search question, event or id").input("Fed").run()
    _ok(at)
    expected = markets.markets(season_engine, search="Fed")
    assert at.dataframe[0].value["market_id"].tolist() == expected["market_id"].tolist()
    assert at.query_params["search"] == "Fed"


def test_markets_page_opens_a_frozen_snapshot(season_engine: Engine) -> None:
    at = run_page("markets", snapshot=1)

    _ok(at)
    shown = at.dataframe[0].value
    assert (
        shown["market_id"].tolist()
        == decisions.snapshot_markets(season_engine, 1)["market_id"].tolist()
    )


def test_exports_page_plans_the_zip(season_engine: Engine) -> None:
    at = run_page("exports", cohort=1, family=LLM_A)

    _ok(at)
    plan = at.dataframe[0].value
    assert plan["file"].tolist()[:2] == ["cohorts.csv", "decisions.csv"]
    assert plan["rows_are"].tolist()[0].startswith("one weekly cohort")
    labels = [getattr(button, "label", None) for button in at.get("download_button")]
    assert "Download zip" in labels
    shown = all_text(at)
    assert "Cohort 1; family Model A" in shown  # in words; the README's record as well:
    assert "cohort=1, family=llm-a" in shown
    assert "§" not in shown


def test_home_on_an_empty_database_says_no_cohort_yet(
    tmp_path: Path, use_database: Callable[[str], None]
) -> None:
    use_database(_migrated(tmp_path / "arena.db"))

    at = run_page("home")

    _ok(at)
    assert [t.value for t in at.title] == ["Forecaster Arena"]
    assert [info.value for info in at.info] == [NO_COHORT]
    assert "No leader before the first cohort." in all_text(at)


def test_home_says_the_season_stopped_and_waits_for_the_stored_leader(
    season_engine: Engine, season: Season
) -> None:
    at = run_page("home")

    _ok(at)
    shown = all_text(at)
    # The season's last job ran 2026-01-21 00:00 and its cohorts still run: no scheduler now.
    assert "No job has run since 2026-01-21 00:00 UTC" in shown
    assert "The leader appears after the hourly analyses" in shown
    assert not at.button and not at.dataframe  # nothing computed, nothing offered
    assert {"Leaderboard", "Family", "Decisions", "Methodology"} <= {
        str(link.proto.label) for link in at.get("page_link")
    }


def test_home_shows_the_stored_leader_with_its_interval(
    season: Season, use_database: Callable[[str], None], tmp_path: Path
) -> None:
    from arena.engine.analyses import store_analyses
    from tests.analytics.season import writable_copy

    url = writable_copy(season, tmp_path / "analysed.db")
    engine = create_db_engine(url)
    try:
        store_analyses(engine, season.end)
    finally:
        engine.dispose()
    use_database(url)
    board = leaderboard(create_db_engine(url, role="reader"))

    at = run_page("home")

    _ok(at)
    model = board[board["kind"] == "llm"].sort_values(["rank", "p_rank_1"], ascending=[True, False])
    best = model.iloc[0]
    shown = all_text(at)
    assert fmt.escaped(best["display_name"]) in shown
    written = fmt.pct_interval(best["return_pct"], best["return_ci_low"], best["return_ci_high"])
    assert fmt.escaped(written) in shown
    assert "Top of the table: Oracle" in shown  # the reference row above every model
    assert "by the hourly `analyses` job" in shown


def test_methodology_shows_the_protocol_in_force_and_the_versions(season_engine: Engine) -> None:
    at = run_page("methodology")

    _ok(at)
    assert [t.value for t in at.title] == ["Methodology"]
    protocol = str(at.markdown[0].value)
    assert "| [Starting capital](#5-starting-capital-and-constraints) | $10,000 |" in (
        protocol.replace("\\", "")
    )
    assert "As stamped on cohort 2, the newest" in all_text(at)
    versions = at.dataframe[0].value
    # v2's row (migration 0010) is listed too, newest first, with no cohort yet
    assert versions["methodology_version"].tolist() == ["v2", "v1"]
    assert versions["cohort_numbers"].tolist() == ["none yet", "1–2"]
    assert versions["constants"].tolist()[1] == "v1 as specified"
    assert "[Methodology v2](methodology?doc=methodology-v2)" in all_text(at)


def test_methodology_v2_document_opens_on_the_methodology_page(season_engine: Engine) -> None:
    """docs/methodology-v2.md is one of the page's documents (`?doc=methodology-v2`), drawn
    whole, its link to v1's methodology opening v1's document on the same page."""
    at = run_page("methodology", doc="methodology-v2")

    _ok(at)
    assert [t.value for t in at.title] == ["Methodology v2"]
    text = " ".join(str(m.value) for m in at.markdown)
    assert "## What changed from v1" in text and "## Never pooled with v1" in text
    assert "](methodology)" in text  # [methodology.md](methodology.md), opened in the page
    assert not at.selectbox  # no section picker: the v2 document is short


def test_methodology_draws_its_document_a_section_at_a_time(season_engine: Engine) -> None:
    """The first section by default, the linked one (`?section=12`), or the whole document;
    a section that does not exist is named in a warning. The contract stays whole."""
    first = run_page("methodology")
    linked = run_page("methodology", section=12)
    whole = run_page("methodology", section="all")
    missing = run_page("methodology", section=99)

    def document(at: AppTest) -> str:
        return " ".join(str(m.value) for m in at.markdown)

    for at in (first, linked, whole, missing):
        _ok(at)
    assert "## 1. Benchmark Objective" in document(first)
    assert "## 12. Snapshot Methodology" not in document(first)
    assert "## 12. Snapshot Methodology" in document(linked)
    assert "## 1. Benchmark Objective" not in document(linked)
    assert "## 21. Version history" in document(whole) and "## 1. " in document(whole)
    assert len(document(first)) * 3 < len(document(whole))
    assert [s.value for s in linked.selectbox] == ["12"]
    assert "99" in " ".join(str(w.value) for w in missing.warning)
    contract = run_page("methodology", doc="contract", section=12)
    _ok(contract)
    assert "## 6. Export columns" in document(contract)  # whole, its own headings
    assert not contract.selectbox


def test_operations_is_locked_without_a_password(season_engine: Engine) -> None:
    at = run_page("operations")

    _ok(at)
    assert "ARENA_ADMIN_PASSWORD" in str(at.warning[0].value)
    assert not at.dataframe and not at.text_input


def test_operations_unlocks_only_with_the_right_password(
    season_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_ADMIN_PASSWORD", PASSWORD)
    at = run_page("operations")
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
    assert PASSWORD not in all_text(at)


def test_each_page_keeps_its_own_selection(season_engine: Engine) -> None:
    """A cohort picked on one page never filters another; coming back finds it as it was."""
    at = run_page("cohorts", cohort=1, family=LLM_A)
    _ok(at)
    assert "family" not in at.query_params  # the Cohorts page has no family filter
    # The sidebar's navigation clears the query string in the browser; AppTest does not.
    at.query_params.clear()
    at.switch_page("app_pages/leaderboard.py").run()
    _ok(at)
    assert "cohort" not in at.query_params
    assert widget(at, "selectbox", "Cohort").value == links.ALL
    at.query_params.clear()
    at.switch_page("app_pages/cohorts.py").run()
    _ok(at)
    assert at.query_params["cohort"] == "1"


def test_a_link_naming_nothing_warns_and_does_not_fall_back(season_engine: Engine) -> None:
    for page, params, named in [
        ("leaderboard", {"cohort": "99"}, "cohort='99'"),
        ("agent", {"cohort": "1", "family": "gpt-9"}, "family='gpt-9'"),
        ("agent", {"cohort": "99"}, "cohort='99'"),
        ("family", {"family": "gpt-9"}, "family='gpt-9'"),
    ]:
        at = run_page(page, **params)
        _ok(at)
        warnings = " ".join(read(w.value) for w in at.warning)
        assert named in warnings, (page, warnings)
        assert not at.dataframe, page  # nothing shown in place of what the link named


# --------------------------------------------------------------------------------------------
# Family, Agent and Cohorts: defaults that are models, places in a cohort, a person's terms


def _tables_read_for_a_person(at: AppTest) -> None:
    """Every shown column of every table has a human label (no snake_case id as a header),
    and a table whose shown columns have gaps writes them "—", never "None"."""
    for table in at.dataframe:
        config = json.loads(table.proto.columns or "{}")
        frame = table.value
        shown = [c for c in frame.columns if not config.get(c, {}).get("hidden")]
        for column in shown:
            label = config.get(column, {}).get("label", column)
            assert not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", label), (column, label)
        if frame[shown].isna().to_numpy().any():
            assert table.proto.placeholder == fmt.DASH, [c for c in shown if frame[c].isna().any()]


def test_a_cohort_link_naming_nothing_lists_the_cohorts_but_opens_none(
    season_engine: Engine,
) -> None:
    at = run_page("cohorts", cohort=99)

    _ok(at)
    assert "cohort='99'" in " ".join(w.value for w in at.warning)
    assert [frame.key for frame in at.dataframe] == ["cohort-list"]  # the list to pick from
    assert not at.metric and not at.get("vega_lite_chart")


def test_family_page_opens_on_the_best_llm_family(season_engine: Engine) -> None:
    at = run_page("family")

    _ok(at)
    returns = agents.family_returns(season_engine)
    assert returns["family_id"].iloc[0] == "oracle"  # a baseline leads: not the default
    assert at.query_params["family"] == LLM_B == agents.best_llm_family(returns)
    assert widget(at, "selectbox", "Family").value == LLM_B
    assert "Opened on the best-ranked LLM family" in all_text(at)


def test_family_page_numbers_equal_the_read_models(season_engine: Engine) -> None:
    at = run_page("family", family=LLM_A)

    _ok(at)
    mine = agents.family_returns(season_engine).set_index("family_id").loc[LLM_A]
    metrics = {m.label: m.value for m in at.metric}
    # No stored leaderboard on this season: point numbers, and the offer to compute the rest.
    assert metrics["Return"] == fmt.signed_pct(mine["return_pct"])
    assert metrics["P/L (summed)"] == fmt.signed_money(mine["total_pnl"])
    assert metrics["P(rank #1)"] == fmt.DASH
    assert "No current stored leaderboard" in " ".join(i.value for i in at.info)
    per_cohort = at.dataframe[0].value
    expected = agents.family_cohorts(season_engine, LLM_A)
    assert per_cohort["cohort_number"].tolist() == expected["cohort_number"].tolist()
    assert per_cohort["rank_of"].tolist() == ["6 of 6", "5 of 6"]
    assert per_cohort["vs_mean"].tolist() == expected["vs_mean"].tolist()
    assert len(at.get("vega_lite_chart")) == 1
    assert "Opened on" not in all_text(at)


def test_agent_page_opens_on_the_best_llm_agent_of_the_newest_cohort(
    season_engine: Engine,
) -> None:
    at = run_page("agent")

    _ok(at)
    assert (at.query_params["cohort"], at.query_params["family"]) == ("2", LLM_B)
    assert cohorts.best_llm(cohorts.cohort_standings(season_engine, 2)) == LLM_B
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rank in cohort"] == "2 of 6"
    assert "Opened on cohort 2's best-ranked LLM agent" in all_text(at)


def test_agent_page_shows_its_place_in_the_cohort(season_engine: Engine) -> None:
    at = run_page("agent", cohort=1, family=LLM_A)

    _ok(at)
    place = cohorts.cohort_field(cohorts.cohort_standings(season_engine, 1), LLM_A)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rank in cohort"] == fmt.rank_of(place["rank"], place["agents"]) == "5 of 6"
    assert metrics["vs cohort average"] == fmt.signed_points(place["vs_mean"])
    assert metrics["vs cohort best"] == fmt.signed_points(place["vs_best"])
    assert metrics["vs cohort worst"] == fmt.signed_points(place["vs_worst"])


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("family", {"family": LLM_A}),
        ("agent", {"cohort": 1, "family": LLM_A}),
        ("cohorts", {"cohort": 1}),
    ],
)
def test_family_agent_and_cohorts_tables_read_for_a_person(
    season_engine: Engine, page: str, params: dict[str, Any]
) -> None:
    at = run_page(page, **params)

    _ok(at)
    assert at.dataframe
    _tables_read_for_a_person(at)
    assert "§" not in all_text(at)  # a citation a reader cannot open


# --------------------------------------------------------------------------------------------
# Errors: a bad id is a bad link, a page's bug is one line, never a traceback

HUGE_ID = "99999999999999999999999999"  # past 2**63-1: the driver raised OverflowError


@pytest.mark.parametrize(
    ("page", "key", "named"),
    [("decisions", "decision", "decision"), ("markets", "snapshot", "market snapshot")],
)
def test_an_id_past_the_database_range_is_a_named_bad_link(
    season_engine: Engine, page: str, key: str, named: str
) -> None:
    at = run_page(page, **{key: HUGE_ID})

    assert not at.exception, [e.value for e in at.exception]
    assert [read(w.value) for w in at.warning] == [
        f"This link's {key}='{HUGE_ID}' names no {named} in this database. Pick one above, "
        "or check the link."
    ]


def test_an_id_link_is_a_positive_64_bit_integer() -> None:
    assert links.id_value("42") == 42 and links.id_value(" 7 ") == 7
    assert links.id_value(str(2**63 - 1)) == 2**63 - 1
    for bad in (None, "", "0", "-3", "+4", "1_000", "٣", "4.0", str(2**63), HUGE_ID, "9" * 5000):
        assert links.id_value(bad) is None, bad


def test_a_failing_page_shows_one_line_and_logs_the_traceback(
    season_engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The real entry running a page whose read model breaks (a bug, not a bad link)."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom at /srv/secret/path.py")

    monkeypatch.setattr(cohorts, "cohort_numbers", broken)
    at = run_page("overview")

    assert not at.exception, [e.value for e in at.exception]  # no traceback for the visitor
    assert [e.value for e in at.error] == [entry.PAGE_FAILED]
    assert "/srv/secret" not in all_text(at)
    logged = [r for r in caplog.records if r.levelname == "ERROR" and r.exc_info]
    assert logged and "overview" in logged[0].getMessage()
    assert "boom at /srv/secret/path.py" in str((logged[0].exc_info or (None, None))[1])


def _failing_script() -> None:
    """A page run through `entry.run_page`, as the entry runs every page (AppTest runs this
    function's source as a script)."""
    import streamlit as st

    from arena.dashboard import entry

    def page() -> None:
        st.text("before")
        raise KeyError("missing column")

    entry.run_page(page)
    st.text("after: the entry goes on")


def test_run_page_turns_a_page_error_into_one_line() -> None:
    at = AppTest.from_function(_failing_script).run()

    assert not at.exception
    assert [e.value for e in at.error] == [entry.PAGE_FAILED]
    assert [t.value for t in at.text] == ["before", "after: the entry goes on"]


def test_visitors_never_see_tracebacks() -> None:
    """.streamlit/config.toml hides exception details: "none" (false would mean "stacktrace"
    in Streamlit 1.67, which still shows the traceback)."""
    config = tomllib.loads((DASHBOARD.parent / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"
