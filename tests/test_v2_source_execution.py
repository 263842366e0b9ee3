"""The planner under v2's original rule set, pure: what the original's execution tests hold.

Each test names the original's file and function (its repository at 7c78b0c, 2026-05-06).
"""

from decimal import Decimal as D
from typing import Any

from arena.agents.parsing import parse_decision
from arena.core.accounting import BetLimits, Holding
from arena.core.execution import HeldPosition, SnapshotMarket, answer_error, plan_execution
from arena.markets.clob_wire import ClobQuote
from arena.markets.price_source import validate_price

LIMITS = BetLimits()
MARKET = SnapshotMarket("m1", "binary", ["Yes", "No"], ["0.50", "0.50"])
HELD = [HeldPosition(7, "m1", "YES", Holding(D("200"), D("100")))]


def quotes(source: str, yes: str | None) -> dict[str, list[dict[str, Any]]]:
    no = None if yes is None else str(1 - D(yes))
    quote = {"source": source, "status": "accepted" if source == "clob_mid" else "fallback_gamma"}
    return {"m1": [{**quote, "price": yes}, {**quote, "price": no}]}


def decide(answer: str) -> Any:
    parsed = parse_decision(answer).ok
    assert parsed is not None
    return parsed


def test_rejects_production_priced_sells_when_validated_clob_price_is_unavailable() -> None:
    """tests/execution.test.ts, lib/engine/execution/sell/pricing.ts
    `resolveSellCurrentPriceOrError`: a SELL at Gamma's fallback price is refused."""
    sale = decide('{"action": "SELL", "sells": [{"position_id": 7, "percentage": 50}]}')
    snapshot = {"m1": MARKET}
    plan = plan_execution(sale, D("1000"), HELD, snapshot, LIMITS, None, quotes("gamma", "0.5"))
    (leg,) = plan.legs
    assert (leg.executed, leg.reason) == (False, "no_clob_price")
    assert leg.message == 'No validated CLOB price available for binary market side "YES"'
    assert plan.cash_after == D("1000")
    at_clob = plan_execution(
        sale, D("1000"), HELD, snapshot, LIMITS, None, quotes("clob_mid", "0.6")
    )
    assert (at_clob.legs[0].price, at_clob.cash_after) == (D("0.6"), D("1060"))


def test_a_market_not_re_read_is_no_price() -> None:
    """No quote at all for the leg's market (the re-read missed it) is refused, never priced
    from the frozen snapshot."""
    bet = decide('{"action": "BET", "bets": [{"market_id": "m1", "side": "NO", "amount": 100}]}')
    plan = plan_execution(bet, D("1000"), [], {"m1": MARKET}, LIMITS, None, {})
    assert plan.legs[0].reason == "no_clob_price" and plan.legs[0].quotes == []


def test_answer_error_takes_the_minimum_only_under_the_original_rules() -> None:
    """lib/openrouter/parser/validate/bet.ts `validateBet`: a leg below $50 spoils the answer
    under the original's rules; under `frozen-quotes` only the total cap does."""
    low = decide(
        '{"action": "BET", "bets": [{"market_id": "m1", "side": "YES", "amount": 49.99},'
        ' {"market_id": "m1", "side": "NO", "amount": 100}]}'
    )
    error = answer_error(low, D("10000"), LIMITS, leg_minimum=True)
    assert error is not None and error.startswith("bet 1 of $49.99 is below the minimum bet")
    assert answer_error(low, D("10000"), LIMITS, leg_minimum=False) is None


def test_the_disagreement_threshold_is_the_exact_decimal_rule() -> None:
    """lib/pricing/marketPrices.ts `getDiffReason` computes |Gamma − CLOB| in JavaScript
    doubles, where |0.14 − 0.09| = 0.05000000000000002 > 0.05 and the price reads
    accepted_with_gamma_disagreement. This project keeps the exact decimal rule: a gap of
    exactly 0.05 is `accepted` (docs/methodology-v2.md names the labels that differ)."""
    assert abs(0.14 - 0.09) > 0.05  # the original's arithmetic
    quote = validate_price(D("0.14"), ClobQuote("t", mid=D("0.09")))
    assert (quote.status, quote.disagreement) == ("accepted", D("0.05"))
    wider = validate_price(D("0.14"), ClobQuote("t", mid=D("0.089")))
    assert wider.status == "accepted_with_gamma_disagreement"


def test_a_leg_refused_after_its_price_keeps_the_quotes_it_met() -> None:
    """A SELL whose share count rounds to nothing is refused after its price was read: its
    record keeps the quotes and market, so a replay from the record refuses it alike."""
    tiny = [HeldPosition(7, "m1", "YES", Holding(D("0.000001"), D("0.000001")))]
    sale = decide('{"action": "SELL", "sells": [{"position_id": 7, "percentage": 1}]}')
    read = quotes("clob_mid", "0.6")
    plan = plan_execution(sale, D("1000"), tiny, {"m1": MARKET}, LIMITS, None, read)
    record = plan.legs[0].record()
    assert (record["reason"], record["market_id"], record["quotes"]) == (
        "no_shares",
        "m1",
        read["m1"],
    )
