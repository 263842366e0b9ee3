"""Our Sharpe standard errors against SciPy's moments (SciPy comes with scikit-learn, test-only)."""

import math
from typing import Any

import numpy as np
import pytest

from arena.core.stats import sharpe_estimate


def skew(values: np.ndarray, **options: Any) -> float:
    """SciPy's skewness, imported when a test runs: `scipy.stats` costs a second of import at
    collection in every pytest worker, and only this file needs it."""
    from scipy.stats import skew as scipy_skew

    return float(scipy_skew(values, **options))


def kurtosis(values: np.ndarray, **options: Any) -> float:
    """SciPy's kurtosis, imported when a test runs (see `skew`)."""
    from scipy.stats import kurtosis as scipy_kurtosis

    return float(scipy_kurtosis(values, **options))


def _reference(returns: np.ndarray, periods: int) -> tuple[float, float]:
    """Mertens (2002) and Lo (2002) annualised SEs from SciPy's population moments."""
    sr = float(np.mean(returns) / np.std(returns, ddof=1))
    g3 = float(skew(returns, bias=True))
    g4 = float(kurtosis(returns, fisher=False, bias=True))
    days = returns.size
    mertens = math.sqrt((1 + sr**2 / 2 - g3 * sr + (g4 - 3) / 4 * sr**2) / days)
    iid = math.sqrt((1 + sr**2 / 2) / days)
    return math.sqrt(periods) * mertens, math.sqrt(periods) * iid


def _binary_book(rng: np.random.Generator, days: int) -> np.ndarray:
    """Daily returns of a long-shot book: +100% on 10% of days, −5% otherwise, plus noise."""
    return np.where(rng.uniform(size=days) < 0.1, 1.0, -0.05) + rng.normal(0.0, 0.002, days)


@pytest.mark.parametrize("seed", range(3))
def test_mertens_se_matches_scipy_moments_on_a_skewed_book(seed: int) -> None:
    returns = _binary_book(np.random.default_rng(seed), 300)
    est = sharpe_estimate(returns)
    mertens, iid = _reference(returns, 365)
    assert est.skewness == pytest.approx(skew(returns, bias=True), rel=1e-12)
    assert est.kurtosis == pytest.approx(kurtosis(returns, fisher=False, bias=True), rel=1e-12)
    assert est.sharpe_se == pytest.approx(mertens, rel=1e-12)
    assert est.sharpe_se_iid == pytest.approx(iid, rel=1e-12)
    assert est.skewness > 2.0  # right-skewed: the iid SE overstates the uncertainty
    assert est.sharpe_se / est.sharpe_se_iid < 0.85


def test_mertens_se_on_a_left_skewed_book_is_wider_than_iid() -> None:
    rng = np.random.default_rng(5)
    returns = np.where(rng.uniform(size=300) < 0.1, -0.5, 0.08) + rng.normal(0.0, 0.002, 300)
    est = sharpe_estimate(returns)
    mertens, iid = _reference(returns, 365)
    assert (est.sharpe_se, est.sharpe_se_iid) == pytest.approx((mertens, iid), rel=1e-12)
    assert est.skewness < -2.0 and est.sharpe_se / est.sharpe_se_iid > 1.1


def test_mertens_and_iid_nearly_agree_on_normal_returns() -> None:
    returns = np.random.default_rng(3).normal(0.002, 0.01, 2000)
    est = sharpe_estimate(returns)
    mertens, iid = _reference(returns, 365)
    assert (est.sharpe_se, est.sharpe_se_iid) == pytest.approx((mertens, iid), rel=1e-12)
    assert abs(est.skewness) < 0.2 and abs(est.kurtosis - 3.0) < 0.3
    assert est.sharpe_se == pytest.approx(est.sharpe_se_iid, rel=0.02)
