"""Pure money math of methodology v1 §5 and §10: buy, sell, settle, refund, value. No I/O.

Every function takes plain values and returns new values; nothing is mutated. Amounts are
exact Decimals (see `arena.core.money`). The conservation law the property tests check:

    cash + Σ cost_basis(open positions) − Σ realized_pnl(all positions) == starting balance
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_DOWN, Decimal
from typing import TypeVar

from arena.core.money import ONE, ZERO, money, price, shares, to_decimal

T = TypeVar("T")

BINARY_SIDES = ("YES", "NO")


class TradeRejected(ValueError):
    """A leg that cannot execute; `reason` is a short machine-readable code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class BetLimits:
    """The bet constraints of §5, taken from the cohort's stamped constants."""

    min_bet: Decimal = Decimal("50")
    max_bet_fraction: Decimal = Decimal("0.25")

    def max_bet(self, cash: Decimal) -> Decimal:
        """The largest legal bet with `cash` on hand (25% of cash by default)."""
        return money(cash * self.max_bet_fraction, rounding=ROUND_DOWN)


@dataclass(frozen=True)
class Holding:
    """The accounting state of one position."""

    shares: Decimal = ZERO
    cost_basis: Decimal = ZERO
    realized_pnl: Decimal = ZERO

    @property
    def avg_entry_price(self) -> Decimal:
        """Cost per share paid so far (0 for an empty holding)."""
        return price(self.cost_basis / self.shares) if self.shares > 0 else ZERO


@dataclass(frozen=True)
class Fill:
    """The result of one executed leg: new cash, new holding and what moved."""

    cash_after: Decimal
    holding: Holding
    amount: Decimal
    shares: Decimal
    price: Decimal
    realized_pnl: Decimal = ZERO


def outcome_key(name: str) -> str:
    """The form two outcome names are compared in: trimmed and case-folded.

    Gamma's outcome strings are free text edited by people; a re-cased or re-spaced name
    between a bet and its resolution must still name the same outcome.
    """
    return name.strip().casefold()


def named_outcome(side: str, market_type: str, outcomes: Sequence[str]) -> str:
    """The outcome a side names, in its canonical form: the one rule for BET, SELL, valuation
    and settlement.

    Binary markets: YES or NO (any case and spacing). Named-outcome markets: the market's own
    spelling of the single outcome equal to `side` under `outcome_key`. Raises TradeRejected:
    `bad_side` when the side names no outcome, `ambiguous_side` when it names two (a market
    listing "Yes" and "yes " cannot be settled by a rule; a person decides).
    """
    wanted = outcome_key(side)
    if market_type == "binary":
        if wanted.upper() in BINARY_SIDES:
            return wanted.upper()
        raise TradeRejected("bad_side", f"side {side!r} is not YES or NO on a binary market")
    matches = [outcome for outcome in outcomes if outcome_key(outcome) == wanted]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise TradeRejected(
            "ambiguous_side", f"side {side!r} matches {len(matches)} outcomes: {matches!r}"
        )
    raise TradeRejected("bad_side", f"side {side!r} is not an outcome of this market")


def outcome_index(market_type: str, outcomes: Sequence[str], side: str) -> int | None:
    """The position in `outcomes` of the outcome a stored side names (None when none does):
    which of a market's per-outcome records (prices, quotes) a position or trade reads."""
    try:
        canonical = named_outcome(side, market_type, outcomes)
    except TradeRejected:
        return None
    keys = [outcome_key(outcome) for outcome in outcomes]
    wanted = outcome_key(canonical)  # binary: "YES"/"NO" read as "yes"/"no"
    return keys.index(wanted) if wanted in keys else None


def side_item(
    items: Sequence[T] | None, market_type: str, outcomes: Sequence[str], side: str
) -> T | None:
    """The per-outcome record (a quote, a stored book) of the outcome a side names; None when
    the side names none or `items` has no record at that position."""
    index = outcome_index(market_type, outcomes, side) if items else None
    return items[index] if items and index is not None and index < len(items) else None


def ambiguous_outcomes(outcomes: Sequence[str]) -> list[str]:
    """The outcomes that share their `outcome_key` with another outcome of the same market."""
    keys = [outcome_key(outcome) for outcome in outcomes]
    return [outcome for outcome, key in zip(outcomes, keys, strict=True) if keys.count(key) > 1]


def side_won(side: str, winner: str, market_type: str) -> bool:
    """Whether a stored side is the resolved winner, under the rule of `named_outcome`."""
    if market_type == "binary":
        return outcome_key(side).upper() == outcome_key(winner).upper()
    return outcome_key(side) == outcome_key(winner)


def side_price(
    market_type: str, outcomes: Sequence[str], prices: Sequence[object], side: str
) -> Decimal:
    """The side-correct price (§10.3, §10.4): YES as stored, NO = 1 − YES, named as listed.

    The side must name an outcome (`named_outcome`): a stored side that names none is
    rejected (`bad_side`), never priced as if it were NO.
    """
    if len(outcomes) != len(prices) or not outcomes:
        raise TradeRejected("no_price", "market has no usable price list")
    canonical = named_outcome(side, market_type, outcomes)
    try:
        if market_type == "binary":
            yes_index = [outcome_key(o) for o in outcomes].index("yes")
            yes = price(to_decimal(prices[yes_index]))
            value = yes if canonical == "YES" else price(ONE - yes)
        else:
            value = price(to_decimal(prices[list(outcomes).index(canonical)]))
    except ValueError:
        raise TradeRejected("no_price", f"no usable price for side {side!r}") from None
    if value < ZERO or value > ONE:
        raise TradeRejected("no_price", f"price {value} for side {side!r} is outside [0, 1]")
    return value


def check_bet(amount: Decimal, cash: Decimal, limits: BetLimits) -> None:
    """Reject a bet outside [min_bet, max_bet_fraction × cash] (contract §5)."""
    if amount < limits.min_bet:
        raise TradeRejected("below_min", f"amount {amount} is below the ${limits.min_bet} minimum")
    maximum = limits.max_bet(cash)
    if amount > maximum:
        raise TradeRejected(
            "above_max", f"amount {amount} is above the limit ${maximum} (25% of cash {cash})"
        )


def buy(
    cash: Decimal, holding: Holding, amount: Decimal, at_price: Decimal, limits: BetLimits
) -> Fill:
    """BET (§10.1): cash falls by the amount, shares = amount / price, averaging in."""
    amount = money(amount)
    check_bet(amount, cash, limits)
    if not ZERO < at_price < ONE:
        raise TradeRejected("untradable_price", f"price {at_price} is not strictly between 0 and 1")
    bought = shares(amount / at_price)
    if bought <= ZERO:
        raise TradeRejected("no_shares", "the amount buys no shares at this price")
    new_holding = replace(
        holding, shares=holding.shares + bought, cost_basis=holding.cost_basis + amount
    )
    return Fill(cash - amount, new_holding, amount, bought, at_price)


def sell(cash: Decimal, holding: Holding, percentage: Decimal, at_price: Decimal) -> Fill:
    """SELL (§10.2): a fraction of the shares at the side-correct price, cost basis pro rata."""
    if not ZERO < percentage <= Decimal(100):
        raise TradeRejected("bad_percentage", f"percentage {percentage} is not in (0, 100]")
    if holding.shares <= ZERO:
        raise TradeRejected("empty_position", "the position holds no shares")
    if not ZERO <= at_price <= ONE:
        raise TradeRejected("untradable_price", f"price {at_price} is outside [0, 1]")
    if percentage == Decimal(100):
        sold, cost_removed = holding.shares, holding.cost_basis
    else:
        fraction = percentage / Decimal(100)
        sold = shares(holding.shares * fraction)
        cost_removed = money(holding.cost_basis * fraction, rounding=ROUND_DOWN)
    if sold <= ZERO:
        raise TradeRejected("no_shares", "the percentage sells no shares")
    proceeds = money(sold * at_price, rounding=ROUND_DOWN)
    realized = proceeds - cost_removed
    new_holding = Holding(
        shares=holding.shares - sold,
        cost_basis=holding.cost_basis - cost_removed,
        realized_pnl=holding.realized_pnl + realized,
    )
    return Fill(cash + proceeds, new_holding, proceeds, sold, at_price, realized)


def settle(cash: Decimal, holding: Holding, won: bool) -> Fill:
    """Resolution: each winning share pays $1, losing shares pay nothing."""
    payout = money(holding.shares) if won else ZERO
    realized = payout - holding.cost_basis
    new_holding = Holding(ZERO, ZERO, holding.realized_pnl + realized)
    return Fill(cash + payout, new_holding, payout, holding.shares, ONE if won else ZERO, realized)


def refund(cash: Decimal, holding: Holding) -> Fill:
    """CANCELLED market (§13.3): the remaining cost basis comes back, no gain or loss."""
    new_holding = Holding(ZERO, ZERO, holding.realized_pnl)
    return Fill(
        cash + holding.cost_basis,
        new_holding,
        holding.cost_basis,
        holding.shares,
        holding.avg_entry_price,
    )


def mark_value(share_count: Decimal, at_price: Decimal) -> Decimal:
    """Mark-to-market value of a holding at the side-correct price."""
    return money(share_count * at_price)


def unrealized_pnl(holding: Holding, at_price: Decimal) -> Decimal:
    return mark_value(holding.shares, at_price) - holding.cost_basis


def portfolio_value(cash: Decimal, marks: Iterable[Decimal]) -> Decimal:
    """Total value = cash + Σ marked values of open positions."""
    return cash + sum(marks, ZERO)


def choose_mark(
    market_open: bool, live_price: Decimal | None, last_mark: Decimal | None, avg_entry: Decimal
) -> Decimal:
    """The price to value an open position at (§12.4).

    An open market with a usable live price marks at it. A closed-but-unresolved market, or
    one whose price is unusable, keeps the last valuation instead of collapsing to zero; a
    position never marked yet falls back to its entry price.
    """
    if market_open and live_price is not None:
        return live_price
    if last_mark is not None:
        return last_mark
    return avg_entry
