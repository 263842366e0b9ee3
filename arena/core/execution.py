"""Planning a decision's legs (methodology §10, contract §5): pure, no I/O.

`plan_execution` walks the legs in order against the cash at that moment and the frozen
snapshot prices, and says for each leg what executes or why it is rejected; a bad leg never
stops the others. It lives in the core because two callers must agree on it to the cent: the
engine executes a plan (`arena.engine.execution.apply_plan` writes it), and a replay bundle's
verifier recomputes every published trade with it, with no database.

A BET leg of a `stated_probability` cohort (methodology §18, protocol extensions) carries the
model's stated probability (`StatedBetRequest`): it rides along in the leg's `request` record
(`"probability"`: the decimal as text, or null when the model gave none) and on the leg
(`LegResult.probability`, for the BUY trade), and changes nothing about whether or how the leg
executes. A v1 leg has no such attribute, and its record no such key.

A v2 cohort of the original's rule set (`source-7c78b0c`, docs/methodology-v2.md) plans with
`execution_quotes`: each touched market's quotes re-read after the model answered. A leg then
executes only at its side's validated CLOB midpoint (never at Gamma's price: "No validated CLOB
price available", as the original's `resolveBetPriceAndSideOrError` says), its record carries
the quotes it met (`"quotes"`), and a BET batch is all or nothing (the original's
`executeBetsAtomically`): one failing leg rolls back the others.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

from arena.core.accounting import (
    BetLimits,
    Holding,
    TradeRejected,
    buy,
    named_outcome,
    sell,
    side_item,
    side_price,
)
from arena.core.book_legs import RunBooks, book_buy, book_sell, fill_record, leg_book
from arena.core.money import money, to_decimal
from arena.core.scoring import implied_confidence

# Why a leg of the original's v2 rule set was refused (`execution_quotes`).
NO_CLOB_PRICE = "no_clob_price"  # its side had no validated CLOB midpoint at execution
BATCH_ROLLED_BACK = "batch_rolled_back"  # it would fill, but another leg of its BET batch failed
CLOB_SOURCE = "clob_mid"  # the quote source of a validated CLOB midpoint
# Each market's quotes re-read at execution, as stored JSON in outcome order (by market id).
ExecutionQuotes = Mapping[str, Sequence[Mapping[str, Any]]]


class BetRequest(Protocol):
    """A BET leg as the parser validated it."""

    @property
    def market_id(self) -> str: ...
    @property
    def side(self) -> str: ...
    @property
    def amount(self) -> Decimal: ...


@runtime_checkable
class StatedBetRequest(BetRequest, Protocol):
    """A BET leg of a `stated_probability` cohort (`arena.agents.parsing.StatedBetLeg`)."""

    @property
    def probability(self) -> Decimal | None: ...


class SellRequest(Protocol):
    """A SELL leg as the parser validated it."""

    @property
    def position_id(self) -> int: ...
    @property
    def percentage(self) -> Decimal: ...


class LegRequests(Protocol):
    """What the planner reads of a validated decision (`arena.agents.parsing.Decision`)."""

    @property
    def action(self) -> str: ...
    @property
    def bets(self) -> Sequence[BetRequest]: ...
    @property
    def sells(self) -> Sequence[SellRequest]: ...


@dataclass(frozen=True)
class SnapshotMarket:
    """A market as the frozen snapshot showed it; `tradable` is False once it closed.

    `quotes` (methodology v2): each outcome's stored PriceQuote (JSON), the provenance its
    trades carry; None in v1. Planning never reads it.
    """

    market_id: str
    market_type: str
    outcomes: list[str]
    prices: list[str]
    tradable: bool = True
    quotes: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class HeldPosition:
    """One of the agent's open positions (position_id None: opened by this decision)."""

    position_id: int | None
    market_id: str
    side: str
    holding: Holding


@dataclass
class LegResult:
    """What happened to one leg: executed with its numbers, or rejected with a reason."""

    index: int
    kind: str
    request: dict[str, Any]
    executed: bool
    reason: str | None = None
    message: str | None = None
    market_id: str | None = None
    side: str | None = None
    position_id: int | None = None
    amount: Decimal | None = None
    price: Decimal | None = None
    shares: Decimal | None = None
    cash_before: Decimal | None = None
    implied_confidence: float | None = None
    realized_pnl: Decimal = Decimal(0)
    holding_after: Holding | None = None
    probability: Decimal | None = None  # stated by the model (extension), None when not
    fill: dict[str, Any] | None = None  # extension `book_execution`: the walk's detail
    quotes: list[dict[str, Any]] | None = None  # v2 source rules: its market's quotes at execution

    def record(self) -> dict[str, Any]:
        """The JSON-safe summary stored on the decision row (executed and rejected legs)."""
        out: dict[str, Any] = {
            "index": self.index,
            "kind": self.kind,
            "request": self.request,
            "executed": self.executed,
        }
        if self.quotes is not None:  # only the original's v2 rule set: other records unchanged
            out["quotes"] = self.quotes
        if not self.executed:
            if self.quotes is not None:  # the market whose quotes refused it
                out["market_id"] = self.market_id
            out.update(reason=self.reason, message=self.message)
            return out
        out.update(
            market_id=self.market_id,
            side=self.side,
            position_id=self.position_id,
            amount=str(self.amount),
            price=str(self.price),
            shares=str(self.shares),
            implied_confidence=self.implied_confidence,
            realized_pnl=str(self.realized_pnl),
        )
        if self.fill is not None:  # only a book_execution leg: a v1 / v2 record is unchanged
            out["fill"] = self.fill
        return out


@dataclass
class ExecutionPlan:
    cash_before: Decimal
    cash_after: Decimal
    legs: list[LegResult] = field(default_factory=list)

    @property
    def executed(self) -> int:
        return sum(1 for leg in self.legs if leg.executed)

    def tallies(self) -> dict[str, Any]:
        """The decision row's leg tallies: executed BETs and SELLs, rejected legs, $ bet."""
        bets = [leg for leg in self.legs if leg.executed and leg.kind == "BET"]
        return {
            "bets_executed": len(bets),
            "sells_executed": sum(1 for leg in self.legs if leg.executed and leg.kind == "SELL"),
            "legs_rejected": sum(1 for leg in self.legs if not leg.executed),
            "amount_bet": sum((leg.amount or Decimal(0) for leg in bets), Decimal(0)),
        }


def trade_quote(
    market: SnapshotMarket | None, side: str, executed: Sequence[Mapping[str, Any]] | None
) -> dict[str, Any] | None:
    """The quote a BUY or SELL records: its side's frozen quote (v2; None in v1), or under v2's
    original rule set the quote re-read at execution, with the frozen price beside it
    (`frozen_price`): the prompt showed one, the trade filled at the other."""
    if market is None:
        return None
    frozen = side_item(market.quotes, market.market_type, market.outcomes, side)
    if executed is None:
        return None if frozen is None else dict(frozen)
    quote = side_item(executed, market.market_type, market.outcomes, side)
    if quote is None:
        return None if frozen is None else dict(frozen)
    return {**quote, "frozen_price": frozen.get("price") if frozen else None}


def total_bet_error(decision: LegRequests, cash: Decimal, limits: BetLimits) -> str | None:
    """Methodology v2's cap on a decision's TOTAL bet allocation: why the BET legs break it
    (their sum, in cents as executed, above `max_bet_fraction` of `cash` before the decision),
    or None. Such a plan is invalid as a whole: the caller answers it like a malformed answer.
    """
    if decision.action != "BET":
        return None
    total = sum((money(bet.amount) for bet in decision.bets), Decimal(0))
    cap = limits.max_bet(cash)
    if total <= cap:
        return None
    share = f"{limits.max_bet_fraction * 100:f}".rstrip("0").rstrip(".")
    return (
        f"the bets add up to ${total:,.2f}, above the total cap of ${cap:,.2f} ({share}% of "
        f"your cash ${cash:,.2f} before this decision); all bets together must be at most "
        f"${cap:,.2f}"
    )


def answer_error(
    decision: LegRequests, cash: Decimal, limits: BetLimits, *, leg_minimum: bool
) -> str | None:
    """Why a v2 answer that parsed is still invalid as a whole, or None: such an answer goes
    to the malformed-answer retry instead of executing.

    Always the total cap (`total_bet_error`); with `leg_minimum` (the original's rule set),
    first its parse-time `validateBet` on each leg: a bet below the minimum spoils the answer,
    where v1 and v2 `frozen-quotes` refuse that one leg at execution."""
    if leg_minimum and decision.action == "BET":
        for number, bet in enumerate(decision.bets, start=1):
            if bet.amount < limits.min_bet:
                return (
                    f"bet {number} of ${bet.amount:,.2f} is below the minimum bet of "
                    f"${limits.min_bet:,.2f}; every bet must be at least ${limits.min_bet:,.2f}"
                )
    return total_bet_error(decision, cash, limits)


def plan_execution(
    decision: LegRequests,
    cash: Decimal,
    held: Sequence[HeldPosition],
    snapshot: Mapping[str, SnapshotMarket],
    limits: BetLimits,
    books: RunBooks | None = None,
    execution_quotes: ExecutionQuotes | None = None,
    *,
    all_or_nothing: bool = False,
) -> ExecutionPlan:
    """Every leg of `decision` in order, each checked against the cash at that moment.

    `books` (extension `book_execution`): the run's stored books; BETs then walk the asks and
    SELLs the bids of their side's token (`arena.core.book_legs`). `execution_quotes` (v2, the
    original's rule set): each leg executes at its side's re-read CLOB midpoint or not at all.
    Neither: v1 / v2 frozen prices. `all_or_nothing` (the original's rule set, whatever the
    price): a BET batch with a failing leg executes none."""
    plan = ExecutionPlan(cash_before=cash, cash_after=cash)
    request: dict[str, Any]
    by_key = {(p.market_id, p.side): p for p in held}
    by_id = {p.position_id: p for p in held if p.position_id is not None}
    if decision.action == "BET":
        for index, bet in enumerate(decision.bets):
            request = {"market_id": bet.market_id, "side": bet.side, "amount": str(bet.amount)}
            probability = bet.probability if isinstance(bet, StatedBetRequest) else None
            if isinstance(bet, StatedBetRequest):
                request["probability"] = None if probability is None else str(probability)
            leg = _bet(
                plan, index, request, bet.amount, snapshot, by_key, limits, books, execution_quotes
            )
            leg.probability = probability
            plan.legs.append(leg)
        if all_or_nothing:
            _all_or_nothing(plan)
    elif decision.action == "SELL":
        for index, sale in enumerate(decision.sells):
            request = {"position_id": sale.position_id, "percentage": str(sale.percentage)}
            leg = _sell(
                plan,
                index,
                request,
                sale.percentage,
                snapshot,
                by_id,
                by_key,
                books,
                execution_quotes,
            )
            plan.legs.append(leg)
    return plan


def _refused(
    index: int,
    kind: str,
    request: dict[str, Any],
    rejected: TradeRejected,
    quotes: list[dict[str, Any]] | None,
    market_id: str | None,
) -> LegResult:
    """A refused leg; one refused at or after reading its re-read quotes keeps them and their
    market, so a replay can refuse it for the same reason."""
    leg = LegResult(index, kind, request, False, rejected.reason, rejected.message)
    if quotes is not None:
        leg.quotes, leg.market_id = quotes, market_id
    return leg


def _all_or_nothing(plan: ExecutionPlan) -> None:
    """Roll a BET batch back when any leg failed (the original's `executeBetsAtomically`:
    "BET batch failed; no trades executed: …"): the legs that would fill are refused too."""
    failed = [leg.message or leg.reason or "" for leg in plan.legs if not leg.executed]
    if not failed or all(not leg.executed for leg in plan.legs):
        return
    message = "BET batch failed; no trades executed: " + "; ".join(dict.fromkeys(failed))
    plan.legs = [
        leg
        if not leg.executed
        else LegResult(
            leg.index,
            leg.kind,
            leg.request,
            False,
            BATCH_ROLLED_BACK,
            message,
            market_id=leg.market_id,
            probability=leg.probability,
            quotes=leg.quotes,
        )
        for leg in plan.legs
    ]
    plan.cash_after = plan.cash_before


def _market_quotes(execution_quotes: ExecutionQuotes, market_id: str) -> list[dict[str, Any]]:
    """A market's quotes as re-read at execution (none when it was not re-read)."""
    return [dict(q) for q in execution_quotes.get(market_id) or ()]


def _executable_price(quotes: list[dict[str, Any]], market: SnapshotMarket, side: str) -> Decimal:
    """A side's price at execution under the original's v2 rules: its re-read quote's CLOB
    midpoint, or a refusal (a Gamma fallback, an unpriced side, or a market not re-read)."""
    quote = side_item(quotes, market.market_type, market.outcomes, side) if quotes else None
    price = quote.get("price") if quote is not None else None
    if quote is None or quote.get("source") != CLOB_SOURCE or price is None:
        what = "binary market side" if market.market_type == "binary" else "outcome"
        raise TradeRejected(NO_CLOB_PRICE, f'No validated CLOB price available for {what} "{side}"')
    return Decimal(str(price))


def _bet(
    plan: ExecutionPlan,
    index: int,
    request: dict[str, Any],
    amount: Decimal,
    snapshot: Mapping[str, SnapshotMarket],
    by_key: dict[tuple[str, str], HeldPosition],
    limits: BetLimits,
    books: RunBooks | None = None,
    execution_quotes: ExecutionQuotes | None = None,
) -> LegResult:
    market = snapshot.get(str(request["market_id"]))
    detail: dict[str, Any] | None = None
    quotes: list[dict[str, Any]] | None = None
    try:
        if market is None:
            raise TradeRejected("unknown_market", f"market {request['market_id']} was not offered")
        if not market.tradable:
            raise TradeRejected("market_closed", f"market {market.market_id} is closed")
        side = named_outcome(str(request["side"]), market.market_type, market.outcomes)
        current = by_key.get((market.market_id, side))
        cash_before = plan.cash_after
        holding = current.holding if current else Holding()
        if books is None:
            if execution_quotes is not None:
                quotes = _market_quotes(execution_quotes, market.market_id)
                price = _executable_price(quotes, market, side)
            else:
                price = side_price(market.market_type, market.outcomes, market.prices, side)
            fill = buy(cash_before, holding, amount, price, limits)
        else:
            entry = leg_book(books, market.market_id, market.market_type, market.outcomes, side)
            walked = book_buy(cash_before, holding, amount, entry, limits)
            fill = walked.moved()
            detail = fill_record(walked.fill)
    except TradeRejected as rejected:
        return _refused(index, "BET", request, rejected, quotes, request["market_id"])
    plan.cash_after = fill.cash_after
    position_id = current.position_id if current else None
    by_key[(market.market_id, side)] = HeldPosition(
        position_id, market.market_id, side, fill.holding
    )
    return LegResult(
        index,
        "BET",
        request,
        True,
        market_id=market.market_id,
        side=side,
        position_id=position_id,
        amount=fill.amount,
        price=fill.price,
        shares=fill.shares,
        cash_before=cash_before,
        implied_confidence=implied_confidence(fill.amount, cash_before, limits.max_bet_fraction),
        holding_after=fill.holding,
        fill=detail,
        quotes=quotes,
    )


def _sell(
    plan: ExecutionPlan,
    index: int,
    request: dict[str, Any],
    percentage: Decimal,
    snapshot: Mapping[str, SnapshotMarket],
    by_id: dict[int, HeldPosition],
    by_key: dict[tuple[str, str], HeldPosition],
    books: RunBooks | None = None,
    execution_quotes: ExecutionQuotes | None = None,
) -> LegResult:
    held = by_id.get(int(request["position_id"]))
    detail: dict[str, Any] | None = None
    quotes: list[dict[str, Any]] | None = None
    try:
        if held is None:
            raise TradeRejected(
                "unknown_position",
                f"position {request['position_id']} is not an open position of yours",
            )
        current = by_key.get((held.market_id, held.side), held)
        market = snapshot.get(held.market_id)
        if market is None or not market.tradable:
            raise TradeRejected("market_closed", f"market {held.market_id} is not trading")
        cash_before = plan.cash_after
        if books is None:
            if execution_quotes is not None:
                quotes = _market_quotes(execution_quotes, held.market_id)
                price = _executable_price(quotes, market, held.side)
            else:
                price = side_price(market.market_type, market.outcomes, market.prices, held.side)
            fill = sell(cash_before, current.holding, to_decimal(percentage), price)
        else:
            entry = leg_book(books, held.market_id, market.market_type, market.outcomes, held.side)
            walked = book_sell(cash_before, current.holding, to_decimal(percentage), entry)
            fill = walked.moved()
            detail = fill_record(walked.fill)
    except TradeRejected as rejected:
        where = held.market_id if held is not None else None
        return _refused(index, "SELL", request, rejected, quotes, where)
    plan.cash_after = fill.cash_after
    updated = HeldPosition(held.position_id, held.market_id, held.side, fill.holding)
    by_key[(held.market_id, held.side)] = updated
    by_id[int(request["position_id"])] = updated
    return LegResult(
        index,
        "SELL",
        request,
        True,
        market_id=held.market_id,
        side=held.side,
        position_id=held.position_id,
        amount=fill.amount,
        price=fill.price,
        shares=fill.shares,
        cash_before=cash_before,
        realized_pnl=fill.realized_pnl,
        holding_after=fill.holding,
        fill=detail,
        quotes=quotes,
    )
