"""The Pydantic models of Gamma's wire format: real payloads, and every tolerance kept.

`gamma_fixtures_parsed.json` holds what the hand-written parser (before the wire models)
produced for every recorded payload in tests/fixtures/gamma/, dumped in JSON mode (exact
Decimal strings, ISO timestamps). The wire models must reproduce it exactly; change the pinned
file only for a deliberate change of behaviour.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from pydantic import ValidationError

from arena.markets.gamma import MarketParseError, parse_market, parse_page
from arena.markets.gamma_wire import UNUSABLE, GammaEvent, GammaMarket

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gamma"
PINNED = Path(__file__).resolve().parent / "gamma_fixtures_parsed.json"
LOGGER = "arena.markets.gamma"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def payloads(name: str) -> list[dict[str, Any]]:
    body = load(name)
    return body if isinstance(body, list) else [body]


def market(**overrides: Any) -> dict[str, Any]:
    """A real open market from a list page (JSON-in-string arrays and all), changed as asked."""
    raw = dict(load("markets_page.json")[0])
    raw.update(overrides)
    return raw


def without(raw: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: value for key, value in raw.items() if key not in keys}


def reason_of(raw: Any) -> tuple[str, str]:
    with pytest.raises(MarketParseError) as caught:
        parse_market(raw)
    return caught.value.market_id, caught.value.reason


# ---- the recorded payloads parse exactly as before -------------------------------------------


def test_every_fixture_file_is_pinned() -> None:
    pinned = json.loads(PINNED.read_text())
    assert sorted(pinned) == sorted(path.name for path in FIXTURES.glob("*.json"))


@pytest.mark.parametrize("name", sorted(json.loads(PINNED.read_text())))
def test_recorded_payloads_parse_exactly_as_the_old_parser_did(name: str) -> None:
    expected = json.loads(PINNED.read_text())[name]

    parsed = [parse_market(raw) for raw in payloads(name)]

    assert [market.model_dump(mode="json") for market in parsed] == expected
    for market in parsed:  # exact Decimals, aware UTC timestamps
        assert all(isinstance(price, Decimal) for price in market.prices or [])
        for stamp in (market.end_date, market.closed_time, market.updated_at):
            assert stamp is None or stamp.utcoffset() is not None


def test_the_wire_model_reads_a_real_market_by_gammas_own_keys() -> None:
    raw = load("market_resolved.json")

    wire = GammaMarket.model_validate(raw)

    assert wire.id == "842093"
    assert wire.outcomes == ["Yes", "No"]
    assert wire.outcome_prices == [Decimal("0"), Decimal("1")]
    assert wire.uma_resolution_status == "resolved"
    assert wire.uma_resolution_statuses == json.loads(raw["umaResolutionStatuses"])
    assert wire.clob_token_ids == json.loads(raw["clobTokenIds"])
    assert wire.closed_time == datetime(2026, 6, 12, 20, 41, 49, tzinfo=UTC)
    assert wire.volume_num == raw["volumeNum"]
    assert wire.volume == float(raw["volume"])  # sent as a string


def test_the_event_is_the_first_of_events() -> None:
    wire = GammaMarket.model_validate(load("markets_page.json")[0])

    assert wire.event.id == "411239"
    assert wire.event.slug == "next-prime-minister-of-ethiopia"
    assert wire.event.neg_risk is True


def test_snake_case_keys_are_not_gammas_and_are_ignored() -> None:
    raw = without(market(), "outcomePrices", "volumeNum", "volume")
    raw.update(outcome_prices='["0.3", "0.7"]', volume_num=5.0)

    wire = GammaMarket.model_validate(raw)

    assert wire.outcome_prices is None
    assert wire.volume_num is None


# ---- JSON-in-string arrays -------------------------------------------------------------------


def test_json_in_string_arrays_and_real_lists_read_alike() -> None:
    as_strings = GammaMarket.model_validate(
        market(
            outcomes='["Yes", "No"]',
            outcomePrices='["0.25", "0.75"]',
            clobTokenIds='["111", "222"]',
            umaResolutionStatuses='["proposed"]',
        )
    )
    as_lists = GammaMarket.model_validate(
        market(
            outcomes=["Yes", "No"],
            outcomePrices=["0.25", "0.75"],
            clobTokenIds=["111", "222"],
            umaResolutionStatuses=["proposed"],
        )
    )

    assert as_strings == as_lists
    assert as_strings.outcomes == ["Yes", "No"]
    assert as_strings.outcome_prices == [Decimal("0.25"), Decimal("0.75")]
    assert as_strings.clob_token_ids == ["111", "222"]
    assert as_strings.uma_resolution_statuses == ["proposed"]


@pytest.mark.parametrize("value", ["{not json", '{"Yes": 1}', "null", 7, None])
def test_outcomes_that_are_not_a_list_skip_the_market(value: object) -> None:
    assert reason_of(market(id="5", outcomes=value)) == ("5", "outcomes are not a list")


def test_outcomes_absent_skip_the_market() -> None:
    assert reason_of(without(market(id="5"), "outcomes")) == ("5", "outcomes are not a list")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("[1, 2]", "outcomes are not all non-empty strings"),
        ('["Yes", " "]', "outcomes are not all non-empty strings"),
        ('["Only"]', "1 outcome(s); at least 2 are needed"),
        ("[]", "0 outcome(s); at least 2 are needed"),
        ('["Yes", " Yes "]', "duplicate outcome names"),
    ],
)
def test_outcome_lists_that_cannot_be_traded_skip_the_market(value: str, reason: str) -> None:
    assert reason_of(market(id="6", outcomes=value)) == ("6", reason)


def test_outcome_names_are_stripped_in_source_order() -> None:
    parsed = parse_market(market(outcomes='[" No ", "Yes"]', outcomePrices='["0.7", "0.3"]'))
    assert parsed.outcomes == ["No", "Yes"]
    assert parsed.prices == [Decimal("0.7"), Decimal("0.3")]


@pytest.mark.parametrize("value", ["not json", '{"a": 1}', "7", "[1, 2]", 12])
def test_unreadable_token_ids_and_resolution_statuses_are_none_not_fatal(value: object) -> None:
    wire = GammaMarket.model_validate(market(clobTokenIds=value, umaResolutionStatuses=value))

    assert wire.clob_token_ids is None
    assert wire.uma_resolution_statuses is None
    assert parse_market(market(clobTokenIds=value)).id == "2063134"


# ---- prices ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("not json", "outcomePrices is not a list"),
        ('{"Yes": "0.5"}', "outcomePrices is not a list"),
        ('["0.5"]', "1 prices for 2 outcomes"),
        ('["0.2", "0.3", "0.5"]', "3 prices for 2 outcomes"),
        ('["abc", "0.5"]', "an unparseable price"),
        ('["NaN", "0.5"]', "an unparseable price"),
        ('[true, "0.5"]', "an unparseable price"),
        ('["1.2", "-0.2"]', "a price outside [0, 1]"),
    ],
)
def test_untrustworthy_prices_keep_the_market_without_prices_and_say_why(
    value: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        parsed = parse_market(market(id="8", outcomePrices=value))

    assert parsed.id == "8" and parsed.prices is None
    assert f"Gamma market 8 has unusable prices ({reason})" in caplog.text


def test_absent_or_null_prices_are_none_silently(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert parse_market(market(outcomePrices=None)).prices is None
        assert parse_market(without(market(), "outcomePrices")).prices is None
    assert "unusable prices" not in caplog.text


def test_prices_of_a_skipped_market_are_not_looked_at(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        reason_of(market(id="9", question="", outcomePrices="not json"))
        reason_of(market(id=None, outcomePrices='["0.5"]'))
    assert "unusable prices" not in caplog.text


def test_prices_stay_exact_numbers_as_strings_or_numbers() -> None:
    parsed = parse_market(market(outcomePrices='["0.0195", 0.9805]'))
    assert parsed.prices == [Decimal("0.0195"), Decimal("0.9805")]

    leftover = parse_market(market(outcomePrices='["0.00000005", "0.99999995"]'))
    assert leftover.prices == [Decimal("0.00000005"), Decimal("0.99999995")]


# ---- the essentials, in order ----------------------------------------------------------------


@pytest.mark.parametrize("value", [None, "", "   ", True, 1.5, ["1"]])
def test_a_market_without_a_usable_id_is_skipped(value: object) -> None:
    assert reason_of(market(id=value)) == ("?", "no id")


def test_a_missing_id_key_is_no_id() -> None:
    assert reason_of(without(market(), "id")) == ("?", "no id")


def test_ids_may_be_integers_or_padded_strings() -> None:
    assert parse_market(market(id=31337)).id == "31337"
    assert parse_market(market(id="  42 ")).id == "42"


def test_the_first_problem_is_reported_id_then_question_then_outcomes() -> None:
    assert reason_of({"outcomes": "junk"}) == ("?", "no id")
    assert reason_of(market(id="3", question=None, outcomes="junk")) == ("3", "no question")
    assert reason_of(without(market(id="4"), "question")) == ("4", "no question")


def test_a_payload_that_is_not_an_object_is_skipped() -> None:
    assert reason_of("not even an object") == ("?", "payload is not an object")
    assert reason_of(["a", "list"]) == ("?", "payload is not an object")


def test_the_wire_model_raises_one_typed_error_per_problem() -> None:
    with pytest.raises(ValidationError) as caught:
        GammaMarket.model_validate({"id": "11", "outcomes": '["Only"]'})

    errors = caught.value.errors(include_url=False)
    assert [error["type"] for error in errors] == [UNUSABLE, UNUSABLE]
    assert [error["loc"] for error in errors] == [("question",), ("outcomes",)]
    assert errors[0]["ctx"] == {"market_id": "11", "reason": "no question"}
    assert errors[1]["msg"] == "1 outcome(s); at least 2 are needed"


def test_a_mapping_that_is_not_a_dict_is_read_too() -> None:
    parsed = parse_market(MappingProxyType(market()))
    assert parsed.id == "2063134"


# ---- numbers, flags, text, timestamps, events ------------------------------------------------


def test_numbers_as_strings_and_the_num_fields_first() -> None:
    raw = market(volumeNum="123.5", volume="999", liquidityNum=None, liquidity="42")

    parsed = parse_market(raw)

    assert parsed.volume == 123.5
    assert parsed.liquidity == 42.0


@pytest.mark.parametrize("value", ["1e400", "lots", True, "", "NaN", [1], {"n": 1}])
def test_unreadable_numbers_fall_back_then_become_none(value: object) -> None:
    fallback = parse_market(market(volumeNum=value, volume="7.25"))
    nothing = parse_market(market(volumeNum=value, volume=value))

    assert fallback.volume == 7.25
    assert nothing.volume is None


def test_flags_read_bools_and_strings_with_defaults_for_anything_else() -> None:
    strings = parse_market(market(active="False", closed=" true ", negRisk="false"))
    junk = parse_market(market(active="yes", closed=1, negRisk=None, events=[]))
    absent = parse_market(without(market(events=[]), "active", "closed", "negRisk"))

    assert (strings.active, strings.closed, strings.neg_risk) == (False, True, False)
    assert (junk.active, junk.closed, junk.neg_risk) == (True, False, False)
    assert (absent.active, absent.closed, absent.neg_risk) == (True, False, False)


def test_neg_risk_and_category_fall_back_to_the_event() -> None:
    event = {"id": 77, "slug": " e ", "title": "", "negRisk": "true", "category": "Politics"}

    parsed = parse_market(market(negRisk=None, category="", events=[event]))

    assert parsed.neg_risk is True
    assert parsed.category == "Politics"
    assert (parsed.event_id, parsed.event_slug, parsed.event_title) == ("77", "e", None)
    assert parse_market(market(negRisk=False, events=[event])).neg_risk is False


@pytest.mark.parametrize("events", [None, "[]", [], ["not an object", {"id": "1"}], {"id": "1"}])
def test_events_without_an_object_first_mean_no_event(events: object) -> None:
    parsed = parse_market(market(events=events, negRisk=None))

    assert parsed.event_id is None and parsed.event_slug is None
    assert parsed.neg_risk is False


def test_an_event_reads_as_a_model_of_its_own() -> None:
    event = GammaEvent.model_validate({"id": "5", "negRisk": "TRUE", "series": [{"id": 1}]})
    assert (event.id, event.neg_risk, event.slug) == ("5", True, None)


def test_blank_text_is_absent_and_text_is_stripped() -> None:
    parsed = parse_market(
        market(question="  Will it?  ", slug="", groupItemTitle="   ", description=None)
    )

    assert parsed.question == "Will it?"
    assert parsed.slug is None and parsed.group_item_title is None and parsed.description is None


def test_text_a_database_refuses_is_made_storable() -> None:
    parsed = parse_market(market(question="Will\x00it?", outcomes='["A\\u0000", "B"]'))

    assert parsed.question == "Will\ufffdit?"
    assert parsed.outcomes == ["A\ufffd", "B"]


def test_timestamps_in_every_form_and_end_date_before_end_date_iso() -> None:
    parsed = parse_market(
        market(
            endDate="yesterday",
            endDateIso="2026-12-31",
            closedTime="2024-11-06 15:17:41+00",
            updatedAt=1730800000,
        )
    )

    assert parsed.end_date == datetime(2026, 12, 31, tzinfo=UTC)
    assert parsed.closed_time == datetime(2024, 11, 6, 15, 17, 41, tzinfo=UTC)
    assert parsed.updated_at is None
    both = parse_market(market(endDate="2024-11-05T12:00:00Z", endDateIso="2024-11-05"))
    assert both.end_date == datetime(2024, 11, 5, 12, tzinfo=UTC)


# ---- a page ----------------------------------------------------------------------------------


def test_one_bad_market_does_not_spoil_the_page(caplog: pytest.LogCaptureFixture) -> None:
    good = load("markets_page.json")
    page = [good[0], market(id="50", outcomes="{oops"), 42, *good[1:]]

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        parsed = parse_page(page)

    assert [item.id for item in parsed] == ["2063134", "703258", "665374"]
    assert "skipping Gamma market 50: outcomes are not a list" in caplog.text
    assert "skipping Gamma market ?: payload is not an object" in caplog.text
