"""`arena.core.stats` against independent computations: by hand, brute force, and simulation."""

import itertools
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest

from arena.core import stats

# --------------------------------------------------------------------------------------------
# The cluster bootstrap


def test_indices_stay_in_their_stratum_and_keep_its_size() -> None:
    strata = np.array([7, 3, 7, 7, 3, 9])  # three strata, clusters deliberately interleaved
    indices = stats.bootstrap_indices(strata, 500, seed=1)
    assert indices.shape == (500, 6)
    assert np.array_equal(strata[indices], np.broadcast_to(strata, (500, 6)))
    weights = stats.bootstrap_weights(indices, 6)
    for label in (3, 7, 9):
        members = strata == label
        assert np.all(weights[:, members].sum(axis=1) == members.sum())
    assert np.all(weights[:, 5] == 1)  # a stratum of one cluster always draws it once
    assert np.array_equal(indices, stats.bootstrap_indices(strata, 500, seed=1))
    assert not np.array_equal(indices, stats.bootstrap_indices(strata, 500, seed=2))


def test_weights_count_draws_like_a_loop() -> None:
    indices = stats.bootstrap_indices([0, 0, 0, 1, 1], 50, seed=3)
    weights = stats.bootstrap_weights(indices, 5)
    for b in range(50):
        naive = [0.0] * 5
        for j in indices[b]:
            naive[j] += 1
        assert weights[b].tolist() == naive


def _one_call_indices(strata: np.ndarray, replicates: int, seed: int) -> np.ndarray:
    """The index matrix drawn in one `integers` call (how it was drawn before chunking)."""
    rng = np.random.default_rng(seed)
    order = np.argsort(strata, kind="stable")
    labels, first, counts = np.unique(strata[order], return_index=True, return_counts=True)
    slot = np.searchsorted(labels, strata)
    return order[first[slot] + rng.integers(0, counts[slot], size=(replicates, strata.size))]


@pytest.mark.parametrize("replicates", [1, 63, 64, 65, 200, 2000])
def test_chunked_draws_are_the_one_call_draws_so_seeds_keep_their_numbers(
    replicates: int,
) -> None:
    rng = np.random.default_rng(replicates)
    strata = rng.integers(0, 12, size=700)  # unsorted, uneven strata, some of one cluster
    strata[:3] = [40, 41, 41]
    expected = _one_call_indices(strata, replicates, seed=9)
    assert np.array_equal(stats.bootstrap_indices(strata, replicates, seed=9), expected)
    counted = np.zeros((replicates, strata.size))
    np.add.at(counted, (np.arange(replicates)[:, None], expected), 1.0)
    assert np.array_equal(stats.drawn_weights(strata, replicates, seed=9), counted)
    boot = stats.ClusterBootstrap(strata, replicates, seed=9)
    assert np.array_equal(boot.weights, counted) and np.array_equal(boot.indices, expected)


def test_compact_counts_hold_a_stratum_larger_than_a_byte() -> None:
    strata = np.array([0] * 300 + [1] * 3)  # a count can reach 300: more than uint8 holds
    weights = stats.drawn_weights(strata, 70, seed=4)
    expected = stats.bootstrap_weights(_one_call_indices(strata, 70, seed=4), strata.size)
    assert weights.dtype == np.uint16 and np.array_equal(weights, expected)
    assert np.all(weights[:, :300].sum(axis=1) == 300)
    boot = stats.ClusterBootstrap(strata, 70, seed=4)
    sums = np.arange(303, dtype=np.float64)
    assert np.allclose(boot.total(sums), expected @ sums, rtol=0, atol=1e-9)


def test_no_clusters_draw_empty_weights() -> None:
    assert stats.drawn_weights([], 5, seed=0).shape == (5, 0)
    with pytest.raises(ValueError, match="at least 1"):
        stats.drawn_weights([1, 2], 0, seed=0)


def test_vectorised_statistics_equal_a_naive_loop_over_rows() -> None:
    """Row-level data resampled replicate by replicate, with the same index matrix."""
    rng = np.random.default_rng(11)
    n_rows, n_clusters = 60, 9
    cluster = rng.integers(0, n_clusters, n_rows)
    stratum_of = np.array([0, 0, 0, 1, 1, 1, 1, 2, 2])
    family = rng.integers(0, 3, n_rows)
    pnl = rng.normal(0, 100, n_rows)
    brier = rng.uniform(0, 1, n_rows)
    boot = stats.ClusterBootstrap(stratum_of, replicates=7, seed=5)

    sums = np.zeros((n_clusters, 3))
    counts = np.zeros((n_clusters, 3))
    briers = np.zeros((n_clusters, 3))
    np.add.at(sums, (cluster, family), pnl)
    np.add.at(counts, (cluster, family), 1)
    np.add.at(briers, (cluster, family), brier)
    totals = boot.total(sums)
    means = boot.ratio(briers, counts)

    for b in range(7):
        drawn = list(boot.indices[b])
        for f in range(3):
            rows = [i for k in drawn for i in range(n_rows) if cluster[i] == k and family[i] == f]
            assert totals[b, f] == pytest.approx(sum(pnl[i] for i in rows), abs=1e-9)
            expected = sum(brier[i] for i in rows) / len(rows) if rows else math.nan
            if rows:
                assert means[b, f] == pytest.approx(expected, abs=1e-12)
            else:
                assert math.isnan(means[b, f])


def test_floored_total_floors_each_stratum_like_a_loop() -> None:
    """Each cohort's replicate P/L is floored at −capital before cohorts are added up."""
    strata = np.array([1, 1, 1, 2, 2])
    sums = np.array([[-600.0, 10.0], [-500.0, 0.0], [100.0, -5.0], [-900.0, 1.0], [50.0, 2.0]])
    boot = stats.ClusterBootstrap(strata, replicates=300, seed=8)
    offsets = np.array([[5.0, 0.0], [0.0, 0.0], [7.0, 1.0]])  # stratum 3: no cluster at all
    floors = np.array([[-1000.0, -1000.0], [-1000.0, -1000.0], [-10.0, -10.0]])
    got = boot.floored_total(sums, [1, 2, 3], offsets, floors)
    floored = 0
    for b in range(300):
        for f in range(2):
            total = 0.0
            for s, label in enumerate([1, 2, 3]):
                part = sum(sums[j, f] for j in boot.indices[b] if strata[j] == label)
                total += max(part + offsets[s, f], floors[s, f])
                floored += int(part + offsets[s, f] < floors[s, f])
            assert got[b, f] == pytest.approx(total)
    assert floored > 0  # the floor did bind in some replicates


def test_tiny_bootstrap_matches_the_enumerated_distribution() -> None:
    """Three clusters in one stratum: all 27 resamples are equally likely; Monte Carlo with
    many replicates must reproduce the exact quantiles' neighbourhood and P(rank #1)."""
    a = np.array([3.0, -1.0, 0.5])  # family A's P/L per cluster
    b = np.array([1.0, 1.0, -0.2])  # family B's
    exact_a, exact_first = [], 0.0
    for draw in itertools.product(range(3), repeat=3):
        total_a, total_b = a[list(draw)].sum(), b[list(draw)].sum()
        exact_a.append(total_a)
        exact_first += 1.0 if total_a > total_b else 0.5 if total_a == total_b else 0.0
    exact_first /= 27
    boot = stats.ClusterBootstrap([0, 0, 0], replicates=40_000, seed=9)
    reps = boot.total(np.column_stack([a, b]))
    assert stats.p_rank_first(reps)[0] == pytest.approx(exact_first, abs=0.01)
    exact_sorted = np.sort(exact_a)
    for value in np.unique(exact_sorted):
        share = np.mean(exact_sorted <= value + 1e-12)
        assert np.mean(reps[:, 0] <= value + 1e-12) == pytest.approx(share, abs=0.01)


def test_percentile_interval_is_the_quantile_pair_and_ignores_nan() -> None:
    values = np.arange(1.0, 101.0)
    low, high = stats.percentile_interval(values)
    assert (float(low), float(high)) == pytest.approx((3.475, 97.525))
    matrix = np.column_stack([values, np.full(100, np.nan), np.where(values > 50, np.nan, values)])
    low, high = stats.percentile_interval(matrix)
    assert low[0] == pytest.approx(3.475) and math.isnan(low[1]) and math.isnan(high[1])
    assert (low[2], high[2]) == pytest.approx(
        tuple(np.quantile(np.arange(1.0, 51.0), [0.025, 0.975]))
    )


def _linear_quantile_by_hand(sample: np.ndarray, p: Fraction) -> float:
    """Hyndman & Fan type 7 from its definition, the index h = p·(n − 1) in exact arithmetic."""
    ordered = sorted(float(v) for v in sample if not math.isnan(v))
    h = p * (len(ordered) - 1)
    j = math.floor(h)
    if h == j:
        return ordered[j]
    return ordered[j] + float(h - j) * (ordered[j + 1] - ordered[j])


def test_tail_probability_is_exact_where_the_float_is_not() -> None:
    assert (1 - 0.95) / 2 == 0.025000000000000022  # the float error this guards against
    assert stats.tail_probability(0.95) == Fraction(1, 40)
    assert stats.tail_probability(0.9) == Fraction(1, 20)
    assert stats.tail_probability(0.68) == Fraction(4, 25)
    assert stats.tail_probability(1.0) == 0 and stats.tail_probability(0.0) == Fraction(1, 2)
    with pytest.raises(ValueError):
        stats.tail_probability(1.5)


@pytest.mark.parametrize("size", [401, 1001, 2001])
def test_percentile_interval_is_the_order_statistic_when_the_index_is_whole(size: int) -> None:
    """α·(n − 1) = 10, 25, 50: the bound is exactly that order statistic (0-based index).

    np.nanquantile with the float α = (1 − 0.95)/2 puts the index 4e-14 too high and returns
    e.g. 51.00000000000004 at n = 2,001: invisible at any display precision, but not exact.
    """
    values = np.arange(1.0, size + 1.0)
    index = (size - 1) // 40
    low, high = stats.percentile_interval(values)
    assert float(low) == values[index]
    assert float(high) == values[size - 1 - index]
    float_alpha = (1.0 - 0.95) / 2.0
    old = float(np.nanquantile(values, float_alpha))
    assert old != values[index] and abs(old - values[index]) < 1e-12


@pytest.mark.parametrize("level", [0.95, 0.9, 0.8, 0.68, 0.5, 0.99])
def test_percentile_interval_elsewhere_agrees_with_numpy(level: float) -> None:
    """Away from whole-number indices the exact index changes nothing beyond rounding."""
    rng = np.random.default_rng(int(level * 100))
    matrix = rng.standard_t(3, (1999, 4))
    matrix[rng.uniform(size=matrix.shape) < 0.1] = np.nan
    matrix[:, 3] = np.nan
    low, high = stats.percentile_interval(matrix, level)
    alpha = (1.0 - level) / 2.0
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        ref_low = np.nanquantile(matrix, alpha, axis=0)
        ref_high = np.nanquantile(matrix, 1.0 - alpha, axis=0)
    np.testing.assert_allclose(low, ref_low, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(high, ref_high, rtol=1e-12, atol=1e-12)
    exact = stats.tail_probability(level)
    for column in range(3):
        assert low[column] == pytest.approx(_linear_quantile_by_hand(matrix[:, column], exact))
        assert high[column] == pytest.approx(_linear_quantile_by_hand(matrix[:, column], 1 - exact))
    assert math.isnan(low[3]) and math.isnan(high[3])


def test_percentile_interval_covers_the_truth_at_about_the_nominal_rate() -> None:
    """Known answer: the mean of 40 clusters of normal data, 300 simulated datasets."""
    rng = np.random.default_rng(2024)
    hits = 0
    datasets = 300
    for k in range(datasets):
        data = rng.normal(5.0, 2.0, 40)
        boot = stats.ClusterBootstrap(np.zeros(40, dtype=int), replicates=1000, seed=k)
        low, high = stats.percentile_interval(boot.ratio(data, np.ones(40)))
        hits += int(low <= 5.0 <= high)
    assert 0.90 <= hits / datasets <= 0.985


# --------------------------------------------------------------------------------------------
# Ranks


def test_competition_ranks_by_hand() -> None:
    assert stats.competition_ranks(np.array([5.0, 9.0, 5.0, 1.0])).tolist() == [2, 1, 2, 4]
    assert stats.competition_ranks(np.array([5.0, np.nan, 7.0])).tolist() == [2, 3, 1]
    lower = stats.competition_ranks(np.array([0.2, 0.1, 0.3]), higher_is_better=False)
    assert lower.tolist() == [2, 1, 3]
    rows = stats.competition_ranks(np.array([[1.0, 2.0], [3.0, 3.0]]))
    assert rows.tolist() == [[2, 1], [1, 1]]


def test_p_rank_first_for_a_dominant_family_and_split_ties() -> None:
    rng = np.random.default_rng(0)
    others = rng.normal(0, 1, (500, 3))
    dominant = others.max(axis=1) + 0.1
    p = stats.p_rank_first(np.column_stack([others, dominant]))
    assert p.tolist() == [0.0, 0.0, 0.0, 1.0]
    tied = stats.p_rank_first(np.array([[1.0, 1.0, 0.0], [2.0, 0.0, 2.0]]))
    assert tied.tolist() == [0.5, 0.25, 0.25]
    assert stats.p_rank_first(others).sum() == pytest.approx(1.0)


def test_rank_interval_is_integer_quantiles() -> None:
    ranks = np.array([[1, 2]] * 90 + [[2, 1]] * 10)
    low, high = stats.rank_interval(ranks)
    assert low.tolist() == [1, 1] and high.tolist() == [2, 2]
    low, high = stats.rank_interval(np.array([[1, 2]] * 99 + [[2, 1]]))
    assert low.tolist() == [1, 2] and high.tolist() == [1, 2]


def _inverse_cdf_by_hand(sample: np.ndarray, p: Fraction) -> int:
    """The smallest x with F_n(x) ≥ p, counting in exact fractions (no order-statistic index)."""
    n = len(sample)
    return min(int(x) for x in set(sample.tolist()) if Fraction(int(np.sum(sample <= x)), n) >= p)


@pytest.mark.parametrize("replicates", [400, 1000, 2000])
def test_rank_interval_counts_exactly_alpha_b_replicates_at_the_best_rank(replicates: int) -> None:
    """α·B replicates (10, 25, 50) at rank 1: F(1) = α exactly, so the lower bound is rank 1,
    the α·B-th order statistic. The float α = 0.025000000000000022 took the next one (rank 2).
    """
    tail = replicates // 40
    column = np.array([1] * tail + [2] * (replicates - 2 * tail) + [3] * tail)
    ordered = np.sort(column)
    low, high = stats.rank_interval(column[:, None])
    assert low.tolist() == [ordered[tail - 1]] == [1]
    assert high.tolist() == [ordered[replicates - tail - 1]] == [2]
    assert low[0] == _inverse_cdf_by_hand(column, Fraction(1, 40))
    assert high[0] == _inverse_cdf_by_hand(column, Fraction(39, 40))
    # the float error, pinned: numpy fed the float α takes the (α·B + 1)-th order statistic
    float_alpha = (1.0 - 0.95) / 2.0
    assert np.quantile(column, float_alpha, method="inverted_cdf") == 2


def test_rank_interval_upper_bound_at_a_level_whose_float_overshoots() -> None:
    """At level 0.68, (1 − α)·1000 is 840.0000000000001 in floats: 840 replicates at rank ≤ 2
    make F(2) = 0.84 exactly, so the upper bound is 2 (numpy with the float α gives 3)."""
    column = np.array([1] * 160 + [2] * 680 + [3] * 160)
    low, high = stats.rank_interval(column[:, None], level=0.68)
    assert (low.tolist(), high.tolist()) == ([1], [2])
    alpha = (1.0 - 0.68) / 2.0
    assert np.quantile(column, 1.0 - alpha, method="inverted_cdf") == 3


@pytest.mark.parametrize("replicates", [1, 7, 777, 1999, 2001])
@pytest.mark.parametrize("level", [0.95, 0.9, 0.5])
def test_rank_interval_elsewhere_agrees_with_numpy(replicates: int, level: float) -> None:
    """Where α·B is not a whole number the float error cannot cross an integer: unchanged."""
    rng = np.random.default_rng(replicates)
    ranks = stats.competition_ranks(rng.normal(size=(replicates, 5)))
    low, high = stats.rank_interval(ranks, level)
    alpha = (1.0 - level) / 2.0
    ref_low = np.quantile(ranks, alpha, axis=0, method="inverted_cdf").astype(np.int64)
    ref_high = np.quantile(ranks, 1.0 - alpha, axis=0, method="inverted_cdf").astype(np.int64)
    assert low.tolist() == ref_low.tolist() and high.tolist() == ref_high.tolist()
    exact = stats.tail_probability(level)
    for column in range(5):
        assert low[column] == _inverse_cdf_by_hand(ranks[:, column], exact)
        assert high[column] == _inverse_cdf_by_hand(ranks[:, column], 1 - exact)


def test_percentile_of_counts_ties_half() -> None:
    null = np.array([-2.0, -1.0, 0.0, 0.0, 3.0])
    assert stats.percentile_of(0.0, null) == pytest.approx(100 * (2 + 1) / 5)
    assert stats.percentile_of(10.0, null) == 100.0
    assert stats.percentile_of(-5.0, null) == 0.0
    assert math.isnan(stats.percentile_of(1.0, np.array([])))


# --------------------------------------------------------------------------------------------
# Paired test


def test_paired_test_by_hand_with_exact_sign_flips() -> None:
    result = stats.paired_test([1.0, 2.0, -0.5, 3.0], ["a", "b", "c", "d"])
    assert result.mean_difference == pytest.approx(5.5 / 4)
    # |Σ s·d| ≥ 5.5 for 4 of the 16 sign vectors: (+,+,±,+) and (−,−,±,−)
    assert result.exact and result.p_value == pytest.approx(4 / 16)
    assert result.units == 4 and result.clusters == 4
    assert result.ci_low <= result.mean_difference <= result.ci_high


def test_paired_test_flips_a_cluster_as_a_whole() -> None:
    """Two markets of one event move together: 2 clusters → only 4 sign vectors."""
    result = stats.paired_test([1.0, 1.0, 2.0], ["e1", "e1", "e2"])
    assert result.clusters == 2
    # sums per cluster (2, 2): |±2 ± 2| ≥ 4 for 2 of the 4 vectors
    assert result.p_value == pytest.approx(0.5)


def test_paired_test_monte_carlo_detects_a_real_difference_and_not_a_null_one() -> None:
    rng = np.random.default_rng(4)
    clusters = np.arange(40)
    shifted = stats.paired_test(rng.normal(1.0, 1.0, 40), clusters, seed=1)
    assert not shifted.exact and shifted.p_value < 0.01 and shifted.ci_low > 0
    null_ps = [stats.paired_test(rng.normal(0, 1, 40), clusters, seed=s).p_value for s in range(40)]
    assert 0.2 < float(np.mean(null_ps)) < 0.8  # roughly uniform under no difference
    empty = stats.paired_test([], [])
    assert empty.units == 0 and math.isnan(empty.p_value)


# --------------------------------------------------------------------------------------------
# Calibration


def naive_calibration(forecasts: list[float], outcomes: list[int], bins: int) -> dict:
    """A pure-Python reference (what sklearn's brier_score_loss and a uniform-strategy
    calibration curve compute, with bin k = ⌊f·bins⌋ and f = 1 in the last bin)."""
    groups: dict[int, list[tuple[float, int]]] = {}
    for f, o in zip(forecasts, outcomes, strict=True):
        groups.setdefault(min(int(f * bins), bins - 1), []).append((f, o))
    n = len(forecasts)
    rate = sum(outcomes) / n
    rel = res = ece = 0.0
    for members in groups.values():
        mean_f = sum(f for f, _ in members) / len(members)
        mean_o = sum(o for _, o in members) / len(members)
        rel += len(members) * (mean_f - mean_o) ** 2 / n
        res += len(members) * (mean_o - rate) ** 2 / n
        ece += len(members) * abs(mean_o - mean_f) / n
    brier = sum((f - o) ** 2 for f, o in zip(forecasts, outcomes, strict=True)) / n
    return {
        "groups": groups,
        "brier": brier,
        "rel": rel,
        "res": res,
        "unc": rate * (1 - rate),
        "ece": ece,
    }


def test_reliability_bins_by_hand() -> None:
    table = stats.reliability_bins([0.05, 0.15, 0.12, 0.3, 0.95, 1.0], [0, 1, 0, 1, 1, 0], bins=10)
    assert table.count.tolist() == [1, 2, 0, 1, 0, 0, 0, 0, 0, 2]
    assert table.mean_forecast[1] == pytest.approx(0.135)
    assert table.observed_rate[1] == pytest.approx(0.5)
    assert table.mean_forecast[9] == pytest.approx(0.975) and table.observed_rate[9] == 0.5
    assert math.isnan(table.mean_forecast[2]) and math.isnan(table.observed_rate[2])
    assert table.low[3] == pytest.approx(0.3) and table.high[9] == 1.0
    with pytest.raises(ValueError):
        stats.reliability_bins([1.2], [1])


def test_murphy_decomposition_by_hand() -> None:
    # bins: {0.1: o=0}, {0.35: 1}, {0.8, 0.85: 1, 0}, {1.0: 1}; ō = 3/5
    m = stats.murphy_decomposition([0.1, 0.35, 0.8, 0.85, 1.0], [0, 1, 1, 0, 1], bins=10)
    assert m.brier == pytest.approx((0.01 + 0.4225 + 0.04 + 0.7225 + 0.0) / 5)
    rel = (0.1**2 + 0.65**2 + 2 * (0.825 - 0.5) ** 2 + 0) / 5
    res = (0.6**2 + 0.4**2 + 2 * 0.1**2 + 0.4**2) / 5
    assert m.reliability == pytest.approx(rel)
    assert m.resolution == pytest.approx(res)
    assert m.uncertainty == pytest.approx(0.24)
    # only bin 8 has spread: f − f̄ = ∓0.025, o − ō = ±0.5 → (2·0.000625 + 2·2·0.0125) / 5
    assert m.residual == pytest.approx((2 * 0.025**2 + 2 * 2 * 0.025 * 0.5) / 5)
    assert m.ece == pytest.approx((0.1 + 0.65 + 2 * 0.325 + 0) / 5)


@pytest.mark.parametrize("seed", range(25))
def test_murphy_identity_holds_exactly_and_matches_a_naive_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    forecasts = rng.uniform(0, 1, n)
    forecasts[: n // 4] = rng.choice([0.0, 0.5, 1.0, 0.3], n // 4)
    outcomes = (rng.uniform(0, 1, n) < forecasts**1.3).astype(int)
    bins = int(rng.integers(1, 15))
    m = stats.murphy_decomposition(forecasts, outcomes, bins)
    assert m.reliability - m.resolution + m.uncertainty + m.residual == pytest.approx(
        m.brier, abs=1e-12
    )
    ref = naive_calibration(forecasts.tolist(), outcomes.tolist(), bins)
    assert m.brier == pytest.approx(ref["brier"], abs=1e-12)
    assert m.reliability == pytest.approx(ref["rel"], abs=1e-12)
    assert m.resolution == pytest.approx(ref["res"], abs=1e-12)
    assert m.uncertainty == pytest.approx(ref["unc"], abs=1e-12)
    assert m.ece == pytest.approx(ref["ece"], abs=1e-12)
    table = stats.reliability_bins(forecasts, outcomes, bins)
    for k, members in ref["groups"].items():
        assert table.count[k] == len(members)
        assert table.observed_rate[k] == pytest.approx(sum(o for _, o in members) / len(members))


def test_residual_vanishes_when_forecasts_are_constant_per_bin() -> None:
    m = stats.murphy_decomposition([0.25] * 4 + [0.75] * 4, [0, 0, 0, 1, 1, 1, 1, 0])
    assert m.residual == pytest.approx(0.0, abs=1e-15)
    assert m.reliability == pytest.approx(0.0, abs=1e-15)
    assert stats.expected_calibration_error([0.25] * 4, [1, 1, 0, 0]) == pytest.approx(0.25)


# --------------------------------------------------------------------------------------------
# Risk


def test_max_drawdown_by_hand() -> None:
    assert stats.max_drawdown([100, 120, 90, 130, 65]) == pytest.approx(0.5)
    assert stats.max_drawdown([90, 95], start=100) == pytest.approx(0.1)
    assert stats.max_drawdown([100, 110, 120]) == 0.0
    assert math.isnan(stats.max_drawdown([]))


def test_simple_returns_and_sharpe_by_hand() -> None:
    returns = stats.simple_returns([101.0, 98.98, 101.9494], base=100.0)
    assert returns == pytest.approx([0.01, -0.02, 0.03])
    est = stats.sharpe_estimate(returns)
    mean, sd = statistics.mean([0.01, -0.02, 0.03]), statistics.stdev([0.01, -0.02, 0.03])
    assert est.periods == 3
    assert est.volatility == pytest.approx(sd * math.sqrt(365))
    assert est.sharpe == pytest.approx(mean / sd * math.sqrt(365))
    per_day = mean / sd
    assert est.sharpe_se_iid == pytest.approx(math.sqrt(365) * math.sqrt((1 + per_day**2 / 2) / 3))
    # Mertens with plug-in moments of (0.01, −0.02, 0.03): centred on their mean 0.02/3 they
    # are (1, −8, 7) × u with u = 0.01/3, so m2 = 114/3 u², m3 = −168/3 u³, m4 = 6498/3 u⁴
    skew, kurt = -56 / 38**1.5, 2166 / 38**2
    assert kurt == 1.5 and (est.skewness, est.kurtosis) == pytest.approx((skew, kurt))
    variance = 1 + per_day**2 / 2 - skew * per_day + (kurt - 3) / 4 * per_day**2
    assert est.sharpe_se == pytest.approx(math.sqrt(365) * math.sqrt(variance / 3))
    flat = stats.sharpe_estimate([0.0, 0.0, 0.0])
    assert flat.volatility == 0.0 and math.isnan(flat.sharpe)
    assert math.isnan(flat.sharpe_se) and math.isnan(flat.sharpe_se_iid)
    assert math.isnan(stats.sharpe_estimate([0.01]).sharpe)


@pytest.mark.parametrize(
    ("p", "win", "lose", "iid_error"),
    [(0.1, 1.0, -0.05, 0.25), (0.1, -0.5, 0.08, -0.12)],  # right- and left-skewed books
)
def test_mertens_sharpe_se_matches_the_simulated_spread_of_skewed_returns(
    p: float, win: float, lose: float, iid_error: float
) -> None:
    """Known answer by simulation: binary-bet daily returns (`win` with probability p, else
    `lose`), 250 days, 20,000 samples. The spread of the estimated Sharpe is what the SE
    claims; Mertens' formula (population moments of the two-point law) gets within 5%, the
    iid one is off by about `iid_error` (positive: too wide)."""
    rng = np.random.default_rng(11)
    days = 250
    samples = np.where(rng.uniform(size=(20_000, days)) < p, win, lose)
    spread = float(np.std(samples.mean(axis=1) / samples.std(axis=1, ddof=1)))
    q = p * (1 - p)
    sr = (p * win + (1 - p) * lose) / (math.sqrt(q) * abs(win - lose))
    skew = (1 - 2 * p) / math.sqrt(q) * math.copysign(1.0, win - lose)
    kurt = (1 - 3 * q) / q
    mertens = math.sqrt((1 + sr**2 / 2 - skew * sr + (kurt - 3) / 4 * sr**2) / days)
    iid = math.sqrt((1 + sr**2 / 2) / days)
    assert mertens == pytest.approx(spread, rel=0.05)
    assert iid / spread - 1 == pytest.approx(iid_error, abs=0.05)
    # and the estimate from one sample lands near the population formula
    one = stats.sharpe_estimate(samples[0], periods_per_year=1)
    assert one.sharpe_se == pytest.approx(mertens, rel=0.25)
    assert one.sharpe_se_iid == pytest.approx(iid, rel=0.05)
