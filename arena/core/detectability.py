"""Detectability: the smallest difference a comparison can detect now, and how many cohorts it
would take for an observed difference to become detectable.

Why in core: it is pure arithmetic on three numbers (an observed difference, its standard
error, the cohorts it rests on), shared by the "When will we know?" read model and the
simulation that checks its projection, so both compute the projection by the very same rule.

The rule (a two-sided z-test at level α with power 1 − β):

- MDE = (z_{1−α/2} + z_{1−β}) × SE: the true difference a test at α detects with probability
  1 − β (2.8016 × SE at α = 0.05, power 0.8);
- detectable now: |d| ≥ MDE;
- if the difference holds and SE shrinks as 1/√cohorts, it becomes detectable after
  n = k × (MDE / |d|)² cohorts, so ``more = max(0, ⌈n⌉ − k)``.

A difference of 0 (or NaN) is never detectable at that gap: "no gap". An SE that is NaN, or no
cohorts, leaves every figure NaN: "unknown".
"""

import math
from dataclasses import dataclass
from statistics import NormalDist

ALPHA = 0.05
POWER = 0.8
# The verdicts, stable ids for CSVs: detectable now; more cohorts needed; no gap to detect;
# no standard error (or no cohort) to judge by.
# Past this many more weekly cohorts (ten years) a projection is said in words, not as a
# number: "about 8,519 more weekly cohorts" reads as precision the 1/√cohorts rule cannot
# give, and means no gap a benchmark will see. The CSV keeps the number.
SPOKEN_LIMIT = 520
SEPARABLE = "separable"
NOT_YET = "not_yet"
NO_GAP = "no_gap"
UNKNOWN = "unknown"


def z_sum(alpha: float = ALPHA, power: float = POWER) -> float:
    """z_{1−α/2} + z_{power} of the standard normal (2.8016 at α = 0.05, power 0.8)."""
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha {alpha} and power {power} must lie in (0, 1)")
    normal = NormalDist()
    return normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)


@dataclass(frozen=True)
class Detectability:
    """One comparison's figures: `mde` (same unit as the difference), whether the difference
    is detectable now, the cohorts it would take in all (`cohorts_needed`, n) and how many
    more (`more_cohorts`: 0 when detectable now; NaN for "no gap" and "unknown")."""

    difference: float
    se: float
    cohorts: int
    mde: float
    detectable: bool
    cohorts_needed: float
    more_cohorts: float
    verdict: str


def detectability(
    difference: float, se: float, cohorts: int, alpha: float = ALPHA, power: float = POWER
) -> Detectability:
    """The MDE of a difference with standard error `se` resting on `cohorts` cohorts, whether
    `difference` clears it, and the cohorts it would take if the gap holds and the SE shrinks
    as 1/√cohorts (see the module docstring)."""
    nan = math.nan
    d, s = float(difference), float(se)
    if math.isnan(s) or s < 0 or cohorts < 1:
        return Detectability(d, s, cohorts, nan, False, nan, nan, UNKNOWN)
    mde = z_sum(alpha, power) * s
    if math.isnan(d) or d == 0:
        return Detectability(d, s, cohorts, mde, False, nan, nan, NO_GAP)
    needed = cohorts * (mde / abs(d)) ** 2
    if abs(d) >= mde:
        return Detectability(d, s, cohorts, mde, True, needed, 0.0, SEPARABLE)
    more = float(max(0, math.ceil(needed) - cohorts))
    return Detectability(d, s, cohorts, mde, False, needed, more, NOT_YET)


def projection_words(verdict: str, more_cohorts: float) -> str:
    """The verdict in words: "separable now", "not separable yet; about 14 more weekly cohorts
    if the gap holds", "no gap to detect", "no standard error yet"."""
    if verdict == SEPARABLE:
        return "separable now"
    if verdict == NOT_YET and more_cohorts > SPOKEN_LIMIT:
        return "not separable yet; not within ten years of weekly cohorts if the gap holds"
    if verdict == NOT_YET:
        more = int(more_cohorts)
        unit = "weekly cohort" if more == 1 else "weekly cohorts"
        return f"not separable yet; about {more:,} more {unit} if the gap holds"
    if verdict == NO_GAP:
        return "no gap to detect"
    return "no standard error yet (too few resolved bets or cohorts)"
