"""The pure re-execution of `arena.analytics.stats.execution`: refusals stay cash with their
reason, a SELL sells the same fraction of the counterfactual holding, the same value per
share is carried to the end. Numbers written out by hand."""

from decimal import Decimal as D

import pytest

from arena.analytics.stats.execution import Leg, PositionEnd, own_rule, re_execute
from arena.analytics.stats.execution_inputs import chosen_stake
from arena.core.order_book import Book, Level

DEEP = Book(bids=(Level(D("0.5"), D(10000)),), asks=(Level(D("0.52"), D(10000)),))


def buy(stake: str, book: Book | None = DEEP, **kw: object) -> Leg:
    return Leg(1, 7, "m", "BUY", stake=D(stake), display=D("0.5"), mid=D("0.51"), book=book, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("book", "reason"),
    [
        (Book((), ()), "empty_book"),
        (Book((Level(D("0.6"), D(10)),), (Level(D("0.55"), D(10)),)), "crossed_book"),
        (Book((), (Level(D("0.5"), D(20)),)), "depth"),  # $10 of asks: below the $50 minimum
    ],
)
def test_a_book_the_walk_refuses_stays_cash(book: Book, reason: str) -> None:
    out = re_execute([buy("100", book)], [PositionEnd(7, D(1))], "book")
    assert out.refused == {reason: 1} and out.executed == 0
    assert out.pnl == {(1, "m"): D(0)}


def test_no_stored_book_keeps_its_reason() -> None:
    out = re_execute([buy("100", None, book_reason="clob_unavailable")], [], "book")
    assert out.refused == {"clob_unavailable": 1}


def test_same_end_value_only_the_fill_differs() -> None:
    ends = [PositionEnd(7, D(1))]  # settled: each share paid $1
    # display 0.5: 200 shares → $200; mid 0.51: shares(100/0.51) = 196.078431; book 0.52:
    # shares(100/0.52) = 192.307692
    assert re_execute([buy("100")], ends, "display").pnl[(1, "m")] == D(100)
    assert re_execute([buy("100")], ends, "mid").pnl[(1, "m")] == D("96.078431")
    assert re_execute([buy("100")], ends, "book").pnl[(1, "m")] == D("92.307692")


def test_sell_takes_the_same_fraction_of_the_counterfactual_holding() -> None:
    sell = Leg(1, 7, "m", "SELL", fraction=D("0.5"), display=D("0.6"), mid=D("0.6"), book=DEEP)
    ends = [PositionEnd(7, D(0))]  # lost: what is still held is worth nothing
    # display: 200 shares, sells 100 at 0.6 → 60; P/L = 60 − 100
    assert re_execute([buy("100"), sell], ends, "display").pnl[(1, "m")] == D(-40)
    # book: 192.307692 shares, sells 96.153846 at the bid 0.5 → 48.076923 (rounded down)
    assert re_execute([buy("100"), sell], ends, "book").pnl[(1, "m")] == D("-51.923077")


def test_a_refund_returns_the_counterfactual_cost() -> None:
    assert re_execute([buy("100")], [PositionEnd(7, refunded=True)], "book").pnl[(1, "m")] == 0


def test_own_rule_per_stamp() -> None:
    assert own_rule("v1") == "display" and own_rule("v2") == "mid"
    assert own_rule("v1", ("book_execution",)) == "book"


def test_the_stake_is_the_one_the_model_chose() -> None:
    # a book_execution partial fill spent $60 of the $100 asked: every rule re-executes $100
    assert chosen_stake(D("60"), {"requested": "100", "amount": "60"}) == D(100)
    assert chosen_stake(D("60"), None) == D(60)  # v1, v2: the trade's amount is the stake
