"""The Compare page's read model (`paired.family_comparison`): both metrics for one pair, what
they rest on, and the minimum-events rule — on hand-made units and on the hand-computed book."""

import math

import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats import paired
from arena.core.errors import InputError
from tests.analytics import build_book

REPLICATES = 500


def units(rows: list[tuple[str, int, str, str, float, float, int]]) -> pd.DataFrame:
    """Units as `load_inputs` reads them, from (family, cohort, market, event, pnl, brier, bets):
    `bets` BUY legs, each resolved with the given Brier (bets 0: a market without a BUY)."""
    frame = pd.DataFrame(
        rows, columns=["family_id", "cohort_id", "market_id", "cluster", "pnl", "brier", "n"]
    )
    return frame.assign(
        buys=frame["n"].astype(float),
        brier_n=frame["n"].astype(float),
        brier_sum=frame["brier"] * frame["n"],
    )


def pair(n_events: int, *, edge: float = 100.0) -> pd.DataFrame:
    """A beats B by `edge` dollars and 0.1 Brier in each of `n_events` shared markets (one per
    event), with a little noise; B also traded a market A did not, and A made two bets in the
    first market."""
    rows = []
    for i in range(n_events):
        noise = (i % 3 - 1) * 10.0
        rows.append(("a", 1, f"m{i}", f"event:{i}", edge + noise, 0.1, 2 if i == 0 else 1))
        rows.append(("b", 1, f"m{i}", f"event:{i}", noise, 0.2, 1))
    rows.append(("b", 1, "m-only-b", "event:x", 500.0, 0.0, 1))
    return units(rows)


def test_enough_shared_events_give_an_interval_a_p_value_and_a_verdict() -> None:
    frame = paired.comparison_of_units(pair(8), "a", "b", replicates=REPLICATES)

    assert list(frame.columns) == list(paired.COMPARISON_COLUMNS)
    assert frame["metric"].tolist() == ["pnl", "brier"]
    pnl, brier = frame.iloc[0], frame.iloc[1]
    assert (pnl["markets"], pnl["clusters"], pnl["bets_a"], pnl["bets_b"]) == (8, 8, 9, 8)
    assert pnl["mean_difference"] == pytest.approx(100.0)
    assert pnl["ci_low"] <= 100.0 <= pnl["ci_high"]
    # every event's difference is positive: only all-plus and all-minus signs are as extreme
    assert pnl["exact"] and pnl["p_value"] == pytest.approx(2 / 2**8)
    assert bool(pnl["enough"]) and pnl["better"] == "a"
    assert brier["mean_difference"] == pytest.approx(-0.1)  # A's Brier is lower: A is better
    assert bool(brier["enough"]) and brier["better"] == "a"

    swapped = paired.comparison_of_units(pair(8), "b", "a", replicates=REPLICATES)
    assert swapped["better"].tolist() == ["a", "a"]
    assert swapped["mean_difference"].tolist() == pytest.approx([-100.0, 0.1])


def test_too_few_shared_events_are_flagged_and_name_no_winner() -> None:
    frame = paired.comparison_of_units(pair(paired.MIN_EVENTS - 1), "a", "b", replicates=500)

    assert frame["clusters"].tolist() == [paired.MIN_EVENTS - 1] * 2
    assert not frame["enough"].any()
    assert frame["better"].isna().all()
    # at MIN_EVENTS − 1 events the smallest possible p-value is not below 0.05
    assert frame["p_value"].min() >= 0.05


def test_no_difference_names_no_winner() -> None:
    same = pair(8, edge=0.0)
    same.loc[same["family_id"] == "a", "brier_sum"] = same.loc[same["family_id"] == "a", "n"] * 0.2
    frame = paired.comparison_of_units(same, "a", "b", replicates=REPLICATES)
    assert frame["enough"].all()
    assert frame["better"].isna().all()
    assert frame["p_value"].tolist() == pytest.approx([1.0, 1.0])


def test_families_without_shared_markets_compare_on_nothing() -> None:
    frame = paired.comparison_of_units(
        units([("a", 1, "m1", "event:1", 10.0, 0.1, 1), ("b", 1, "m2", "event:2", 5.0, 0.3, 1)]),
        "a",
        "b",
        replicates=REPLICATES,
    )
    assert frame["markets"].tolist() == [0, 0]
    assert frame["bets_a"].tolist() == [0, 0]
    assert all(math.isnan(v) for v in frame["mean_difference"])
    assert not frame["enough"].any()


def test_the_same_market_in_another_cohort_is_not_shared() -> None:
    frame = paired.comparison_of_units(
        units([("a", 1, "m1", "event:1", 10.0, 0.1, 1), ("b", 2, "m1", "event:1", 5.0, 0.3, 1)]),
        "a",
        "b",
        replicates=REPLICATES,
    )
    assert frame["markets"].tolist() == [0, 0]


def test_family_comparison_on_the_hand_computed_book(engine: Engine) -> None:
    build_book(engine)

    frame = paired.family_comparison(engine, "m-a", "m-b", replicates=REPLICATES)

    pnl, brier = frame.iloc[0], frame.iloc[1]
    # both traded m1 in cohort 1 only: A +750, B −1000 (as `pairwise_comparisons` finds)
    assert (pnl["markets"], pnl["clusters"]) == (1, 1)
    assert pnl["mean_difference"] == pytest.approx(1750.0)
    assert brier["mean_difference"] == pytest.approx(0.8**2 - 0.4**2)
    assert not frame["enough"].any() and frame["better"].isna().all()
    with pytest.raises(InputError, match="'nobody' has no agent"):
        paired.family_comparison(engine, "m-a", "nobody")
    in_two = paired.family_comparison(engine, "m-a", "m-b", cohort=2, replicates=REPLICATES)
    assert in_two["markets"].tolist() == [0, 0]  # B traded nothing in cohort 2
    with pytest.raises(InputError, match="cohort 9 does not exist"):
        paired.family_comparison(engine, "m-a", "m-b", cohort=9)
