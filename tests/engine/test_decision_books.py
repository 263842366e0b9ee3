"""Every decision run stores the books of its frozen universe's tokens, on both
backends: real loopback CLOB (`tests.markets.clob_server`) read by the real `ClobClient`, the
scripted chat server answering the model.

v2 stores them from its one pricing read (widened to every token); v1 reads them only to
store them, and its snapshot items and trades stay exactly Gamma's.
"""

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from arena.agents.responders import default_responders
from arena.config import Methodology, Settings, load_settings
from arena.core.fees import FeeSchedule
from arena.core.order_book import Level
from arena.engine.books import BookToken, load_books, store_books
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import DecideResult, run_decisions
from arena.engine.market_sync import upsert_markets
from arena.lineup import Lineup, parse_lineup
from arena.markets.clob import ClobClient
from arena.markets.clob_wire import parse_book
from arena.markets.price_source import quote_from_book
from arena.markets.types import ParsedMarket
from arena.storage.book_models import DecisionBook
from arena.storage.db import session_scope
from arena.storage.models import Market, MarketSnapshotItem, Trade
from tests.engine.chat_server import PerModelServer, answer, serve_models
from tests.engine.test_v2_engine import BOOKS, LINEUP, MARKETS
from tests.factories import WEEK1
from tests.loopback import Reply
from tests.markets.clob_server import ClobServer
from tests.markets.clob_server import serve as serve_clob

RUN = WEEK1 + timedelta(minutes=5)
V1, V2 = Methodology(), Methodology(version="v2")
SPURS = json.loads(
    (Path(__file__).parents[1] / "fixtures/clob/book_spurs_2025-10.raw.json").read_text()
)
SPURS_TOKEN = SPURS["asset_id"]
END = WEEK1 + timedelta(days=30)
# The recorded real Spurs book as the YES book of one more market (its NO token has none).
SPURS_MARKET = ParsedMarket(
    id="500",
    question="Spurs?",
    market_type="binary",
    outcomes=["Yes", "No"],
    prices=[D("0.6"), D("0.4")],
    volume=1000.0,
    end_date=END,
    clob_token_ids=[SPURS_TOKEN, "t500n"],
)
ALL_TOKENS = {"t100y", "t100n", "t200n", "t200y", "t300a", "t300b", "t300c", SPURS_TOKEN, "t500n"}
HOLD = {"action": "HOLD", "reasoning": "w"}


@dataclass
class Arena:
    engine: Engine
    models: PerModelServer
    clob: ClobServer
    settings: Settings
    lineup: Lineup

    def decide(self, methodology: Methodology, record: bool = True) -> DecideResult:
        responders, close = default_responders(self.settings, sleep=lambda _s: None)
        reader = ClobClient(self.clob.url, max_attempts=1, min_interval=0.0, sleep=lambda _s: None)
        try:
            return run_decisions(
                self.engine,
                RUN,
                self.lineup,
                methodology,
                responders,
                prices=lambda: reader,
                books=(lambda: reader) if record else None,
            )
        finally:
            close()
            reader.close()

    def books(self, snapshot_id: int | None) -> dict[str, DecisionBook]:
        with session_scope(self.engine) as s:
            rows = s.exec(select(DecisionBook).where(DecisionBook.snapshot_id == snapshot_id))
            return {row.token_id: row for row in rows}

    def items(self, snapshot_id: int | None) -> dict[str, MarketSnapshotItem]:
        with session_scope(self.engine) as s:
            query = select(MarketSnapshotItem).where(MarketSnapshotItem.snapshot_id == snapshot_id)
            return {item.market_id: item for item in s.exec(query)}


def arena_for(engine: Engine, methodology: Methodology) -> Iterator[Arena]:
    with serve_models() as models, serve_clob(*BOOKS, SPURS) as clob:
        settings = load_settings(llm_api_key="sk-test-key", llm_base_url=models.url)
        lineup = parse_lineup(LINEUP)
        with session_scope(engine) as s:
            upsert_markets(s, [*MARKETS, SPURS_MARKET], WEEK1)
        start_cohort(engine, WEEK1, lineup, methodology)
        yield Arena(engine, models, clob, settings, lineup)


@pytest.fixture
def v1(engine: Engine) -> Iterator[Arena]:
    yield from arena_for(engine, V1)


@pytest.fixture
def v2(engine: Engine) -> Iterator[Arena]:
    yield from arena_for(engine, V2)


def test_a_v2_run_stores_every_tokens_book_from_its_one_read(v2: Arena) -> None:
    v2.models.script_model("test/a", answer(HOLD, "test/a"))
    result = v2.decide(V2)
    posts = v2.clob.requests_to("POST", "/books")
    assert len(posts) == 1  # the pricing read, widened: no second read
    assert {entry["token_id"] for entry in posts[0].body} == ALL_TOKENS
    rows = v2.books(result.snapshot_id)
    assert set(rows) == ALL_TOKENS  # market 400 has no token, so no row
    assert rows["t100y"].status == "ok"
    assert (rows["t100y"].bids, rows["t100y"].asks) == ("0.41:100;0.40:100", "0.45:100;0.46:100")
    assert (rows["t200y"].status, rows["t200y"].bids, rows["t200y"].asks) == (
        "crossed_book",
        "0.30:100",
        "0.28:100",
    )
    assert (rows["t300c"].status, rows["t300c"].bids, rows["t300c"].asks) == ("empty_book", "", "")
    for missing in ("t100n", "t200n", "t300b", "t500n"):  # the CLOB's 404: no book at all
        assert (rows[missing].status, rows[missing].bids) == ("unknown_token", None)
    assert (rows["t100n"].market_id, rows["t100n"].outcome) == ("100", "No")
    # the prices are v2's, as without books
    assert v2.items(result.snapshot_id)["100"].prices == ["0.43", "0.57"]
    assert v2.items(result.snapshot_id)["500"].prices == ["0.615", "0.385"]


def test_the_recorded_real_book_loads_back_to_the_digit(v2: Arena) -> None:
    v2.models.script_model("test/a", answer(HOLD, "test/a"))
    result = v2.decide(V2)
    assert result.snapshot_id is not None
    with session_scope(v2.engine) as s:
        stored = load_books(s, result.snapshot_id)
    spurs = stored[SPURS_TOKEN]
    assert spurs.status == "ok" and spurs.book is not None
    assert (spurs.timestamp, spurs.hash) == (SPURS["timestamp"], SPURS["hash"])
    served = parse_book(SPURS)
    assert spurs.book.bids == tuple(Level(lv.price, lv.size) for lv in served.bids)
    assert spurs.book.asks == tuple(Level(lv.price, lv.size) for lv in served.asks)
    assert spurs.book.bids[0] == Level(D("0.61"), D("454511.68"))
    assert {str(lv.size) for lv in spurs.book.bids} == {lv["size"] for lv in SPURS["bids"]}
    assert (spurs.book.tick_size, spurs.book.min_order_size) == (D("0.01"), D("5"))
    assert stored["t300c"].book is not None and stored["t300c"].book.bids == ()
    assert stored["t100n"].book is None and stored["t100n"].status == "unknown_token"


def test_a_v1_run_records_books_and_changes_nothing_else(v1: Arena) -> None:
    bet = {
        "action": "BET",
        "bets": [{"market_id": "100", "side": "YES", "amount": 500}],
        "reasoning": "r",
    }
    v1.models.script_model("test/a", answer(bet, "test/a"))
    result = v1.decide(V1)
    items = v1.items(result.snapshot_id)
    assert items["100"].prices == ["0.40", "0.60"] and items["100"].quotes is None  # Gamma's
    assert all(item.quotes is None for item in items.values())
    with session_scope(v1.engine) as s:
        trade = s.exec(select(Trade)).one()
    assert (trade.price, trade.price_source, trade.price_quote) == (D("0.40"), None, None)
    assert set(v1.books(result.snapshot_id)) == ALL_TOKENS
    # one token alone first (a CLOB that is down costs one token's retries), then the rest
    posts = v1.clob.requests_to("POST", "/books")
    assert [len(post.body) for post in posts] == [1, len(ALL_TOKENS) - 1]


def test_a_v1_run_without_recording_reads_no_clob(v1: Arena) -> None:
    v1.models.script_model("test/a", answer(HOLD, "test/a"))
    result = v1.decide(V1, record=False)
    assert v1.books(result.snapshot_id) == {} and v1.clob.requests == []


def test_a_silent_clob_never_blocks_a_v1_run(v1: Arena, caplog: pytest.LogCaptureFixture) -> None:
    v1.clob.script("POST", "/books", Reply(503, {"error": "down"}))
    v1.clob.script("GET", "/book", Reply(503, {"error": "down"}))
    v1.models.script_model("test/a", answer(HOLD, "test/a"))
    with caplog.at_level(logging.WARNING, logger="arena.engine.universe"):
        result = v1.decide(V1)
    assert result.statuses == {"ok": 1}
    assert v1.books(result.snapshot_id) == {}
    assert len(v1.clob.requests_to("GET", "/book")) == 1  # the first token's, then no more
    warnings = [r for r in caplog.records if r.name == "arena.engine.universe"]
    assert len(warnings) == 1 and "answered none of 9 tokens" in warnings[0].getMessage()


def test_a_token_that_fails_is_stored_with_its_reason(v1: Arena) -> None:
    v1.clob.script("POST", "/books", Reply(503, {"error": "down"}))  # each token read alone
    v1.clob.books.pop("t300a")
    v1.clob.books["t100y"] = {"asset_id": "t100y", "bids": [{"price": "2", "size": "1"}]}
    v1.models.script_model("test/a", answer(HOLD, "test/a"))
    rows = v1.books(v1.decide(V1).snapshot_id)
    assert (rows["t100y"].status, rows["t100y"].bids) == ("malformed", None)
    assert (rows["t300a"].status, rows["t300a"].bids) == ("unknown_token", None)
    assert rows[SPURS_TOKEN].status == "ok" and rows["t200y"].status == "crossed_book"


def test_a_retried_store_writes_nothing_twice(v2: Arena) -> None:
    v2.models.script_model("test/a", answer(HOLD, "test/a"))
    snapshot = v2.decide(V2).snapshot_id
    assert snapshot is not None
    quote = quote_from_book(parse_book(SPURS))
    token = BookToken(SPURS_TOKEN, "500", "Yes")
    with session_scope(v2.engine) as s:
        assert store_books(s, snapshot, [token], {SPURS_TOKEN: quote}) == 0
    assert len(v2.books(snapshot)) == len(ALL_TOKENS)
    row: dict[str, Any] = {"snapshot_id": snapshot, "token_id": SPURS_TOKEN, "market_id": "500"}
    with pytest.raises(IntegrityError), session_scope(v2.engine) as s:  # the database refuses
        s.add(DecisionBook(**row, outcome="Yes", status="ok"))
        s.flush()


def test_a_status_that_is_no_reason_is_refused(v2: Arena) -> None:
    v2.models.script_model("test/a", answer(HOLD, "test/a"))
    snapshot = v2.decide(V2, record=False).snapshot_id
    assert snapshot is not None
    with pytest.raises(IntegrityError), session_scope(v2.engine) as s:
        s.add(
            DecisionBook(
                snapshot_id=snapshot, token_id="t", market_id="100", outcome="Yes", status="fine"
            )
        )
        s.flush()


def test_the_market_sync_stores_and_clears_the_fee_schedule(engine: Engine) -> None:
    schedule = FeeSchedule(rate=D("0.04"), exponent=1, taker_only=True, rebate_rate=D("0.25"))
    market = ParsedMarket(id="f1", question="q", market_type="binary", outcomes=["Yes", "No"])
    with session_scope(engine) as s:
        upsert_markets(s, [market.model_copy(update={"fee_schedule": schedule})], WEEK1)
    with session_scope(engine) as s:
        stored = s.get(Market, "f1")
        assert stored is not None and stored.fee_schedule == schedule.to_json()
        assert FeeSchedule.from_json(stored.fee_schedule) == schedule
    with session_scope(engine) as s:
        upsert_markets(s, [market], WEEK1 + timedelta(hours=1))  # fees turned off
    with session_scope(engine) as s:
        assert s.exec(select(col(Market.fee_schedule)).where(Market.id == "f1")).one() is None
