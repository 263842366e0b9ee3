"""resolution_verdict on real Gamma payloads (recorded samples and fixture copies), edge cases."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from arena.markets.gamma import parse_market
from arena.markets.resolution import Verdict, resolution_verdict
from arena.markets.types import ParsedMarket

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gamma"
SAMPLES = FIXTURES / "recorded"  # real payloads; see PROVENANCE.md there

# our fixture copy, then the real recorded sample it was modelled on
SOURCES = {
    "resolved": ("market_resolved.json", "market_resolved.raw.json"),
    "closed_with_price": (
        "market_closed_not_resolved.json",
        "market_closed_with_a_price_not_a_resolution.raw.json",
    ),
    "negrisk_pair": (
        "markets_resolved_negrisk_pair.json",
        "markets_resolved_negrisk_pair.raw.json",
    ),
    "named": ("markets_named_outcomes.json", "event_multi_market_trimmed.json"),
}


def load_raw(kind: str, origin: str) -> Any:
    """A payload from our fixtures or from the recorded real samples."""
    fixture_name, sample_name = SOURCES[kind]
    if origin == "fixture":
        return json.loads((FIXTURES / fixture_name).read_text())
    data = json.loads((SAMPLES / sample_name).read_text())
    return data[0]["markets"] if kind == "named" else data


ORIGINS = pytest.mark.parametrize("origin", ["fixture", "sample"])


def market(**fields: Any) -> ParsedMarket:
    """A closed, UMA-resolved binary market unless told otherwise."""
    values: dict[str, Any] = {
        "id": "1",
        "question": "Will it?",
        "market_type": "binary",
        "outcomes": ["Yes", "No"],
        "prices": [Decimal(1), Decimal(0)],
        "closed": True,
        "uma_resolution_status": "resolved",
    }
    values.update(fields)
    return ParsedMarket(**values)


# ---- real payloads -------------------------------------------------------------------------


@ORIGINS
def test_resolved_sample_settles_to_the_outcome_priced_one(origin: str) -> None:
    verdict = resolution_verdict(parse_market(load_raw("resolved", origin)))
    assert verdict == Verdict("resolved", "No", verdict.reason)
    assert "No" in verdict.reason


@ORIGINS
def test_closed_market_with_leftover_prices_is_not_a_resolution(origin: str) -> None:
    parsed = parse_market(load_raw("closed_with_price", origin))
    assert parsed.closed is True

    verdict = resolution_verdict(parsed)

    assert verdict.state == "unresolved"
    assert verdict.winner is None
    assert "absent" in verdict.reason


@ORIGINS
def test_neg_risk_pair_each_resolves_with_its_own_winner(origin: str) -> None:
    trump, harris = (parse_market(raw) for raw in load_raw("negrisk_pair", origin))

    assert resolution_verdict(trump).winner == "Yes"
    assert resolution_verdict(trump).state == "resolved"
    assert resolution_verdict(harris).winner == "No"
    assert resolution_verdict(harris).state == "resolved"


@ORIGINS
def test_named_outcome_event_resolves_by_team_name_and_leaves_the_open_game(origin: str) -> None:
    game1, game2 = (parse_market(raw) for raw in load_raw("named", origin))

    assert resolution_verdict(game1) == Verdict(
        "resolved", "Team Spirit", resolution_verdict(game1).reason
    )
    assert resolution_verdict(game2).state == "unresolved"  # open, priced 0.0005/0.9995


def test_void_fixture_is_cancelled() -> None:
    raw = json.loads((FIXTURES / "market_void.json").read_text())
    verdict = resolution_verdict(parse_market(raw))
    assert verdict.state == "cancelled" and verdict.winner is None
    assert "void" in verdict.reason


# ---- rules ---------------------------------------------------------------------------------


def test_resolved_with_prices_missing_is_cancelled() -> None:
    verdict = resolution_verdict(market(prices=None))
    assert verdict.state == "cancelled"
    assert verdict.winner is None


@pytest.mark.parametrize("status", [None, "", "proposed", "disputed", "pending"])
def test_closed_without_a_uma_resolution_is_unresolved(status: str | None) -> None:
    verdict = resolution_verdict(market(uma_resolution_status=status))
    assert verdict.state == "unresolved"


def test_an_open_market_is_unresolved_even_when_priced_one_zero() -> None:
    assert resolution_verdict(market(closed=False)).state == "unresolved"


def test_uma_status_is_compared_case_insensitively() -> None:
    assert resolution_verdict(market(uma_resolution_status=" Resolved ")).winner == "Yes"


@pytest.mark.parametrize(
    "prices",
    [
        ["0.9995", "0.0005"],
        ["0.99999995636", "0.00000004364"],
        ["1", "1"],
        ["0", "0"],
        ["1", "0.5"],
    ],
)
def test_resolved_without_exactly_one_outcome_at_one_is_cancelled(prices: list[str]) -> None:
    verdict = resolution_verdict(market(prices=[Decimal(p) for p in prices]))
    assert verdict.state == "cancelled"
    assert verdict.winner is None


def test_exact_one_in_any_notation_is_a_determination() -> None:
    verdict = resolution_verdict(market(prices=[Decimal("0.000"), Decimal("1.000000")]))
    assert verdict.winner == "No"


def test_named_multi_outcome_winner_is_the_exact_name() -> None:
    verdict = resolution_verdict(
        market(
            market_type="named",
            outcomes=["Over 2.5", "Under 2.5", "Exactly"],
            prices=[Decimal(0), Decimal(0), Decimal(1)],
        )
    )
    assert verdict == Verdict("resolved", "Exactly", verdict.reason)


def test_verdict_is_frozen() -> None:
    verdict = resolution_verdict(market())
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.state = "cancelled"  # type: ignore[misc]
