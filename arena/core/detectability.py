"""Detectability: whether a comparison's observed difference is separable now, the smallest
difference it can detect, and how many cohorts an observed difference would need.

Why in core: it is pure arithmetic on three numbers (an observed difference, its standard
error, the cohorts it rests on), shared by the "When will we know?" read model and the
simulation that checks its projection, so both compute the projection by the very same rule.

The rule (a two-sided z-test at level α with power 1 − β):

- separable now: the test at α rejects, |d| ≥ z_{1−α/2} × SE (1.96 × SE at α = 0.05), i.e.
  its two-sided p ≤ α;
- MDE = (z_{1−α/2} + z_{1−β}) × SE: the true difference that test detects with probability
  1 − β (2.8016 × SE at α = 0.05, power 0.8). It is what the projection aims for, not the
  bar of "separable now": an observed gap between 1.96 and 2.80 SE is separable now (the test
  rejects) though a true gap that size would be detected only about half the time;
- if the difference holds and SE shrinks as 1/√cohorts, a true gap of that size is detected
  with power 1 − β after n = k × (MDE / |d|)² cohorts, so ``more = max(0, ⌈n⌉ − k)`` while it
  is not separable, 0 once it is.

A difference of 0 (or NaN) is never detectable at that gap: "no gap". An SE that is NaN, or no
cohorts, leaves every figure NaN: "unknown".
"""

import math
from dataclasses import dataclass
from statistics import NormalDist

ALPHA = 0.05
POWER = 0.8
# The verdicts, stable ids for CSVs: separable now (the 5% test rejects); more cohorts needed;
# no gap to detect; no standard error (or no cohort) to judge by.
# Past this many more weekly cohorts (ten years) a projection is said in words, not as a
# number: "about 8,519 more weekly cohorts" reads as precision the 1/√cohorts rule cannot
# give, and means no gap a benchmark will see. The CSV keeps the number.
SPOKEN_LIMIT = 520
SEPARABLE = "separable"
NOT_YET = "not_yet"
NO_GAP = "no_gap"
UNKNOWN = "unknown"


def z_test(alpha: float = ALPHA) -> float:
    """z_{1−α/2} of the standard normal: the two-sided test's bar (1.96 at α = 0.05)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha} must lie in (0, 1)")
    return NormalDist().inv_cdf(1 - alpha / 2)


def z_sum(alpha: float = ALPHA, power: float = POWER) -> float:
    """z_{1−α/2} + z_{power} of the standard normal (2.8016 at α = 0.05, power 0.8)."""
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha {alpha} and power {power} must lie in (0, 1)")
    return z_test(alpha) + NormalDist().inv_cdf(power)


def p_value(difference: float, se: float) -> float:
    """The two-sided p of a difference against 0 with standard error `se` (normal): 0.016 at
    d = 2.4, SE = 1. NaN without a positive SE or a difference."""
    d, s = float(difference), float(se)
    if math.isnan(d) or math.isnan(s) or s <= 0:
        return math.nan
    return math.erfc(abs(d) / s / math.sqrt(2))


@dataclass(frozen=True)
class Detectability:
    """One comparison's figures: its two-sided `p_value`, whether it is separable now (the
    test at α rejects: `detectable`), the `mde` (same unit as the difference), the cohorts a
    true gap of this size needs for the test's power (`cohorts_needed`, n) and how many more
    (`more_cohorts`: 0 when separable now; NaN for "no gap" and "unknown")."""

    difference: float
    se: float
    cohorts: int
    mde: float
    detectable: bool
    cohorts_needed: float
    more_cohorts: float
    verdict: str
    p_value: float = math.nan


def detectability(
    difference: float, se: float, cohorts: int, alpha: float = ALPHA, power: float = POWER
) -> Detectability:
    """Whether `difference` (standard error `se`, resting on `cohorts` cohorts) is separable
    now by the two-sided test at `alpha`, its MDE, and the cohorts it would take if the gap
    holds and the SE shrinks as 1/√cohorts (see the module docstring)."""
    nan = math.nan
    d, s = float(difference), float(se)
    if math.isnan(s) or s < 0 or cohorts < 1:
        return Detectability(d, s, cohorts, nan, False, nan, nan, UNKNOWN)
    mde = z_sum(alpha, power) * s
    if math.isnan(d) or d == 0:
        return Detectability(d, s, cohorts, mde, False, nan, nan, NO_GAP, p_value(d, s))
    p = p_value(d, s)
    needed = cohorts * (mde / abs(d)) ** 2
    if abs(d) >= z_test(alpha) * s:
        return Detectability(d, s, cohorts, mde, True, needed, 0.0, SEPARABLE, p)
    more = float(max(0, math.ceil(needed) - cohorts))
    return Detectability(d, s, cohorts, mde, False, needed, more, NOT_YET, p)


def p_text(p: float, *, named: bool = True) -> str:
    """A p-value as the page writes it (three decimals, as the Compare page's): "p = 0.016",
    "p < 0.001" (not `named`, for a column headed p: "0.016", "< 0.001"); "" without one."""
    if math.isnan(p):
        return ""
    number = "< 0.001" if p < 0.001 else f"= {p:.3f}"
    return f"p {number}" if named else number.removeprefix("= ")


def projection_words(
    verdict: str, more_cohorts: float, p: float = math.nan, about: str = ""
) -> str:
    """The verdict in words: "separable now (p = 0.016)", "not separable yet (return +3.1 pp,
    p = 0.210); about 14 more weekly cohorts if the gap holds", "no gap to detect", "no
    standard error yet". `about` (the difference, "return +3.1 pp") and the p (when given)
    go in the parentheses: the p says which side of the 5% test the difference is on, so "not
    yet" is never read as "not significant" when the test rejects: it is said only when it
    does not."""
    inside = ", ".join(part for part in (about, p_text(p)) if part)
    said = f" ({inside})" if inside else ""
    if verdict == SEPARABLE:
        return f"separable now{said}"
    if verdict == NOT_YET and more_cohorts > SPOKEN_LIMIT:
        return f"not separable yet{said}; not within ten years of weekly cohorts if the gap holds"
    if verdict == NOT_YET:
        more = int(more_cohorts)
        unit = "weekly cohort" if more == 1 else "weekly cohorts"
        return f"not separable yet{said}; about {more:,} more {unit} if the gap holds"
    aside = f" ({about})" if about else ""  # no test to speak of: the difference alone
    if verdict == NO_GAP:
        return f"no gap to detect{aside}"
    return f"no standard error yet (too few resolved bets or cohorts){aside}"
