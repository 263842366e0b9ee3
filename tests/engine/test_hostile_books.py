"""A CLOB or Gamma that misbehaves never blocks a run: end to end, on both backends.

Real loopback servers (the CLOB of `tests.markets.clob_server`, Gamma of
`tests.markets.gamma_server`, the scripted chat server) and the real clients. Each hostile
book is the RECORDED REAL Spurs book (tests/fixtures/clob/PROVENANCE.md) with one field
changed; each hostile market a real Gamma sample (tests/fixtures/gamma/) with one field
changed.
"""

from __future__ import annotations

import json
import logging
import tracemalloc
from collections.abc import Iterator
from decimal import Decimal as D
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.app.cli import main
from arena.config import Methodology
from arena.engine.books import BookToken, load_books, store_books
from arena.markets.clob import ClobClient
from arena.markets.clob_wire import ClobQuote, parse_book
from arena.markets.price_source import quote_from_book
from arena.storage.db import create_db_engine, session_scope
from arena.storage.models import Decision, Market, SystemLog, Trade
from tests.engine.chat_server import answer
from tests.engine.test_book_execution import RUN, arena_with
from tests.engine.test_book_execution import decide as decide_walking
from tests.engine.test_decision_books import HOLD, SPURS, SPURS_TOKEN, Arena, arena_for
from tests.engine.test_v2_engine import bet
from tests.loopback import Reply
from tests.markets.clob_server import serve as serve_clob
from tests.markets.gamma_server import serve as serve_gamma

V1, V2 = Methodology(), Methodology(version="v2")
JSON = "application/json"
GAMMA_SAMPLES = Path(__file__).resolve().parents[1] / "fixtures/gamma/markets_page.json"


def warnings(engine: Engine, source: str) -> list[str]:
    with session_scope(engine) as s:
        query = select(SystemLog).where(SystemLog.source == source, SystemLog.level == "WARNING")
        return [row.message for row in s.exec(query.order_by(col(SystemLog.id)))]


# ---- a book whose texts are too long for their columns -------------------------------------


@pytest.fixture(params=[V1, V2], ids=["v1", "v2"])
def recording(
    request: pytest.FixtureRequest, engine: Engine
) -> Iterator[tuple[Arena, Methodology]]:
    for arena in arena_for(engine, request.param):
        yield arena, request.param


def test_a_book_with_a_40_char_timestamp_and_100_char_hash_never_blocks_the_run(
    recording: tuple[Arena, Methodology],
) -> None:
    """On PostgreSQL such a book raised DataError in `decision_books` and aborted the run
    (one decision left `in_progress`), v1 and v2; it is refused at the wire and recorded as
    failed with a one-line reason."""
    arena, version = recording
    arena.clob.add_book({**SPURS, "timestamp": "1" * 40, "hash": "f" * 100})
    arena.models.script_model("test/a", answer(HOLD, "test/a"))
    result = arena.decide(version)
    assert result.statuses == {"ok": 1}  # every decision made
    rows = arena.books(result.snapshot_id)
    assert (rows[SPURS_TOKEN].status, rows[SPURS_TOKEN].bids) == ("malformed", None)
    assert rows["t100y"].status == "ok"  # the other books stored
    (line,) = warnings(arena.engine, "decision-books")
    assert "\n" not in line and SPURS_TOKEN in line
    assert "timestamp is 40 characters long (at most 20)" in line


def test_a_book_row_the_database_refuses_is_stored_as_failed_and_the_run_goes_on(
    v1: Arena, db_url: str
) -> None:
    """The store's own guard, past the parser: a book built by hand with a 100-character hash
    (PostgreSQL refuses it; SQLite keeps any length) is stored as `malformed` without its
    levels under a savepoint, the snapshot and the other books untouched."""
    v1.models.script_model("test/a", answer(HOLD, "test/a"))
    snapshot = v1.decide(V1, record=False).snapshot_id
    assert snapshot is not None
    wide = parse_book(SPURS)
    object.__setattr__(wide, "hash", "f" * 100)  # what no parser lets through
    tokens = [BookToken(SPURS_TOKEN, "500", "Yes"), BookToken("t100y", "100", "Yes")]
    quotes = {SPURS_TOKEN: quote_from_book(wide), "t100y": ClobQuote("t100y", mid=D("0.43"))}
    with session_scope(v1.engine) as s:
        assert store_books(s, snapshot, tokens, quotes) == 2
    with session_scope(v1.engine) as s:
        stored = load_books(s, snapshot)
    assert stored["t100y"].status == "ok"  # the other book stored
    if db_url.startswith("postgresql"):
        assert (stored[SPURS_TOKEN].status, stored[SPURS_TOKEN].book) == ("malformed", None)
        (line,) = warnings(v1.engine, "decision-books")
        assert "not stored, recorded as malformed" in line and SPURS_TOKEN in line
    else:
        assert stored[SPURS_TOKEN].hash == "f" * 100  # SQLite holds it: nothing to refuse


# ---- books a walk must never fill: an off-tick ask, a size of 1e22 ---------------------------


@pytest.fixture
def v1(engine: Engine) -> Iterator[Arena]:
    yield from arena_for(engine, V1)


@pytest.fixture
def walks(engine: Engine) -> Iterator[Arena]:
    yield from arena_with(engine, V1)


HOSTILE_BOOKS = {
    # an ask of 0.000002 on the 0.01 tick, no bids: a $200 BUY took 96,000,000 shares there
    "off_tick": {
        "bids": [],
        "asks": [*SPURS["asks"], {"price": "0.000002", "size": "96000000"}],
    },
    # a touch of 2e22 shares: price × size past the walk's 28 digits raised InvalidOperation,
    # a retryable `error` that crashed again every hour
    "size_2e22": {"asks": [*SPURS["asks"][:-1], {"price": "0.62", "size": "2e22"}]},
}


@pytest.mark.parametrize("hostile", sorted(HOSTILE_BOOKS))
def test_a_hostile_ask_is_refused_and_the_decision_completes(walks: Arena, hostile: str) -> None:
    walks.clob.add_book({**SPURS, **HOSTILE_BOOKS[hostile]})
    walks.models.script_model(
        "test/a", answer(bet(("500", "YES", 200), ("100", "YES", 50)), "test/a")
    )
    result = decide_walking(walks, RUN)
    assert result.statuses == {"ok": 1}  # not `error`
    with session_scope(walks.engine) as s:
        decision = s.exec(select(Decision)).one()
        trades = list(s.exec(select(Trade)))
    assert all(t.shares < 1_000 for t in trades), [t.shares for t in trades]
    assert [t.market_id for t in trades] == ["100"]  # no trade at all on the hostile book
    refused = {leg["index"]: leg["reason"] for leg in decision.legs if not leg["executed"]}
    assert refused == {0: "malformed"}


# ---- 50,000 levels a side ----------------------------------------------------------------------


def test_a_book_of_50000_levels_a_side_is_refused_with_little_memory() -> None:
    """Refused from the lists' lengths before a Decimal is built; the read's peak (the JSON
    body decoded included) stays far under 300 MB (50,000 levels a side took a run to
    1.26 GB)."""
    levels = [{"price": "0.5", "size": "100"}] * 50_000
    body = json.dumps({**SPURS, "bids": levels, "asks": levels}).encode()  # sent as is
    with serve_clob() as server:
        server.script("GET", "/book", Reply(body=body, headers={"Content-Type": JSON}))
        client = ClobClient(server.url, max_attempts=1, min_interval=0.0, sleep=lambda _s: None)
        tracemalloc.start()
        try:
            quote = client.book(SPURS_TOKEN)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            client.close()
    assert (quote.reason, quote.book) == ("malformed", None)
    assert "50000 levels" in (quote.detail or "")
    assert peak < 300 * 2**20, f"peak {peak / 2**20:.0f} MB"


# ---- one bad market never aborts a sync --------------------------------------------------------


def test_sync_markets_skips_one_bad_fee_schedule_and_syncs_the_others(
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`feeSchedule.exponent = "1E+5000"` on one market made `arena sync-markets` fail for
    all; the market is read with fees off (the reason logged naming it), the others sync."""
    samples = json.loads(GAMMA_SAMPLES.read_text())
    good = [{**samples[1], "id": str(900 + n), "slug": f"m-{n}"} for n in range(4)]
    bad = {
        **samples[1],
        "id": "666",
        "slug": "bad",
        "feesEnabled": True,
        "feeSchedule": {"exponent": "1E+5000", "rate": 0.04, "takerOnly": True},
    }
    with serve_gamma() as gamma:
        gamma.catalogue([good[0], bad, *good[1:]])
        monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
        monkeypatch.setenv("ARENA_GAMMA_URL", gamma.url)
        with caplog.at_level(logging.INFO), pytest.raises(SystemExit) as exited:
            main(["sync-markets", "--at", "2026-01-04T00:00:00Z"])
    _, err = capsys.readouterr()
    assert exited.value.code == 0, err
    engine = create_db_engine(db_url)
    try:
        with session_scope(engine) as s:
            markets = {m.id: m for m in s.exec(select(Market))}
    finally:
        engine.dispose()
    assert {m["id"] for m in good} <= set(markets)
    assert markets["666"].fee_schedule is None  # fees off, the market kept
    named = [r.getMessage() for r in caplog.records if "666" in r.getMessage()]
    assert len(named) == 1 and "exponent '1E+5000'" in named[0]
