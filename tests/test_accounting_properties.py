"""Property tests: random sequences of buys, sells, price moves, settlements and refunds.

Invariants after every step:
- cash never negative, no position with negative shares or cost basis;
- cash + Σ cost basis(open) − Σ realized P/L == starting balance (nothing created or lost);
- value == cash + Σ marks;
- no bet accepted outside [$50, 25% of cash].
"""

from dataclasses import dataclass, field
from decimal import Decimal as D
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.core.accounting import (
    BetLimits,
    Holding,
    TradeRejected,
    buy,
    mark_value,
    portfolio_value,
    refund,
    sell,
    settle,
    side_price,
)
from tests.examples import examples

START = D("10000")
LIMITS = BetLimits()
MARKETS = ("m1", "m2", "m3", "m4")

prices = st.decimals(min_value=D("0.000001"), max_value=D("0.999999"), places=6)
amounts = st.one_of(
    st.decimals(min_value=D("-100"), max_value=D("4000"), places=6),
    st.sampled_from([D("50"), D("49.999999"), D("2500"), D("2500.000001")]),
)
percentages = st.one_of(
    st.decimals(min_value=D("-10"), max_value=D("110"), places=4),
    st.sampled_from([D("100"), D("0.0001"), D("50")]),
)

ops = st.one_of(
    st.tuples(st.just("buy"), st.sampled_from(MARKETS), st.sampled_from(["YES", "NO"]), amounts),
    st.tuples(
        st.just("sell"), st.sampled_from(MARKETS), st.sampled_from(["YES", "NO"]), percentages
    ),
    st.tuples(st.just("move"), st.sampled_from(MARKETS), prices),
    st.tuples(st.just("settle"), st.sampled_from(MARKETS), st.booleans()),
    st.tuples(st.just("refund"), st.sampled_from(MARKETS)),
)


@dataclass
class Book:
    """A minimal portfolio driven only through the pure accounting functions."""

    cash: D = START
    yes_price: dict[str, D] = field(default_factory=lambda: dict.fromkeys(MARKETS, D("0.5")))
    open: dict[tuple[str, str], Holding] = field(default_factory=dict)
    realized: D = D(0)
    closed_markets: set[str] = field(default_factory=set)

    def price(self, market: str, side: str) -> D:
        return side_price(
            "binary", ["Yes", "No"], [self.yes_price[market], D(1) - self.yes_price[market]], side
        )

    def apply(self, op: tuple[Any, ...]) -> None:
        kind, market = op[0], op[1]
        if kind == "move":
            self.yes_price[market] = op[2]
            return
        if market in self.closed_markets:
            return
        if kind == "buy":
            self._buy(market, op[2], op[3])
        elif kind == "sell":
            self._sell(market, op[2], op[3])
        else:
            self._close(market, op)

    def _buy(self, market: str, side: str, amount: D) -> None:
        before = self.cash
        held = self.open.get((market, side), Holding())
        try:
            fill = buy(self.cash, held, amount, self.price(market, side), LIMITS)
        except TradeRejected as rejected:
            legal = LIMITS.min_bet <= amount <= LIMITS.max_bet(before)
            assert not legal or rejected.reason in ("untradable_price", "no_shares")
            return
        assert LIMITS.min_bet <= fill.amount <= before * LIMITS.max_bet_fraction
        self.cash = fill.cash_after
        self.open[(market, side)] = fill.holding

    def _sell(self, market: str, side: str, pct: D) -> None:
        held = self.open.get((market, side))
        if held is None:
            return
        try:
            fill = sell(self.cash, held, pct, self.price(market, side))
        except TradeRejected as rejected:
            if rejected.reason == "bad_percentage":
                assert not D(0) < pct <= D(100)
            else:
                assert rejected.reason == "no_shares"
                assert held.shares * pct / D(100) < D("0.000001")
            return
        self.cash = fill.cash_after
        self.realized += fill.realized_pnl
        self._store(market, side, fill.holding)

    def _close(self, market: str, op: tuple[Any, ...]) -> None:
        for side in ("YES", "NO"):
            held = self.open.get((market, side))
            if held is None:
                continue
            if op[0] == "settle":
                fill = settle(self.cash, held, won=(side == "YES") == op[2])
            else:
                fill = refund(self.cash, held)
            self.cash = fill.cash_after
            self.realized += fill.realized_pnl
            self.open.pop((market, side))
        self.closed_markets.add(market)

    def _store(self, market: str, side: str, holding: Holding) -> None:
        if holding.shares == 0:
            self.open.pop((market, side))
        else:
            self.open[(market, side)] = holding

    def check(self) -> None:
        assert self.cash >= 0
        for holding in self.open.values():
            assert holding.shares >= 0
            assert holding.cost_basis >= 0
        open_cost = sum((h.cost_basis for h in self.open.values()), D(0))
        assert self.cash + open_cost - self.realized == START
        marks = [mark_value(h.shares, self.price(m, s)) for (m, s), h in self.open.items()]
        assert portfolio_value(self.cash, marks) == self.cash + sum(marks, D(0))


@settings(max_examples=examples(2000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ops, min_size=1, max_size=60))
def test_accounting_invariants_hold_for_any_sequence(sequence: list[tuple[Any, ...]]) -> None:
    book = Book()
    for op in sequence:
        book.apply(op)
        book.check()


@settings(max_examples=examples(2000), deadline=None)
@given(
    cash=st.decimals(min_value=D("0"), max_value=D("100000"), places=6),
    amount=st.decimals(min_value=D("-1000"), max_value=D("100000"), places=6),
    price=prices,
)
def test_no_bet_is_accepted_outside_the_limits(cash: D, amount: D, price: D) -> None:
    try:
        fill = buy(cash, Holding(), amount, price, LIMITS)
    except TradeRejected:
        return
    assert D("50") <= fill.amount <= cash * D("0.25")
    assert fill.cash_after >= 0
    assert fill.shares > 0
    assert fill.shares * price <= fill.amount  # never over-credited
