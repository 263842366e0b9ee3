"""Hand-computed scoring cases (methodology §11, contract §5)."""

from decimal import Decimal as D

import pytest

from arena.core.scoring import brier, cumulative_brier, implied_confidence, return_pct


def test_implied_confidence_is_amount_over_a_quarter_of_cash() -> None:
    assert implied_confidence(D("500"), D("10000"), D("0.25")) == pytest.approx(0.2)
    assert implied_confidence(D("2500"), D("10000"), D("0.25")) == 1.0
    assert implied_confidence(D("3000"), D("10000"), D("0.25")) == 1.0  # capped
    assert implied_confidence(D("50"), D("0"), D("0.25")) == 1.0


def test_brier() -> None:
    assert brier(0.2, won=True) == pytest.approx(0.64)
    assert brier(0.2, won=False) == pytest.approx(0.04)
    assert brier(0.5, won=True) == 0.25
    with pytest.raises(ValueError):
        brier(1.5, won=True)


def test_cumulative_brier_is_the_mean_over_resolved_trades() -> None:
    assert cumulative_brier([]) is None
    assert cumulative_brier([0.64, 0.04]) == pytest.approx(0.34)


def test_return_pct() -> None:
    assert return_pct(D("10750"), D("10000")) == pytest.approx(7.5)
    assert return_pct(D("9000"), D("10000")) == pytest.approx(-10.0)
