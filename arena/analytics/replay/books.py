"""The books a `book_execution` cohort's decisions walked, in its replay bundle (`books.jsonl`).

Why: a cohort stamped `book_execution` fills every BET and SELL by walking its run's stored
order book (docs/book-execution.md), so `arena verify` can only recompute its trades from those
books. The bundle carries, for each decision run (frozen snapshot) of the cohort, the stored
books of every market a leg of one of its decisions named (a BET's market, a SELL's position's
market), all of the market's outcome tokens in `clob_token_ids` order, with the market's fee
schedule: exactly the entries `engine.decision_inputs.load_run_books` hands the planner for
those markets, so the verifier gives `core.execution.plan_execution(..., books=...)` the same
input the engine did. A market the run stored no row for keeps its place (`no_book`).

Why not the run's whole universe: a leg can only walk the book of a market it names, and the
rest (≈1,000 books a run) would multiply the bundle for nothing the verifier reads.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from arena.analytics.replay.report import Check
from arena.core.book_legs import NO_BOOK, LegBook, RunBooks
from arena.core.book_text import BookTextError, decode_book
from arena.core.fees import FeeSchedule
from arena.storage.book_models import DecisionBook
from arena.storage.tables import MARKET_SNAPSHOT_ITEMS, MARKETS

BOOKS = "books.jsonl"
BOOK_COLUMNS = ("status", "bids", "asks", "tick_size", "min_order_size")
_STORED = DecisionBook.__table__  # type: ignore[attr-defined]


def leg_markets(
    decisions: Iterable[Mapping[str, Any]], positions: Mapping[int, Mapping[str, Any]]
) -> dict[int, set[str]]:
    """Per snapshot, the markets its decisions' legs named: a BET's `market_id`, a SELL's
    position's market (a refused SELL's too, when the position is in the bundle)."""
    named: dict[int, set[str]] = defaultdict(set)
    for decision in decisions:
        snapshot = decision["market_snapshot_id"]
        if snapshot is None:
            continue
        for leg in decision["legs"] or ():
            request = leg.get("request") or {}
            market = leg.get("market_id") or request.get("market_id")
            if market is None and "position_id" in request:
                held = positions.get(_int(request["position_id"]))
                market = held["market_id"] if held else None
            if market is not None:
                named[snapshot].add(str(market))
    return named


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def book_rows(
    conn: Connection,
    decisions: Sequence[Mapping[str, Any]],
    positions: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """`books.jsonl`'s rows: one per (snapshot, market a leg named and the snapshot froze),
    ordered by snapshot and market, each outcome's stored book as `load_run_books` reads it."""
    named = leg_markets(decisions, {p["id"]: p for p in positions})
    rows: list[dict[str, Any]] = []
    for snapshot_id in sorted(named):
        frozen = set(
            conn.execute(
                select(MARKET_SNAPSHOT_ITEMS.c.market_id).where(
                    MARKET_SNAPSHOT_ITEMS.c.snapshot_id == snapshot_id,
                    MARKET_SNAPSHOT_ITEMS.c.market_id.in_(sorted(named[snapshot_id])),
                )
            ).scalars()
        )
        if not frozen:
            continue
        stored = {
            row["token_id"]: row
            for row in conn.execute(
                select(_STORED).where(
                    _STORED.c.snapshot_id == snapshot_id, _STORED.c.market_id.in_(sorted(frozen))
                )
            ).mappings()
        }
        markets = conn.execute(
            select(MARKETS.c.id, MARKETS.c.clob_token_ids, MARKETS.c.fee_schedule)
            .where(MARKETS.c.id.in_(sorted(frozen)))
            .order_by(MARKETS.c.id)
        ).mappings()
        for market in markets:
            tokens = []
            for token in market["clob_token_ids"] or ():
                row = stored.get(token)
                entry: dict[str, Any] = {"token_id": token, "status": NO_BOOK}
                if row is not None:
                    entry.update({c: row[c] for c in BOOK_COLUMNS})
                tokens.append(entry)
            rows.append(
                {
                    "snapshot_id": snapshot_id,
                    "market_id": market["id"],
                    "fee_schedule": market["fee_schedule"],
                    "tokens": tokens,
                }
            )
    return rows


@dataclass
class BundledBooks:
    """The bundle's books as the planner reads them (per snapshot), and what did not decode."""

    runs: dict[int, dict[str, tuple[LegBook, ...]]] = field(default_factory=dict)
    check: Check = field(default_factory=lambda: Check("bundled books decode"))

    def of(self, snapshot_id: int | None) -> RunBooks:
        """The run's books (an empty mapping: every leg is refused `no_book`, as in the engine
        for a run that stored none)."""
        return self.runs.get(snapshot_id or -1, {})


def read_books(rows: Iterable[Mapping[str, Any]]) -> BundledBooks:
    """`books.jsonl` decoded. A side or a fee schedule that does not read is a named mismatch
    and that outcome has no book (its legs then disagree with the published ones): never
    guessed, never a crash."""
    out = BundledBooks()
    for row in rows:
        snapshot_id, market_id = int(row["snapshot_id"]), str(row["market_id"])
        where = f"snapshot {snapshot_id} market {market_id}"
        run = out.runs.setdefault(snapshot_id, {})
        if market_id in run:
            out.check.fail(f"{where}: bundled twice")
            continue
        fees = _fees(out.check, where, row.get("fee_schedule"))
        run[market_id] = tuple(
            _entry(out.check, f"{where} token {t.get('token_id')}", t, fees) for t in row["tokens"]
        )
    return out


def _fees(check: Check, where: str, raw: Any) -> FeeSchedule | None:
    if not raw:
        return None
    try:
        fees = FeeSchedule.from_json(raw)
    except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
        check.fail(f"{where}: fee schedule does not read ({type(exc).__name__})")
        return None
    check.compared += 1
    return fees


def _entry(check: Check, where: str, token: Mapping[str, Any], fees: FeeSchedule | None) -> LegBook:
    status = str(token.get("status"))
    if status == NO_BOOK:
        return LegBook(None, NO_BOOK)
    try:
        book = decode_book(
            token.get("bids"),
            token.get("asks"),
            token.get("tick_size"),
            token.get("min_order_size"),
        )
    except (BookTextError, ValueError, TypeError, AttributeError) as exc:
        check.fail(f"{where}: its book does not decode ({exc})")
        return LegBook(None, status, fees)
    check.compared += 1
    return LegBook(book, status, fees)


def check_fills(
    trades: Iterable[Mapping[str, Any]],
    recomputed: Mapping[tuple[int, int], dict[str, Any] | None],
) -> Check:
    """Each BUY and SELL's `book_fill` (VWAP, shares, fee, levels, partial, unfilled) equals
    the walk recomputed from the bundled book; settlements carry none."""
    check = Check("book-walk fills recomputed")
    for trade in trades:
        where = f"trade {trade['id']} (decision {trade['decision_id']} leg {trade['leg_index']})"
        if trade["trade_type"] not in ("BUY", "SELL"):
            check.expect(f"{where} book_fill", trade.get("book_fill"), None)
            continue
        key = (trade["decision_id"], trade["leg_index"])
        if key not in recomputed:
            check.fail(f"{where}: no leg of the replay executes it")
            continue
        mine = recomputed[key]
        published = trade.get("book_fill")
        if published is None or mine is None:
            check.expect(f"{where} book_fill", published, mine)
            continue
        for name in sorted(set(published) | set(mine)):
            check.expect(f"{where} fill {name}", published.get(name), mine.get(name))
    return check
