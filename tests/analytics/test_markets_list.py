"""The Markets list's orders and Polymarket links, and a decision's legs named by question."""

from collections.abc import Iterator
from datetime import timedelta

import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.views import decisions, markets
from arena.storage.db import create_db_engine, session_scope
from tests.analytics.season import LLM_A, Season, sqlite_season
from tests.factories import WEEK1, market


def test_polymarket_url_prefers_the_event_and_never_links_a_simulated_market() -> None:
    url = markets.polymarket_url
    assert url("gamma", "fed-decision-in-march", "fed-cuts-25") == (
        "https://polymarket.com/event/fed-decision-in-march"
    )
    assert url("gamma", None, "fed-cuts-25") == "https://polymarket.com/market/fed-cuts-25"
    assert url("gamma", "  ", "x") == "https://polymarket.com/market/x"
    assert url("gamma", "a b/c?", None) == "https://polymarket.com/event/a%20b%2Fc%3F"
    assert url("gamma", None, None) is None
    assert url("simulated", "best-picture-winner-2026-400005", "x") is None


def _listed(engine: Engine) -> None:
    """Four markets whose close dates, first sync and volumes order them differently."""
    with session_scope(engine) as s:
        s.add(
            market(
                "a",
                volume=10.0,
                end_date=WEEK1 + timedelta(days=3),
                first_seen_at=WEEK1,
                source="gamma",
                event_slug="event-a",
            )
        )
        s.add(
            market(
                "b",
                volume=30.0,
                end_date=WEEK1 + timedelta(days=9),
                first_seen_at=WEEK1 + timedelta(days=2),
                source="gamma",
                slug="market-b",
            )
        )
        s.add(
            market(
                "c",
                volume=20.0,
                end_date=None,
                first_seen_at=WEEK1 + timedelta(days=1),
                source="simulated",
                event_slug="event-c",
            )
        )
        s.add(
            market(
                "d",
                volume=5.0,
                end_date=WEEK1 + timedelta(days=1),
                first_seen_at=WEEK1 + timedelta(days=3),
            )
        )


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("held", ["b", "c", "a", "d"]),  # nobody held any: by volume
        ("volume", ["b", "c", "a", "d"]),
        ("closing", ["d", "a", "b", "c"]),  # no close date: last
        ("closing-last", ["b", "a", "d", "c"]),
        ("newest", ["d", "b", "c", "a"]),
    ],
)
def test_markets_sort_by_close_date_and_recency(
    engine: Engine, order: str, expected: list[str]
) -> None:
    _listed(engine)

    found = markets.markets(engine, order=order)

    assert found["market_id"].tolist() == expected
    assert order in markets.ORDERS


def test_the_list_carries_the_polymarket_link(engine: Engine) -> None:
    _listed(engine)

    found = markets.markets(engine).set_index("market_id")

    assert found.loc["a", "polymarket_url"] == "https://polymarket.com/event/event-a"
    assert found.loc["b", "polymarket_url"] == "https://polymarket.com/market/market-b"
    assert pd.isna(found.loc["c", "polymarket_url"])  # simulated
    detail = markets.market_detail(engine, "a")
    assert detail["polymarket_url"].tolist() == ["https://polymarket.com/event/event-a"]
    assert detail["event_slug"].tolist() == ["event-a"]
    with pytest.raises(ValueError):
        markets.markets(engine, order="alphabetical")


def test_legs_name_their_markets_question() -> None:
    legs = [
        {"index": 0, "kind": "BET", "executed": True, "market_id": "m1", "side": "Blue Team"},
        {"index": 1, "kind": "BET", "executed": False, "request": {"market_id": "zz"}},
    ]

    frame = decisions.legs_frame(legs, {"m1": "Who wins the cup?"})

    assert frame["question"].tolist()[0] == "Who wins the cup?"
    assert pd.isna(frame["question"].tolist()[1])  # a market we never synced
    assert frame["side"].tolist()[0] == "Blue Team"
    assert decisions.legs_frame(legs)["question"].isna().all()


def test_a_stated_cohorts_legs_carry_each_buys_stated_probability() -> None:
    """The BUY legs (executed BETs) take their trade's stated probability by leg index,
    missing stays missing; a rejected BET and a SELL bought nothing, so have none. Without
    `probabilities` (a v1 cohort) the legs have no such column at all."""
    legs = [
        {"index": 0, "kind": "BET", "executed": True, "market_id": "m1", "price": "0.55"},
        {"index": 1, "kind": "BET", "executed": True, "market_id": "m2", "price": "0.4"},
        {"index": 2, "kind": "BET", "executed": False, "request": {"probability": "0.9"}},
        {"index": 3, "kind": "SELL", "executed": True, "market_id": "m1", "price": "0.6"},
    ]
    stated = {0: 0.62, 1: None, 3: 0.99}  # (a SELL trade never has one; ignored if it did)

    frame = decisions.legs_frame(legs, probabilities=stated)

    assert list(frame.columns) == list(decisions.STATED_LEG_COLUMNS)
    assert frame["probability"].dtype == "float64"
    assert frame["probability"].tolist()[0] == 0.62
    assert frame["probability"].iloc[1:].isna().all()
    assert list(decisions.legs_frame(legs).columns) == list(decisions.LEG_COLUMNS)
    assert "probability" not in decisions.legs_frame(legs)


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    built: Season = sqlite_season(tmp_path_factory.getbasetemp())
    engine = create_db_engine(built.url, role="reader")
    yield engine
    engine.dispose()


def test_a_decisions_rationale_and_leg_questions(season: Engine) -> None:
    first = decisions.decisions(season, cohort=1, family=LLM_A, week=1).iloc[0]

    detail = decisions.decision_detail(season, int(first["decision_id"]))

    assert detail is not None
    assert detail.reasoning == "Two cheap favourites; the <b>second</b> is a token bet."
    assert detail.notes == []
    shown = markets.markets(season).set_index("market_id")["question"]
    assert detail.legs["question"].tolist() == [shown[m] for m in detail.legs["market_id"]]
    held = decisions.decisions(season, status="fallback_hold").iloc[0]
    fallback = decisions.decision_detail(season, int(held["decision_id"]))
    assert fallback is not None and fallback.reasoning is None and fallback.legs.empty
    # A v1 cohort: no stated probability asked, none in the legs.
    assert not detail.asks_probability and "probability" not in detail.legs
