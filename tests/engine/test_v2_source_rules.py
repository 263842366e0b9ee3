"""Methodology v2 as the original's code runs it (rule set `source-7c78b0c`), through the real
engine on each backend, and its replay bundle verified.

Each test names the original's file and function whose rule it holds (the original arena's
repository at 7c78b0c, 2026-05-06). Real loopback servers: the scripted chat server answers
the model, the scripted CLOB server serves the books the project's real `ClobClient` reads.
"""

import csv
import io
import json
from datetime import date, timedelta
from decimal import Decimal as D
from typing import Any

from sqlmodel import select

from arena.agents.responders import BaselineResponder
from arena.analytics.export.tables import ExportFilters, write_csv
from arena.analytics.replay.bundle import build_bundle
from arena.analytics.replay.verify import verify_bundle
from arena.engine.late_entry import play_late_entry
from arena.lineup import Lineup
from arena.storage.db import session_scope
from arena.storage.models import Agent
from tests.engine.test_v2_engine import (
    BOOKS,
    V2Arena,
    answer,
    bet,
    book,
    v2,  # noqa: F401  (the fixture: a v2 cohort on each backend, real loopback servers)
)
from tests.factories import WEEK1
from tests.late_entry_rows import newcomer
from tests.loopback import Reply
from tests.test_v2_bundles import forged


def cash(arena: V2Arena) -> D:
    with session_scope(arena.engine) as s:
        return s.exec(select(Agent)).one().cash_balance


def test_rejects_production_priced_bets_when_validated_clob_price_is_unavailable(
    v2: V2Arena,  # noqa: F811
) -> None:
    """lib/engine/execution/bet/pricing.ts `resolveBetPriceAndSideOrError`: no trade at Gamma's
    price; lib/engine/execution/bets.ts `executeBetsAtomically` ("rolls back atomic BET batches
    when a later leg fails"): market 200's YES book is crossed, so its NO leg has no CLOB price,
    and the whole batch is refused, the leg at 0.43 with it."""
    v2.models.script_model("test/a", answer(bet(("100", "YES", 500), ("200", "NO", 500)), "test/a"))
    v2.decide()
    decision = v2.decision()
    assert v2.trades() == [] and cash(v2) == D("10000")
    assert decision.status == "zero_trade"
    first, second = decision.legs
    assert (first["reason"], second["reason"]) == ("batch_rolled_back", "no_clob_price")
    assert second["message"] == 'No validated CLOB price available for binary market side "NO"'
    assert first["message"] == (
        "BET batch failed; no trades executed: "
        'No validated CLOB price available for binary market side "NO"'
    )
    assert {q["fallback_reason"] for q in second["quotes"]} == {"crossed_book"}
    out = io.StringIO()
    write_csv(v2.engine, "legs", ExportFilters(), out, 100)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [(r["market_id"], r["executed"], r["reason"]) for r in rows] == [
        ("100", "false", "batch_rolled_back"),
        ("200", "false", "no_clob_price"),
    ]
    assert json.loads(rows[1]["execution_quotes"])[0]["fallback_reason"] == "crossed_book"


def test_executes_at_midpoints_re_read_after_the_answer(v2: V2Arena) -> None:  # noqa: F811
    """lib/engine/decision/prepareExecutionPrices.ts `prepareExecutionPriceOverrides`: the
    prompt shows the frozen 0.43; the book moves while the model thinks; the BET fills at the
    midpoint re-read after the answer (0.52), and the trade records both."""
    moved = book("t100y", ["0.50"], ["0.54"])
    v2.clob.script(
        "POST",
        "/books",
        Reply(body=[b for b in BOOKS if b["asset_id"] != "t300c"]),
        Reply(body=[moved]),
    )
    v2.models.script_model("test/a", answer(bet(("100", "YES", 520)), "test/a"))
    v2.decide()
    prompt = v2.models.requests_for("test/a")[0].json["messages"][1]["content"]
    assert "0.43" in prompt and "0.52" not in prompt
    (trade,) = v2.trades()
    assert (trade.price, trade.shares, trade.price_source) == (D("0.52"), D("1000"), "clob_mid")
    assert trade.price_quote is not None
    assert (trade.price_quote["clob_price"], trade.price_quote["frozen_price"]) == ("0.52", "0.43")
    assert trade.price_quote["status"] == "accepted_with_gamma_disagreement"  # 0.12 from 0.40
    reads = v2.clob.requests_to("POST", "/books")
    assert [[e["token_id"] for e in r.body] for r in reads][1] == ["t100y"]


def test_a_bet_below_the_minimum_spoils_the_answer_with_one_retry(
    v2: V2Arena,  # noqa: F811
) -> None:
    """lib/openrouter/parser/validate/bet.ts `validateBet` at parse time, and
    lib/constants/llm.ts `LLM_MAX_RETRIES = 1`: an answer with a $40 leg is malformed as a
    whole (v1 would refuse that leg alone and fill the other); answered again once, then HOLD."""
    low = bet(("100", "YES", 500), ("300", "Alice", 40))
    v2.models.script_model("test/a", answer(low, "test/a"))
    v2.decide()
    decision = v2.decision()
    assert (decision.status, decision.attempts) == ("fallback_hold", 2)
    assert len(v2.models.requests_for("test/a")) == 2
    assert all("bet 2 of $40.00 is below the minimum bet" in e for e in decision.validation_errors)
    assert v2.trades() == []


def _forged_execution_price(decisions: list[dict[str, Any]]) -> None:
    """The re-read 0.52 told as 0.48, its CLOB price too: the quote is self-consistent."""
    for decision in decisions:
        for leg in decision["legs"] or ():
            for quote in leg.get("quotes") or ():
                if quote["clob_price"] == "0.52":
                    quote["clob_price"] = quote["price"] = "0.48"


def test_a_source_rules_bundle_verifies_from_its_execution_quotes(
    v2: V2Arena,  # noqa: F811
) -> None:
    """A fill at a re-read price, a refused batch and a sale at a re-read price: the bundle
    verifies 100%; an execution quote forged consistently (price and CLOB price) is caught."""
    moved = book("t100y", ["0.50"], ["0.54"])
    v2.models.script_model(
        "test/a",
        answer(bet(("100", "YES", 520), ("300", "Alice", 500)), "test/a"),
    )
    v2.decide()
    v2.snapshot(WEEK1 + timedelta(hours=1))
    v2.clob.add_book(moved)
    week2 = WEEK1 + timedelta(days=7, minutes=5)
    v2.models.script_model("test/a", answer(bet(("100", "YES", 500), ("200", "NO", 50)), "test/a"))
    v2.decide(week2)
    v2.snapshot(week2 + timedelta(hours=1))
    position = next(t.position_id for t in v2.trades() if t.market_id == "100")
    sale = {"action": "SELL", "sells": [{"position_id": position, "percentage": 50}]}
    v2.models.script_model("test/a", answer({**sale, "reasoning": "t"}, "test/a"))
    v2.decide(week2 + timedelta(days=7))
    v2.snapshot(week2 + timedelta(days=7, hours=1))
    sold = [t for t in v2.trades() if t.trade_type == "SELL"]
    assert [(t.price, t.price_quote and t.price_quote["frozen_price"]) for t in sold] == [
        (D("0.52"), "0.52")
    ]
    built = build_bundle(v2.engine, 1, provisional=True)
    report = verify_bundle(built.bundle, published_hash=built.hash)
    assert report.ok, [(c.name, c.mismatches) for c in report.checks if not c.ok]
    names = {c.name: c.compared for c in report.checks}
    assert names["execution-time prices follow their quotes"] > 0
    # a late entrant replays the cohort's runs at their frozen quotes, by the same rules: the
    # favourite baseline backs market 200 too, whose YES book was crossed at every run, so each
    # of its batches rolls back, and its bundle recomputes each refusal from those quotes
    newcomer_lineup = Lineup(families=[*v2.lineup.families, newcomer("late", date(2025, 1, 1))])
    at = WEEK1 + timedelta(weeks=6)
    late = play_late_entry(v2.engine, at, newcomer_lineup, "late", [1], BaselineResponder)
    assert (late.trades, late.decided) == (0, {"zero_trade": 3}), late.counts()
    shadow = build_bundle(v2.engine, 1, late_entry="late", provisional=True).bundle
    shadow_report = verify_bundle(shadow)
    assert shadow_report.ok, [(c.name, c.mismatches) for c in shadow_report.checks if not c.ok]
    shadow_checks = {c.name: c.compared for c in shadow_report.checks}
    assert shadow_checks["execution-time prices follow their quotes"] > 0
    forgery = forged(built.bundle, "decisions.jsonl", _forged_execution_price)
    forged_report = verify_bundle(forgery)
    assert not forged_report.ok
    assert "BUY / SELL trades recomputed" in {c.name for c in forged_report.checks if not c.ok}
