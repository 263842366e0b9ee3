"""Compare head to head (AppTest and its read model) over the analysed season: the paired
portfolio-return difference first — the very figure "When will we know?" shows for the pair —
then the shared-market one, the sentence bridging them, both headline rows, both curves and
the shared markets' positions; a default pair, kept in the URL and across pages; links both
ways between Compare and "When will we know?"."""

from urllib.parse import parse_qs

import pandas as pd
import pytest
from sqlalchemy import create_engine
from streamlit.testing.v1 import AppTest

from arena.analytics.stats.leaderboard import ranked
from arena.analytics.stored import current_stored
from arena.analytics.views.compare import (
    BRIDGE,
    SHARED_COLUMNS,
    default_pair,
    portfolio_difference,
    shared_positions,
)
from arena.analytics.views.detectability import display
from arena.dashboard import fmt
from tests.dashboard.apptest import all_text, element_kinds, ok, read, run_page


def stored(url: str, name: str) -> pd.DataFrame:
    engine = create_engine(url)
    found = current_stored(engine, name)
    engine.dispose()
    assert found is not None, f"the analyses job stores the {name} frame"
    return found.frame


def metric(at: AppTest) -> tuple[str, str]:
    """The portfolio figure's label and value."""
    shown = [m for m in at.metric if str(m.label).startswith("Portfolio return difference")]
    assert len(shown) == 1, [m.label for m in at.metric]
    return str(shown[0].label), str(shown[0].value)


def test_the_bridge_sentence_is_pinned() -> None:
    assert BRIDGE == (
        "The two figures answer different questions, so they can disagree, even in sign. The "
        "portfolio difference (what the Leaderboard and “When will we know?” judge) covers "
        "whole portfolios: markets only one of the two traded, how much each staked, and the "
        "cash each left idle. The shared-market difference isolates the same bets: only the "
        "markets both traded in the same cohort, so how hard a market was cancels out."
    )


def test_the_portfolio_figure_is_the_detectability_frames_in_either_order(
    on_analysed: str,
) -> None:
    frame = stored(on_analysed, "detectability")
    row = frame[(frame["comparison"] == "pair") & (frame["metric"] == "return")].iloc[0]
    a, b = str(row["family_a"]), str(row["family_b"])
    forward = portfolio_difference(frame, a, b)
    backward = portfolio_difference(frame, b, a)
    assert forward is not None and backward is not None
    assert forward.difference == row["difference"] and backward.difference == -row["difference"]
    assert (forward.return_a, forward.return_b) == (row["value_a"], row["value_b"])
    assert (backward.return_a, backward.return_b) == (row["value_b"], row["value_a"])
    assert forward.se == backward.se == row["se"] and forward.p_value == row["p_value"]
    assert forward.low < forward.difference < forward.high
    assert backward.low == pytest.approx(-forward.high)
    assert portfolio_difference(frame, a, "no-such-family") is None


def test_compare_shows_the_figure_the_detectability_page_shows(on_analysed: str) -> None:
    detect = ok(run_page("detectability"))
    pairs = detect.dataframe[0].value
    frame = stored(on_analysed, "detectability")
    expected = display(frame, "pair")
    ret = expected[expected["metric"] == "Return"].iloc[0]
    first = frame[(frame["comparison"] == "pair") & (frame["metric"] == "return")].iloc[0]
    a, b = str(first["family_a"]), str(first["family_b"])
    assert ret["difference"] in list(pairs["difference"])

    at = ok(run_page("compare", family=b, versus=a))  # the other order: the sign flips
    label, value = metric(at)
    assert "as the Leaderboard and “When will we know?” judge it" in label
    shown = value.split(" [")[0]
    flipped = (
        ret["difference"].replace("+", "−")
        if ret["difference"].startswith("+")
        else (ret["difference"].replace("−", "+"))
    )
    assert shown == flipped, (shown, ret["difference"])
    text = read(all_text(at))
    assert "Shared-market difference (A − B)" in text
    assert [str(i.value) for i in at.info if str(i.value) == BRIDGE] == [BRIDGE]
    # The portfolio figure comes before the shared-market table and the bridge between them.
    assert text.index("Shared-market difference") > text.index("Compare")


def test_it_opens_on_the_leaderboards_two_leading_contenders(on_analysed: str) -> None:
    board = stored(on_analysed, "leaderboard")
    pair = default_pair(board, "v1")
    assert pair is not None
    order = ranked(board, "v1")
    contenders = order[(order["kind"] == "llm") & ~order["too_early"].astype(bool)]
    leaders = contenders if len(contenders) >= 2 else order[order["kind"] == "llm"]
    assert pair == tuple(leaders["family_id"].iloc[:2])

    at = ok(run_page("compare"))
    assert (at.query_params["family"], at.query_params["versus"]) == pair
    assert len(at.dataframe) >= 2  # the shared-market table and the headline figures
    headline = next(f.value for f in at.dataframe if "a" in f.value.columns)
    assert list(headline["measure"]) == [
        "Return [95% CI]",
        "Brier [95% CI]",
        "P/L",
        "Bets",
        "Cohorts",
    ]
    rows = board.set_index("family_id")
    for column, family in (("a", pair[0]), ("b", pair[1])):
        row = rows.loc[family]
        assert list(headline[column]) == [
            fmt.pct_interval(row["return_pct"], row["return_ci_low"], row["return_ci_high"]),
            fmt.prob_interval(row["brier"], row["brier_ci_low"], row["brier_ci_high"]),
            fmt.signed_money(row["total_pnl"]),
            fmt.count(row["bets"]),
            fmt.count(row["cohorts"]),
        ]  # the leaderboard's own figures, as it writes them
    assert "vega_lite_chart" in element_kinds(at) or "arrow_vega_lite_chart" in element_kinds(at)


def test_the_pair_is_kept_when_leaving_and_coming_back(on_analysed: str) -> None:
    board = stored(on_analysed, "leaderboard")
    pair = default_pair(board, "v1")
    assert pair is not None
    chosen = (pair[1], "baseline-favorite")  # not the default pair
    at = ok(run_page("compare", family=chosen[0], versus=chosen[1]))
    for key in list(at.query_params):
        del at.query_params[key]  # the sidebar's navigation clears the query string
    at.switch_page("app_pages/leaderboard.py")
    ok(at.run())
    for key in list(at.query_params):
        del at.query_params[key]
    at.switch_page("app_pages/compare.py")
    ok(at.run())
    assert (at.query_params["family"], at.query_params["versus"]) == chosen


def test_the_shared_markets_show_both_sides_positions(on_analysed: str) -> None:
    engine = create_engine(on_analysed)
    frame = shared_positions(engine, "baseline-favorite", "llm-a", [1, 2])
    engine.dispose()
    assert list(frame.columns) == list(SHARED_COLUMNS)
    assert len(frame) > 0 and frame["question"].ne("").all()
    assert (frame["stake_a"] > 0).all() and (frame["stake_b"] > 0).all()

    at = ok(run_page("compare", family="baseline-favorite", versus="llm-a"))
    shown = next(f.value for f in at.dataframe if "question" in f.value.columns)
    assert len(shown) == len(frame)
    assert "Positions CSV" in [getattr(b, "label", None) for b in at.get("download_button")]


def test_the_two_pages_link_to_each_other_for_the_pair(on_analysed: str) -> None:
    at = ok(run_page("compare", family="llm-a", versus="baseline-favorite"))
    to_detect = [p for p in at.get("page_link") if "When will we know" in str(p.proto.label)]
    assert len(to_detect) == 1 and "detectability" in str(to_detect[0].proto.page)

    detect = ok(run_page("detectability"))
    links = [p for p in detect.get("page_link") if str(p.proto.label) == "Open in Compare"]
    assert len(links) == 1 and "compare" in str(links[0].proto.page)
    query = parse_qs(str(links[0].proto.query_string))
    frame = stored(on_analysed, "detectability")
    pairs = frame[frame["comparison"] == "pair"]
    first = pairs[(pairs["kind_a"] == "llm") & (pairs["kind_b"] == "llm")].iloc[0]  # models first
    assert (query["family"], query["versus"]) == ([first["family_a"]], [first["family_b"]])
