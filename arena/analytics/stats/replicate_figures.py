"""Replicates' pure figures: how much of the spread of agent returns is replicate noise, and
whether the pooled ranking survives picking one replicate per family.

Why its own module: these are pure functions of `replicate_agents` rows
(`arena.analytics.stats.replicates`, which reads them and assembles the Replicates page's
frames), so the hand-computed tests call them on a few rows. Definitions (x = an agent's
return %, "cell" = one family in one cohort, its n replicates):

- *Noise share* (`noise_share`): the variance of agent returns within families over their
  variance around each cohort's mean, each with its degrees of freedom: MS_w / MS_t with
  MS_w = Σ (x − x̄_cell)² / (N − K) (replicate noise: the pooled within-cell variance) and
  MS_t = Σ (x − x̄_cohort)² / (N − C), for N agents in K cells and C cohorts; capped at 1.
  It estimates σ² / (σ² + τ²), σ² the replicate noise and τ² the variance between the
  families' true returns: 0 when replicates agree exactly, about 1 when families differ by
  no more than their replicates do (the plain ratio of sums of squares would give
  (N − K)/(N − C), 0.69 with 3 replicates of 11 families, for pure noise). Equivalently
  σ̂² / (σ̂² + τ̂²) with σ̂² = MS_w and τ̂² = max(0, MS_t − MS_w). Interval: a seeded
  95% percentile bootstrap (2,000 draws) of the replicates within each cell, as modified
  residuals around shrunken family effects: a cell's deviations from its mean, scaled by
  √(n / (n − 1)), are drawn n times with replacement, and added to its cohort's mean plus
  s·(cell mean − cohort mean), s² = max(0, 1 − (K − C)·MS_w / SS_b), SS_b = Σ n (cell mean
  − cohort mean)², so that the drawn world's between-family variance is the estimated τ̂²
  rather than that of the observed cell means, which carry noise of their own (drawn around
  them, the interval sat below the estimate and, at 8 cohorts of 11 families × 3 replicates,
  never covered a true 100%). Simulated seasons of 11 families × 3 replicates, 1 to 8
  cohorts, 120 each: the 95% interval covered σ² / (σ² + τ²) in 85–99% of them with normal
  noise, 84–100% with three deterministic families, and 61–99% with heavy-tailed (t₃)
  noise, worst where families differ most: with three replicates it is a guide, not a
  guarantee. It speaks of these families: how the figure moves with other draws of their
  replicates. The same figure among the LLM families alone (`llm_noise_share`) leaves out
  the baselines and the oracle, whose distance from the models can dwarf every difference
  between models.
- *Rank stability* (`rank_stability`): families ranked by pooled return (competition ranks,
  1 = best). A *pick* takes one replicate per family per cohort and ranks families by the
  picked agents' return (Σ P/L / Σ capital over the picked agents). Every pick is enumerated
  when there are at most `MAX_PICKS` (20,000); otherwise `MAX_PICKS` seeded uniform random
  picks are drawn (the summary says which). Reported: the share of picks whose whole ranking
  equals the pooled one; pairwise agreement, the mean share of family pairs ordered as in the
  pooled ranking (a tie counts as agreement only when tied in both); per family the share of
  picks in which it keeps its pooled rank, and its best and worst rank over the picks.
  Deterministic baselines take part like any family.
"""

import math
from dataclasses import dataclass
from math import prod

import numpy as np
import pandas as pd

from arena.analytics.query.selects import ratio
from arena.core import stats

MAX_PICKS = 20_000  # enumerate the picks up to this many, else draw this many at random
_CHUNK = 2_000  # picks (and 100 bootstrap replicates) evaluated at a time: bounded memory


@dataclass(frozen=True)
class NoiseShare:
    """The share of return variance that is replicate noise, and its interval."""

    share: float
    low: float
    high: float


@dataclass(frozen=True)
class RankStability:
    """How the pooled ranking fares when one replicate per family and cohort is picked."""

    possible: float  # how many picks there are (Π of the replicate counts; may be huge)
    picks: int  # how many were evaluated
    enumerated: bool  # all of them (True) or `picks` seeded random ones (False)
    full_agreement: float  # share of picks ranking every family as the pooled ranking
    pairwise_agreement: float  # mean share of family pairs ordered as pooled
    families: pd.DataFrame  # family_id, pooled_rank, keeps_rank, rank_best, rank_worst


def noise_share(
    agents: pd.DataFrame,
    *,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> NoiseShare:
    """The share of the variance of agent returns (around each cohort's mean) that is
    replicate noise, with its bootstrap interval (this module's docstring has the definitions).
    NaN where the returns do not vary at all, or no family has two agents in a cohort."""
    if agents.empty:
        return NoiseShare(np.nan, np.nan, np.nan)
    values, mask, cohort_of = _cells(agents, "return_pct")
    point = _share(values[None], mask, cohort_of)[0]
    if replicates <= 0 or np.isnan(point):
        return NoiseShare(float(point), np.nan, np.nan)
    n = mask.sum(axis=1)
    means = np.where(mask, values, 0.0).sum(axis=1) / n
    centres = np.bincount(cohort_of, weights=n * means) / np.bincount(cohort_of, weights=n)
    effects = means - centres[cohort_of]  # each cell's family effect in its cohort
    within = float((np.where(mask, values - means[:, None], 0.0) ** 2).sum())
    between = float((n * effects**2).sum())
    agents_n, cells, cohorts = int(n.sum()), len(n), len(centres)
    shrink = (
        math.sqrt(max(0.0, 1 - (cells - cohorts) * within / (agents_n - cells) / between))
        if between > 0
        else 0.0
    )
    drawn_means = centres[cohort_of] + shrink * effects
    scale = np.sqrt(n / np.maximum(n - 1, 1))
    residuals = np.where(mask, (values - means[:, None]) * scale[:, None], 0.0)
    rng = np.random.default_rng(seed)
    reps = []
    for start in range(0, replicates, 100):
        size = min(100, replicates - start)
        draws = np.floor(rng.random((size, *values.shape)) * n[None, :, None]).astype(np.int64)
        drawn = np.take_along_axis(np.broadcast_to(residuals, (size, *values.shape)), draws, axis=2)
        reps.append(_share(drawn_means[None, :, None] + drawn, mask, cohort_of))
    low, high = stats.percentile_interval(np.concatenate(reps), level)
    return NoiseShare(float(point), float(low), float(high))


def rank_stability(
    agents: pd.DataFrame, *, max_picks: int = MAX_PICKS, seed: int = 0
) -> RankStability:
    """The pooled ranking against the rankings of single picks of one replicate per family
    and cohort (this module's docstring has the definitions)."""
    columns = ["family_id", "pooled_rank", "keeps_rank", "rank_best", "rank_worst"]
    if agents.empty:
        empty = pd.DataFrame(
            {c: pd.Series(dtype="string" if c == "family_id" else "float64") for c in columns}
        )
        return RankStability(0.0, 0, True, np.nan, np.nan, empty)
    families = sorted(set(agents["family_id"].astype(str)))
    pnl, mask, _ = _cells(agents, "pnl")
    capital, _, _ = _cells(agents, "capital")
    family_of = _cell_families(agents, families)
    n = mask.sum(axis=1)
    onehot = np.zeros((len(n), len(families)))
    onehot[np.arange(len(n)), family_of] = 1.0
    pooled = ratio(
        np.where(mask, pnl, 0.0).sum(axis=1) @ onehot,
        np.where(mask, capital, 0.0).sum(axis=1) @ onehot,
    )
    pooled_ranks = stats.competition_ranks(pooled)
    possible = float(prod(int(k) for k in n))
    enumerated = possible <= max_picks
    total = int(possible) if enumerated else max_picks
    rng = np.random.default_rng(seed)
    full = pairs = 0.0
    keeps = np.zeros(len(families))
    best = np.full(len(families), np.inf)
    worst = np.full(len(families), -np.inf)
    upper = np.triu(np.ones((len(families), len(families)), dtype=bool), k=1)
    pooled_order = np.sign(pooled_ranks[:, None] - pooled_ranks[None, :])[upper]
    rows = np.arange(len(n))
    # Replicates start with the same capital (always, so far): a pick's capital is then fixed.
    uniform = np.all(~mask | (capital == capital[:, :1]))
    same_capital = capital[:, 0] @ onehot if uniform else None
    for start in range(0, total, _CHUNK):
        size = min(_CHUNK, total - start)
        if enumerated:
            flat = np.arange(start, start + size)
            picked = np.stack(np.unravel_index(flat, tuple(int(k) for k in n)), axis=1)
        else:
            picked = (rng.random((size, len(n))) * n).astype(np.int64)  # uniform in 0…n−1
        spent = same_capital if same_capital is not None else capital[rows, picked] @ onehot
        ranks = stats.competition_ranks(ratio(pnl[rows, picked] @ onehot, spent)).reshape(
            size, len(families)
        )
        full += float(np.all(ranks == pooled_ranks, axis=1).sum())
        if upper.any():
            order = np.sign(ranks[:, :, None] - ranks[:, None, :])[:, upper]
            pairs += float((order == pooled_order).mean(axis=1).sum())
        keeps += (ranks == pooled_ranks).sum(axis=0)
        best = np.minimum(best, ranks.min(axis=0))
        worst = np.maximum(worst, ranks.max(axis=0))
    per_family = pd.DataFrame(
        {
            "family_id": pd.Series(families, dtype="string"),
            "pooled_rank": pooled_ranks.astype(np.float64),
            "keeps_rank": keeps / total,
            "rank_best": best,
            "rank_worst": worst,
        }
    )
    return RankStability(
        possible,
        total,
        enumerated,
        full / total,
        pairs / total if upper.any() else np.nan,
        per_family,
    )


# --------------------------------------------------------------------------------------------
# Helpers


def _cell_keys(agents: pd.DataFrame) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """Each agent's cell (family × cohort) index, and each cell's (cohort, family) label."""
    keys = [
        (int(c), str(f)) for c, f in zip(agents["cohort_number"], agents["family_id"], strict=True)
    ]
    labels = sorted(set(keys))
    index = {key: i for i, key in enumerate(labels)}
    return np.asarray([index[key] for key in keys], dtype=np.int64), labels


def _cells(agents: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`column` laid out as (cells × most replicates), its mask, and each cell's cohort index
    (0…C−1). Cells are (cohort, family) in order; within a cell agents keep their order."""
    cell, labels = _cell_keys(agents)
    slot = pd.Series(cell).groupby(cell).cumcount().to_numpy()
    width = int(slot.max()) + 1 if len(slot) else 0
    values = np.zeros((len(labels), width))
    mask = np.zeros((len(labels), width), dtype=bool)
    values[cell, slot] = agents[column].to_numpy(dtype=np.float64)
    mask[cell, slot] = True
    cohorts = sorted({int(c) for c, _ in labels})
    position = {c: i for i, c in enumerate(cohorts)}
    cohort_of = np.asarray([position[int(c)] for c, _ in labels], dtype=np.int64)
    return values, mask, cohort_of


def _cell_families(agents: pd.DataFrame, families: list[str]) -> np.ndarray:
    _, labels = _cell_keys(agents)
    index = {family: i for i, family in enumerate(families)}
    return np.asarray([index[str(f)] for _, f in labels], dtype=np.int64)


def _share(values: np.ndarray, mask: np.ndarray, cohort_of: np.ndarray) -> np.ndarray:
    """Per draw (axis 0 of `values`, cells × slots after it): the within-cell variance
    (degrees of freedom N − K) over the variance around each cohort's mean (N − C), capped
    at 1; NaN where nothing varies or no cell has two agents."""
    weights = mask[None].astype(np.float64)
    n = mask.sum(axis=1)
    cell_sum = (values * weights).sum(axis=2)
    cell_mean = cell_sum / n
    within = (((values - cell_mean[:, :, None]) ** 2) * weights).sum(axis=(1, 2))
    cohorts = int(cohort_of.max()) + 1
    onehot = np.zeros((len(cohort_of), cohorts))
    onehot[np.arange(len(cohort_of)), cohort_of] = 1.0
    cohort_mean = (cell_sum @ onehot) / (n @ onehot)
    centre = cohort_mean[:, cohort_of]
    total = (((values - centre[:, :, None]) ** 2) * weights).sum(axis=(1, 2))
    agents, cells = int(n.sum()), len(n)
    if agents <= cells:  # one agent per family and cohort: no replicate noise to measure
        return np.full(len(values), np.nan)
    # Identical returns leave only rounding in `total`: no variance to share out.
    varies = total > 1e-12 * np.maximum(((values**2) * weights).sum(axis=(1, 2)), 1.0)
    ratio = (within / (agents - cells)) / np.where(varies, total / (agents - cohorts), 1.0)
    return np.where(varies, np.minimum(ratio, 1.0), np.nan)
