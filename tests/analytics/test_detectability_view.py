"""The "When will we know?" read model on real databases: its standard errors are the sd of
the leaderboard's own bootstrap replicates of A − B (one draw, so paired), its MDE and cohorts
needed follow `arena.core.detectability`, and the null rows rest on the random null's spread."""

from datetime import timedelta

import numpy as np
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats.bootstrap import family_bootstrap
from arena.analytics.stats.random_null import database_random_null
from arena.analytics.views.detectability import (
    DETECTABILITY_COLUMNS,
    detectability_frame,
    pair_sentences,
)
from arena.core.detectability import detectability, z_sum
from arena.core.errors import InputError
from arena.engine.settlement import settle_market
from arena.engine.snapshots import take_snapshots
from arena.markets.resolution import Verdict
from arena.storage.db import create_db_engine, session_scope
from tests.analytics.season import Season
from tests.factories import WEEK1, market, new_cohort_agents, seed_basic, trade_into

REPLICATES = 300


def test_a_draw_that_never_varies_gives_no_standard_error(engine: Engine) -> None:
    """Two families trading the same leg in each cohort: their difference is 0 in every
    replicate ("no gap"); each one's return never varies over the replicates either, and an SE
    of 0 means nothing, so those rows say "unknown", never "separable". Bad scopes: InputError."""
    seed_basic(engine)
    frame = detectability_frame(engine, replicates=REPLICATES, null_seeds=0)
    assert list(frame.columns) == list(DETECTABILITY_COLUMNS)
    # Two families: one pair × (return, Brier), each family × the market × (return, Brier).
    assert frame.groupby("comparison").size().to_dict() == {"market": 4, "pair": 2}
    assert set(frame["cohorts"]) == {2}
    pairs = frame[frame["comparison"] == "pair"]
    assert list(pairs["verdict"]) == ["no_gap", "no_gap"] and (pairs["difference"] == 0).all()
    market = frame[frame["comparison"] == "market"]
    assert market["se"].isna().all() and set(market["verdict"]) == {"unknown"}
    assert not frame["detectable"].any()
    with pytest.raises(InputError):
        detectability_frame(engine, cohort=99, null_seeds=0)
    with pytest.raises(InputError):
        detectability_frame(engine, methodology="v1+horizon-14d", null_seeds=0)


def test_a_pair_rests_on_the_cohorts_both_families_entered(engine: Engine) -> None:
    """A and B make the same bets in cohort 1, the one both entered; A alone plays cohort 2
    and loses there. On the cohort they share they do not differ: difference 0 and SE 0 on
    return and Brier ("no gap"), whatever A did in a cohort B never entered; k = 1. Against
    the market, A's rows rest on both its cohorts."""
    a1, b1 = new_cohort_agents(engine, ("fam-a", "fam-b"), number=1)
    (a2,) = new_cohort_agents(engine, ("fam-a",), number=2)
    with session_scope(engine) as s:
        s.add(market("s1", event_id="E1"))
        s.add(market("s2", prices=["0.7", "0.3"]))
        s.add(market("s3", event_id="E3", prices=["0.5", "0.5"]))
        s.add(market("s4", prices=["0.3", "0.7"]))
    t = WEEK1 + timedelta(minutes=5)
    for agent in (a1, b1):
        trade_into(engine, agent, "s1", "YES", "500", "0.4", t)
        trade_into(engine, agent, "s2", "NO", "300", "0.3", t)
    later = t + timedelta(weeks=1)
    trade_into(engine, a2, "s3", "YES", "2000", "0.5", later)
    trade_into(engine, a2, "s4", "YES", "1000", "0.3", later)
    settled = later + timedelta(days=2)
    for mid, winner in (("s1", "Yes"), ("s2", "Yes"), ("s3", "No"), ("s4", "Yes")):
        settle_market(engine, mid, Verdict("resolved", winner, "test"), settled)
    take_snapshots(engine, settled + timedelta(hours=1))
    frame = detectability_frame(engine, replicates=REPLICATES, null_seeds=0)
    pairs = frame[frame["comparison"] == "pair"].set_index("metric")
    assert list(pairs["cohorts"]) == [1, 1]
    # Both lost $300 on s2 and won $750 on s1 in cohort 1: +4.5% each.
    assert pairs.loc["return", "value_a"] == pytest.approx(4.5)
    assert pairs.loc["return", "value_b"] == pytest.approx(4.5)
    assert (pairs["difference"] == 0).all() and (pairs["se"] == 0).all()
    assert list(pairs["verdict"]) == ["no_gap", "no_gap"]
    market_rows = frame[(frame["comparison"] == "market") & (frame["family_a"] == "fam-a")]
    assert set(market_rows["cohorts"]) == {2}


def test_pair_and_market_rows_are_the_bootstrap_draws(season: Season) -> None:
    engine = create_db_engine(season.url, role="reader")
    try:
        frame = detectability_frame(engine, replicates=REPLICATES, null_seeds=0)
        fb = family_bootstrap(engine, replicates=REPLICATES)
    finally:
        engine.dispose()
    col = {f: i for i, f in enumerate(fb.families)}
    returns = fb.pnl_replicates() / fb.head["capital"].to_numpy() * 100.0
    pairs = frame[(frame["comparison"] == "pair") & (frame["metric"] == "return")]
    assert len(pairs) == len(col) * (len(col) - 1) // 2
    checked = 0
    for pair in pairs.itertuples(index=False):
        a, b = col[pair.family_a], col[pair.family_b]
        assert pair.value_a >= pair.value_b  # the better return first
        assert pair.se == pytest.approx(np.std(returns[:, a] - returns[:, b], ddof=1))
        assert pair.cohorts == 2  # every family entered both cohorts
        expected = detectability(pair.difference, pair.se, 2)
        assert pair.mde == pytest.approx(z_sum() * pair.se)
        assert pair.verdict == expected.verdict
        if expected.verdict == "not_yet":
            assert pair.more_cohorts == expected.more_cohorts > 0
            checked += 1
    assert checked > 0  # the season leaves some pair short of detectable
    market = frame[(frame["comparison"] == "market") & (frame["metric"] == "return")]
    for row in market.itertuples(index=False):
        assert row.value_b == 0.0 and row.difference == row.value_a
        assert row.se == pytest.approx(np.std(returns[:, col[row.family_a]], ddof=1))


def test_null_rows_rest_on_the_random_traders_spread(season: Season) -> None:
    engine = create_db_engine(season.url, role="reader")
    try:
        frame = detectability_frame(engine, replicates=200, null_seeds=30)
        null = database_random_null(engine, seeds=range(30))
    finally:
        engine.dispose()
    rows = frame[frame["comparison"] == "null"]
    assert len(rows) == frame["family_a"].nunique() and set(rows["metric"]) == {"return"}
    per_seed = null.groupby("seed")["pnl"].sum().to_numpy()
    for row in rows.itertuples(index=False):
        traders = per_seed / (10_000.0 * row.cohorts) * 100.0
        assert row.value_b == pytest.approx(traders.mean())
        assert row.se == pytest.approx(np.std(traders, ddof=1))
        assert row.mde == pytest.approx(z_sum() * row.se)
    sentences = pair_sentences(frame)
    families = frame["family_a"].nunique()
    assert len(sentences) == families * (families - 1) // 2
    assert all(" vs " in s and ("separable" in s or "no gap" in s) for s in sentences)
