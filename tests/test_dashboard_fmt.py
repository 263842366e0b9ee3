"""The dashboard's one formatting module: every figure a person reads, written one way."""

import math

import pandas as pd
import pytest

from arena.dashboard import fmt


@pytest.mark.parametrize("missing", [None, math.nan, pd.NA, pd.NaT, float("nan")])
def test_a_missing_value_is_a_dash_everywhere(missing: object) -> None:
    writers = [fmt.money, fmt.signed_money, fmt.cost, fmt.signed_pct, fmt.prob, fmt.share]
    writers += [fmt.signed_prob, fmt.count, fmt.percentile, fmt.text]
    assert {write(missing) for write in writers} == {"—"}
    assert fmt.pct_interval(missing, 1, 2) == "—"
    assert fmt.rank_interval(missing, 1, 2) == "—"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (fmt.pct_interval(12.5, -3.1, 27.94), "+12.5% [−3.1, +27.9]"),
        (fmt.pct_interval(12.5, None, 27.9), "+12.5%"),
        (fmt.pct_interval(-0.04, -1, 1), "+0.0% [−1.0, +1.0]"),  # no "−0.0"
        (fmt.money(10756.54), "$10,756.54"),
        (fmt.money(-1234.5), "−$1,234.50"),
        (fmt.money(-0.001), "$0.00"),
        (fmt.signed_money(756.544), "+$756.54"),
        (fmt.signed_money(-2), "−$2.00"),
        (fmt.cost(0.01234), "$0.0123"),
        (fmt.cost(1234.5), "$1,234.50"),
        (fmt.prob_interval(0.2453, 0.201, 0.29), "0.245 [0.201, 0.290]"),
        (fmt.prob_interval(-0.012, -0.03, 0.004, signed=True), "−0.012 [−0.030, +0.004]"),
        (fmt.share(0.784), "78%"),
        (fmt.share_interval(0.54, 0.41, 0.66), "54% [41, 66]"),
        (fmt.rank_interval(2, 1, 4), "2 [1, 4]"),
        (fmt.rank_interval(1, 1, 1), "1"),
        (fmt.count(1234.0), "1,234"),
        (fmt.percentile(93.2), "93rd"),
        (fmt.percentile(11), "11th"),
        (fmt.percentile(1), "1st"),
    ],
)
def test_figures_read_the_same_way(written: str, expected: str) -> None:
    assert written == expected
