"""The extension `book_execution`'s legs: a BET walks its token's asks, a SELL its bids. Pure.

Why apart from `arena.core.execution`: the v1 / v2 planner stays as it was, byte for byte; a
cohort stamped `book_execution` hands the planner the run's stored books (`LegBook`, one per
outcome of each market) and each leg's numbers then come from `arena.core.book_walk` instead of
a single price. The engine writes the plan; a replay bundle's verifier recomputes every fill
from the stored books with no database (docs/book-execution.md, "The extension in the engine").

A run's books serve every cohort that decides on them, but how a buy pays its fee is each
cohort's own (its stamp's `fee_charged`): `charging(books, fee_charged)` is the run's books as
one cohort walks them, and a BET refuses to walk a book that does not say.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_DOWN, Decimal
from typing import Any

from arena.core.accounting import (
    BetLimits,
    Holding,
    TradeRejected,
    check_bet,
    mark_value,
    side_item,
)
from arena.core.accounting import Fill as AccountingFill
from arena.core.book_walk import Fill, Refused, bid_value, walk_buy, walk_sell
from arena.core.fees import FeeCharged, FeeSchedule
from arena.core.money import ZERO, money, price, shares
from arena.core.order_book import Book

NO_BOOK = "no_book"  # the run stored no row for the leg's token (or the market has no tokens)
PRICE_SOURCE = "book_walk"  # a book-walk trade's `price_source`


@dataclass(frozen=True)
class LegBook:
    """One outcome's stored book at the run, its status (`ok` or a NoPriceReason), the
    market's taker-fee schedule (None: fees off) and, once a cohort walks it (`charging`), how
    that cohort's buys pay the fee."""

    book: Book | None
    status: str
    fees: FeeSchedule | None = None
    charged: FeeCharged | None = None


# market id → one LegBook per outcome, in the market's outcome order (`markets.outcomes`).
RunBooks = Mapping[str, Sequence[LegBook]]


class _Charging(Mapping[str, Sequence[LegBook]]):
    """A run's books as one cohort walks them: each entry read with the cohort's convention."""

    def __init__(self, books: RunBooks, charged: FeeCharged) -> None:
        self._books, self._charged = books, charged

    def __getitem__(self, market_id: str) -> Sequence[LegBook]:
        return tuple(replace(entry, charged=self._charged) for entry in self._books[market_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._books)

    def __len__(self) -> int:
        return len(self._books)


def charging(books: RunBooks, charged: FeeCharged) -> RunBooks:
    """`books` as a cohort whose buys pay the fee `charged` walks them (its stamp's
    `fee_charged`, `arena.config.stamped_fee_charged`); entries are copied only when read."""
    return _Charging(books, charged)


@dataclass(frozen=True)
class BookFill:
    """What a book-walk leg moved: cash, the position after, the walk's detail."""

    cash_after: Decimal
    holding: Holding
    fill: Fill
    realized_pnl: Decimal = ZERO

    def moved(self) -> AccountingFill:
        """The leg as the planner records any fill: cash, holding, dollars, shares, and the
        VWAP as its price."""
        walk = self.fill
        return AccountingFill(
            self.cash_after, self.holding, walk.amount, walk.shares, walk.vwap, self.realized_pnl
        )


def leg_book(
    books: RunBooks, market_id: str, market_type: str, outcomes: Sequence[str], side: str
) -> LegBook:
    """The stored book of `side`'s token; TradeRejected (`no_book`, or the stored status when
    the CLOB gave no book) when there is none to walk."""
    entry = side_item(books.get(market_id, ()), market_type, outcomes, side)
    if entry is None:
        raise TradeRejected(NO_BOOK, f"no stored book for side {side!r} of market {market_id}")
    if entry.book is None:
        status = entry.status if entry.status != "ok" else NO_BOOK
        raise TradeRejected(status, f"no usable book for side {side!r}: {status}")
    return entry


def _walked(result: Fill | Refused) -> Fill:
    if isinstance(result, Refused):
        raise TradeRejected(result.reason, result.message)
    return result


def book_buy(
    cash: Decimal, holding: Holding, stake: Decimal, entry: LegBook, limits: BetLimits
) -> BookFill:
    """A BET of `stake` dollars: the caps apply to the requested stake (as in v1), then the
    asks are walked; a partial fill of at least $50 spends only what it bought."""
    stake = money(stake)
    check_bet(stake, cash, limits)
    assert entry.book is not None
    if entry.charged is None:
        raise ValueError("a book walk needs its cohort's fee convention: see book_legs.charging")
    fill = _walked(walk_buy(entry.book, stake, entry.fees, charged=entry.charged))
    if fill.shares <= ZERO:
        raise TradeRejected("no_shares", "the walk credits no shares after its fee")
    after = replace(
        holding, shares=holding.shares + fill.shares, cost_basis=holding.cost_basis + fill.amount
    )
    return BookFill(cash - fill.amount, after, fill)


def book_sell(cash: Decimal, holding: Holding, percentage: Decimal, entry: LegBook) -> BookFill:
    """A SELL of `percentage` of the position into the bids: what they absorb executes, the
    cost basis leaves pro rata to the shares actually sold, the rest stays held."""
    if not ZERO < percentage <= Decimal(100):
        raise TradeRejected("bad_percentage", f"percentage {percentage} is not in (0, 100]")
    if holding.shares <= ZERO:
        raise TradeRejected("empty_position", "the position holds no shares")
    wanted = (
        holding.shares
        if percentage == Decimal(100)
        else shares(holding.shares * percentage / Decimal(100))
    )
    if wanted <= ZERO:
        raise TradeRejected("no_shares", "the percentage sells no shares")
    assert entry.book is not None
    fill = _walked(walk_sell(entry.book, wanted, entry.fees))
    sold = fill.shares
    if sold == holding.shares:
        cost_removed = holding.cost_basis
    else:
        cost_removed = money(holding.cost_basis * sold / holding.shares, rounding=ROUND_DOWN)
    realized = fill.amount - cost_removed
    after = Holding(
        holding.shares - sold, holding.cost_basis - cost_removed, holding.realized_pnl + realized
    )
    return BookFill(cash + fill.amount, after, fill, realized)


def fill_record(fill: Fill) -> dict[str, Any]:
    """The walk's detail as JSON-safe text (a trade's `book_fill`, a leg's record): enough to
    recompute and check the fill from the stored book."""
    return {
        "requested": str(fill.requested),
        "amount": str(fill.amount),
        "gross_shares": str(fill.gross_shares),
        "shares": str(fill.shares),
        "vwap": str(fill.vwap),
        "fee": str(fill.fee),
        "fee_shares": str(fill.fee_shares),
        "partial": fill.partial,
        "unfilled": str(fill.unfilled),
        "levels": [[str(at), str(size)] for at, size in fill.levels],
    }


def bid_mark(
    book: Book | None,
    reason: str | None,
    count: Decimal,
    fees: FeeSchedule | None,
    mid: Decimal | None,
    prior: Decimal,
    trading: bool,
) -> tuple[Decimal, Decimal, dict[str, Any], bool]:
    """A `book_execution` position's (mark, value, provenance, live): the value is what its
    `count` shares would fetch from the bids now, net of the fee (`bid_value`), the mark that
    value a share; the CLOB midpoint (`mid`) is kept beside it. No book, no bids, a crossed
    book or a closed market: the prior mark, valued as v1 values it, with the reason."""
    value = bid_value(book, count, fees) if trading and book is not None else None
    if value is None or count <= ZERO:
        why = "market_closed" if not trading else reason if book is None else None
        if why is None:
            why = "crossed_book" if book is not None and book.crossed else "empty_book"
        record = {
            "source": "prior_value",
            "status": "prior_value",
            "mark": _text(prior),
            "fallback_reason": why or "not_read",
            "mid": _text(mid),
        }
        return prior, mark_value(count, prior), record, False
    mark = price(value / count)
    record = {
        "source": "book_bid",
        "status": "bid_walk",
        "mark": _text(mark),
        "bid_value": _text(value),
        "mid": _text(mid),
        "fallback_reason": None,
    }
    return mark, value, record, True


def _text(value: Decimal | None) -> str | None:
    """A provenance number as text, normalised as v2 writes its records (0.455, not 0.455000)."""
    return None if value is None else format(value.normalize(), "f")
