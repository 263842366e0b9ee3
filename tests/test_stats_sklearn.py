"""Our calibration numbers against scikit-learn's on random data (test-only dependency)."""

import numpy as np
import pytest

from arena.core.scoring import brier
from arena.core.stats import murphy_decomposition, reliability_bins


@pytest.mark.parametrize("seed", range(5))
def test_brier_and_reliability_match_sklearn(seed: int) -> None:
    # Imported when the test runs: scikit-learn costs 2.3 s of import at collection, in every
    # xdist worker, whichever tests it runs.
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    rng = np.random.default_rng(seed)
    n = 2_000
    forecasts = rng.uniform(0.0, 1.0, n)
    outcomes = (rng.uniform(0.0, 1.0, n) < forecasts**1.3).astype(int)  # a miscalibrated pair

    reference = brier_score_loss(outcomes, forecasts)
    assert murphy_decomposition(forecasts, outcomes).brier == pytest.approx(reference, abs=1e-12)
    per_trade = np.mean(
        [brier(float(f), bool(o)) for f, o in zip(forecasts, outcomes, strict=True)]
    )
    assert per_trade == pytest.approx(reference, abs=1e-12)

    prob_true, prob_pred = calibration_curve(outcomes, forecasts, n_bins=10, strategy="uniform")
    ours = reliability_bins(forecasts, outcomes, bins=10)
    filled = ours.count > 0
    np.testing.assert_allclose(ours.observed_rate[filled], prob_true, atol=1e-12)
    np.testing.assert_allclose(ours.mean_forecast[filled], prob_pred, atol=1e-12)
