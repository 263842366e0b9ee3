"""The check of "When will we know?"'s projection, by simulation: projected cohorts against the
cohorts actually needed, over seeds.

Why a module of analytics (not bench/): the suite runs it (a few seeds, a few seconds) and it
must compute the projection by the view's own rule (`arena.core.detectability`), so it lives
beside the statistics it checks. Why on the statistics and not the engine: a seed needs tens
to hundreds of cohorts, which the engine plays in minutes each.

Two worlds:

- `controlled`: the per-cohort difference is Gaussian with a known gap δ and sd σ; the
  projection is made from the true δ and SE = σ/√k. A 5% two-sided test at the projected
  count must then reject with probability 0.8 (the power the MDE promises): coverage is
  nominal by construction, so a wrong z, a wrong exponent or a wrong k fails the check.
- `simulated_world`: binary markets drawn as `arena.sim` draws them (hidden probability
  logit-normal, sd 1.7, clipped to [0.02, 0.98]; the crowd's price off it by its mispricing
  and quoting noise, `arena.sim.paths`; the winner drawn from the hidden probability), two
  families forecasting as their personas do (`arena.sim.personas`: insight toward the truth,
  favourite/longshot bias, noise, overconfidence; bet a side when its edge clears the
  persona's, at most `legs` × the five decision weeks per cohort, stake min(1, size × edge) of
  the 25% cap, implied confidence = that share). Per cohort, per market: each family's P/L and
  Brier units. The SE at k cohorts is the stratified cluster bootstrap's (markets resampled
  within cohorts) in closed form: the bootstrap variance of a stratified sum is Σ_c n_c ×
  var₀(units of cohort c), the limit the view's 2,000 replicates estimate.

Per seed: after `k0` cohorts the projection (total cohorts ⌈n⌉, n = k0 (MDE/|d|)²), unless the
test already rejects at k0 (the view's "separable now": the very rule, `z_test`); then cohorts
are drawn until the test rejects (|d_k| ≥ z_{1−α/2} SE_k: what 80% power is the probability
of), capped. Figures: `coverage_at_projection` (the share of
seeds whose test rejects at the projected count: the promise, 0.8 when the gap is the true
one), `coverage` (the share whose first rejection came at or before it), the median of actual /
projected, and how many seeds were already separable at k0 or never within the cap.
"""

import math
from dataclasses import dataclass

import numpy as np

from arena.core.detectability import detectability, z_test
from arena.sim import paths
from arena.sim.personas import Persona, persona_for

CAPITAL = 10_000.0
CAP_SHARE = 0.25  # v1's cap on one bet: 25% of the cash
DECISION_WEEKS = 5  # a v1 cohort decides weekly over a five-week window
HIDDEN_SD = 1.7  # `paths.hidden_probabilities`: logit-normal prior of a binary market


@dataclass(frozen=True)
class CheckResult:
    """The projection's coverage over seeds (see the module docstring)."""

    seeds: int  # seeds judged: not separable at k0, a gap to project, projected within the cap
    separable_at_k0: int
    coverage_at_projection: float
    coverage: float
    median_ratio: float  # median of actual / projected cohorts (never within the cap: cap + 1)
    never_within_cap: int
    median_projected: float
    beyond_cap: int = 0  # seeds projected past the cap: not judged (nothing to compare with)


def _summarise(
    projected: np.ndarray, actual: np.ndarray, at_projection: np.ndarray, cap: int, separable: int
) -> CheckResult:
    """The figures over the seeds whose projection falls within the cap (the others are
    counted, not judged: no draw went that far)."""
    judged = projected <= cap
    beyond = int((~judged).sum())
    projected, actual, at_projection = projected[judged], actual[judged], at_projection[judged]
    if projected.size == 0:
        return CheckResult(0, separable, math.nan, math.nan, math.nan, 0, math.nan, beyond)
    return CheckResult(
        seeds=int(projected.size),
        separable_at_k0=separable,
        coverage_at_projection=float(at_projection.mean()),
        coverage=float((actual <= projected).mean()),
        median_ratio=float(np.median(actual / projected)),
        never_within_cap=int((actual > cap).sum()),
        median_projected=float(np.median(projected)),
        beyond_cap=beyond,
    )


def controlled(
    seeds: int, gap: float, sd: float, k0: int, cap: int, rng_seed: int = 0
) -> CheckResult:
    """Per-cohort differences N(`gap`, `sd`²); projection from the true gap and SE sd/√k0."""
    rng = np.random.default_rng(rng_seed)
    found = detectability(gap, sd / math.sqrt(k0), k0)
    total = k0 if found.detectable else math.ceil(found.cohorts_needed)
    draws = rng.normal(gap, sd, size=(seeds, cap))
    k = np.arange(1, cap + 1)
    means = np.cumsum(draws, axis=1) / k
    rejects = np.abs(means) >= z_test() * sd / np.sqrt(k)
    rejects[:, : k0 - 1] = False
    actual = np.where(rejects.any(axis=1), rejects.argmax(axis=1) + 1, cap + 1)
    projected = np.full(seeds, float(total))
    return _summarise(projected, actual.astype(float), rejects[:, total - 1], cap, 0)


@dataclass(frozen=True)
class _Units:
    """Per seed × cohort × market: each family's P/L ($), Brier sum and resolved bets."""

    pnl: np.ndarray  # (2, S, C, M)
    brier: np.ndarray
    bets: np.ndarray


def _family_units(
    persona: Persona,
    hidden: np.ndarray,
    price: np.ndarray,
    won: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One family's units on the drawn markets, forecasting as `persona` does."""
    logit_price = np.log(price / (1 - price))
    start = logit_price + persona.insight * (np.log(hidden / (1 - hidden)) - logit_price)
    shift = persona.bias * (1 - 2 * price)
    noise = rng.normal(0.0, persona.noise, size=price.shape)
    belief = 1 / (1 + np.exp(-persona.overconf * (start + shift + noise)))
    edge = np.abs(belief - price)
    yes = belief > price
    # The best edges of each cohort, at most `legs` a decision over the window.
    limit = persona.legs * DECISION_WEEKS
    order = np.argsort(-np.where(edge >= persona.edge, edge, -1.0), axis=-1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(order.shape[-1]), axis=-1)
    bet = (edge >= persona.edge) & (rank < limit)
    share = np.minimum(1.0, persona.size * edge)
    side_price = np.where(yes, price, 1 - price)
    side_won = np.where(yes, won, ~won)
    stake = share * CAP_SHARE * CAPITAL
    pnl = np.where(bet, stake * (side_won / side_price - 1), 0.0)
    brier = np.where(bet, (share - side_won) ** 2, 0.0)
    return pnl, brier, bet.astype(float)


def _world_units(
    seeds: int,
    cohorts: int,
    markets: int,
    personas: tuple[Persona, Persona],
    rng: np.random.Generator,
) -> _Units:
    """Markets as `arena.sim` draws them, and both families' units on them."""
    shape = (seeds, cohorts, markets)
    hidden = np.clip(1 / (1 + np.exp(-rng.normal(0.0, HIDDEN_SD, size=shape))), 0.02, 0.98)
    off = rng.normal(0.0, paths._BIAS_SD, size=shape) + rng.normal(0.0, paths._NOISE_SD, size=shape)
    logit = np.log(hidden / (1 - hidden)) + off
    price = np.clip(np.round(1 / (1 + np.exp(-logit)), 3), 0.001, 0.999)
    won = rng.random(size=shape) < hidden
    units = [_family_units(p, hidden, price, won, rng) for p in personas]
    return _Units(*(np.stack([u[i] for u in units]) for i in range(3)))


def _stratified_var(units: np.ndarray, traded: np.ndarray) -> np.ndarray:
    """Σ_c n_c var₀ over the traded markets of each cohort: the bootstrap variance of the
    stratified sum. `units`, `traded`: (S, k, M) → (S,)."""
    n = traded.sum(axis=-1)
    total = (units * traded).sum(axis=-1)
    squares = (units**2 * traded).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_cohort = np.where(n > 0, squares - total**2 / np.where(n > 0, n, 1), 0.0)
    return np.asarray(per_cohort.sum(axis=-1))


def _return_figures(u: _Units, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The pair's return difference (pp) over the first k cohorts, and its SE, per seed."""
    diff = u.pnl[0, :, :k] - u.pnl[1, :, :k]
    traded = (u.bets[0, :, :k] + u.bets[1, :, :k]) > 0
    scale = 100.0 / (CAPITAL * k)
    return diff.sum(axis=(1, 2)) * scale, np.sqrt(_stratified_var(diff, traded)) * scale


def _brier_figures(u: _Units, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The pair's Brier difference over the first k cohorts and its SE (the ratio estimator's
    bootstrap variance by linearisation: units (B_m − R n_m) / N per family), per seed."""
    sums, bets = u.brier[:, :, :k], u.bets[:, :, :k]
    count = bets.sum(axis=(2, 3))  # (2, S)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = sums.sum(axis=(2, 3)) / count
        linear = (sums - ratio[..., None, None] * bets) / count[..., None, None]
    traded = (bets[0] + bets[1]) > 0
    return ratio[0] - ratio[1], np.sqrt(_stratified_var(linear[0] - linear[1], traded))


def simulated_world(
    seeds: int,
    k0: int,
    cap: int,
    *,
    markets: int = 40,
    metric: str = "return",
    models: tuple[str, str] = ("openai/gpt-5.2", "anthropic/claude-opus-4.5"),
    rng_seed: int = 0,
) -> CheckResult:
    """The projection after `k0` cohorts against the cohorts the test actually needed (capped
    at `cap`), over `seeds` simulated seasons of `markets` markets a cohort, for the pair of
    families `models` name (their personas) on `metric` (return or brier)."""
    rng = np.random.default_rng(rng_seed)
    units = _world_units(seeds, cap, markets, (persona_for(models[0]), persona_for(models[1])), rng)
    figures = _return_figures if metric == "return" else _brier_figures
    z = z_test()
    rejects = np.zeros((seeds, cap + 1), dtype=bool)
    for k in range(k0, cap + 1):
        d, se = figures(units, k)
        rejects[:, k] = np.abs(d) >= z * se
    d0, se0 = figures(units, k0)
    projected, actual, at_projection, separable = [], [], [], 0
    for s in range(seeds):
        found = detectability(float(d0[s]), float(se0[s]), k0)
        if found.detectable:
            separable += 1
            continue
        if found.verdict != "not_yet":
            continue
        total = math.ceil(found.cohorts_needed)
        hits = np.flatnonzero(rejects[s, k0:]) + k0
        projected.append(total)
        actual.append(hits[0] if hits.size else cap + 1)
        at_projection.append(bool(rejects[s, min(total, cap)]))
    return _summarise(
        np.asarray(projected, float),
        np.asarray(actual, float),
        np.asarray(at_projection),
        cap,
        separable,
    )
