"""Pure, seeded statistics for the leaderboard and calibration pages (numpy only, no I/O).

Why this module exists: the v1 scores (mean Brier of implied confidence, return %) are point
estimates; a researcher also needs to know whether a difference between two families is real.
Everything here takes plain arrays and a seed, returns plain arrays or small frozen records,
and is tested against independent (brute-force or hand) computations.

The uncertainty model (see the README's methodology notes):

* **Cluster bootstrap, stratified by cohort.** The resampling unit is a *cluster*: a Polymarket
  event (all markets sharing an `event_id`, so negRisk groups and date ladders move together),
  or a market on its own when it has no event. Clusters are resampled with replacement *within*
  their stratum (a cohort), each stratum keeping its number of clusters, 2,000 replicates by
  default. The bets themselves are held fixed: the interval describes how much a score depends
  on which events happened to be traded and how they resolved.
* **Statistics as sums over clusters.** Every statistic is a total (P/L) or a ratio of totals
  (mean Brier = Σ Brier / Σ bets), so one replicate is a weight vector `w` (how often each
  cluster was drawn) and the replicate's total is `w @ sums`. The weights are drawn once and
  every statistic, for all replicates and all families, is a matrix product with them.
* **Percentile intervals** at 95%: the 2.5% and 97.5% quantiles of the replicates, their
  positions computed exactly (`tail_probability`).
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

DEFAULT_REPLICATES = 2000
CONFIDENCE = 0.95
DEFAULT_BINS = 10
DAYS_PER_YEAR = 365  # prediction markets trade every calendar day
_TIE_TOLERANCE = 1e-9


# --------------------------------------------------------------------------------------------
# The cluster bootstrap


# Replicates per block: the draws are made, and the weights multiplied, this many rows at a
# time. The draws come from one stream in row order, so blocks give the very same matrix as
# one call (a test pins it), without holding a whole matrix of int64 or float64.
_DRAW_ROWS = 64


def _drawn_slots(
    stratum_of: Sequence[int] | np.ndarray, replicates: int, seed: int
) -> tuple[np.ndarray, Iterator[np.ndarray]]:
    """The draws of a stratified cluster bootstrap as positions in stratum order.

    Returns `order` (the clusters sorted by stratum, stably) and the draws, a block of
    consecutive replicates at a time: entry (b, j) is a position p in `order`, so the cluster
    drawn into slot j of replicate b is order[p]. Slot j draws uniformly among the positions
    of its own stratum.
    """
    strata = np.asarray(stratum_of)
    if strata.ndim != 1:
        raise ValueError("stratum_of must be one-dimensional")
    if replicates < 1:
        raise ValueError("replicates must be at least 1")
    rng = np.random.default_rng(seed)
    order = np.argsort(strata, kind="stable")

    def chunks() -> Iterator[np.ndarray]:
        if strata.size == 0:
            yield np.empty((replicates, 0), dtype=np.int64)
            return
        labels, first, counts = np.unique(strata[order], return_index=True, return_counts=True)
        slot_stratum = np.searchsorted(labels, strata)
        size, offset = counts[slot_stratum], first[slot_stratum]
        for start in range(0, replicates, _DRAW_ROWS):
            rows = min(_DRAW_ROWS, replicates - start)
            draws = rng.integers(0, size, size=(rows, strata.size))
            draws += offset
            yield draws

    return order, chunks()


def bootstrap_indices(
    stratum_of: Sequence[int] | np.ndarray, replicates: int, seed: int
) -> np.ndarray:
    """The (replicates × K) index matrix of a stratified cluster bootstrap.

    `stratum_of[j]` is the stratum (cohort) of cluster j. Entry (b, j) is the cluster drawn into
    slot j of replicate b, uniformly among the clusters of slot j's stratum, so every stratum
    keeps its size. The draws are one `Generator` stream in row order.
    """
    order, chunks = _drawn_slots(stratum_of, replicates, seed)
    return np.vstack([order[chunk] for chunk in chunks])


def bootstrap_weights(indices: np.ndarray, clusters: int) -> np.ndarray:
    """How many times each cluster was drawn in each replicate: (replicates × clusters) floats."""
    weights = np.zeros((indices.shape[0], clusters))
    for b, row in enumerate(indices):
        weights[b] = np.bincount(row, minlength=clusters)
    return weights


def drawn_weights(stratum_of: Sequence[int] | np.ndarray, replicates: int, seed: int) -> np.ndarray:
    """`bootstrap_weights(bootstrap_indices(...))` without ever holding the index matrix, as
    compact unsigned counts (a count never exceeds its stratum's size).

    Why: at a year (2,000 replicates × 13,645 clusters) the index matrix, its offset copy for
    one big `bincount` and the float count array took 2.9 s and 650 MB to build. Counted row
    by row, in stratum order and scattered to the clusters, into 16-bit counts: 55 MB.
    """
    strata = np.asarray(stratum_of)
    order, chunks = _drawn_slots(strata, replicates, seed)
    clusters = order.size
    largest = int(np.unique(strata, return_counts=True)[1].max()) if clusters else 0
    weights = np.zeros((replicates, clusters), dtype=np.min_scalar_type(largest))
    b = 0
    for chunk in chunks:
        for row in chunk:
            weights[b, order] = np.bincount(row, minlength=clusters)
            b += 1
    return weights


class ClusterBootstrap:
    """One drawn bootstrap: its weights (how often each cluster is drawn in each replicate),
    reused for every statistic.

    Using the same draw for every family makes the replicates joint, so ranks, P(rank #1) and
    differences between families are computed on the same resampled events. The weights are
    kept as small integers and multiplied a block of replicates at a time as floats, so a
    statistic never needs a float copy of the whole (replicates × clusters) matrix.
    """

    def __init__(
        self,
        stratum_of: Sequence[int] | np.ndarray,
        replicates: int = DEFAULT_REPLICATES,
        seed: int = 0,
    ) -> None:
        self.stratum_of = np.asarray(stratum_of)
        self.replicates = replicates
        self.seed = seed
        self.weights = drawn_weights(self.stratum_of, replicates, seed)

    @cached_property
    def indices(self) -> np.ndarray:
        """The index matrix behind `weights`, drawn again on first use (for checks and tests;
        the statistics never need it)."""
        return bootstrap_indices(self.stratum_of, self.replicates, self.seed)

    @property
    def clusters(self) -> int:
        return int(self.stratum_of.size)

    def _product(self, columns: np.ndarray | slice, values: np.ndarray) -> np.ndarray:
        """weights[:, columns] @ values, a block of replicates at a time."""
        out = np.empty((self.replicates, *values.shape[1:]))
        for start in range(0, self.replicates, _DRAW_ROWS):
            block = self.weights[start : start + _DRAW_ROWS, columns]
            out[start : start + _DRAW_ROWS] = block.astype(np.float64) @ values
        return out

    def total(self, sums: np.ndarray) -> np.ndarray:
        """Replicates of a total: `sums` is (K,) or (K × F) per-cluster sums → (B,) or (B × F)."""
        return self._product(slice(None), np.asarray(sums, dtype=np.float64))

    def ratio(self, numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
        """Replicates of Σ numerator / Σ denominator; NaN where a replicate has no denominator."""
        top, bottom = self.total(numerator), self.total(denominator)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)

    def floored_total(
        self,
        sums: np.ndarray,
        strata: Sequence[int] | np.ndarray,
        offsets: np.ndarray,
        floors: np.ndarray,
    ) -> np.ndarray:
        """Replicates of Σ_s max(stratum s's resampled total + offsets[s], floors[s]).

        `sums` is (K × F) per-cluster values, `strata` the S stratum labels to add up (a
        stratum without clusters contributes its offset alone), `offsets` and `floors` are
        (S × F). Why: a portfolio cannot lose more than its capital, but a replicate that
        draws the same losing event twice could, so each cohort's P/L is floored at −capital.
        """
        values = np.asarray(sums, dtype=np.float64)
        out = np.zeros((self.replicates, values.shape[1]))
        for s, label in enumerate(strata):
            members = np.flatnonzero(self.stratum_of == label)
            part = self._product(members, values[members]) + offsets[s]
            out += np.maximum(part, floors[s])
        return out


def tail_probability(level: float) -> Fraction:
    """α = (1 − level) / 2, exactly, for the level as written (its shortest decimal form).

    Why: in floats (1 − 0.95) / 2 is 0.025000000000000022, so α·B is 50.00000000000004 at
    B = 2,000 and an inverse-CDF quantile takes the 51st order statistic instead of the
    50th. Reading 0.95 as 19/20 (not as its binary value, which is just below 0.95 and would
    give the same error) makes α = 1/40 and every index below exact integer arithmetic.
    """
    exact = Fraction(repr(float(level)))
    if not 0 <= exact <= 1:
        raise ValueError("level must be in [0, 1]")
    return (1 - exact) / 2


def _linear_quantiles(ordered: np.ndarray, counts: np.ndarray, p: Fraction) -> np.ndarray:
    """Per column of `ordered` (sorted along axis 0, NaN last, `counts` non-NaN values each),
    the p-quantile with linear interpolation (numpy's default, Hyndman & Fan type 7): the
    virtual index h = p·(n − 1) is split into floor and fraction exactly, the interpolation is
    numpy's (`a + (b − a)·γ`, or `b − (b − a)·(1 − γ)` when γ ≥ ½). NaN for a column of no
    values.
    """
    out = np.full(counts.shape, np.nan)
    for n in np.unique(counts[counts > 0]).tolist():
        columns = np.flatnonzero(counts == n)
        h = p * (n - 1)
        j = h.numerator // h.denominator
        gamma = float(h - j)
        a = ordered[j, columns]
        if gamma == 0.0:
            out[columns] = a
            continue
        b = ordered[j + 1, columns]
        diff = b - a
        out[columns] = b - diff * (1.0 - gamma) if gamma >= 0.5 else a + diff * gamma
    return out


def percentile_interval(
    replicates: np.ndarray, level: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval along axis 0, ignoring NaN replicates (all NaN → NaN).

    The α and 1 − α quantiles (α = `tail_probability(level)`) with numpy's linear
    interpolation, as `np.nanquantile` gives them, but with the quantile's position computed
    exactly: where α·(n − 1) is a whole number the bound is that order statistic itself.
    """
    values = np.asarray(replicates, dtype=np.float64)
    alpha = tail_probability(level)
    shape = values.shape[1:]
    if values.shape[0] == 0:
        return np.full(shape, np.nan), np.full(shape, np.nan)
    flat = values.reshape(values.shape[0], -1)
    ordered = np.sort(flat, axis=0)  # NaN sorts last
    counts = np.count_nonzero(~np.isnan(flat), axis=0)
    low = _linear_quantiles(ordered, counts, alpha).reshape(shape)
    high = _linear_quantiles(ordered, counts, 1 - alpha).reshape(shape)
    return low[()], high[()]


# --------------------------------------------------------------------------------------------
# Ranks


def competition_ranks(values: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Rank 1 + number of strictly better entries, row by row ("1224" ranking; NaN ranks last).

    `values` is (F,) or (B × F); ties (within 1e-9) share the better rank.
    """
    array = np.atleast_2d(np.asarray(values, dtype=np.float64))
    score = array if higher_is_better else -array
    score = np.where(np.isnan(score), -np.inf, score)
    better = score[:, None, :] > score[:, :, None] + _TIE_TOLERANCE
    ranks = 1 + better.sum(axis=2)
    return ranks[0] if np.ndim(values) == 1 else ranks


def p_rank_first(values: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Per column, the share of replicates (rows) in which it ranks first; ties split evenly."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] == 0:
        raise ValueError("values must be a non-empty (replicates × families) matrix")
    score = array if higher_is_better else -array
    score = np.where(np.isnan(score), -np.inf, score)
    best = score.max(axis=1, keepdims=True)
    top = (score >= best - _TIE_TOLERANCE) & np.isfinite(best)
    shares = top / np.maximum(top.sum(axis=1, keepdims=True), 1)
    return shares.mean(axis=0)


def _inverse_cdf_position(p: Fraction, n: int) -> int:
    """0-based position of the inverse-CDF p-quantile of n sorted values: the k-th order
    statistic with k = ⌈p·n⌉ (at least 1), the smallest x with F_n(x) ≥ p."""
    k = -((-p.numerator * n) // p.denominator)
    return min(max(k, 1), n) - 1


def rank_interval(ranks: np.ndarray, level: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Integer rank interval per column: the lower and upper `level` quantiles of the ranks.

    Inverse-CDF quantiles (numpy's method="inverted_cdf"): the ⌈α·B⌉-th and ⌈(1 − α)·B⌉-th
    order statistics of B replicates, α = `tail_probability(level)`, the index computed in
    exact integer arithmetic (see `tail_probability` for the float error this avoids).
    """
    array = np.asarray(ranks)
    replicates = array.shape[0] if array.ndim else 0
    if replicates == 0:
        raise ValueError("ranks must hold at least one replicate")
    alpha = tail_probability(level)
    ordered = np.sort(array, axis=0)
    low = ordered[_inverse_cdf_position(alpha, replicates)]
    high = ordered[_inverse_cdf_position(1 - alpha, replicates)]
    return low.astype(np.int64), high.astype(np.int64)


def percentile_of(value: float, null: np.ndarray) -> float:
    """Where `value` falls in a null distribution, 0-100 (mid-rank: ties count half)."""
    sample = np.asarray(null, dtype=np.float64)
    sample = sample[~np.isnan(sample)]
    if sample.size == 0 or np.isnan(value):
        return float("nan")
    below = np.count_nonzero(sample < value - _TIE_TOLERANCE)
    ties = np.count_nonzero(np.abs(sample - value) <= _TIE_TOLERANCE)
    return float(100.0 * (below + 0.5 * ties) / sample.size)


# --------------------------------------------------------------------------------------------
# Paired comparison of two families


@dataclass(frozen=True)
class PairedResult:
    """A paired comparison: mean per-unit difference (A − B), its interval and p-value.

    `p_value` is two-sided, from a cluster sign-flip permutation test of "no difference"
    (each cluster's summed difference is equally likely to have either sign): exact when
    2^clusters ≤ replicates, else Monte Carlo with the (1 + hits) / (1 + replicates) rule.
    """

    mean_difference: float
    ci_low: float
    ci_high: float
    p_value: float
    units: int
    clusters: int
    exact: bool


def paired_test(
    differences: Sequence[float] | np.ndarray,
    clusters: Sequence[object] | np.ndarray,
    strata: Sequence[object] | np.ndarray | None = None,
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = CONFIDENCE,
) -> PairedResult:
    """Compare two families on the units (markets) both traded.

    `differences[i]` is A's minus B's statistic on unit i, `clusters[i]` its event cluster and
    `strata[i]` its cohort. The estimate is the mean over units; the interval is the stratified
    cluster bootstrap's; the p-value is the cluster sign-flip test's (see `PairedResult`).
    """
    diff = np.asarray(differences, dtype=np.float64)
    if diff.size == 0:
        return PairedResult(float("nan"), float("nan"), float("nan"), float("nan"), 0, 0, True)
    cluster_keys = np.asarray([str(c) for c in clusters])
    stratum_keys = (
        np.zeros(diff.size, dtype=np.int64)
        if strata is None
        else np.unique(np.asarray([str(s) for s in strata]), return_inverse=True)[1]
    )
    pairs = np.char.add(np.char.add(stratum_keys.astype(str), "|"), cluster_keys)
    labels, inverse = np.unique(pairs, return_inverse=True)
    sums = np.bincount(inverse, weights=diff, minlength=labels.size)
    counts = np.bincount(inverse, minlength=labels.size).astype(np.float64)
    cluster_stratum = np.zeros(labels.size, dtype=np.int64)
    cluster_stratum[inverse] = stratum_keys
    estimate = float(sums.sum() / counts.sum())

    boot = ClusterBootstrap(cluster_stratum, replicates, seed)
    low, high = percentile_interval(boot.ratio(sums, counts), level)

    k = labels.size
    exact = 2**k <= replicates
    if exact:
        grid = np.arange(2**k)[:, None] >> np.arange(k)[None, :] & 1
        signs = 1.0 - 2.0 * grid
    else:
        rng = np.random.default_rng([seed, 1])
        signs = rng.choice(np.array([-1.0, 1.0]), size=(replicates, k))
    flipped = np.abs(signs @ sums) / counts.sum()
    hits = int(np.count_nonzero(flipped >= abs(estimate) - _TIE_TOLERANCE))
    p_value = hits / signs.shape[0] if exact else (1 + hits) / (1 + replicates)
    return PairedResult(estimate, float(low), float(high), float(p_value), diff.size, k, exact)


# --------------------------------------------------------------------------------------------
# Calibration


@dataclass(frozen=True)
class ReliabilityBins:
    """Equal-width reliability bins on [0, 1]: bin k holds forecasts f with ⌊f·bins⌋ = k
    (f = 1 goes to the last bin). Empty bins have count 0 and NaN means."""

    bin: np.ndarray
    low: np.ndarray
    high: np.ndarray
    count: np.ndarray
    mean_forecast: np.ndarray
    observed_rate: np.ndarray


def bin_index(forecasts: np.ndarray, bins: int = DEFAULT_BINS) -> np.ndarray:
    """The equal-width bin of each forecast (see `ReliabilityBins`)."""
    values = np.asarray(forecasts, dtype=np.float64)
    if np.any((values < 0) | (values > 1)) or np.any(np.isnan(values)):
        raise ValueError("forecasts must be probabilities in [0, 1]")
    return np.clip(np.floor(values * bins).astype(np.int64), 0, bins - 1)


def reliability_bins(
    forecasts: Sequence[float] | np.ndarray,
    outcomes: Sequence[int] | np.ndarray,
    bins: int = DEFAULT_BINS,
) -> ReliabilityBins:
    """Per bin: how many forecasts, their mean, and the observed rate of the outcome."""
    f = np.asarray(forecasts, dtype=np.float64)
    o = np.asarray(outcomes, dtype=np.float64)
    index = bin_index(f, bins)
    count = np.bincount(index, minlength=bins)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_f = np.bincount(index, weights=f, minlength=bins) / count
        rate = np.bincount(index, weights=o, minlength=bins) / count
    edges = np.arange(bins + 1) / bins
    return ReliabilityBins(
        bin=np.arange(bins),
        low=edges[:-1],
        high=edges[1:],
        count=count,
        mean_forecast=np.where(count > 0, mean_f, np.nan),
        observed_rate=np.where(count > 0, rate, np.nan),
    )


@dataclass(frozen=True)
class Murphy:
    """Murphy decomposition of the Brier score over reliability bins (lower Brier is better).

    brier = reliability − resolution + uncertainty + residual, exactly, where with n_k
    forecasts in bin k, bin means f̄_k and ō_k and overall rate ō:

    * reliability = Σ n_k (f̄_k − ō_k)² / N  (calibration error; 0 is perfectly calibrated)
    * resolution  = Σ n_k (ō_k − ō)² / N    (outcome spread between bins; higher is better)
    * uncertainty = ō (1 − ō)               (the outcomes' own variance)
    * residual    = Σ_k Σ_{i∈k} [(f_i − f̄_k)² − 2 (f_i − f̄_k)(o_i − ō_k)] / N
      (within-bin spread of forecasts minus twice their within-bin covariance with outcomes:
      the part of the Brier the binning cannot see; 0 when forecasts are constant per bin)

    ece = Σ n_k |ō_k − f̄_k| / N (expected calibration error, same bins).
    """

    n: int
    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    residual: float
    ece: float


def murphy_decomposition(
    forecasts: Sequence[float] | np.ndarray,
    outcomes: Sequence[int] | np.ndarray,
    bins: int = DEFAULT_BINS,
) -> Murphy:
    """The decomposition of `Murphy`; all NaN for no forecasts."""
    f = np.asarray(forecasts, dtype=np.float64)
    o = np.asarray(outcomes, dtype=np.float64)
    n = f.size
    if n == 0:
        nan = float("nan")
        return Murphy(0, nan, nan, nan, nan, nan, nan)
    index = bin_index(f, bins)
    count = np.bincount(index, minlength=bins).astype(np.float64)
    safe = np.maximum(count, 1.0)
    mean_f = np.bincount(index, weights=f, minlength=bins) / safe
    mean_o = np.bincount(index, weights=o, minlength=bins) / safe
    rate = o.mean()
    df, do = f - mean_f[index], o - mean_o[index]
    return Murphy(
        n=n,
        brier=float(np.mean((f - o) ** 2)),
        reliability=float(np.sum(count * (mean_f - mean_o) ** 2) / n),
        resolution=float(np.sum(count * (mean_o - rate) ** 2) / n),
        uncertainty=float(rate * (1.0 - rate)),
        residual=float(np.sum(df * df - 2.0 * df * do) / n),
        ece=float(np.sum(count * np.abs(mean_o - mean_f)) / n),
    )


def expected_calibration_error(
    forecasts: Sequence[float] | np.ndarray,
    outcomes: Sequence[int] | np.ndarray,
    bins: int = DEFAULT_BINS,
) -> float:
    """Σ n_k |observed rate_k − mean forecast_k| / N over equal-width bins."""
    return murphy_decomposition(forecasts, outcomes, bins).ece


# --------------------------------------------------------------------------------------------
# Risk (paper trading: no fees, no slippage, risk-free rate 0)


def max_drawdown(values: Sequence[float] | np.ndarray, start: float | None = None) -> float:
    """The largest peak-to-trough fall as a fraction of the peak (0.25 = −25%), ≥ 0.

    `start` (the starting balance) is an initial peak, so a curve that only ever fell from
    its start counts that fall. NaN for an empty curve without a start.
    """
    curve = np.asarray(values, dtype=np.float64)
    if start is not None:
        curve = np.concatenate([[start], curve])
    if curve.size == 0:
        return float("nan")
    peaks = np.maximum.accumulate(curve)
    with np.errstate(divide="ignore", invalid="ignore"):
        falls = np.where(peaks > 0, (peaks - curve) / peaks, 0.0)
    return float(max(0.0, falls.max()))


def simple_returns(values: Sequence[float] | np.ndarray, base: float | None = None) -> np.ndarray:
    """Period returns V_t / V_{t−1} − 1; `base` is the value before the first period."""
    curve = np.asarray(values, dtype=np.float64)
    if base is not None:
        curve = np.concatenate([[base], curve])
    if curve.size < 2:
        return np.empty(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return curve[1:] / curve[:-1] - 1.0


@dataclass(frozen=True)
class SharpeEstimate:
    """Annualised volatility and Sharpe of per-period returns, with the Sharpe's standard error.

    sharpe = mean / sd × √periods (r_f = 0, sd with ddof = 1); volatility = sd × √periods.

    sharpe_se is Mertens' (2002) standard error, which allows for skewed and heavy-tailed
    returns (a book of binary bets has both): with SR the per-period Sharpe and T returns,

        Var(SR̂) ≈ (1 + ½·SR² − γ₃·SR + (γ₄ − 3)/4 · SR²) / T,   sharpe_se = √periods × √Var,

    where γ₃ (`skewness`) and γ₄ (`kurtosis`, not excess: 3 for a normal) are the population
    (plug-in, biased) moment ratios of the returns: γ₃ = m₃ / m₂^{3/2}, γ₄ = m₄ / m₂², with
    m_k = mean((r − r̄)^k), i.e. scipy.stats.skew and kurtosis(fisher=False) with bias=True.
    Plug-in moments obey γ₄ ≥ 1 + γ₃², so the variance is at least (1 − γ₃·SR/2)² / T ≥ 0.
    sharpe_se_iid is Lo's (2002) iid-normal one, √periods × √((1 + ½·SR²) / T), which the
    Mertens formula reduces to when γ₃ = 0 and γ₄ = 3; it is kept for comparison.
    NaN when fewer than 2 returns or zero volatility (for sharpe, its SEs and the moments).
    """

    periods: int
    mean_return: float
    volatility: float
    sharpe: float
    sharpe_se: float
    sharpe_se_iid: float = float("nan")
    skewness: float = float("nan")
    kurtosis: float = float("nan")


def sharpe_estimate(
    returns: Sequence[float] | np.ndarray, periods_per_year: int = DAYS_PER_YEAR
) -> SharpeEstimate:
    """See `SharpeEstimate`; `returns` are per-period (daily) simple returns."""
    r = np.asarray(returns, dtype=np.float64)
    r = r[np.isfinite(r)]
    n = r.size
    nan = float("nan")
    if n < 2:
        return SharpeEstimate(n, float(r.mean()) if n else nan, nan, nan, nan)
    mean, sd = float(r.mean()), float(r.std(ddof=1))
    scale = float(np.sqrt(periods_per_year))
    if sd <= 0:
        return SharpeEstimate(n, mean, 0.0, nan, nan)
    per_period = mean / sd
    centred = r - mean
    m2 = float(np.mean(centred**2))
    skewness = float(np.mean(centred**3)) / m2**1.5
    kurtosis = float(np.mean(centred**4)) / m2**2
    sr2 = per_period**2
    variance = 1.0 + 0.5 * sr2 - skewness * per_period + 0.25 * (kurtosis - 3.0) * sr2
    se = scale * float(np.sqrt(max(variance, 0.0) / n))
    se_iid = scale * float(np.sqrt((1.0 + 0.5 * sr2) / n))
    return SharpeEstimate(n, mean, sd * scale, per_period * scale, se, se_iid, skewness, kurtosis)
