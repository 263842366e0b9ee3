"""Book-walk execution (extension `book_execution`): what a taker order would have paid. Pure.

Why: neither the display price (v1) nor the midpoint (v2) is what a $500 order pays; it walks
the order book, best level first, and pays Polymarket's taker fee on each fill. A BET leg walks
the asks for its stake (`walk_buy`), a SELL walks the bids for its shares (`walk_sell`), and a
position is marked at what its shares would fetch from the bids now (`bid_value`).

Rounding follows v1's `arena.core.accounting` so a one-level walk with fees off is exactly
v1's `buy` / `sell` at that price: a buy spends its stake and is credited the shares rounded
down; a sell's proceeds round down. Where a choice is the arena's, it favours the house.

A buy's fee is charged as its cohort's stamp says (`arena.core.fees.FeeCharged`): in USDC on
top of the principal, the two within the stake, as Polymarket's CLOB V2 charges a market buy
(`usdc_on_top`), or taken from the shares bought (`in_shares`). A sell's fee always comes off
its proceeds. The rules and every interpretation are in docs/book-execution.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_UP, Decimal, localcontext
from typing import Literal

from arena.core.fees import (
    CURVE_DIGITS,
    FEE_IN_SHARES,
    FEE_USDC_ON_TOP,
    FeeCharged,
    FeeSchedule,
    fee_per_share,
    taker_fee,
)
from arena.core.money import ONE, ZERO, money, price, shares
from arena.core.order_book import MAX_LEVEL_SIZE, Book, Level

MIN_FILL = Decimal(50)  # v1's minimum bet: a depth-limited buy executes only from here up

RefusalReason = Literal["empty_book", "crossed_book", "depth"]
Side = Literal["buy", "sell"]


@dataclass(frozen=True, slots=True)
class Fill:
    """One executed leg, with what a trade row and a replay verifier need.

    `amount` is the cash that moves: a buy's dollars spent (its fee included when the fee is
    charged in USDC), a sell's proceeds net of the fee. `gross_shares` were matched at the
    `levels` taken; `shares` is what the position changes by: a buy's gross shares less
    `fee_shares` (0 unless the fee is taken in shares), a sell's shares sold. `fee` is the fee
    in USDC (for a fee taken in shares, its dollar value before conversion).
    `unfilled` is the part of `requested` left over: dollars of a buy's stake, shares of a sell.
    """

    side: Side
    requested: Decimal
    amount: Decimal
    gross_shares: Decimal
    shares: Decimal
    vwap: Decimal
    fee: Decimal
    fee_shares: Decimal
    levels: tuple[tuple[Decimal, Decimal], ...]
    partial: bool
    unfilled: Decimal


@dataclass(frozen=True, slots=True)
class Refused:
    """A leg that does not execute: `reason` for the record, `message` for a person."""

    side: Side
    requested: Decimal
    reason: RefusalReason
    message: str


def _usable(levels: tuple[Level, ...]) -> list[Level]:
    """The levels a taker can trade against: a positive size of at most `MAX_LEVEL_SIZE` at a
    price strictly inside (0, 1).

    The CLOB's parser (`arena.markets.clob_wire`) refuses a book holding any other; a book
    stored before it did, or edited, might, and a share at 0 or 1 is not a trade v1 would make
    either. Within these bounds every sum and product of a walk stays inside the default
    context's 28 digits, so a walk never raises `InvalidOperation`.
    """
    return [
        level
        for level in levels
        if ZERO < level.size <= MAX_LEVEL_SIZE and ZERO < level.price < ONE
    ]


def _refusal(book: Book, side: Side, requested: Decimal) -> Refused | None:
    """The reason a walk cannot start: a crossed book, or nothing on the side it walks."""
    if book.crossed:
        message = f"crossed book: best bid {book.best_bid} >= best ask {book.best_ask}"
        return Refused(side, requested, "crossed_book", message)
    levels = book.asks if side == "buy" else book.bids
    if not _usable(levels):
        where = "asks" if side == "buy" else "bids"
        return Refused(side, requested, "empty_book", f"no {where} to {side} against")
    return None


def _fees(taken: list[tuple[Decimal, Decimal]], schedule: FeeSchedule | None) -> Decimal:
    """The fee of every level taken: each level is its own trade, charged and floored alone."""
    return sum((taker_fee(size, at, schedule) for at, size in taken), ZERO)


def _vwap(taken: list[tuple[Decimal, Decimal]]) -> Decimal:
    """Volume-weighted price of the levels taken, at PRICE_PLACES (descriptive only)."""
    total = sum((size for _, size in taken), ZERO)
    return price(sum((at * size for at, size in taken), ZERO) / total) if total else ZERO


def _take_asks(asks: list[Level], stake: Decimal) -> tuple[list[tuple[Decimal, Decimal]], Decimal]:
    """Walk `asks` spending `stake`: the (price, shares) taken and the dollars spent.

    A level bought whole costs price × size (rounded up to the micro-dollar: the trader never
    pays less than the book asks); the level that ends the walk takes the rest of the stake and
    is credited the shares it buys rounded down, as v1's `buy` does.
    """
    taken: list[tuple[Decimal, Decimal]] = []
    spent = ZERO
    for level in asks:
        remaining = stake - spent
        whole = money(level.price * level.size, rounding=ROUND_UP)
        if whole < remaining:
            taken.append((level.price, level.size))
            spent += whole
            continue
        bought = min(shares(remaining / level.price), level.size)
        if bought > ZERO:
            taken.append((level.price, bought))
        return taken, stake
    return taken, spent


def _shares_within(budget: Decimal, at: Decimal, fees: FeeSchedule | None) -> Decimal:
    """The shares `budget` buys at `at` with each share's fee on top: budget / (p + fee a
    share) = budget / (p × (1 + x)), x the fee per dollar of principal, rounded down to the
    micro-share (the quotient truncated, never rounded across a micro-share)."""
    with localcontext() as context:
        context.prec, context.rounding = CURVE_DIGITS, ROUND_DOWN
        return shares(budget / (at + fee_per_share(at, fees)))


def _take_asks_fee_on_top(
    asks: list[Level], stake: Decimal, fees: FeeSchedule | None
) -> tuple[list[tuple[Decimal, Decimal]], Decimal]:
    """Walk `asks` spending `stake` on principal and fee together, as py-clob-client-v2's
    `adjust_market_buy_amount` fits a market buy's stake plus fee within its amount.

    A level whose whole cost (price × size rounded up, plus its floored fee) fits in what is
    left is bought whole; the level that ends the walk takes the rest and is credited
    `_shares_within(rest)`, so its principal and fee stay within the rest (the floors leave
    the house the remainder, as v1's `buy` leaves its rounding).
    """
    taken: list[tuple[Decimal, Decimal]] = []
    spent = ZERO
    for level in asks:
        remaining = stake - spent
        principal = money(level.price * level.size, rounding=ROUND_UP)
        whole = principal + taker_fee(level.size, level.price, fees)
        if whole <= remaining:
            taken.append((level.price, level.size))
            spent += whole
            continue
        bought = min(_shares_within(remaining, level.price, fees), level.size)
        if bought > ZERO:
            taken.append((level.price, bought))
        return taken, stake
    return taken, spent


def walk_buy(
    book: Book,
    stake: Decimal,
    fees: FeeSchedule | None,
    min_fill: Decimal = MIN_FILL,
    charged: FeeCharged = FEE_USDC_ON_TOP,
) -> Fill | Refused:
    """A BET leg: walk the asks best-first spending `stake` dollars.

    When the asks run out first, what was bought executes if it cost at least `min_fill`;
    below that the leg is refused (`depth`). `charged` says how the fee is paid:
    `usdc_on_top` (CLOB V2) keeps principal plus fee within the stake, the fee in USDC;
    `in_shares` spends the whole stake on shares and takes the fee from them: its dollar value
    at each level's price, converted at that price, rounded up.
    """
    stake = money(stake)
    if stake <= ZERO:
        raise ValueError(f"a buy of {stake} dollars: the stake must be positive")
    refused = _refusal(book, "buy", stake)
    if refused is not None:
        return refused
    if charged == FEE_USDC_ON_TOP:
        taken, spent = _take_asks_fee_on_top(_usable(book.asks), stake, fees)
    elif charged == FEE_IN_SHARES:
        taken, spent = _take_asks(_usable(book.asks), stake)
    else:
        raise ValueError(f"fee convention {charged!r}: known are usdc_on_top and in_shares")
    if spent < stake and spent < min_fill:
        message = f"the asks hold ${spent} of the ${stake} stake, below the ${min_fill} minimum"
        return Refused("buy", stake, "depth", message)
    gross = sum((size for _, size in taken), ZERO)
    fee = _fees(taken, fees)
    fee_shares = ZERO
    if charged == FEE_IN_SHARES:
        fee_shares = sum((taker_fee(size, at, fees) / at for at, size in taken), ZERO)
    fee_shares = shares(fee_shares, rounding=ROUND_UP)
    return Fill(
        side="buy",
        requested=stake,
        amount=spent,
        gross_shares=gross,
        shares=gross - fee_shares,
        vwap=_vwap(taken),
        fee=fee,
        fee_shares=fee_shares,
        levels=tuple(taken),
        partial=spent < stake,
        unfilled=stake - spent,
    )


def _take_bids(bids: list[Level], count: Decimal) -> list[tuple[Decimal, Decimal]]:
    """Walk `bids` selling `count` shares: the (price, shares) taken, best bid first."""
    taken: list[tuple[Decimal, Decimal]] = []
    remaining = count
    for level in bids:
        if remaining <= ZERO:
            break
        sold = min(remaining, level.size)
        taken.append((level.price, sold))
        remaining -= sold
    return taken


def walk_sell(book: Book, count: Decimal, fees: FeeSchedule | None) -> Fill | Refused:
    """A SELL leg: walk the bids best-first for `count` shares.

    What the bids absorb executes, with no minimum (v1's `sell` has none); the rest stays held
    (`partial`, `unfilled`). Proceeds are Σ price × shares rounded down, as v1's `sell`, less
    the fee, which Polymarket takes from a sell's USDC.
    """
    count = shares(count)
    if count <= ZERO:
        raise ValueError(f"a sale of {count} shares: the share count must be positive")
    refused = _refusal(book, "sell", count)
    if refused is not None:
        return refused
    taken = _take_bids(_usable(book.bids), count)
    sold = sum((size for _, size in taken), ZERO)
    gross = money(sum((at * size for at, size in taken), ZERO), rounding=ROUND_DOWN)
    fee = _fees(taken, fees)
    return Fill(
        side="sell",
        requested=count,
        amount=gross - fee,
        gross_shares=sold,
        shares=sold,
        vwap=_vwap(taken),
        fee=fee,
        fee_shares=shares(ZERO),
        levels=tuple(taken),
        partial=sold < count,
        unfilled=count - sold,
    )


def bid_value(book: Book, count: Decimal, fees: FeeSchedule | None) -> Decimal | None:
    """What `count` shares would fetch from the bids now, net of the fee: the position's mark.

    Shares beyond the bids' depth are worth 0 (nobody bids for them). None for an empty bid side
    or a crossed book: the caller keeps the prior mark and records why, as v2 does.
    """
    if count <= ZERO:
        return ZERO if _refusal(book, "sell", ONE) is None else None
    result = walk_sell(book, count, fees)
    return result.amount if isinstance(result, Fill) else None
