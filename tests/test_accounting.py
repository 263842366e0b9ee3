"""Hand-computed cases of the money core (methodology §10, contract §5)."""

from decimal import Decimal as D

import pytest

from arena.core.accounting import (
    BetLimits,
    Holding,
    TradeRejected,
    buy,
    check_bet,
    choose_mark,
    mark_value,
    named_outcome,
    portfolio_value,
    refund,
    sell,
    settle,
    side_price,
    unrealized_pnl,
)

LIMITS = BetLimits()


def test_buy_computes_shares_and_moves_cash() -> None:
    fill = buy(D("10000"), Holding(), D("500"), D("0.40"), LIMITS)
    assert fill.cash_after == D("9500")
    assert fill.shares == D("1250")
    assert fill.holding == Holding(shares=D("1250"), cost_basis=D("500"))
    assert fill.holding.avg_entry_price == D("0.4")


def test_buy_averages_into_an_open_position() -> None:
    first = buy(D("10000"), Holding(), D("500"), D("0.40"), LIMITS)
    second = buy(first.cash_after, first.holding, D("600"), D("0.60"), LIMITS)
    assert second.holding.shares == D("2250")
    assert second.holding.cost_basis == D("1100")
    assert second.holding.avg_entry_price == D("0.488889")  # 1100 / 2250
    assert second.cash_after == D("8900")


def test_shares_round_down_never_over_credit() -> None:
    fill = buy(D("10000"), Holding(), D("100"), D("0.3"), LIMITS)
    assert fill.shares == D("333.333333")
    assert fill.shares * D("0.3") <= D("100")


@pytest.mark.parametrize(
    ("amount", "cash", "reason"),
    [
        (D("49.99"), D("10000"), "below_min"),
        (D("2500.01"), D("10000"), "above_max"),
        (D("60"), D("200"), "above_max"),  # 25% of $200 is $50
        (D("-100"), D("10000"), "below_min"),
    ],
)
def test_bets_outside_the_limits_are_rejected(amount: D, cash: D, reason: str) -> None:
    with pytest.raises(TradeRejected) as info:
        buy(cash, Holding(), amount, D("0.5"), LIMITS)
    assert info.value.reason == reason


def test_bet_limits_are_inclusive() -> None:
    check_bet(D("50"), D("10000"), LIMITS)
    check_bet(D("2500"), D("10000"), LIMITS)


@pytest.mark.parametrize("bad_price", [D("0"), D("1"), D("1.2")])
def test_untradable_prices_are_rejected(bad_price: D) -> None:
    with pytest.raises(TradeRejected) as info:
        buy(D("10000"), Holding(), D("100"), bad_price, LIMITS)
    assert info.value.reason == "untradable_price"


def test_sell_part_then_all() -> None:
    bought = buy(D("10000"), Holding(), D("1000"), D("0.50"), LIMITS)  # 2000 shares
    part = sell(bought.cash_after, bought.holding, D("40"), D("0.60"))
    assert part.shares == D("800")
    assert part.amount == D("480")  # 800 × 0.60
    assert part.realized_pnl == D("80")  # 480 − 40% of 1000
    assert part.holding == Holding(D("1200"), D("600"), D("80"))
    assert part.cash_after == D("9480")
    rest = sell(part.cash_after, part.holding, D("100"), D("0.25"))
    assert rest.shares == D("1200")
    assert rest.amount == D("300")
    assert rest.realized_pnl == D("-300")
    assert rest.holding == Holding(D("0"), D("0"), D("-220"))
    assert rest.cash_after == D("9780")


@pytest.mark.parametrize("pct", [D("0"), D("-5"), D("100.5")])
def test_sell_percentage_must_be_in_range(pct: D) -> None:
    with pytest.raises(TradeRejected):
        sell(D("0"), Holding(D("10"), D("5")), pct, D("0.5"))


def test_settle_pays_one_dollar_per_winning_share() -> None:
    holding = Holding(D("1250"), D("500"))
    won = settle(D("9500"), holding, won=True)
    assert won.cash_after == D("10750")
    assert won.realized_pnl == D("750")
    lost = settle(D("9500"), holding, won=False)
    assert lost.cash_after == D("9500")
    assert lost.realized_pnl == D("-500")
    assert lost.holding.shares == 0


def test_refund_returns_remaining_cost_basis() -> None:
    fill = refund(D("9500"), Holding(D("1250"), D("500"), D("12")))
    assert fill.cash_after == D("10000")
    assert fill.realized_pnl == 0
    assert fill.holding == Holding(D("0"), D("0"), D("12"))


def test_no_side_is_priced_one_minus_yes_whatever_the_outcome_order() -> None:
    assert side_price("binary", ["Yes", "No"], ["0.3", "0.7"], "YES") == D("0.3")
    assert side_price("binary", ["Yes", "No"], ["0.3", "0.7"], "NO") == D("0.7")
    assert side_price("binary", ["No", "Yes"], ["0.64", "0.36"], "NO") == D("0.64")
    assert side_price("binary", ["no", "yes"], ["0.5", "0.41"], "NO") == D("0.59")


def test_named_outcome_price_and_missing_price() -> None:
    outcomes = ["Alice", "Bob", "Carol"]
    assert side_price("named", outcomes, ["0.2", "0.5", "0.3"], "Bob") == D("0.5")
    with pytest.raises(TradeRejected):
        side_price("named", outcomes, ["0.2", "0.5"], "Bob")
    with pytest.raises(TradeRejected):
        side_price("named", outcomes, ["0.2", "0.5", "0.3"], "Dave")
    with pytest.raises(TradeRejected):
        side_price("named", outcomes, ["0.2", "nan", "0.3"], "Bob")


def test_named_outcome_normalises_a_bet_side() -> None:
    assert named_outcome(" yes ", "binary", ["Yes", "No"]) == "YES"
    assert named_outcome("bob", "named", ["Alice", "Bob"]) == "Bob"
    with pytest.raises(TradeRejected):
        named_outcome("MAYBE", "binary", ["Yes", "No"])


def test_marks_and_portfolio_value() -> None:
    holding = Holding(D("1250"), D("500"))
    assert mark_value(holding.shares, D("0.5")) == D("625")
    assert unrealized_pnl(holding, D("0.5")) == D("125")
    assert portfolio_value(D("9500"), [D("625"), D("10.5")]) == D("10135.5")


def test_closed_but_unresolved_keeps_its_last_mark() -> None:
    assert choose_mark(True, D("0.7"), D("0.6"), D("0.5")) == D("0.7")
    assert choose_mark(False, D("0.0005"), D("0.6"), D("0.5")) == D("0.6")
    assert choose_mark(True, None, D("0.6"), D("0.5")) == D("0.6")
    assert choose_mark(False, None, None, D("0.5")) == D("0.5")
