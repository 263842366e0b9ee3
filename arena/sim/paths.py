"""Hidden truth and price paths of the simulated world: the belief dynamics.

Why a module of its own: this is the world's model (how the crowd's price wanders from a
biased prior to the truth); the listings only feed it a Random, the hidden probabilities and
the winner. Everything is vectorised numpy over a listing's hourly path.
"""

import math
import random
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from arena.sim.questions import ListingKind

__all__ = ["MILLS", "belief_path", "draw_index", "hidden_probabilities"]

# Belief dynamics (log-odds units, per hour).
_INFO_TOTAL = (20.0, 40.0)  # evidence by the end: winner-vs-loser log-odds gap has this mean
_INFO_LINEAR = 0.1  # share of evidence arriving evenly; the rest comes as u**12 near the end
_BIAS_SD = 0.5  # crowd's initial mispricing of each alternative, fading as evidence arrives
_NOISE_SD = 0.12  # stationary sd of the quote's wobble around the belief
_NOISE_RHO = 0.97  # hourly persistence of that wobble (half-life about a day)
_NOISE_INNOV = _NOISE_SD * math.sqrt(1.0 - _NOISE_RHO**2)

MILLS = 1000
_MIN_MILLS = 1
_MAX_MILLS = 999

# 4096 equiprobable standard-normal quantiles: a fast, exactly reproducible normal sampler.
_NORMAL_TABLE = np.array([NormalDist().inv_cdf((i + 0.5) / 4096) for i in range(4096)])
_AR_BLOCK = 128
_AR_POWERS = _NOISE_RHO ** np.arange(_AR_BLOCK, dtype=float)


def _normals(rng: random.Random, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normals from one `randbytes` call: fast, and the same on every platform."""
    raw = np.frombuffer(rng.randbytes(2 * math.prod(shape)), dtype="<u2")
    return _NORMAL_TABLE[raw >> 4].reshape(shape)


def hidden_probabilities(rng: random.Random, kind: ListingKind, size: int) -> list[float]:
    """The truth the winner is drawn from: logit-normal for binary, Dirichlet otherwise."""
    if kind == "binary":
        p_yes = min(0.98, max(0.02, 1.0 / (1.0 + math.exp(-rng.gauss(0.0, 1.7)))))
        return [p_yes, 1.0 - p_yes]
    weights = [max(rng.gammavariate(0.9, 1.0), 1e-9) for _ in range(size)]
    total = sum(weights)
    floored = [max(w / total, 0.002) for w in weights]
    norm = sum(floored)
    return [p / norm for p in floored]


def draw_index(rng: random.Random, probabilities: Sequence[float]) -> int:
    """Index i with probability probabilities[i]."""
    target, cumulative = rng.random(), 0.0
    for index, probability in enumerate(probabilities):
        cumulative += probability
        if target < cumulative:
            return index
    return len(probabilities) - 1


def _info_fraction(u: np.ndarray) -> np.ndarray:
    """Share of all evidence seen after fraction u of the market's life: most of it late."""
    return _INFO_LINEAR * u + (1.0 - _INFO_LINEAR) * u**12


def _ar1(initial: np.ndarray, shocks: np.ndarray) -> np.ndarray:
    """e[t] = ρ·e[t−1] + shocks[t] from e[−1] = initial, in vectorised blocks.

    Within a block, e[b+i] = ρ^i·(ρ·e[b−1] + Σ_{s≤i} ρ^−s·shocks[b+s]); blocks stay short so
    ρ^−s stays small and no precision is lost.
    """
    out = np.empty_like(shocks)
    previous = initial
    for begin in range(0, len(shocks), _AR_BLOCK):
        block = shocks[begin : begin + _AR_BLOCK]
        powers = _AR_POWERS[: len(block), None]
        values = powers * (_NOISE_RHO * previous + np.cumsum(block / powers, axis=0))
        out[begin : begin + len(block)] = values
        previous = values[-1]
    return out


def _to_mills(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax as per-mille prices in [1, 999], nudged so each row sums to 1000."""
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    shares = MILLS * weights / weights.sum(axis=1, keepdims=True)
    mills = np.clip(np.rint(shares), _MIN_MILLS, _MAX_MILLS).astype(np.int64)
    rows = np.arange(len(mills))
    top = mills.argmax(axis=1)
    nudged = mills[rows, top] + MILLS - mills.sum(axis=1)
    fits = (nudged >= _MIN_MILLS) & (nudged <= _MAX_MILLS)
    mills[rows[fits], top[fits]] = nudged[fits]
    return mills.astype(np.uint16)


def belief_path(
    rng: random.Random, hidden: Sequence[float], winner: int, hours: int
) -> tuple[np.ndarray, np.ndarray]:
    """Hourly per-mille prices and posteriors, shape (hours, alternatives) each.

    The posterior (prior + evidence, without the crowd's bias and quoting noise) is what a
    perfectly informed forecaster would say at that hour: the oracle baseline bets on it, so it
    beats the market by exactly the market's bias and noise.

    Log-weight of alternative j at hour h: log p_j + bias_j·(1−g) + X_j + e_j, where X_j is a
    Brownian signal with drift +½ for the winner and −½ otherwise over evidence time τ = K·g(u),
    so log p_j + X_j is the exact Bayesian posterior; e_j is AR(1) quoting noise.
    """
    size = len(hidden)
    info_total = rng.uniform(*_INFO_TOTAL)
    first = _normals(rng, (2, size))
    draws = _normals(rng, (2, hours, size))
    seen = _info_fraction(np.arange(hours) / hours)
    step = info_total * np.diff(seen, prepend=0.0)
    drift = np.full(size, -0.5)
    drift[winner] = 0.5
    signal = np.cumsum(step[:, None] * drift + np.sqrt(step)[:, None] * draws[0], axis=0)
    noise = _ar1(_NOISE_SD * first[1], _NOISE_INNOV * draws[1])
    bias = np.outer(1.0 - seen, _BIAS_SD * first[0])
    prior = np.log(np.asarray(hidden))
    return _to_mills(prior + bias + signal + noise), _to_mills(prior + signal)
