"""The replicates figures on a few agents computed by hand: pooled return and Brier,
within-family spread beside the gap to the next family, the noise share and its bootstrap, and
rank stability (a perfectly stable ranking, an unstable one, ties, sampled picks); then a
short demo season with three replicates per family through the real engine."""

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.analytics.stats import random_null
from arena.analytics.stats.bootstrap import family_bootstrap
from arena.analytics.stats.replicate_figures import noise_share, rank_stability
from arena.analytics.stats.replicates import (
    AGENT_COLUMNS,
    FAMILY_COLUMNS,
    FIGURES_COLUMNS,
    SUMMARY_COLUMNS,
    family_spread,
    joined_figures,
    replicate_agents,
    replicate_analysis,
    replicate_figures,
    replicated_cohorts,
    split_figures,
)
from arena.analytics.stored import current_stored
from arena.core import stats
from arena.dashboard import fmt
from arena.dashboard.charts import replicates as replicate_charts
from arena.lineup import load_lineup
from arena.storage.db import create_db_engine
from arena.storage.tables import AGENTS, DECISIONS, POSITIONS, TRADES
from tests.stated_season import BASELINE_DAYS, BASELINES, DemoSeasons

NAN = float("nan")


def agents(rows: Sequence[tuple[Any, ...]]) -> pd.DataFrame:
    """`replicate_agents` rows from (cohort, family, P/L[, Brier, resolved bets[, capital]]);
    capital $100 unless given, so a P/L in dollars is the return in percent. A family whose
    id starts with "base" is a baseline; replicates are numbered in order within a cell."""
    frame = pd.DataFrame(
        [
            {
                "cohort_number": row[0],
                "family_id": row[1],
                "pnl": float(row[2]),
                "brier": float(row[3]) if len(row) > 3 else NAN,
                "resolved_bets": int(row[4]) if len(row) > 4 else 0,
                "capital": float(row[5]) if len(row) > 5 else 100.0,
            }
            for row in rows
        ]
    )
    frame["agent_id"] = range(1, len(frame) + 1)
    frame["replicate"] = frame.groupby(["cohort_number", "family_id"]).cumcount() + 1
    frame["display_name"] = "Model " + frame["family_id"]
    frame["kind"] = np.where(frame["family_id"].str.startswith("base"), "baseline", "llm")
    frame["return_pct"] = frame["pnl"] / frame["capital"] * 100
    return frame[list(AGENT_COLUMNS)]


# One cohort, three families × two replicates: A 10 and 14, B 0 and 2, C (deterministic) −5
# twice. Pooled: A 12%, B 1%, C −5%; every pick keeps A > B > C.
STABLE = agents(
    [
        (1, "A", 10, 0.2, 2),
        (1, "A", 14, 0.1, 1),
        (1, "B", 0, 0.3, 1),
        (1, "B", 2),  # no resolved bet: no Brier
        (1, "C", -5, 0.25, 4),
        (1, "C", -5, 0.25, 4),
    ]
)
# One cohort, A 5 / 20 / −10 (pooled 5), B 0 / 3 / 6 (pooled 3), C 4 three times (pooled 4).
UNSTABLE = agents(
    [(1, f, x) for f, xs in (("A", (5, 20, -10)), ("B", (0, 3, 6)), ("C", (4,) * 3)) for x in xs]
)
# Two cohorts of different sizes: cohort 1 A 10 / 14, B 0 / 2; cohort 2 A 0 / 6 / 3, B 1 ×3.
TWO_COHORTS = agents(
    [
        *[(1, "A", 10), (1, "A", 14), (1, "B", 0), (1, "B", 2)],
        *[(2, "A", 0), (2, "A", 6), (2, "A", 3), (2, "B", 1), (2, "B", 1), (2, "B", 1)],
    ]
)


def by_family(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.set_index("family_id")


# --------------------------------------------------------------------------------------------
# Spread and gap


def test_pooled_return_spread_and_gap_by_hand() -> None:
    spread = family_spread(STABLE)
    assert list(spread["family_id"]) == ["A", "B", "C"]  # best pooled return first
    f = by_family(spread)
    assert f["pooled_return_pct"].tolist() == pytest.approx([12.0, 1.0, -5.0])
    # A: 10 and 14 around 12 → SS 8 on 1 degree of freedom; B: 0 and 2 → SS 2; C identical.
    assert f["return_sd"].tolist() == pytest.approx([math.sqrt(8), math.sqrt(2), 0.0])
    assert f.loc["C", "return_sd"] == 0.0  # exactly: a deterministic family has no spread
    assert f["return_range"].tolist() == pytest.approx([4.0, 2.0, 0.0])
    assert (f.loc["A", "return_min"], f.loc["A", "return_max"]) == pytest.approx((10, 14))
    # The gap to the next family down: A − B, B − C; the last has none.
    assert f["return_gap"].iloc[:2].tolist() == pytest.approx([11.0, 6.0])
    assert np.isnan(f.loc["C", "return_gap"])
    assert f["replicates"].tolist() == [2.0, 2.0, 2.0]
    assert f["agents"].tolist() == [2, 2, 2] and f["cohorts"].tolist() == [1, 1, 1]


def test_pooled_brier_spread_and_gap_by_hand() -> None:
    f = by_family(family_spread(STABLE))
    # Pooled over the Brier rows: A (2 × 0.2 + 0.1) / 3; B only its first replicate's row.
    assert f["pooled_brier"].tolist() == pytest.approx([0.5 / 3, 0.3, 0.25])
    assert f["resolved_bets"].tolist() == [3, 1, 8]
    # The spread of the agents' mean Brier: A 0.2 and 0.1 → SD √0.005; B has one agent
    # with a Brier (none to spread); C identical.
    assert f.loc["A", "brier_sd"] == pytest.approx(math.sqrt(0.005))
    assert f.loc["A", "brier_range"] == pytest.approx(0.1)
    assert np.isnan(f.loc["B", "brier_sd"]) and np.isnan(f.loc["B", "brier_range"])
    assert f.loc["C", "brier_sd"] == 0.0
    # The gap to the next worse family by pooled Brier: A → C → B.
    assert f.loc["A", "brier_gap"] == pytest.approx(0.25 - 0.5 / 3)
    assert f.loc["C", "brier_gap"] == pytest.approx(0.05)
    assert np.isnan(f.loc["B", "brier_gap"])


def test_the_spread_is_pooled_within_cohorts_never_across() -> None:
    f = by_family(family_spread(TWO_COHORTS))
    # A: cohort 1 SS 8 (1 df), cohort 2 (0, 6, 3 around 3) SS 18 (2 df): √(26 / 3). Across
    # cohorts its five returns would give another number: replicates are not matched.
    assert f.loc["A", "return_sd"] == pytest.approx(math.sqrt(26 / 3))
    assert f.loc["A", "return_sd"] != pytest.approx(np.std([10, 14, 0, 6, 3], ddof=1))
    assert f.loc["A", "return_range"] == pytest.approx((4 + 6) / 2)
    assert f.loc["B", "return_sd"] == pytest.approx(math.sqrt(2 / 3))
    # Pooled return: Σ P/L / Σ capital over both cohorts.
    assert f.loc["A", "pooled_return_pct"] == pytest.approx(33 / 500 * 100)
    assert f.loc["B", "pooled_return_pct"] == pytest.approx(5 / 500 * 100)
    assert f.loc["A", "replicates"] == 2.5 and f.loc["A", "cohorts"] == 2


def test_the_pooled_return_weights_replicates_by_capital() -> None:
    frame = agents([(1, "A", 10, NAN, 0, 100), (1, "A", 60, NAN, 0, 300), (1, "B", 5)])
    f = by_family(family_spread(frame))
    assert f.loc["A", "pooled_return_pct"] == pytest.approx(70 / 400 * 100)  # not (10 + 20) / 2


# --------------------------------------------------------------------------------------------
# Noise share


def test_noise_share_by_hand() -> None:
    one = noise_share(STABLE, replicates=0)
    # Returns 10, 14, 0, 2, −5, −5: Σx 16, Σx² 350, so SS around the cohort mean is
    # 350 − 16²/6 = 922/3 on 6 − 1 degrees of freedom; within families 8 + 2 + 0 = 10 on
    # 6 agents − 3 cells.
    assert one.share == pytest.approx((10 / 3) / ((922 / 3) / 5))
    assert np.isnan(one.low) and np.isnan(one.high)  # no bootstrap asked for
    two = noise_share(TWO_COHORTS, replicates=0)
    # Cohort 1: SS 300 − 26²/4 = 131, within 10; cohort 2: SS 48 − 12²/6 = 24, within 18.
    # Each cohort around its own mean (the cohorts' difference is not counted): within 28
    # on 10 agents − 4 cells, total 155 on 10 agents − 2 cohorts.
    assert two.share == pytest.approx((28 / 6) / (155 / 8))


def test_noise_share_edges() -> None:
    # No spread within any family: 0, and no draw can find any.
    exact = agents([(1, "A", 5), (1, "A", 5), (1, "B", 1), (1, "B", 1)])
    result = noise_share(exact, replicates=200, seed=3)
    assert (result.share, result.low, result.high) == (0.0, 0.0, 0.0)
    # Families that do not differ at all: within 4 on 2 degrees of freedom over total 4 on
    # 3 is 1.5, capped: it is all replicate noise.
    same = agents([(1, "A", 1), (1, "A", 3), (1, "B", 1), (1, "B", 3)])
    assert noise_share(same, replicates=0).share == 1.0
    # Nothing varies, or no family has two agents: no share to give.
    flat = agents([(1, "A", 0), (1, "A", 0), (1, "B", 0), (1, "B", 0)])
    assert np.isnan(noise_share(flat, replicates=50).share)
    assert np.isnan(noise_share(agents([(1, "A", 1), (1, "B", 2)]), replicates=50).share)
    assert np.isnan(noise_share(STABLE.iloc[0:0]).share)


def test_the_interval_is_the_documented_bootstrap() -> None:
    """Brute force, cell by cell: each cell's deviations from its mean, scaled by
    √(n / (n − 1)), drawn n times with replacement (uniforms of one seeded stream, cells ×
    slots in order) around its cohort's mean plus s × its family effect; the share
    recomputed; the 95% percentile interval."""
    frame, draws, seed = TWO_COHORTS, 300, 11
    # Family effects: cohort 1 (mean 6.5) A +5.5, B −5.5, two agents each; cohort 2 (mean 2)
    # A +1, B −1, three each: SS_b = 121 + 6 = 127. MS_w = 28 / 6 on K − C = 2 extra cells.
    shrink = math.sqrt(1 - 2 * (28 / 6) / 127)
    centre = {1: 6.5, 2: 2.0}
    cells = [
        (cohort, group["return_pct"].to_numpy())
        for (cohort, _), group in frame.groupby(["cohort_number", "family_id"], sort=True)
    ]
    width = max(len(x) for _, x in cells)
    uniforms = np.random.default_rng(seed).random((draws, len(cells), width))
    shares = []
    for b in range(draws):
        drawn = []
        for i, (cohort, x) in enumerate(cells):
            n = len(x)
            residuals = (x - x.mean()) * math.sqrt(n / (n - 1))
            picks = [int(u * n) for u in uniforms[b, i, :n]]
            mean = centre[cohort] + shrink * (x.mean() - centre[cohort])
            drawn.append((cohort, mean + residuals[picks]))
        within = sum(((y - y.mean()) ** 2).sum() for _, y in drawn)
        total = 0.0
        for cohort in centre:
            ys = np.concatenate([y for c, y in drawn if c == cohort])
            total += ((ys - ys.mean()) ** 2).sum()
        shares.append(min(1.0, (within / (10 - 4)) / (total / (10 - 2))))
    low, high = stats.percentile_interval(np.asarray(shares))
    result = noise_share(frame, replicates=draws, seed=seed)
    assert (result.low, result.high) == (pytest.approx(low), pytest.approx(high))
    assert result.low < result.share < result.high
    # The scaling makes the drawn within-cell sum of squares unbiased: averaged over many
    # draws of A's cohort-2 cell (0, 6, 3: SS 18) it stays near 18, not 2/3 of it.
    x = np.array([0.0, 6.0, 3.0])
    rng = np.random.default_rng(0)
    scaled = (x - x.mean()) * math.sqrt(3 / 2)
    ss = [((y - y.mean()) ** 2).sum() for y in scaled[rng.integers(0, 3, size=(20_000, 3))]]
    assert np.mean(ss) == pytest.approx(18.0, rel=0.03)


def test_the_interval_covers_pure_noise() -> None:
    """Eight cohorts of eleven families × three replicates, all drawn from one distribution:
    the share is 100% and its interval reaches it (drawn around the observed family means
    instead of shrunken ones, the interval stopped at 0.92)."""
    rng = np.random.default_rng(7)
    rows = [
        (cohort, f"f{family}", float(rng.normal(0, 3)))
        for cohort in range(1, 9)
        for family in range(11)
        for _ in range(3)
    ]
    result = noise_share(agents(rows), replicates=400, seed=1)
    assert result.share > 0.9 and result.high == 1.0


# --------------------------------------------------------------------------------------------
# Rank stability


def test_a_perfectly_stable_ranking() -> None:
    result = rank_stability(STABLE)
    # 2 · 2 · 2: C's identical replicates are picks like any (and change nothing).
    assert (result.possible, result.picks, result.enumerated) == (8.0, 8, True)
    assert (result.full_agreement, result.pairwise_agreement) == (1.0, 1.0)
    f = by_family(result.families)
    assert f["pooled_rank"].tolist() == [1.0, 2.0, 3.0]
    assert f["keeps_rank"].tolist() == [1.0, 1.0, 1.0]
    assert f["rank_best"].tolist() == f["rank_worst"].tolist() == [1.0, 2.0, 3.0]


def test_an_unstable_ranking_by_hand() -> None:
    """Pooled: A 5 (1st), C 4 (2nd), B 3 (3rd). C is always 4, so the 27 picks are the 9
    pairs (a, b) three times over. The ranking is A > C > B when a ∈ {5, 20} and b ∈ {0, 3}:
    4 of 9. Pairs (A–B, A–C, B–C) ordered as pooled, for b = 0, 3, 6: a = 5 → 3, 3, 1
    (b = 6 beats both); a = 20 → 3, 3, 2 (b = 6 beats C only); a = −10 → 1, 1, 0 (only
    C above B survives, and not against b = 6): 17 of 27 pairs."""
    result = rank_stability(UNSTABLE)
    assert (result.possible, result.picks, result.enumerated) == (27.0, 27, True)
    assert result.full_agreement == pytest.approx(4 / 9)
    assert result.pairwise_agreement == pytest.approx(17 / 27)
    f = by_family(result.families)
    assert f["pooled_rank"].to_dict() == {"A": 1.0, "B": 3.0, "C": 2.0}
    # A stays first unless b = 6 beats a = 5, or a = −10: 5 of 9. B stays last when b < 4
    # and a > b: 4 of 9. C stays second when exactly one of a, b is above 4: 5 of 9.
    assert f["keeps_rank"].to_dict() == pytest.approx({"A": 5 / 9, "B": 4 / 9, "C": 5 / 9})
    assert f["rank_best"].tolist() == [1.0, 1.0, 1.0]
    assert f["rank_worst"].tolist() == [3.0, 3.0, 3.0]


def test_a_tie_agrees_only_with_a_tie() -> None:
    # Pooled A (1, 3) and B (2, 2) tie at 2%; every pick separates them: no pair agrees.
    split = rank_stability(agents([(1, "A", 1), (1, "A", 3), (1, "B", 2), (1, "B", 2)]))
    assert (split.full_agreement, split.pairwise_agreement) == (0.0, 0.0)
    assert by_family(split.families)["pooled_rank"].tolist() == [1.0, 1.0]
    assert by_family(split.families)["keeps_rank"].tolist() == [0.5, 0.5]
    # Tied in both: agreement.
    both = rank_stability(agents([(1, "A", 2), (1, "A", 2), (1, "B", 2), (1, "B", 2)]))
    assert (both.full_agreement, both.pairwise_agreement) == (1.0, 1.0)


def test_picks_span_cohorts_and_are_sampled_with_a_seed_past_the_cap() -> None:
    """Two cohorts: a pick is one replicate per family in each (2 · 2 · 3 · 3 = 36), the
    family's return Σ P/L / Σ capital of its picked agents. Checked by brute force."""
    cells = [
        group["pnl"].tolist()
        for _, group in TWO_COHORTS.groupby(["cohort_number", "family_id"], sort=True)
    ]
    full = 0
    for a1, b1, a2, b2 in itertools.product(*cells):
        full += (a1 + a2) > (b1 + b2)  # pooled: A 6.6% above B 1%
    everything = rank_stability(TWO_COHORTS)
    assert (everything.possible, everything.picks, everything.enumerated) == (36.0, 36, True)
    assert everything.full_agreement == pytest.approx(full / 36)
    assert everything.pairwise_agreement == pytest.approx(full / 36)  # one pair
    sampled = rank_stability(TWO_COHORTS, max_picks=10, seed=4)
    assert (sampled.possible, sampled.picks, sampled.enumerated) == (36.0, 10, False)
    assert sampled.full_agreement * 10 == pytest.approx(round(sampled.full_agreement * 10))
    again = rank_stability(TWO_COHORTS, max_picks=10, seed=4)
    assert again.full_agreement == sampled.full_agreement  # seeded: the same picks


# --------------------------------------------------------------------------------------------
# The whole frame


def test_the_figures_join_and_split() -> None:
    figures = replicate_figures(UNSTABLE, replicates=100)
    assert list(figures.families.columns) == list(FAMILY_COLUMNS)
    assert list(figures.families["family_id"]) == ["A", "C", "B"]
    assert figures.families["keeps_rank"].tolist() == pytest.approx([5 / 9, 5 / 9, 4 / 9])
    summary = figures.summary.iloc[0]
    assert list(figures.summary.columns) == list(SUMMARY_COLUMNS)
    assert (summary["scope_cohorts"], summary["scope_families"], summary["scope_agents"]) == (
        1,
        3,
        9,
    )
    assert summary["full_agreement"] == pytest.approx(4 / 9)
    # LLM families only: all three here, so the same share.
    assert summary["llm_noise_share"] == summary["noise_share"]
    joined = joined_figures(figures)
    assert list(joined.columns) == list(FIGURES_COLUMNS) and len(joined) == 3
    families, again = split_figures(joined)
    pd.testing.assert_frame_equal(families, figures.families)
    assert again is not None and again["picks"] == 27


def test_no_agent_gives_the_documented_empty_frames() -> None:
    figures = replicate_figures(STABLE.iloc[0:0])
    assert figures.families.empty and list(figures.families.columns) == list(FAMILY_COLUMNS)
    assert np.isnan(figures.summary.iloc[0]["noise_share"])
    families, summary = split_figures(joined_figures(figures))
    assert families.empty and summary is None


def test_a_scope_without_replicates_reads_as_the_figures_of_no_agents(engine: Engine) -> None:
    """The hourly job's shortcut for a database without replicated cohorts gives the very
    frame the full computation gives (columns, dtypes, no rows), a fresh copy each call."""
    computed = joined_figures(replicate_figures(replicate_agents(engine), replicates=200, seed=4))
    first = replicate_analysis(engine, replicates=200, seed=4)
    pd.testing.assert_frame_equal(first, computed)
    assert first.empty and list(first.columns) == list(FIGURES_COLUMNS)
    assert replicate_analysis(engine, replicates=200, seed=4) is not first


# --------------------------------------------------------------------------------------------
# The random null of a replicated family


def test_the_null_percentile_of_three_replicates_is_the_one_agent_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A null trader is one $10,000 agent, so a family's return (its agents' mean) meets the
    null on one agent's capital per cohort: three replicates earning +3%, +5% and +7% a
    cohort (pooled +5%) sit where one agent earning +5% does, not N times further out (on
    the pooled $30,000 a cohort the null's spread would shrink threefold)."""
    rng = np.random.default_rng(7)
    seeds, cohorts = 400, 4
    null = pd.DataFrame(
        {
            "seed": np.repeat(np.arange(seeds), cohorts),
            "cohort_number": np.tile(np.arange(1, cohorts + 1), seeds),
            "pnl": rng.normal(0.0, 800.0, seeds * cohorts),
            "capital": 10_000.0,
        }
    )
    monkeypatch.setattr(random_null, "database_random_null", lambda *_, **__: null.copy())
    rows = [("one", n, 500.0) for n in range(1, cohorts + 1)]
    rows += [("three", n, pnl) for n in range(1, cohorts + 1) for pnl in (300.0, 500.0, 700.0)]
    agents = pd.DataFrame(rows, columns=["family_id", "cohort_number", "pnl"])
    agents["starting_balance"] = 10_000.0
    head = agents.groupby("family_id", as_index=False).agg(
        pnl=("pnl", "sum"), capital=("starting_balance", "sum")
    )
    got = random_null.null_percentiles(None, None, agents, head, seeds)  # type: ignore[arg-type]
    per_seed = null.groupby("seed")["pnl"].sum().to_numpy() / 40_000.0 * 100.0
    expected = stats.percentile_of(5.0, per_seed)
    assert 80 < expected < 95  # +5% a cohort is about 1.25 null sds out
    assert got.tolist() == pytest.approx([expected, expected])


# --------------------------------------------------------------------------------------------
# A demo season with three replicates per family


@pytest.fixture(scope="module")
def season(demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """Nine days of `arena demo --replicates 3` (two cohorts, one decision run each; the
    lineup's LLM families on the simulated model server, the baselines and the oracle)."""
    folder = tmp_path_factory.mktemp("demo_replicates")
    url = demo_seasons.copy(folder, load_lineup(None), "", 9, 3)
    engine = create_db_engine(url)
    yield engine
    engine.dispose()


def test_the_demo_season_has_three_agents_per_family_and_cohort(season: Engine) -> None:
    assert replicated_cohorts(season) == [1, 2]
    frame = replicate_agents(season)
    assert list(frame.columns) == list(AGENT_COLUMNS)
    counts = frame.groupby(["cohort_number", "family_id"])["replicate"].agg(sorted)
    assert all(replicates == [1, 2, 3] for replicates in counts)
    assert not frame["display_name"].str.contains("·").any()  # the family's name, unlabelled
    assert replicate_agents(season, cohort=2)["cohort_number"].unique().tolist() == [2]


def test_llm_replicates_differ_and_deterministic_baselines_do_not(season: Engine) -> None:
    figures = replicate_figures(replicate_agents(season), replicates=200)
    f = by_family(figures.families)
    llms = f[f["kind"] == "llm"]
    assert len(llms) == 7 and (llms["return_sd"] > 0).all(), llms["return_sd"]
    for family in ("baseline-cash", "baseline-favorite", "oracle"):
        assert f.loc[family, "return_sd"] == 0.0 and f.loc[family, "return_range"] == 0.0
    # Identical Brier too where there is one (the cash baseline never bets).
    assert f.loc["baseline-favorite", "brier_sd"] == f.loc["oracle", "brier_sd"] == 0.0
    assert np.isnan(f.loc["baseline-cash", "brier_sd"])
    summary = figures.summary.iloc[0]
    assert 0 <= summary["noise_share_ci_low"] <= summary["noise_share"]
    assert summary["noise_share"] <= summary["noise_share_ci_high"] <= 1
    assert summary["enumerated"] == False  # noqa: E712 (3^22 picks: sampled)
    assert summary["picks"] == 20_000 and summary["possible_picks"] == 3.0**22


def test_every_replicate_has_its_own_book(season: Engine) -> None:
    """No position, decision or trade is shared: a trade's decision and position belong to
    the trade's own agent, and a deterministic baseline's replicates hold the same markets in
    positions of their own."""
    with season.connect() as conn:
        crossed = conn.execute(
            select(func.count())
            .select_from(TRADES)
            .join(DECISIONS, DECISIONS.c.id == TRADES.c.decision_id)
            .join(POSITIONS, POSITIONS.c.id == TRADES.c.position_id)
            .where(
                (DECISIONS.c.agent_id != TRADES.c.agent_id)
                | (POSITIONS.c.agent_id != TRADES.c.agent_id)
            )
        ).scalar_one()
        held = conn.execute(
            select(AGENTS.c.cohort_id, AGENTS.c.replicate, POSITIONS.c.id, POSITIONS.c.market_id)
            .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
            .where(AGENTS.c.family_id == "baseline-favorite")
        ).all()
        decided = conn.execute(
            select(AGENTS.c.id, func.count(DECISIONS.c.id))
            .outerjoin(DECISIONS, DECISIONS.c.agent_id == AGENTS.c.id)
            .group_by(AGENTS.c.id)
        ).all()
    assert crossed == 0
    assert all(count >= 1 for _, count in decided)  # every replicate decided for itself
    markets = pd.DataFrame(held, columns=["cohort_id", "replicate", "position", "market"])
    assert markets["position"].is_unique and len(markets) > 0
    per_replicate = markets.groupby(["cohort_id", "replicate"])["market"].agg(sorted)
    for _, group in per_replicate.groupby(level="cohort_id"):
        assert len(group) == 3 and all(m == group.iloc[0] for m in group)


def test_pooled_return_is_the_sum_of_pnl_over_the_sum_of_capital(season: Engine) -> None:
    frame = replicate_agents(season)
    # Each agent's P/L is the leaderboard's (its bootstrap's books: the same rule).
    for cohort in (1, 2):
        books = family_bootstrap(season, cohort=cohort, replicates=10).books
        mine = frame[frame["cohort_number"] == cohort]
        theirs = books.set_index(["family_id", "replicate"])["pnl"]
        assert mine.set_index(["family_id", "replicate"])["pnl"].to_dict() == pytest.approx(
            theirs.to_dict()
        )
    f = by_family(family_spread(frame))
    sums = frame.groupby("family_id")[["pnl", "capital"]].sum()
    expected = sums["pnl"] / sums["capital"] * 100
    assert f["pooled_return_pct"].to_dict() == pytest.approx(expected.to_dict())
    assert (f["capital"] == 60_000).all()  # 2 cohorts × 3 replicates × $10,000


def test_the_hourly_job_stored_the_figures(season: Engine) -> None:
    for name, cohort in (("replicates", None), ("replicate_agents", 1)):
        stored = current_stored(season, name, cohort)
        assert stored is not None, name
    stored = current_stored(season, "replicates")
    assert stored is not None
    pd.testing.assert_frame_equal(stored.frame, replicate_analysis(season))
    families, summary = split_figures(stored.frame)
    assert len(families) == 11 and summary is not None


# --------------------------------------------------------------------------------------------
# What the page draws and writes


def test_the_chart_draws_a_dot_per_agent_a_line_per_cohort_and_a_bar_per_family() -> None:
    figures = replicate_figures(TWO_COHORTS, replicates=50)
    spec = replicate_charts.replicate_returns(figures.agents, figures.families).to_dict()
    zero, lines, dots, pooled = spec["layer"]
    marks = [layer["mark"]["type"] for layer in (zero, lines, dots, pooled)]
    assert marks == ["rule", "rule", "circle", "tick"]
    datasets = spec["datasets"]
    assert len(datasets[dots["data"]["name"]]) == 10  # every agent
    spans = datasets[lines["data"]["name"]]  # one line per family and cohort: min to max
    assert sorted((r["display_name"], r["cohort_number"], r["low"], r["high"]) for r in spans) == [
        ("Model A", 1, 10.0, pytest.approx(14.0)),
        ("Model A", 2, 0.0, 6.0),
        ("Model B", 1, 0.0, 2.0),
        ("Model B", 2, 1.0, 1.0),
    ]
    assert len(datasets[pooled["data"]["name"]]) == 2
    # Families top to bottom by pooled return, on every layer; a sub-row per cohort.
    assert dots["encoding"]["y"]["sort"] == ["Model A", "Model B"]
    assert (
        pooled["encoding"]["y"]["sort"] == lines["encoding"]["y"]["sort"] == ["Model A", "Model B"]
    )
    assert dots["encoding"]["yOffset"]["field"] == "cohort_number"
    assert pooled["encoding"]["x"]["field"] == "pooled_return_pct"
    zoomed = replicate_charts.replicate_returns(
        figures.agents, figures.families, (-5.0, 10.0)
    ).to_dict()
    assert zoomed["layer"][2]["encoding"]["x"]["scale"]["domain"] == [-5.0, 10.0]
    assert zoomed["layer"][2]["mark"]["clip"] is True
    empty = replicate_figures(UNSTABLE.iloc[0:0])
    assert replicate_charts.replicate_returns(empty.agents, empty.families).to_dict()["layer"]


def test_spreads_and_gaps_read_in_percentage_points() -> None:
    assert (fmt.points(4.06), fmt.points(-9.25), fmt.points(NAN)) == ("4.1 pp", "9.2 pp", "—")


@pytest.fixture(scope="module")
def one_agent_season(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    """The same nine days with one agent per family (the baselines and the oracle: the
    suite's baselines season, played once per run for other modules too)."""
    url = demo_seasons.copy(tmp_path_factory.mktemp("demo_one_agent"), BASELINES, "", BASELINE_DAYS)
    engine = create_db_engine(url)
    yield engine
    engine.dispose()


def _stored(engine: Engine, name: str, methodology: str) -> pd.DataFrame:
    stored = current_stored(engine, name, methodology=methodology)
    assert stored is not None, (name, methodology)
    return stored.frame


def test_the_null_of_three_replicates_is_the_one_agent_season_s(
    season: Engine, one_agent_season: Engine
) -> None:
    """The same world, the same deterministic strategies (favourite, oracle, cash): their
    return is the same with three agents a cohort as with one, and so, within the null's
    Monte-Carlo error, are their null percentile and the null's spread on "When will we
    know?" (the stored analyses of each season, as the dashboard shows them)."""
    scopes = ((season, "v1+replicates-3"), (one_agent_season, "v1"))
    boards = [_stored(e, "leaderboard", m).set_index("family_id") for e, m in scopes]
    nulls = [
        _stored(e, "detectability", m).query("comparison == 'null'").set_index("family_a")
        for e, m in scopes
    ]
    assert boards[0]["agent_replicates"].min() == 3 and boards[1]["agent_replicates"].max() == 1
    for family in ("baseline-favorite", "oracle", "baseline-cash"):
        returns = [b.loc[family, "return_pct"] for b in boards]
        assert returns[0] == pytest.approx(returns[1])
        # 200 null traders: one of them is half a percentile point
        got, want = (b.loc[family, "random_null_percentile"] for b in boards)
        assert abs(got - want) <= 1.0, (family, got, want)
        se_three, se_one = (n.loc[family, "se"] for n in nulls)
        assert se_three == pytest.approx(se_one, rel=0.01), family
        assert nulls[0].loc[family, "mde"] == pytest.approx(nulls[1].loc[family, "mde"], rel=0.01)
