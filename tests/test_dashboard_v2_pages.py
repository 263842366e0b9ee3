"""The sidebar's methodology selector on every page that pools cohorts (Home, Family, Compare),
and on the pages about one cohort or agent (Agent, Cohorts), carried across pages: AppTest with
the real entry script over real SQLite files.

The database is the suite's v1 season (cohorts 1–2) plus its v2 copy (`add_v2_season`, cohorts
3–4) with cohort 4 stamped with a protocol extension, so each version's all-cohort figures
differ: v1's are cohorts 1–2's, v2's cohort 3's alone (a copy of cohort 1), and a page pooling
the two, or counting the extended one, would show other numbers.
"""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from arena.analytics.stats.paired import family_comparison
from arena.analytics.stored import stored_result
from arena.analytics.views.agents import family_returns
from arena.analytics.views.curves import decision_runs, portfolio_curves
from arena.analytics.views.versions import version_scope
from arena.config import Methodology, cohort_stamp
from arena.dashboard import fmt, notices
from arena.engine.analyses import store_analyses
from arena.storage.db import create_db_engine
from arena.storage.tables import COHORTS
from tests.analytics.season import LLM_A, Season
from tests.dashboard.apptest import all_text, read, run_page
from tests.dashboard_caches import clear_dashboard_caches
from tests.test_dashboard_apptest import _ok
from tests.test_v2_scope import add_v2_season

V1, V2, EXTENDED = [1, 2], [3], 4  # the cohorts each version pools; v2's extended one
FAVOURITE = "baseline-favorite"  # shares markets with llm-a: 4 in v1's cohorts, 2 in v2's


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
    """The season plus its v2 copy, cohort 4 extended, with the hourly job's stored analyses."""
    from tests.analytics.season import writable_copy

    url = writable_copy(season, tmp_path_factory.mktemp("v2_pages") / "mixed.db")
    engine = create_db_engine(url)
    try:
        assert add_v2_season(engine) == [*V2, EXTENDED]
        stamp = cohort_stamp(Methodology(version="v2"), ["stated_probability"])
        with engine.begin() as conn:
            conn.execute(
                update(COHORTS).where(COHORTS.c.number == EXTENDED).values(constants=stamp)
            )
        store_analyses(engine, datetime(2030, 1, 1, tzinfo=UTC))
    finally:
        engine.dispose()
    return url


@pytest.fixture
def mixed(mixed_url: str, use_database: Callable[[str], None]) -> Iterator[Engine]:
    use_database(mixed_url)
    engine = create_db_engine(mixed_url, role="reader")
    yield engine
    engine.dispose()


def _stored_board(engine: Engine, version: str) -> pd.DataFrame:
    stored = stored_result(engine, "leaderboard", methodology=version)
    assert stored is not None
    return stored.frame.set_index("family_id")


def _selector(at: AppTest) -> Any:
    boxes = [box for box in at.sidebar.selectbox if box.label == "Methodology"]
    return boxes[0] if boxes else None


def _metrics(at: AppTest) -> dict[str, str]:
    return {str(m.label): str(m.value) for m in at.metric}


def _warnings(at: AppTest) -> str:
    return " ".join(read(str(w.value)) for w in at.warning)


# --------------------------------------------------------------------------------------------
# The read side: whose cohorts each version pools


def test_each_version_pools_its_own_plain_cohorts(mixed: Engine) -> None:
    v1, v2 = version_scope(mixed), version_scope(mixed, "v2")
    assert (v1.pooled, v1.extended, v1.other) == (V1, [], {"v2": [*V2, EXTENDED]})
    assert (v2.pooled, v2.extended, v2.other) == (V2, [EXTENDED], {"v1": V1})
    assert v2.left_out == [*V1, EXTENDED] and v2.newest() == EXTENDED and v1.newest() == 2
    returns = family_returns(mixed, "v2").set_index("family_id")
    assert set(returns["cohorts"]) == {1}  # cohort 3 alone: neither v1's nor the extended one


def test_v2_summed_curves_are_v2s_own_and_v1s_are_unchanged(mixed: Engine, season: Season) -> None:
    v1_only = create_db_engine(season.url, role="reader")
    try:
        for range_key in ("ALL", "1W"):
            # v1's summed curves on the mixed database are the v1-only database's, value for value
            pd.testing.assert_frame_equal(
                portfolio_curves(mixed, range_key), portfolio_curves(v1_only, range_key)
            )
        pd.testing.assert_frame_equal(decision_runs(mixed), decision_runs(v1_only))
    finally:
        v1_only.dispose()
    v2 = portfolio_curves(mixed, "ALL", methodology="v2")
    alone = portfolio_curves(mixed, "ALL", cohort=V2[0])
    assert set(v2["agents"]) == {1}  # one agent per family: cohort 3's, never v1's or #4's
    pd.testing.assert_frame_equal(v2, alone)
    runs = decision_runs(mixed, methodology="v2")
    assert set(runs["runs"].str.extract(r"cohort (\d+)")[0]) == {str(V2[0])}


def test_the_note_tells_another_version_apart_from_an_extension() -> None:
    assert notices.left_out_text([], other={"v2": [3, 4]}) == (
        "v2 cohorts 3–4 are not in these v1 figures: another methodology version, never pooled "
        "with v1 (the sidebar's Methodology selector shows theirs)."
    )
    both = notices.left_out_text([4], other={"v1": [1]}, version="v2")
    assert both.startswith("1 extended cohort (#4) is left out of these v2 figures; choose it")
    assert both.endswith(
        "v1 cohort 1 is not in these v2 figures: another methodology version, "
        "never pooled with v2 (the sidebar's Methodology selector shows theirs)."
    )


# --------------------------------------------------------------------------------------------
# Each page, v1 (the default) and v2


def test_home_names_the_leader_of_the_selected_version(mixed: Engine) -> None:
    for version in ("v1", "v2"):
        at = run_page("home", **({} if version == "v1" else {"methodology": version}))
        _ok(at)
        assert _selector(at).value == version
        shown = read(all_text(at))
        board = _stored_board(mixed, version)
        leader = (
            board[board["kind"] == "llm"]
            .sort_values(["rank", "p_rank_1"], ascending=[True, False])
            .iloc[0]
        )
        written = fmt.pct_interval(
            leader["return_pct"], leader["return_ci_low"], leader["return_ci_high"]
        )
        assert written in shown, (version, written)
        assert f"**Methodology {version}**" in shown
        assert f"over all {version} cohorts" in shown
        assert "extended cohorts (#3" not in shown  # a v2 cohort is never called extended
    assert "Brier (diagnostic) [95% interval]" in shown  # v2: the last run
    assert "1 extended cohort (#4) is left out of these v2 figures" in shown
    assert "v1 cohorts 1–2 are not in these v2 figures" in shown


def test_family_figures_are_the_selected_versions(mixed: Engine) -> None:
    for version, pooled in (("v1", V1), ("v2", V2)):
        at = run_page(
            "family", family=LLM_A, **({} if version == "v1" else {"methodology": version})
        )
        _ok(at)
        row = _stored_board(mixed, version).loc[LLM_A]
        metrics = _metrics(at)
        assert metrics["P/L (summed)"] == fmt.signed_money(row["total_pnl"])
        assert metrics["Return"] == fmt.signed_pct(row["return_pct"])
        shown = read(all_text(at))
        count = len(pooled)
        assert f"Over {count} {version} cohort{'s' if count > 1 else ''}:" in shown
        # every cohort is listed; the curve is drawn over the version's own alone
        assert sorted(at.dataframe[0].value["cohort_number"]) == [1, 2, 3, 4]
        assert f"P/L over time, all its {version} cohorts" in [h.value for h in at.subheader]
        assert at.get("vega_lite_chart")
    assert _stored_board(mixed, "v1").loc[LLM_A, "total_pnl"] != pytest.approx(
        _stored_board(mixed, "v2").loc[LLM_A, "total_pnl"]
    )
    assert "Brier (diagnostic)" in _metrics(at)
    assert "Extended: #4" in shown and "Methodology v1: 1–2 (listed here" in shown


def test_compare_reads_the_selected_versions_cohorts(mixed: Engine) -> None:
    for version in ("v1", "v2"):
        extra = {} if version == "v1" else {"methodology": version}
        at = run_page("compare", family=LLM_A, versus=FAVOURITE, **extra)
        _ok(at)
        table = at.dataframe[0].value
        expected = family_comparison(mixed, LLM_A, FAVOURITE, methodology=version)
        assert table["markets"].tolist() == expected["markets"].tolist()
        assert table["difference"].tolist() == [
            fmt.money_interval(expected["mean_difference"][0], None, None),
            fmt.prob_interval(expected["mean_difference"][1], None, None, signed=True),
        ]  # too few events for an interval in either version
        assert f"**Methodology {version}**" in all_text(at)
    v1_markets = family_comparison(mixed, LLM_A, FAVOURITE)["markets"].tolist()
    assert v1_markets != expected["markets"].tolist()  # cohort 3 alone shares fewer markets
    one = run_page("compare", family=LLM_A, versus=FAVOURITE, cohort=EXTENDED)
    _ok(one)
    assert f"Cohort {EXTENDED} ran **methodology v2**" in all_text(one)


@pytest.mark.parametrize("page", ["agent", "cohorts"])
def test_one_cohort_pages_open_on_the_versions_newest_and_say_which(
    mixed: Engine, page: str
) -> None:
    v1 = run_page(page)
    _ok(v1)
    assert v1.query_params.get("cohort", "2") == "2"  # the newest v1 cohort, not #4
    assert "Cohort 2 ran **methodology v1** (archived" in all_text(v1)
    v2 = run_page(page, methodology="v2")
    _ok(v2)
    assert f"Cohort {EXTENDED} ran **methodology v2**" in all_text(v2)
    box = next(b for b in v2.selectbox if b.label in ("Cohort", "Cohort to open"))
    assert box.value == EXTENDED and "Cohort 1 (v1)" in box.options
    if page == "agent":
        assert "Brier (diagnostic)" in _metrics(v2) and "Brier" in _metrics(v1)


def test_the_leaderboard_draws_v2s_summed_curves(mixed: Engine) -> None:
    at = run_page("leaderboard", methodology="v2")
    _ok(at)
    assert "not drawn yet" not in all_text(at)
    labels = [str(getattr(b, "label", "")) for b in at.get("download_button")]
    assert "Download curve CSV" in labels


# --------------------------------------------------------------------------------------------
# Carried across pages


def _navigate(at: AppTest, page: str, **params: str) -> AppTest:
    """Open `page` as the sidebar's navigation does (the query string cleared), or as a
    `st.page_link` does (the query string is the link's `params` alone)."""
    for key in list(at.query_params):
        del at.query_params[key]
    at.query_params.update(params)
    at.switch_page(f"app_pages/{page}.py")
    return at.run()


def test_the_selection_is_carried_across_pages(mixed: Engine) -> None:
    at = run_page("family", methodology="v2", family=LLM_A)  # a deep link
    _ok(at)
    assert _selector(at).value == "v2"
    for page in ("leaderboard", "compare", "calibration", "agent"):
        _navigate(at, page)
        _ok(at)
        assert _selector(at).value == "v2", page
        assert at.query_params["methodology"] == "v2", page
    _navigate(at, "decisions")  # a page without the selector: the key leaves its address
    _ok(at)
    assert "methodology" not in at.query_params and _selector(at) is None
    _navigate(at, "home")
    _ok(at)
    assert _selector(at).value == "v2" and "**Methodology v2**" in all_text(at)
    # A page link (the Family page's to one of its agents) carries its own keys and the version
    _navigate(at, "agent", cohort="1", family=LLM_A)
    _ok(at)
    assert (at.query_params["cohort"], at.query_params["methodology"]) == ("1", "v2")
    assert "Cohort 1 ran **methodology v1**" in all_text(at)  # a v1 cohort, said so


def test_picking_the_other_version_leaves_a_cohort_of_the_first(mixed: Engine) -> None:
    at = run_page("agent", cohort=1, family=LLM_A)
    _ok(at)
    assert "Cohort 1 ran **methodology v1**" in all_text(at)
    _selector(at).set_value("v2").run()
    _ok(at)
    assert at.query_params["cohort"] == str(EXTENDED)  # the newest v2 cohort
    assert f"Cohort {EXTENDED} ran **methodology v2**" in all_text(at)
    board = run_page("leaderboard", cohort=2)
    _selector(board).set_value("v2").run()
    _ok(board)
    assert "cohort" not in board.query_params  # all v2 cohorts, not v1's cohort 2
    assert "**Methodology v2**" in all_text(board)
    kept = run_page("leaderboard", cohort=3)
    _selector(kept).set_value("v2").run()
    assert kept.query_params["cohort"] == "3"  # a v2 cohort stays


def test_a_bad_version_is_named_and_never_carried(mixed: Engine) -> None:
    for page in ("home", "family", "compare", "agent", "cohorts"):
        at = run_page(page, methodology="v9")
        assert "This link's methodology='v9' names no methodology" in _warnings(at), page
    _navigate(at, "family")
    _ok(at)
    assert not at.warning and _selector(at).value == "v1"


@pytest.mark.parametrize("page", ["home", "family", "compare", "agent", "cohorts"])
def test_a_v1_only_database_shows_no_selector(
    season: Season, use_database: Callable[[str], None], page: str
) -> None:
    use_database(season.url)
    at = run_page(page)
    _ok(at)
    assert _selector(at) is None
    shown = all_text(at)
    assert "**Methodology v" not in shown and "ran **methodology" not in shown
    bad = run_page(page, methodology="v2")
    assert "methodology='v2' names no methodology" in _warnings(bad)
    assert "every cohort here is v1" in _warnings(bad)
