"""`query_frame` (column-wise from the driver's tuples) gives exactly what the row-wise path
(`fetch` + `typed_frame`, SQLAlchemy's own type processing) gives, on both backends: money to
the micro-dollar, UTC times, missing values, JSON, booleans, empty results."""

import json
from datetime import timedelta
from decimal import Decimal as D

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import func, literal, select, type_coerce
from sqlalchemy.engine import Engine

from arena.analytics.query.frames import (
    BOOL,
    FLOAT,
    INT,
    MONEY,
    NULLABLE_INT,
    OBJECT,
    TEXT,
    TIME,
    columns_frame,
    convert,
    json_texts,
    query_frame,
)
from arena.analytics.query.selects import fetch, typed_frame
from arena.storage.db import session_scope
from arena.storage.models import Decision, Trade
from arena.storage.tables import DECISIONS, MARKETS, TRADES
from tests.examples import examples
from tests.factories import WEEK1, market, new_cohort_agents, trade_into

KINDS = {
    "trade_id": INT,
    "amount": MONEY,
    "price": MONEY,
    "implied_confidence": FLOAT,
    "decision_id": NULLABLE_INT,
    "created_at": TIME,
    "side": TEXT,
    "missing": MONEY,
}


def _trades(engine: Engine) -> None:
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    with session_scope(engine) as s:
        for mid in ("1", "2", "3"):
            s.add(market(mid))
    # awkward amounts: a micro-dollar, a long fraction, most of the balance
    for k, amount in enumerate(("50.000001", "123.456789", "2399.999999")):
        trade_into(engine, agent, str(k + 1), "YES", amount, "0.37", WEEK1 + timedelta(seconds=k))
    with session_scope(engine) as s:
        extra = Trade(
            agent_id=agent,
            position_id=1,
            market_id="1",
            trade_type="SETTLE",
            side="YES",
            amount=D("0"),
            price=None,
            shares=D("1"),
            cash_before=D("0"),
            implied_confidence=None,
            created_at=WEEK1 + timedelta(hours=1, microseconds=7),
        )
        s.add(extra)


def _trade_query() -> object:
    return select(
        TRADES.c.id.label("trade_id"),
        TRADES.c.amount,
        TRADES.c.price,
        TRADES.c.implied_confidence,
        TRADES.c.decision_id,
        TRADES.c.created_at,
        TRADES.c.side,
        type_coerce(literal(None), TRADES.c.amount.type).label("missing"),
    ).order_by(TRADES.c.id)


def test_query_frame_equals_the_row_wise_path(engine: Engine) -> None:
    _trades(engine)
    query = _trade_query()
    with engine.connect() as conn:
        fast = query_frame(conn, query, KINDS)  # type: ignore[arg-type]
        slow = typed_frame(fetch(conn, query), KINDS)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(fast, slow)
    assert len(fast) == 4
    # money is the float of the stored Decimal, exactly
    assert fast["amount"].tolist()[:3] == [float(D("50.000001")), 123.456789, 2399.999999]
    assert fast["price"].isna().tolist() == [False, False, False, True]
    # the three BUYs belong to the agent's week-1 decision; the SETTLE to none
    assert fast["decision_id"].tolist()[:3] == [1, 1, 1] and pd.isna(fast["decision_id"][3])
    assert str(fast["decision_id"].dtype) == "Int64"
    assert fast["missing"].isna().all()
    assert str(fast["created_at"].dt.tz) == "UTC"
    assert fast["created_at"].iloc[3] == pd.Timestamp(WEEK1 + timedelta(hours=1, microseconds=7))


def test_query_frame_processes_other_types_like_sqlalchemy(engine: Engine) -> None:
    """JSON, booleans, aggregates and coalesced times go through their own processors."""
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    with session_scope(engine) as s:
        s.add(market("1", outcomes=["Pelé", "Zoë"], neg_risk=True))
        s.add(market("2"))
        s.flush()
        s.add(
            Decision(
                agent_id=agent,
                cohort_id=1,
                decision_week=1,
                legs=[{"kind": "BET", "executed": False}],
                created_at=WEEK1,
            )
        )
    kinds = {
        "market_id": TEXT,
        "outcomes": OBJECT,
        "neg_risk": BOOL,
        "n": INT,
        "total": FLOAT,
        "when": TIME,
    }
    query = (
        select(
            MARKETS.c.id.label("market_id"),
            MARKETS.c.outcomes,
            MARKETS.c.neg_risk,
            func.count().over().label("n"),
            func.sum(MARKETS.c.volume).over().label("total"),
            select(func.coalesce(DECISIONS.c.decided_at, DECISIONS.c.created_at))
            .scalar_subquery()
            .label("when"),
        )
        .select_from(MARKETS)
        .order_by(MARKETS.c.id)
    )
    with engine.connect() as conn:
        fast = query_frame(conn, query, kinds)
        slow = typed_frame(fetch(conn, query), kinds)
    pd.testing.assert_frame_equal(fast, slow)
    assert fast["outcomes"].iloc[0] == ["Pelé", "Zoë"]
    assert fast["neg_risk"].tolist() == [True, False]
    assert json_texts(fast["outcomes"], []).tolist()[0] == '["Pel\\u00e9", "Zo\\u00eb"]'
    assert json_texts(fast["outcomes"], [], ensure_ascii=False).tolist()[0] == '["Pelé", "Zoë"]'


def test_an_empty_result_keeps_every_documented_column_and_dtype(engine: Engine) -> None:
    query = _trade_query().where(TRADES.c.id < 0)  # type: ignore[attr-defined]
    with engine.connect() as conn:
        fast = query_frame(conn, query, KINDS)
    assert fast.empty and list(fast.columns) == list(KINDS)
    pd.testing.assert_series_equal(fast.dtypes, typed_frame([], KINDS).dtypes, check_names=False)


@pytest.mark.parametrize(
    ("values", "kind", "expected"),
    [
        ([1, None, D("3")], INT, [1, 0, 3]),
        ([None, 2], NULLABLE_INT, [pd.NA, 2]),
        ([D("0.1"), None], MONEY, [0.1, None]),
        ([0, 1, None], BOOL, [False, True, False]),
    ],
)
def test_convert_treats_missing_values_by_kind(values: list, kind: str, expected: list) -> None:
    got = convert(values, kind).tolist()
    assert [None if pd.isna(v) else v for v in got] == [
        None if v is None or v is pd.NA else v for v in expected
    ]


@pytest.mark.parametrize("values", [[], [None, None]])
def test_an_all_null_time_column_is_utc_nat_of_its_length(values: list) -> None:
    got = convert(values, TIME)
    assert str(got.dtype) == "datetime64[us, UTC]" and len(got) == len(values)
    assert got.isna().all()


def test_a_column_the_query_lacks_is_blank() -> None:
    frame = columns_frame({"a": [1, 2]}, {"a": INT, "b": MONEY, "c": TEXT}, 2)
    assert frame["b"].isna().all() and frame["c"].isna().all()
    assert frame["a"].tolist() == [1, 2]


texts = st.lists(st.text(max_size=12), max_size=4)


@settings(max_examples=examples(300), deadline=None)
@given(value=texts, written_ascii=st.booleans(), shown_ascii=st.booleans())
def test_json_texts_of_stored_text_equal_dumps_of_the_value(
    value: list[str], written_ascii: bool, shown_ascii: bool
) -> None:
    """Whatever text a list of strings was stored as (escaped or not) and whether the shown
    text escapes non-ASCII: the plain-list shortcut gives exactly what `json.dumps` gives."""
    stored = json.dumps(value, ensure_ascii=written_ascii)
    expected = json.dumps(value or [], ensure_ascii=shown_ascii)
    got = json_texts([stored, value, None], [], ensure_ascii=shown_ascii).tolist()
    assert got == [expected, expected, "[]"]


def test_json_texts_decode_text_that_is_not_a_plain_list() -> None:
    stored = ['{"b": 1, "a": [2]}', '["x","y"]', "[]", '["a", 1]']
    assert json_texts(stored, {}, sort_keys=True).tolist() == [
        '{"a": [2], "b": 1}',
        '["x", "y"]',
        "{}",
        '["a", 1]',
    ]
