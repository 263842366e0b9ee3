"""The detectability arithmetic (`arena.core.detectability`) against hand-computed cases, and
its properties: monotone in the standard error, invariant to the unit of the difference;
"separable now" is the two-sided 5% test, the MDE only the projection's target."""

import math
from statistics import NormalDist

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.detectability import (
    NO_GAP,
    NOT_YET,
    SEPARABLE,
    UNKNOWN,
    detectability,
    projection_words,
    z_sum,
)
from tests.examples import examples

Z975 = NormalDist().inv_cdf(0.975)  # 1.959964: the two-sided 5% test's bar


def test_z_sum_is_the_two_normal_quantiles() -> None:
    # z_{0.975} = 1.959964, z_{0.8} = 0.841621 (tables); their sum 2.801585.
    assert z_sum() == pytest.approx(2.801585, abs=1e-6)
    assert z_sum(0.10, 0.9) == pytest.approx(1.644854 + 1.281552, abs=1e-6)
    with pytest.raises(ValueError):
        z_sum(0.0, 0.8)


@pytest.mark.parametrize(
    ("d", "se", "k", "mde", "needed", "more", "verdict"),
    [
        # 4 × 2.801585² = 31.3955 cohorts in all → ⌈31.4⌉ − 4 = 28 more.
        (1.0, 1.0, 4, 2.801585, 31.3955, 28, NOT_YET),
        # 3.1 pp with SE 2 on 5 cohorts: MDE 5.60317; 5 × (5.60317 / 3.1)² = 16.334 → 12 more.
        (3.1, 2.0, 5, 5.603170, 16.3343, 12, NOT_YET),
        # |−2| ≥ 1.4008: detectable now; n = 3 × (1.4008 / 2)² = 1.4717.
        (-2.0, 0.5, 3, 1.400793, 1.4717, 0, SEPARABLE),
        # Just past the MDE: 7 × (2.801585 / 2.81)² = 6.958 cohorts, none more.
        (2.81, 1.0, 7, 2.801585, 6.9581, 0, SEPARABLE),
    ],
)
def test_hand_computed_cases(
    d: float, se: float, k: int, mde: float, needed: float, more: int, verdict: str
) -> None:
    got = detectability(d, se, k)
    assert got.mde == pytest.approx(mde, abs=1e-5)
    assert got.cohorts_needed == pytest.approx(needed, abs=1e-3)
    assert got.more_cohorts == more
    assert got.verdict == verdict
    assert got.detectable is (verdict == SEPARABLE)


def test_separable_now_is_the_five_percent_test_not_the_mde() -> None:
    """d = 2.4, SE = 1, k = 4: below the MDE (2.80) but p = 0.016, so the two-sided 5% test
    rejects: separable now, no more cohorts, though a true gap that size needs
    4 × (2.8016 / 2.4)² = 5.45 cohorts for 80% power."""
    got = detectability(2.4, 1.0, 4)
    assert got.verdict == SEPARABLE and got.detectable and got.more_cohorts == 0
    assert got.p_value == pytest.approx(0.016395, abs=1e-6)
    assert got.mde == pytest.approx(2.801585, abs=1e-6) and got.mde > 2.4
    assert got.cohorts_needed == pytest.approx(5.4505, abs=1e-3)
    assert projection_words(got.verdict, got.more_cohorts, got.p_value) == (
        "separable now (p = 0.016)"
    )
    # The bar is z_{0.975} = 1.959964: just under it the test does not reject (p > 0.05).
    under = detectability(1.95, 1.0, 4)
    assert under.verdict == NOT_YET and under.p_value > 0.05
    assert under.more_cohorts == math.ceil(4 * (z_sum() / 1.95) ** 2) - 4 == 5
    assert projection_words(under.verdict, under.more_cohorts, under.p_value) == (
        "not separable yet (p = 0.051); about 5 more weekly cohorts if the gap holds"
    )
    assert detectability(Z975, 1.0, 4).detectable
    assert math.isnan(detectability(1.0, math.nan, 4).p_value)


def test_exactly_at_the_mde_is_detectable() -> None:
    at = detectability(z_sum(), 1.0, 7)
    assert at.detectable and at.cohorts_needed == pytest.approx(7.0)


def test_no_gap_and_unknown() -> None:
    zero = detectability(0.0, 1.0, 4)
    assert zero.verdict == NO_GAP and not zero.detectable
    assert zero.mde == pytest.approx(2.801585, abs=1e-6)
    assert math.isnan(zero.cohorts_needed) and math.isnan(zero.more_cohorts)
    assert detectability(math.nan, 1.0, 4).verdict == NO_GAP
    for se, k in ((math.nan, 4), (1.0, 0)):
        unknown = detectability(1.0, se, k)
        assert unknown.verdict == UNKNOWN and not unknown.detectable
        assert all(
            math.isnan(v) for v in (unknown.mde, unknown.cohorts_needed, unknown.more_cohorts)
        )


def test_words() -> None:
    assert projection_words(NOT_YET, 14.0) == (
        "not separable yet; about 14 more weekly cohorts if the gap holds"
    )
    assert projection_words(NOT_YET, 1.0).endswith("about 1 more weekly cohort if the gap holds")
    assert projection_words(SEPARABLE, 0.0) == "separable now"
    # Past ten years of weekly cohorts the number is not spoken (the CSV keeps it).
    at_limit = projection_words(NOT_YET, 520.0)
    assert at_limit.endswith("about 520 more weekly cohorts if the gap holds")
    assert projection_words(NOT_YET, 8519.0) == (
        "not separable yet; not within ten years of weekly cohorts if the gap holds"
    )
    assert projection_words(NO_GAP, math.nan) == "no gap to detect"


positive = st.floats(1e-3, 1e3, allow_nan=False)


@settings(max_examples=examples(200), deadline=None)
@given(d=positive, se=positive, grow=st.floats(1.0, 10.0), k=st.integers(1, 200))
def test_monotone_in_se(d: float, se: float, grow: float, k: int) -> None:
    """A larger SE never makes a difference easier to detect."""
    small, large = detectability(d, se, k), detectability(d, se * grow, k)
    assert large.mde >= small.mde
    assert large.cohorts_needed >= small.cohorts_needed
    assert large.more_cohorts >= small.more_cohorts
    assert not (large.detectable and not small.detectable)


@settings(max_examples=examples(200), deadline=None)
@given(d=positive, se=positive, scale=st.floats(1e-2, 1e2), k=st.integers(1, 200))
def test_scale_invariant(d: float, se: float, scale: float, k: int) -> None:
    """The unit of the difference (pp or $, Brier or Brier × 100) changes nothing but the MDE's."""
    one, other = detectability(d, se, k), detectability(-d * scale, se * scale, k)
    assert other.mde == pytest.approx(one.mde * scale, rel=1e-9)
    assert other.cohorts_needed == pytest.approx(one.cohorts_needed, rel=1e-9)
    # Away from the float noise of ⌈n⌉ (relative, as n can be 10¹³) and of the test's bar.
    fraction = one.cohorts_needed % 1
    clear = min(fraction, 1 - fraction) > 1e-9 * max(1.0, one.cohorts_needed)
    if clear and abs(Z975 * se - d) > 1e-9 * d:
        assert other.more_cohorts == one.more_cohorts
        assert other.verdict == one.verdict


def test_the_tables_verdict_says_a_decade_in_words() -> None:
    from arena.analytics.views.detectability import verdict_text

    assert verdict_text(NOT_YET, 14.0) == "14 more cohorts"
    assert verdict_text(NOT_YET, 1.0) == "1 more cohort"
    assert verdict_text(NOT_YET, 6304.0) == "over 10 years"
    assert verdict_text(SEPARABLE, 0.0) == "separable now"
