"""The "When will we know?" read model on real databases: its standard errors are the sd of
the leaderboard's own bootstrap replicates of A − B (one draw, so paired), its MDE and cohorts
needed follow `arena.core.detectability`, and the null rows rest on the random null's spread."""

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
from arena.storage.db import create_db_engine
from tests.analytics.season import Season
from tests.factories import seed_basic

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
