"""The original's validation rule: statuses, fallback reasons, binary vs named outcomes."""

from decimal import Decimal

import pytest

from arena.markets.clob_wire import ClobQuote
from arena.markets.price_source import (
    GAMMA_DISAGREEMENT,
    price_market,
    tokens_to_read,
    validate_price,
)
from arena.markets.types import ParsedMarket

D = Decimal


def market(outcomes: list[str], prices: list[str] | None, tokens: list[str] | None) -> ParsedMarket:
    kind = "binary" if sorted(o.lower() for o in outcomes) == ["no", "yes"] else "named"
    return ParsedMarket(
        id="m1",
        question="q",
        market_type=kind,
        outcomes=outcomes,
        prices=[D(p) for p in prices] if prices is not None else None,
        clob_token_ids=tokens,
    )


def test_clob_midpoint_is_accepted_within_the_threshold_inclusive() -> None:
    quote = validate_price(D("0.50"), ClobQuote("t", mid=D("0.55")))
    assert (quote.price, quote.source, quote.status) == (D("0.55"), "clob_mid", "accepted")
    assert quote.disagreement == GAMMA_DISAGREEMENT and quote.fallback_reason is None


def test_more_than_five_cents_apart_is_flagged_but_still_the_clob_price() -> None:
    quote = validate_price(D("0.03"), ClobQuote("t", mid=D("0.0801")))
    assert quote.status == "accepted_with_gamma_disagreement"
    assert quote.price == D("0.0801") and quote.gamma_price == D("0.03")
    assert quote.disagreement == D("0.0501")


@pytest.mark.parametrize(
    "reason", ["unknown_token", "clob_unavailable", "malformed", "empty_book", "crossed_book"]
)
def test_no_clob_price_falls_back_to_gamma_with_the_reason(reason: str) -> None:
    quote = validate_price(D("0.4"), ClobQuote("t", reason=reason, detail="x"))  # type: ignore[arg-type]
    assert (quote.price, quote.source, quote.status) == (D("0.4"), "gamma", "fallback_gamma")
    assert quote.fallback_reason == reason and quote.clob_price is None


def test_no_token_and_no_gamma_price_is_unpriced_never_invented() -> None:
    assert validate_price(D("0.4"), None).fallback_reason == "no_token"
    quote = validate_price(None, ClobQuote("t", reason="unknown_token"))
    assert quote.price is None and quote.status == "unpriced"


def test_a_quote_has_a_mid_or_a_reason() -> None:
    with pytest.raises(ValueError):
        ClobQuote("t")
    with pytest.raises(ValueError):
        ClobQuote("t", mid=D("0.5"), reason="malformed")


def test_binary_reads_the_yes_token_and_prices_no_as_its_complement() -> None:
    m = market(["No", "Yes"], ["0.70", "0.30"], ["tok-no", "tok-yes"])
    assert tokens_to_read(m) == ["tok-yes"]
    no, yes = price_market(m, {"tok-yes": ClobQuote("tok-yes", mid=D("0.36"))})
    assert (yes.price, yes.status) == (D("0.36"), "accepted_with_gamma_disagreement")
    assert (no.price, no.clob_price, no.gamma_price) == (D("0.64"), D("0.64"), D("0.70"))
    assert no.status == yes.status and no.source == "clob_mid"


def test_binary_fallback_keeps_gammas_own_no_price() -> None:
    m = market(["Yes", "No"], ["0.30", "0.71"], ["tok-yes", "tok-no"])
    yes, no = price_market(m, {"tok-yes": ClobQuote("tok-yes", reason="crossed_book")})
    assert (yes.price, yes.fallback_reason) == (D("0.30"), "crossed_book")
    assert (no.price, no.status, no.fallback_reason) == (
        D("0.71"),
        "fallback_gamma",
        "crossed_book",
    )


def test_named_market_reads_each_outcomes_own_token() -> None:
    m = market(["A", "B", "C"], ["0.5", "0.3", "0.2"], ["ta", "tb", "tc"])
    assert tokens_to_read(m) == ["ta", "tb", "tc"]
    a, b, c = price_market(
        m, {"ta": ClobQuote("ta", mid=D("0.52")), "tb": ClobQuote("tb", reason="empty_book")}
    )
    assert (a.price, a.status) == (D("0.52"), "accepted")
    assert (b.price, b.fallback_reason) == (D("0.3"), "empty_book")
    assert (c.price, c.fallback_reason) == (D("0.2"), "clob_unavailable")


def test_a_market_without_tokens_falls_back_with_no_token() -> None:
    m = market(["Yes", "No"], ["0.3", "0.7"], None)
    assert tokens_to_read(m) == []
    assert [q.fallback_reason for q in price_market(m, {})] == ["no_token", "no_token"]
