"""Polymarket's taker fee (`arena.core.fees.taker_fee`): hand-computed cases and its shape.

fee = C × rate × (p × (1 − p)) ^ exponent, floored to 5 decimal places of USDC
(docs/book-execution.md "Fees" cites the source). Every expected figure below is worked out
by hand in its comment, never by the code under test.
"""

import json
from decimal import Decimal as D

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.fees import FeeSchedule, taker_fee
from tests.examples import examples

RECORDED = FeeSchedule(D("0.04"), 1, True, D("0.25"), "tech_fees")  # Gamma market 842093


@pytest.mark.parametrize(
    ("count", "at", "schedule", "expected"),
    [
        # 100 × 0.04 × (0.5 × 0.5) = 100 × 0.04 × 0.25 = 1
        (D(100), D("0.5"), RECORDED, D("1.00000")),
        # 100 × 0.04 × (0.05 × 0.95) = 4 × 0.0475 = 0.19
        (D(100), D("0.05"), RECORDED, D("0.19000")),
        # 100 × 0.04 × (0.5 × 0.5)² = 4 × 0.0625 = 0.25
        (D(100), D("0.5"), FeeSchedule(D("0.04"), 2), D("0.25000")),
        # 100 × 0.05 × (0.95 × 0.05) = 5 × 0.0475 = 0.2375: symmetric with p = 0.05 at 0.05
        (D(100), D("0.95"), FeeSchedule(D("0.05"), 1), D("0.23750")),
        # 1 × 0.05 × (0.37 × 0.63) = 0.05 × 0.2331 = 0.011655 → floored 0.01165
        # (half-even would charge 0.01166: the floor is the venue's rule)
        (D(1), D("0.37"), FeeSchedule(D("0.05"), 1), D("0.01165")),
        # 1 × 0.001 × (0.001 × 0.999) = 0.000000999 → below one 0.00001 unit: 0
        (D(1), D("0.001"), FeeSchedule(D("0.001"), 1), D("0.00000")),
        # 806.451612 × 0.04 × (0.62 × 0.38) = 806.451612 × 0.009424 = 7.599999991488 → 7.59999
        (D("806.451612"), D("0.62"), RECORDED, D("7.59999")),
        # fees off: nothing, whatever the fill
        (D(1000), D("0.5"), None, D("0")),
        # a fractional exponent (Economics, Weather): 100 × 0.03 × (0.5 × 0.5)^0.5 = 3 × 0.5
        (D(100), D("0.5"), FeeSchedule(D("0.03"), D("0.5")), D("1.50000")),
        # 100 × 0.05 × (0.62 × 0.38)^0.5 = 5 × √0.2356 = 5 × 0.4853864439… = 2.4269322… (bc)
        (D(100), D("0.62"), FeeSchedule(D("0.05"), D("0.5")), D("2.42693")),
    ],
)
def test_hand_computed_fees(count: D, at: D, schedule: FeeSchedule | None, expected: D) -> None:
    fee = taker_fee(count, at, schedule)

    assert fee == expected
    assert fee.as_tuple().exponent == -5  # always whole 0.00001 USDC units


@pytest.mark.parametrize(
    ("count", "at", "schedule"),
    [
        (D(-1), D("0.5"), RECORDED),
        (D(1), D("1.01"), RECORDED),
        (D(1), D("-0.01"), None),
        (D(1), D("0.5"), FeeSchedule(D("-0.04"), 1)),
        (D(1), D("0.5"), FeeSchedule(D("1.5"), 1)),
        (D(1), D("0.5"), FeeSchedule(D("0.04"), 0)),
        (D(1), D("0.5"), FeeSchedule(D("0.04"), D("-0.5"))),
    ],
)
def test_bad_input_is_a_clear_error(count: D, at: D, schedule: FeeSchedule | None) -> None:
    with pytest.raises(ValueError, match=r"fee"):
        taker_fee(count, at, schedule)


def test_the_stored_schedule_keeps_a_whole_exponent_as_an_integer_and_a_fraction_as_text() -> None:
    # a stored whole exponent reads back and writes the very bytes it was stored as
    stored = '{"rate": "0.04", "exponent": 1, "taker_only": true, "rebate_rate": "0.25", '
    stored += '"fee_type": "tech_fees"}'
    assert FeeSchedule.from_json(json.loads(stored)) == RECORDED
    assert json.dumps(RECORDED.to_json()) == stored
    fractional = FeeSchedule(D("0.05"), D("0.5"), fee_type="weather_fees")
    assert fractional.to_json()["exponent"] == "0.5"
    assert FeeSchedule.from_json(json.loads(json.dumps(fractional.to_json()))) == fractional


counts = st.decimals(min_value=D(0), max_value=D(10**6), places=6)
unit_prices = st.decimals(min_value=D(0), max_value=D(1), places=6)
schedules = st.builds(
    FeeSchedule,
    rate=st.decimals(min_value=D(0), max_value=D(1), places=4),
    exponent=st.integers(min_value=1, max_value=3),
)


@settings(max_examples=examples(200))
@given(counts, unit_prices, schedules)
def test_the_fee_is_a_bell_below_its_peak(count: D, at: D, schedule: FeeSchedule) -> None:
    fee = taker_fee(count, at, schedule)

    assert fee >= 0
    assert fee == taker_fee(count, 1 - at, schedule)  # symmetric in p ↔ 1 − p
    assert fee <= count * schedule.rate * D("0.25") ** schedule.exponent  # peak at p = 0.5
    assert taker_fee(count, D(0), schedule) == 0 == taker_fee(count, D(1), schedule)
    assert taker_fee(count, at, None) == 0
