"""Replay bundles of a `book_execution` cohort: the books its legs walked, its fills
and its bid marks are bundled, and `arena verify` recomputes every book-walk fill from them.

A scripted cohort through the real decision and snapshot jobs (tests/engine/
test_book_execution.py's arena: the real loopback CLOB serving the RECORDED REAL Spurs book on a
fee-enabled market and hand-made books): a fill with a fee, a partial fill, crossed, empty and
unknown books refused, a bid mark and a prior value, a week-later sale into the bids. Played on
SQLite and on PostgreSQL: each bundle verifies 100%, and the two are the same bytes.
"""

import json
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.analytics.replay.books import BOOKS, leg_markets, read_books
from arena.analytics.replay.bundle import BuiltBundle, build_bundle
from arena.analytics.replay.format import FILES, MANIFEST, read_jsonl
from arena.analytics.replay.marks import MARKS
from arena.analytics.replay.verify import verify_bundle
from arena.app.cli import main
from arena.engine.snapshots import take_snapshots
from arena.markets.clob import ClobClient
from arena.storage.db import create_db_engine, dispose_engines, session_scope
from arena.storage.models import Position
from tests.analytics.finished_season import copy_database
from tests.engine.chat_server import answer
from tests.engine.test_book_execution import LEGS, RUN, V1, V2, arena_with, decide
from tests.engine.test_decision_books import Arena
from tests.engine.test_v2_engine import bet, book
from tests.pg import PostgresCluster
from tests.test_v2_bundles import failing, forged

BOOK_CHECKS = (
    "bundled books decode",
    "book-walk fills recomputed",
    "snapshot values at the recorded bid marks",
)


def snapshot(arena: Arena, minutes: int) -> None:
    reader = ClobClient(arena.clob.url, max_attempts=1, min_interval=0.0, sleep=lambda _s: None)
    try:
        take_snapshots(arena.engine, RUN + timedelta(minutes=minutes), prices=lambda: reader)
    finally:
        reader.close()


def play(engine: Engine) -> BuiltBundle:
    """Week 1: the five legs of LEGS (a fee-enabled fill, a partial fill, three refusals);
    marks at the bid, then at the prior value when the book turns crossed; week 2: the Spurs
    position sold into the bids. Bundled as it stands (provisional: positions are open)."""
    for arena in arena_with(engine, V1):
        arena.models.script_model("test/a", answer(LEGS, "test/a"))
        decide(arena, RUN)
        snapshot(arena, 10)  # bid marks
        arena.clob.add_book(book("t100y", ["0.50"], ["0.50"]))  # crossed: a prior value
        snapshot(arena, 20)
        with session_scope(engine) as s:
            spurs = s.exec(select(Position).where(Position.market_id == "500")).one()
        sale = {"action": "SELL", "sells": [{"position_id": spurs.id, "percentage": 100}]}
        arena.models.script_model("test/a", answer({**sale, "reasoning": "r"}, "test/a"))
        decide(arena, RUN + timedelta(days=7))
        snapshot(arena, 7 * 24 * 60 + 10)
    return build_bundle(engine, 1, provisional=True)


def assert_verifies_in_full(built: BuiltBundle) -> None:
    report = verify_bundle(built.bundle, published_hash=built.hash)
    assert report.ok and not report.tampered, failing(report)
    names = {check.name for check in report.checks}
    assert set(BOOK_CHECKS) <= names
    idle = {"settlements and refunds recomputed", "Brier rows recomputed"}  # nothing settled
    assert all(c.compared > 0 for c in report.checks if c.name not in idle), [
        (c.name, c.compared) for c in report.checks
    ]


@pytest.fixture
def scripted(engine: Engine) -> BuiltBundle:
    return play(engine)


def test_a_book_execution_bundle_carries_its_books_and_verifies(scripted: BuiltBundle) -> None:
    files = scripted.bundle.files
    assert sorted(files) == sorted([*FILES, MARKS, BOOKS, MANIFEST])
    rows = read_jsonl(files[BOOKS])
    # run 1: the four markets its legs named, each with all its outcome tokens; run 2: Spurs
    assert [(r["snapshot_id"], r["market_id"]) for r in rows] == [
        (1, "100"),
        (1, "200"),
        (1, "300"),
        (1, "500"),
        (2, "500"),
    ]
    by = {(r["snapshot_id"], r["market_id"]): r for r in rows}
    spurs = by[(1, "500")]
    assert spurs["fee_schedule"]["rate"] == "0.04"
    assert spurs["tokens"][0]["asks"].startswith("0.62:")  # the recorded Spurs asks
    assert by[(1, "100")]["fee_schedule"] is None  # fees off
    statuses = {t["status"] for r in rows for t in r["tokens"]}
    assert {"ok", "unknown_token"} <= statuses
    trades = read_jsonl(files["trades.jsonl"])
    walked = [t for t in trades if t["trade_type"] in ("BUY", "SELL")]
    assert len(walked) == 3 and all(t["book_fill"] for t in walked)
    assert any(t["book_fill"]["partial"] for t in walked)
    sources = {r["provenance"]["source"] for r in read_jsonl(files[MARKS])}
    assert sources == {"book_bid", "prior_value"}
    assert b"books.jsonl" in files["README.txt"] and b"marks.jsonl" in files["README.txt"]
    assert_verifies_in_full(scripted)


def _a_book_level(rows: list[dict[str, Any]]) -> None:
    """The recorded Spurs best ask moved a cent: the $500 fill would be another VWAP."""
    token = next(r for r in rows if r["market_id"] == "500")["tokens"][0]
    token["asks"] = token["asks"].replace("0.62:", "0.61:", 1)


def _a_fee(rows: list[dict[str, Any]]) -> None:
    next(r for r in rows if r["market_id"] == "500")["fee_schedule"]["rate"] = "0.05"


def _a_garbled_side(rows: list[dict[str, Any]]) -> None:
    next(r for r in rows if r["market_id"] == "100")["tokens"][0]["asks"] = "0.45;0.46:100"


def _a_dropped_book(rows: list[dict[str, Any]]) -> None:
    """The crossed book's market left out: its leg would be refused `no_book`."""
    rows[:] = [r for r in rows if r["market_id"] != "200"]


def _a_fill_vwap(trades: list[dict[str, Any]]) -> None:
    fill = next(t for t in trades if t["market_id"] == "100")["book_fill"]
    fill["vwap"] = "0.450000"


def _a_partial_fill(trades: list[dict[str, Any]]) -> None:
    fill = next(t for t in trades if t["market_id"] == "100")["book_fill"]
    fill["partial"], fill["unfilled"] = False, "0.000000"


def _a_bid_value(runs: list[dict[str, Any]]) -> None:
    record = next(r for r in runs if r["provenance"]["source"] == "book_bid")["provenance"]
    record["bid_value"] = str(float(record["bid_value"]) + 1)


def _a_fee_convention(cohorts: list[dict[str, Any]]) -> None:
    """The stamp without `fee_charged`: the fills paid in USDC recomputed in shares."""
    del cohorts[0]["constants"]["fee_charged"]


FORGERIES: dict[str, tuple[str, Callable[[list[dict[str, Any]]], None], str]] = {
    "a book level": (BOOKS, _a_book_level, "decision legs planned"),
    "a fee schedule": (BOOKS, _a_fee, "book-walk fills recomputed"),
    "a garbled side": (BOOKS, _a_garbled_side, "bundled books decode"),
    "a dropped book": (BOOKS, _a_dropped_book, "decision legs planned"),
    "a fill's VWAP": ("trades.jsonl", _a_fill_vwap, "book-walk fills recomputed"),
    "a partial fill": ("trades.jsonl", _a_partial_fill, "book-walk fills recomputed"),
    "a bid value": (MARKS, _a_bid_value, "snapshot values at the recorded bid marks"),
    "the fee convention": ("cohort.json", _a_fee_convention, "book-walk fills recomputed"),
}


def test_a_forged_book_or_fill_is_caught_and_named(scripted: BuiltBundle) -> None:
    """Each forgery with the manifest re-hashed (every file matches it): only the
    recomputation can tell, and it names the check the forgery breaks."""
    for what, (name, change, check) in FORGERIES.items():
        report = verify_bundle(forged(scripted.bundle, name, change))
        assert not report.tampered and not report.ok, what
        assert check in failing(report), (what, failing(report))


def test_the_same_cohort_is_the_same_bundle_on_sqlite_and_postgresql(
    tmp_path: Path, sqlite_template: str, pg_cluster: PostgresCluster, pg_template: str
) -> None:
    """The cohort played on SQLite, its rows copied to PostgreSQL (ids kept; a replay is not
    byte-identical across plays: attempts record wall-clock latency): the same bundle."""
    shutil.copyfile(sqlite_template, tmp_path / "arena.db")
    source = f"sqlite:///{tmp_path / 'arena.db'}"
    target = pg_cluster.new_database(template=pg_template)
    engine = create_db_engine(source)
    try:
        on_sqlite = play(engine)
        copy_database(source, target)
        on_postgres = build_bundle(create_db_engine(target, role="reader"), 1, provisional=True)
    finally:
        engine.dispose()
        dispose_engines()
        pg_cluster.drop_database(target)
    assert on_postgres.bundle.files == on_sqlite.bundle.files
    assert_verifies_in_full(on_postgres)


def test_the_bundled_markets_are_those_the_legs_named() -> None:
    """Pure: a BET names its market, a SELL its position's market (refused or not)."""
    decisions: list[dict[str, Any]] = [
        {
            "market_snapshot_id": 1,
            "legs": [
                {"request": {"market_id": "9", "side": "YES", "amount": "50"}, "executed": False},
                {"request": {"position_id": 4, "percentage": 50}, "executed": False},
                {"request": {"position_id": "x"}, "executed": False},  # unreadable: no market
            ],
        },
        {"market_snapshot_id": None, "legs": [{"request": {"market_id": "8"}}]},
        {"market_snapshot_id": 2, "legs": None},
    ]
    named = leg_markets(decisions, {4: {"market_id": "7"}})
    assert named == {1: {"9", "7"}}


def test_a_bundled_book_that_does_not_decode_is_named_not_guessed() -> None:
    rows = [
        {
            "snapshot_id": 3,
            "market_id": "m",
            "fee_schedule": {"rate": "x", "exponent": 1},
            "tokens": [
                {"token_id": "a", "status": "ok", "bids": "0.4:10", "asks": "0.5:1:2"},
                {"token_id": "b", "status": "no_book"},
            ],
        }
    ]
    read = read_books(json.loads(json.dumps(rows)))
    assert not read.check.ok
    shown = " ".join(read.check.mismatches)
    assert "snapshot 3 market m: fee schedule does not read" in shown
    assert "token a: its book does not decode" in shown
    yes, no = read.of(3)["m"]
    assert yes.book is None and no.status == "no_book" and read.of(4) == {}


def test_a_v2_book_execution_bundle_verifies_with_its_quotes_beside(engine: Engine) -> None:
    """Methodology v2 under the extension: the trades carry the quote beside the walk, the
    valuation rows are at the bid; the v2 checks and the book checks all pass."""
    for arena in arena_with(engine, V2):
        arena.models.script_model("test/a", answer(bet(("100", "YES", 50)), "test/a"))
        decide(arena, RUN, V2)
        snapshot(arena, 10)
    built = build_bundle(engine, 1, provisional=True)
    trades = read_jsonl(built.bundle.files["trades.jsonl"])
    assert [(t["price_source"], t["price_quote"]["price"]) for t in trades] == [
        ("book_walk", "0.43")
    ]
    report = verify_bundle(built.bundle, published_hash=built.hash)
    assert report.ok, failing(report)
    names = {check.name for check in report.checks}
    assert {*BOOK_CHECKS, "frozen prices follow their quotes", "trades carry their quotes"} <= names


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # the reading: no backend's
@pytest.mark.parametrize(
    "data",
    [
        b'{"snapshot_id": 1, "market_id": "500"}\n',  # no tokens
        b"not json\n",
        b'{"snapshot_id": 1, "market_id": "500", "tokens": [{"status": "ok", "bids": 5}]}\n',
    ],
    ids=["no-tokens", "not-json", "a-number-for-a-side"],
)
def test_a_damaged_books_file_is_a_mismatch_not_a_crash(
    scripted: BuiltBundle,
    data: bytes,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`arena verify` on a bundle whose books.jsonl is not what it should be: exit 1, the
    file named changed and the recomputation's failure shown, never a traceback."""
    folder = scripted.bundle.write(tmp_path / "bundle")
    (folder / BOOKS).write_bytes(data)
    with pytest.raises(SystemExit) as exited:
        main(["verify", str(folder)])
    out, err = capsys.readouterr()
    assert exited.value.code == 1 and err == "" and "unexpected" not in out, (out, err)
    assert f"file {BOOKS}: changed" in out, out
    assert "bundle readable: " in out or "bundled books decode" in out, out
