"""The Calibration page's reliability diagram: Wilson intervals worked out by hand, the market
pooled over the compared families, and the minimum count below which a bin is listed, not
drawn — all pure functions over the stored `reliability` frames."""

import math

import numpy as np
import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats import calibration as cal
from tests.analytics import build_book


def test_wilson_interval_by_hand() -> None:
    # 7 of 10 at 95%: z = 1.959964, z² = 3.841459; denominator 1 + z²/n = 1.3841459;
    # centre (0.7 + 0.1920729) / 1.3841459 = 0.644493; half-width
    # z·√(0.021 + 0.0096036) / 1.3841459 = 0.247715  →  [0.396778, 0.892209].
    low, high = cal.wilson_interval(7, 10)
    assert float(low) == pytest.approx(0.396778, abs=1e-6)
    assert float(high) == pytest.approx(0.892209, abs=1e-6)
    # 0 of 5: centre = half-width = (z²/10) / (1 + z²/5) = 0.217241  →  [0, 0.434482]
    low, high = cal.wilson_interval(0, 5)
    assert float(low) == 0.0
    assert float(high) == pytest.approx(0.434482, abs=1e-6)
    # all won: the mirror image; never a zero-width interval at the edge
    low, high = cal.wilson_interval(5, 5)
    assert float(low) == pytest.approx(1 - 0.434482, abs=1e-6) and float(high) == 1.0


def test_wilson_interval_is_elementwise_and_empty_bins_have_none() -> None:
    low, high = cal.wilson_interval(np.array([7, 0, 0]), np.array([10, 5, 0]))
    assert low[:2] == pytest.approx([0.396778, 0.0], abs=1e-6)
    assert high[:2] == pytest.approx([0.892209, 0.434482], abs=1e-6)
    assert math.isnan(low[2]) and math.isnan(high[2])
    wider = cal.wilson_interval(7, 10, level=0.99)
    assert wider[0] < 0.396778 and wider[1] > 0.892209
    with pytest.raises(ValueError):
        cal.wilson_interval(3, 2)
    with pytest.raises(ValueError):
        cal.wilson_interval(1, 2, level=1.0)


def _bins(family_id: str, counts: list[int], wins: list[int], means: list[float]) -> pd.DataFrame:
    """A `reliability` frame of four bins (width 0.25) for one family."""
    count = np.array(counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(count > 0, np.array(wins) / count, np.nan)
    return pd.DataFrame(
        {
            "family_id": family_id,
            "bin": range(4),
            "bin_low": [0.0, 0.25, 0.5, 0.75],
            "bin_high": [0.25, 0.5, 0.75, 1.0],
            "count": count,
            "mean_forecast": np.where(count > 0, means, np.nan),
            "observed_rate": rate,
        }
    )[list(cal.RELIABILITY_COLUMNS)]


IMPLIED = pd.concat(
    [
        _bins("a", [10, 2, 0, 0], [7, 1, 0, 0], [0.1, 0.3, 0, 0]),
        _bins("b", [0, 6, 0, 1], [0, 3, 0, 1], [0, 0.4, 0, 0.9]),
        _bins("c", [5, 5, 5, 5], [1, 2, 3, 4], [0.1, 0.4, 0.6, 0.9]),
    ],
    ignore_index=True,
)
MARKET = pd.concat(
    [
        _bins("a", [4, 8, 0, 0], [1, 5, 0, 0], [0.2, 0.4, 0, 0]),
        _bins("b", [0, 2, 4, 1], [0, 1, 2, 1], [0, 0.3, 0.6, 0.8]),
        _bins("c", [20, 0, 0, 0], [2, 0, 0, 0], [0.05, 0, 0, 0]),
    ],
    ignore_index=True,
)


def test_the_market_is_pooled_over_the_compared_families_bets() -> None:
    pooled = cal.pooled_reliability(MARKET, ["a", "b"]).set_index("bin")

    assert pooled["count"].tolist() == [4, 10, 4, 1]
    assert pooled.loc[1, "observed_rate"] == pytest.approx(6 / 10)
    assert pooled.loc[1, "mean_forecast"] == pytest.approx((8 * 0.4 + 2 * 0.3) / 10)
    assert pooled.loc[0, "mean_forecast"] == pytest.approx(0.2)
    assert cal.pooled_reliability(MARKET, ["nobody"]).empty


def test_the_diagram_lists_sparse_bins_and_draws_the_rest() -> None:
    names = {"a": "Model A", "b": "Model B"}

    diagram = cal.reliability_diagram(IMPLIED, MARKET, ["a", "b"], names=names)

    assert list(diagram.columns) == list(cal.DIAGRAM_COLUMNS)
    assert set(diagram["series"]) == {"Model A", "Model B", cal.MARKET_SERIES}
    assert (diagram["count"] > 0).all()  # empty bins are not rows
    a = diagram[diagram["family_id"] == "a"].set_index("bin")
    assert a["count"].tolist() == [10, 2] and a["wins"].tolist() == [7, 1]
    assert a.loc[0, "ci_low"] == pytest.approx(0.396778, abs=1e-6)
    assert a["drawn"].tolist() == [True, False]  # 2 bets < MIN_BIN_COUNT: listed, not drawn
    b = diagram[diagram["family_id"] == "b"].set_index("bin")
    assert b["drawn"].tolist() == [True, False]  # 6 bets drawn, the lone bet at 0.9 not
    market = diagram[diagram["forecaster"] == "market price"].set_index("bin")
    assert market["family_id"].unique().tolist() == [""]
    assert market["count"].tolist() == [4, 10, 4, 1]
    assert market["drawn"].tolist() == [False, True, False, False]
    assert cal.reliability_diagram(IMPLIED, MARKET, ["a"], min_count=2)["drawn"].all()


def test_the_diagram_of_nothing_is_empty_with_its_columns() -> None:
    empty = cal.reliability_diagram(IMPLIED.iloc[0:0], MARKET.iloc[0:0], ["a"])
    assert empty.empty and list(empty.columns) == list(cal.DIAGRAM_COLUMNS)
    assert cal.reliability_diagram(IMPLIED, MARKET, []).empty


def test_the_diagram_from_the_read_models(engine: Engine) -> None:
    build_book(engine)
    implied = cal.reliability(engine)
    market = cal.reliability(engine, forecaster="market")

    diagram = cal.reliability_diagram(implied, market, ["m-a", "m-b"], min_count=1)

    shown = diagram[diagram["forecaster"] == "implied confidence"]
    assert shown.groupby("family_id")["count"].sum().to_dict() == {"m-a": 3, "m-b": 2}
    pooled = diagram[diagram["forecaster"] == "market price"]
    assert int(pooled["count"].sum()) == 5 and int(pooled["wins"].sum()) == 3
    assert (diagram["ci_low"] <= diagram["observed_rate"]).all()
    assert (diagram["observed_rate"] <= diagram["ci_high"]).all()
    assert cal.family_names(engine)["m-a"] == "M-A"  # the family's display name


def test_the_chart_draws_drawn_bins_with_error_bars_counts_and_stable_colours() -> None:
    from arena.dashboard.charts import calibration as calibration_charts

    diagram = cal.reliability_diagram(IMPLIED, MARKET, ["a", "b"], names={"a": "A", "b": "B"})
    drawn = diagram[diagram["drawn"]]

    spec = calibration_charts.reliability_intervals(drawn, ["A", "B"]).to_dict()

    layers = spec["layer"]
    marks = [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in layers
    ]
    assert marks == ["line", "line", "rule", "point", "text"]
    bars = layers[2]["encoding"]
    assert (bars["y"]["field"], bars["y2"]["field"]) == ("ci_low", "ci_high")
    assert layers[4]["encoding"]["text"]["field"] == "count"
    scale = layers[3]["encoding"]["color"]["scale"]
    assert scale["domain"] == ["A", "B", cal.MARKET_SERIES]
    assert scale["range"][-1] == calibration_charts.MARKET_GREY
    data = pd.DataFrame(spec["datasets"][layers[3]["data"]["name"]])
    assert data["drawn"].all() and len(data) == len(drawn)
