"""Benchmark: the stored size of a year of decision books on SQLite.

Run: .venv/bin/python bench/books_size.py [--weeks 52] [--markets 500] [--depth 20]
Stores `weeks` decision runs of `markets` binary markets (two tokens each: ~1,000 books a
week) with synthetic books of `depth` levels a side (cent ticks, sizes with two decimals, as
the CLOB's real books are; e.g. tests/fixtures/clob/book_spurs_2025-10.raw.json) through
`arena.engine.books.store_books`, into a throw-away database at head; prints the bytes a
book adds to the file (after VACUUM, against the same database without books), the raw
bytes of its two level texts, the MB a year, and what JSON per side would have cost.
Record the figures in bench/RESULTS.md.
"""

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import text

from arena.core.book_text import encode_levels
from arena.engine.books import BookToken, store_books
from arena.markets.clob_wire import ClobQuote, OrderBook, parse_book
from arena.markets.price_source import quote_from_book
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import init_db
from arena.storage.models import Market, MarketSnapshot

START = datetime(2026, 1, 5, tzinfo=UTC)


def synthetic_book(token: str, depth: int, rng: random.Random) -> OrderBook:
    """A two-sided book of `depth` cent levels a side around a random midpoint."""
    mid = rng.randint(depth + 2, 98 - depth)
    spread = rng.randint(1, 2)

    def size() -> str:
        return f"{rng.randint(5, 200_000)}.{rng.randint(0, 99):02d}"

    bids = [{"price": f"0.{mid - i:02d}", "size": size()} for i in range(1, depth + 1)]
    asks = [{"price": f"0.{mid + spread + i - 1:02d}", "size": size()} for i in range(depth)]
    raw = {
        "market": "0x" + "ab" * 32,
        "asset_id": token,
        "timestamp": "1761342851801",
        "hash": "eaf8b0fcb0314225424e77c7949372dd925c3690",
        "bids": bids,
        "asks": asks,
        "min_order_size": "5",
        "tick_size": "0.01",
    }
    return parse_book(raw)


def file_bytes(path: Path) -> int:
    """The database file's size once its WAL is folded in and free pages are dropped."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
    finally:
        conn.close()
    return path.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--markets", type=int, default=500)
    parser.add_argument("--depth", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(34)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "books.db"
        engine = create_db_engine(f"sqlite:///{path}")
        init_db(engine)
        markets = [f"m{i}" for i in range(args.markets)]
        with session_scope(engine) as s:
            for market_id in markets:
                s.add(
                    Market(id=market_id, question="q", market_type="binary", outcomes=["Yes", "No"])
                )
            for week in range(args.weeks):
                s.add(MarketSnapshot(id=week + 1, taken_at=START + timedelta(weeks=week)))
        engine.dispose()
        before = file_bytes(path)
        tokens = [BookToken(f"{m}-{o}", m, o) for m in markets for o in ("Yes", "No")]
        text_bytes = json_bytes = 0
        began = time.perf_counter()
        for week in range(args.weeks):
            clob: dict[str, ClobQuote] = {}
            for token in tokens:
                book = synthetic_book(token.token_id, args.depth, rng)
                clob[token.token_id] = quote_from_book(book)
                if week == 0:
                    text_bytes += len(encode_levels(book.bids)) + len(encode_levels(book.asks))
                    json_bytes += sum(
                        len(json.dumps([[str(lv.price), str(lv.size)] for lv in side]))
                        for side in (book.bids, book.asks)
                    )
            with session_scope(engine) as s:
                store_books(s, week + 1, tokens, clob)
        stored = time.perf_counter() - began
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT count(*) FROM decision_books")).scalar_one()
        engine.dispose()
        after = file_bytes(path)
        books = args.weeks * len(tokens)
        per_book = (after - before) / books
    assert rows == books
    print(f"{args.weeks} runs x {len(tokens)} tokens = {books:,} books, {args.depth} levels a side")
    print(f"store: {stored:.1f} s ({stored / args.weeks * 1000:.0f} ms a run, synthesis included)")
    print(f"file: {before:,} -> {after:,} bytes after VACUUM: {per_book:,.0f} bytes a book")
    grown = after - before
    print(
        f"a week: {grown / args.weeks / 1e6:.2f} MB; all {args.weeks} weeks: {grown / 1e6:.1f} MB"
    )
    print(
        f"level texts: {text_bytes / len(tokens):,.0f} bytes a book (both sides); "
        f"JSON [[price, size], ...] a side instead: {json_bytes / len(tokens):,.0f} bytes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
