"""Gamma's fee fields (`feesEnabled`, `feeType`, `feeSchedule`) as `ParsedMarket.fee_schedule`.

On the recorded real payloads of tests/fixtures/gamma/recorded/ (PROVENANCE.md there): market
842093 (`tech_fees`, rate 0.04), 703258 (`general_fees`, rate 0.05), 665374 and 2063134 (fees
off); and 842093 with its fee fields in snake_case (`market_fee_schedule_snake_case.json`, its
origin in the same PROVENANCE.md). A malformed schedule keeps the market, with fees off and the
reason logged.
"""

import json
import logging
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest

from arena.core.fees import FeeSchedule
from arena.markets.gamma_wire import parse_market

GAMMA = Path(__file__).resolve().parents[1] / "fixtures" / "gamma"
RECORDED = GAMMA / "recorded"
LOGGER = "arena.markets.gamma"


def recorded(name: str, market_id: str) -> dict[str, Any]:
    body = json.loads((RECORDED / name).read_text())
    items = body if isinstance(body, list) else [body]
    return next(item for item in items if str(item["id"]) == market_id)


RESOLVED = recorded("market_resolved.raw.json", "842093")


def with_schedule(schedule: object, **fields: object) -> dict[str, Any]:
    """Market 842093 as recorded, its `feeSchedule` (and any other field) replaced."""
    return {**RESOLVED, "feeSchedule": schedule, **fields}


def test_a_recorded_fee_enabled_market_reads_its_schedule_exactly() -> None:
    assert parse_market(RESOLVED).fee_schedule == FeeSchedule(
        rate=D("0.04"), exponent=1, taker_only=True, rebate_rate=D("0.25"), fee_type="tech_fees"
    )
    listed = parse_market(recorded("markets_list.raw.json", "703258")).fee_schedule
    assert listed == FeeSchedule(D("0.05"), 1, True, D("0.25"), "general_fees")


@pytest.mark.parametrize("market_id", ["665374", "2063134"])
def test_recorded_markets_with_fees_off_pay_none(market_id: str) -> None:
    raw = recorded("markets_list.raw.json", market_id)

    assert raw["feesEnabled"] is False
    assert parse_market(raw).fee_schedule is None


def test_a_schedule_without_fees_enabled_is_not_a_fee() -> None:
    assert (
        parse_market(with_schedule(RESOLVED["feeSchedule"], feesEnabled=False)).fee_schedule is None
    )
    absent = {key: value for key, value in RESOLVED.items() if key != "feesEnabled"}
    assert parse_market(absent).fee_schedule is None
    # Gamma's string flags read as flags elsewhere; so here
    assert parse_market({**RESOLVED, "feesEnabled": "true"}).fee_schedule is not None


def test_numbers_as_strings_and_a_whole_float_exponent_read_alike() -> None:
    raw = with_schedule(
        {"rate": "0.04", "exponent": 2.0, "takerOnly": "false", "rebateRate": "0.2"}
    )

    assert parse_market(raw).fee_schedule == FeeSchedule(D("0.04"), 2, False, D("0.2"), "tech_fees")


def test_snake_case_fee_fields_read_as_the_camel_case_ones() -> None:
    raw = json.loads((GAMMA / "market_fee_schedule_snake_case.json").read_text())
    assert "feeSchedule" not in raw and "feesEnabled" not in raw

    assert parse_market(raw).fee_schedule == FeeSchedule(
        rate=D("0.04"), exponent=1, taker_only=True, rebate_rate=D("0.25"), fee_type="tech_fees"
    )
    makers_too = {**raw, "fee_schedule": {**raw["fee_schedule"], "taker_only": False}}
    assert parse_market(makers_too).fee_schedule == FeeSchedule(
        D("0.04"), 1, False, D("0.25"), "tech_fees"
    )


def test_a_fractional_exponent_reads_exactly() -> None:
    raw = with_schedule({"rate": 0.05, "exponent": 0.5, "takerOnly": True, "rebateRate": 0.25})

    schedule = parse_market(raw).fee_schedule
    assert schedule is not None and schedule.exponent == D("0.5")
    assert schedule.to_json()["exponent"] == "0.5"


@pytest.mark.parametrize(
    ("schedule", "why"),
    [
        ({"rate": "four percent", "exponent": 1}, "rate"),
        ({"rate": -0.04, "exponent": 1}, "rate"),
        ({"rate": 1.5, "exponent": 1}, "rate"),
        ({"rate": True, "exponent": 1}, "rate"),
        ({"exponent": 1}, "rate"),
        ({"rate": 0.04, "exponent": -1.5}, "exponent"),
        ({"rate": 0.04, "exponent": 0}, "exponent"),
        ({"rate": 0.04, "exponent": "two"}, "exponent"),
        ({"rate": 0.04, "exponent": 1, "rebateRate": -1}, "rebateRate"),
        ([0.04, 1], "not an object"),
        ('{"rate": 0.04}', "not an object"),
        (None, "absent"),
    ],
)
def test_a_malformed_schedule_keeps_the_market_with_fees_off_and_says_why(
    schedule: object, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        market = parse_market(with_schedule(schedule))

    assert market.id == "842093" and market.prices is not None  # the market is kept whole
    assert market.fee_schedule is None
    assert any("842093" in r.getMessage() and why in r.getMessage() for r in caplog.records)


def test_the_schedule_round_trips_through_its_stored_form() -> None:
    schedule = parse_market(RESOLVED).fee_schedule
    assert schedule is not None

    assert FeeSchedule.from_json(json.loads(json.dumps(schedule.to_json()))) == schedule
