"""Methodology v2 in the engine: CLOB-priced frozen universes, trades and marks with their
provenance, the total bet cap, and the version stamp (docs/methodology-v2.md).

Real loopback servers: the scripted chat server answers the models, the scripted CLOB server
(`tests.markets.clob_server`) serves the books the project's real `ClobClient` reads.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal as D
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.prompts import V2_CAP_HEADING, V2_OBJECTIVE_HEADING
from arena.agents.responders import default_responders
from arena.config import Methodology, Settings, load_settings
from arena.core.accounting import mark_value
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import DecideResult, run_decisions
from arena.engine.market_sync import upsert_markets
from arena.engine.snapshots import take_snapshots
from arena.lineup import Lineup, parse_lineup
from arena.markets.clob import ClobClient
from arena.markets.types import ParsedMarket
from arena.storage.db import session_scope
from arena.storage.models import (
    Agent,
    Cohort,
    Decision,
    DecisionAttempt,
    MarketSnapshotItem,
    PortfolioSnapshot,
    Trade,
)
from tests.engine.chat_server import PerModelServer, answer, serve_models
from tests.factories import WEEK1
from tests.loopback import Reply
from tests.markets.clob_server import ClobServer
from tests.markets.clob_server import serve as serve_clob

V2 = Methodology(version="v2")
RUN = WEEK1 + timedelta(minutes=5)
LINEUP = """
[[family]]
id = "m-a"
display_name = "Model A"
provider = "Test"
model = "test/a"
"""
END = WEEK1 + timedelta(days=30)
MARKETS = [
    # YES token read, NO priced 1 − YES: mid 0.43, 0.03 from Gamma's 0.40 → accepted
    ParsedMarket(
        id="100",
        question="Will alpha happen?",
        market_type="binary",
        outcomes=["Yes", "No"],
        prices=[D("0.40"), D("0.60")],
        volume=5000.0,
        end_date=END,
        clob_token_ids=["t100y", "t100n"],
    ),
    # outcomes No-first; the YES book is crossed → Gamma's prices, reason crossed_book
    ParsedMarket(
        id="200",
        question="Will beta happen?",
        market_type="binary",
        outcomes=["No", "Yes"],
        prices=[D("0.75"), D("0.25")],
        volume=4000.0,
        end_date=END,
        clob_token_ids=["t200n", "t200y"],
    ),
    # Alice: mid 0.62, 0.12 from Gamma → accepted_with_gamma_disagreement; Bob: no book
    # (the CLOB's 404) → unknown_token; Carol: an empty book → empty_book
    ParsedMarket(
        id="300",
        question="Who wins gamma?",
        market_type="named",
        outcomes=["Alice", "Bob", "Carol"],
        prices=[D("0.5"), D("0.3"), D("0.2")],
        volume=3000.0,
        end_date=END,
        clob_token_ids=["t300a", "t300b", "t300c"],
    ),
    # no CLOB tokens at all → no_token
    ParsedMarket(
        id="400",
        question="Will delta happen?",
        market_type="binary",
        outcomes=["Yes", "No"],
        prices=[D("0.10"), D("0.90")],
        volume=2000.0,
        end_date=END,
    ),
]


def book(token: str, bids: list[str], asks: list[str]) -> dict[str, Any]:
    """A raw book in the CLOB's wire order (best price last)."""
    return {
        "market": "0xabc",
        "asset_id": token,
        "timestamp": "1761342851801",
        "hash": "h",
        "bids": [{"price": p, "size": "100"} for p in sorted(bids, key=D)],
        "asks": [{"price": p, "size": "100"} for p in sorted(asks, key=D, reverse=True)],
    }


BOOKS = [
    book("t100y", ["0.41", "0.40"], ["0.45", "0.46"]),
    book("t200y", ["0.30"], ["0.28"]),
    book("t300a", ["0.60"], ["0.64"]),
    book("t300c", [], []),
]


def client_for(server: ClobServer) -> ClobClient:
    """The real client, fast: one attempt, no pacing, no sleeping."""
    return ClobClient(server.url, max_attempts=1, min_interval=0.0, sleep=lambda _s: None)


@dataclass
class V2Arena:
    engine: Engine
    models: PerModelServer
    clob: ClobServer
    settings: Settings
    lineup: Lineup

    def decide(self, at: datetime = RUN, methodology: Methodology = V2) -> DecideResult:
        responders, close = default_responders(self.settings, sleep=lambda _s: None)
        reader = client_for(self.clob)
        try:
            return run_decisions(
                self.engine, at, self.lineup, methodology, responders, prices=lambda: reader
            )
        finally:
            close()
            reader.close()

    def snapshot(self, at: datetime) -> None:
        reader = client_for(self.clob)
        try:
            take_snapshots(self.engine, at, prices=lambda: reader)
        finally:
            reader.close()

    def trades(self) -> list[Trade]:
        with session_scope(self.engine) as s:
            return list(s.exec(select(Trade).order_by(col(Trade.id))))

    def decision(self) -> Decision:
        with session_scope(self.engine) as s:
            return s.exec(select(Decision).order_by(col(Decision.id))).first()  # type: ignore[return-value]


@pytest.fixture
def v2(engine: Engine) -> Iterator[V2Arena]:
    with serve_models() as models, serve_clob(*BOOKS) as clob:
        settings = load_settings(llm_api_key="sk-test-key", llm_base_url=models.url)
        lineup = parse_lineup(LINEUP)
        with session_scope(engine) as s:
            upsert_markets(s, MARKETS, WEEK1)
        start_cohort(engine, WEEK1, lineup, V2)
        yield V2Arena(engine, models, clob, settings, lineup)


def stamped_before_rule_sets(engine: Engine) -> None:
    """Make the cohort one stamped before v2 named its rule set: no `rule_set` key and the two
    retries every stamp then carried. It runs `frozen-quotes` for good: executions at the
    frozen quotes (Gamma's price where the CLOB had none), legs independent."""
    with session_scope(engine) as s:
        cohort = s.exec(select(Cohort)).one()
        constants = {k: v for k, v in cohort.constants.items() if k != "rule_set"}
        cohort.constants = {**constants, "malformed_retries": 2}
        s.add(cohort)


@pytest.fixture
def frozen(v2: V2Arena) -> V2Arena:
    """A v2 cohort of the `frozen-quotes` rule set (stamped before the key existed)."""
    stamped_before_rule_sets(v2.engine)
    return v2


def bet(*legs: tuple[str, str, int]) -> dict[str, Any]:
    return {
        "action": "BET",
        "bets": [{"market_id": m, "side": side, "amount": amount} for m, side, amount in legs],
        "reasoning": "test",
    }


FOUR_LEGS = bet(("100", "YES", 500), ("200", "NO", 500), ("300", "Alice", 500), ("300", "Bob", 500))


def test_a_v2_cohort_is_stamped_v2(v2: V2Arena) -> None:
    with session_scope(v2.engine) as s:
        cohort = s.exec(select(Cohort)).one()
    assert cohort.methodology_version == "v2"
    assert cohort.constants == {**V2.stamp()}
    assert cohort.constants["bet_cap"] == "decision_total"
    assert cohort.constants["prices"] == "clob_mid"


def test_the_frozen_universe_is_priced_at_validated_midpoints(v2: V2Arena) -> None:
    v2.models.script_model("test/a", answer({"action": "HOLD", "reasoning": "w"}, "test/a"))
    result = v2.decide()
    with session_scope(v2.engine) as s:
        items = {
            i.market_id: i
            for i in s.exec(
                select(MarketSnapshotItem).where(
                    MarketSnapshotItem.snapshot_id == result.snapshot_id
                )
            )
        }
    assert items["100"].prices == ["0.43", "0.57"]
    yes, no = items["100"].quotes or []
    assert (yes["source"], yes["status"], yes["clob_price"], yes["gamma_price"]) == (
        "clob_mid",
        "accepted",
        "0.43",
        "0.4",  # decimals as text, normalised
    )
    assert yes["disagreement"] == "0.03" and no["price"] == "0.57" and no["status"] == "accepted"
    assert items["200"].prices == ["0.75", "0.25"]  # Gamma's: the YES book is crossed
    assert {q["fallback_reason"] for q in items["200"].quotes or []} == {"crossed_book"}
    assert [q["status"] for q in items["200"].quotes or []] == ["fallback_gamma"] * 2
    assert items["300"].prices == ["0.62", "0.3", "0.2"]
    alice, bob, carol = items["300"].quotes or []
    assert (alice["status"], alice["disagreement"]) == ("accepted_with_gamma_disagreement", "0.12")
    assert (bob["status"], bob["fallback_reason"]) == ("fallback_gamma", "unknown_token")
    assert (carol["status"], carol["fallback_reason"]) == ("fallback_gamma", "empty_book")
    assert {q["fallback_reason"] for q in items["400"].quotes or []} == {"no_token"}
    # ONE batched read for the run, the YES token only of each binary market
    posts = v2.clob.requests_to("POST", "/books")
    assert len(posts) == 1
    asked = [entry["token_id"] for entry in posts[0].body]
    assert sorted(asked) == ["t100y", "t200y", "t300a", "t300b", "t300c"]
    prompt = v2.models.requests_for("test/a")[0].json["messages"]
    assert V2_OBJECTIVE_HEADING in prompt[0]["content"]
    assert V2_CAP_HEADING in prompt[0]["content"]
    assert "|Yes 0.43|" in prompt[1]["content"] or "0.43" in prompt[1]["content"]
    assert "for all of this decision's bets together" in prompt[1]["content"]


def test_trades_carry_their_price_and_its_provenance(frozen: V2Arena) -> None:
    v2 = frozen
    v2.models.script_model("test/a", answer(FOUR_LEGS, "test/a"))
    v2.decide()
    trades = {(t.market_id, t.side): t for t in v2.trades()}
    assert set(trades) == {("100", "YES"), ("200", "NO"), ("300", "Alice"), ("300", "Bob")}
    assert trades[("100", "YES")].price == D("0.43")
    assert trades[("100", "YES")].price_source == "clob_mid"
    assert trades[("100", "YES")].price_quote == {
        "price": "0.43",
        "source": "clob_mid",
        "status": "accepted",
        "gamma_price": "0.4",
        "clob_price": "0.43",
        "disagreement": "0.03",
        "fallback_reason": None,
    }
    no = trades[("200", "NO")]
    assert (no.price, no.price_source) == (D("0.75"), "gamma")
    assert no.price_quote is not None and no.price_quote["fallback_reason"] == "crossed_book"
    alice = trades[("300", "Alice")]
    assert (alice.price, alice.price_source) == (D("0.62"), "clob_mid")
    assert alice.price_quote is not None
    assert alice.price_quote["status"] == "accepted_with_gamma_disagreement"
    bob = trades[("300", "Bob")]
    assert (bob.price, bob.price_source) == (D("0.3"), "gamma")
    assert bob.price_quote is not None and bob.price_quote["fallback_reason"] == "unknown_token"


def test_clob_down_falls_back_to_gamma_with_the_reason(frozen: V2Arena) -> None:
    v2 = frozen
    v2.clob.script("POST", "/books", Reply(503, {"error": "down"}))
    v2.clob.script("GET", "/book", Reply(503, {"error": "down"}))
    v2.models.script_model("test/a", answer(bet(("100", "YES", 500)), "test/a"))
    v2.decide()
    (trade,) = v2.trades()
    assert (trade.price, trade.price_source) == (D("0.40"), "gamma")
    assert trade.price_quote is not None
    assert trade.price_quote["status"] == "fallback_gamma"
    assert trade.price_quote["fallback_reason"] == "clob_unavailable"


def test_a_plan_over_the_total_cap_is_answered_again(v2: V2Arena) -> None:
    """v2: two bets of $1,500 (each under 25% of cash, $3,000 in total) are invalid as a
    whole; the retry names the total and the cap, and the corrected plan executes."""
    over = bet(("100", "YES", 1500), ("300", "Alice", 1500))
    v2.models.script_model(
        "test/a", answer(over, "test/a"), answer(bet(("100", "YES", 1000)), "test/a")
    )
    v2.decide()
    decision = v2.decision()
    assert (decision.status, decision.attempts) == ("ok", 2)
    (error,) = decision.validation_errors
    assert "$3,000.00" in error and "$2,500.00" in error
    retry = v2.models.requests_for("test/a")[1].json["messages"][-1]["content"]
    assert "$3,000.00" in retry
    with session_scope(v2.engine) as s:
        outcomes = [
            a.outcome
            for a in s.exec(select(DecisionAttempt).order_by(col(DecisionAttempt.attempt_no)))
        ]
    assert outcomes == ["malformed", "valid"]
    assert [(t.market_id, t.amount) for t in v2.trades()] == [("100", D("1000"))]


def test_always_over_the_total_cap_holds(frozen: V2Arena) -> None:
    v2 = frozen
    over = bet(("100", "YES", 2000), ("300", "Alice", 600))
    v2.models.script_model("test/a", answer(over, "test/a"))
    v2.decide()
    decision = v2.decision()
    assert (decision.status, decision.attempts) == ("fallback_hold", 3)
    assert v2.trades() == []


def test_exactly_the_total_cap_executes(v2: V2Arena) -> None:
    v2.models.script_model(
        "test/a", answer(bet(("100", "YES", 2000), ("300", "Alice", 500)), "test/a")
    )
    v2.decide()
    assert v2.decision().status == "ok"
    assert sum((t.amount for t in v2.trades()), D(0)) == D("2500")


def test_marks_read_the_clob_and_keep_the_prior_value_without_one(frozen: V2Arena) -> None:
    v2 = frozen
    v2.models.script_model("test/a", answer(FOUR_LEGS, "test/a"))
    v2.decide()
    positions = {(t.market_id, t.side): (t.position_id, t.shares) for t in v2.trades()}
    v2.clob.add_book(book("t100y", ["0.50"], ["0.54"]))  # YES moves to 0.52
    v2.clob.add_book(book("t300a", ["0.70"], ["0.70"]))  # crossed: no price for Alice now
    before = len(v2.clob.requests_to("POST", "/books"))
    at = RUN + timedelta(hours=1)
    v2.snapshot(at)
    assert len(v2.clob.requests_to("POST", "/books")) == before + 1  # one batched read
    with session_scope(v2.engine) as s:
        row = s.exec(select(PortfolioSnapshot)).one()
    provenance = row.price_provenance or {}
    yes = provenance[str(positions[("100", "YES")][0])]
    assert (yes["mark"], yes["source"], yes["gamma_price"]) == ("0.52", "clob_mid", "0.4")
    assert yes["status"] == "accepted_with_gamma_disagreement"  # 0.12 from Gamma's 0.40
    no = provenance[str(positions[("200", "NO")][0])]
    assert (no["mark"], no["status"], no["fallback_reason"]) == (
        "0.75",
        "prior_value",
        "crossed_book",
    )
    alice = provenance[str(positions[("300", "Alice")][0])]
    assert (alice["mark"], alice["status"], alice["fallback_reason"]) == (
        "0.62",
        "prior_value",
        "crossed_book",
    )
    bob = provenance[str(positions[("300", "Bob")][0])]
    assert (bob["mark"], bob["status"], bob["fallback_reason"]) == (
        "0.3",
        "prior_value",
        "unknown_token",
    )
    marks = {("100", "YES"): "0.52", ("200", "NO"): "0.75", ("300", "Alice"): "0.62"}
    expected = sum(
        (mark_value(n, D(marks.get(key, "0.3"))) for key, (_, n) in positions.items()), D(0)
    )
    assert row.positions_value == expected
    assert row.total_value == D("8000") + expected


def test_a_v1_cohort_keeps_v1_rules_after_the_switch(v2: V2Arena) -> None:
    """Week 1: a v1 cohort; week 2 the deployment runs v2. The week-2 run decides the v1
    cohort on v1's prompt at Gamma's prices (no quotes) and the new cohort on v2's."""
    engine = v2.engine
    with session_scope(engine) as s:  # make the fixture's cohort a v1 one, as if started so
        cohort = s.exec(select(Cohort)).one()
        cohort.methodology_version, cohort.constants = "v1", Methodology().stamp()
        s.add(cohort)
    week2 = WEEK1 + timedelta(weeks=1)
    started = start_cohort(engine, week2, v2.lineup, V2)
    assert started.created
    start_cohort(engine, week2, v2.lineup, Methodology())  # a v1 process: no change
    hold = answer({"action": "HOLD", "reasoning": "w"}, "test/a")
    v2.models.script_model("test/a", hold, hold)
    result = v2.decide(week2 + timedelta(minutes=5))
    assert result.statuses == {"ok": 2}
    with session_scope(engine) as s:
        cohorts = {c.number: c for c in s.exec(select(Cohort))}
        assert [cohorts[1].methodology_version, cohorts[2].methodology_version] == ["v1", "v2"]
        assert cohorts[1].constants == Methodology().stamp()
        rows = s.exec(select(Decision, Agent).join(Agent, col(Agent.id) == Decision.agent_id)).all()
        by_cohort = {agent.cohort_id: decision for decision, agent in rows}
        v1_row, v2_row = (by_cohort[c.id] for c in (cohorts[1], cohorts[2]) if c.id is not None)
        assert v1_row.market_snapshot_id != v2_row.market_snapshot_id
        v1_items = s.exec(
            select(MarketSnapshotItem).where(
                MarketSnapshotItem.snapshot_id == v1_row.market_snapshot_id
            )
        ).all()
        assert all(item.quotes is None for item in v1_items)
        assert {i.market_id: i.prices for i in v1_items}["100"] == ["0.40", "0.60"]
    assert V2_OBJECTIVE_HEADING not in (v1_row.prompt_system or "")
    assert V2_OBJECTIVE_HEADING in (v2_row.prompt_system or "")


def test_a_v1_run_never_reads_the_clob(engine: Engine) -> None:
    """v1 cohorts only: neither the decision run nor the snapshot pass builds a CLOB reader."""

    def no_clob() -> Any:
        raise AssertionError("a v1 run read the CLOB")

    with serve_models() as models:
        settings = load_settings(llm_api_key="sk-test-key", llm_base_url=models.url)
        lineup = parse_lineup(LINEUP)
        with session_scope(engine) as s:
            upsert_markets(s, MARKETS, WEEK1)
        start_cohort(engine, WEEK1, lineup, Methodology())
        models.script_model("test/a", answer(bet(("100", "YES", 500)), "test/a"))
        responders, close = default_responders(settings, sleep=lambda _s: None)
        try:
            run_decisions(engine, RUN, lineup, Methodology(), responders, prices=no_clob)
        finally:
            close()
        take_snapshots(engine, RUN + timedelta(hours=1), prices=no_clob)
    with session_scope(engine) as s:
        (trade,) = s.exec(select(Trade)).all()
        assert (trade.price, trade.price_source, trade.price_quote) == (D("0.4"), None, None)
        row = s.exec(select(PortfolioSnapshot)).one()
        assert row.price_provenance is None


def test_a_mixed_snapshot_pass_reads_the_clob_for_v2_positions_only(v2: V2Arena) -> None:
    """A v1 cohort (week 1) and a v2 cohort (week 2) each hold a position: the pass reads the
    books of the v2 cohort's market only, marks the v1 position at Gamma's price as v1 does,
    and records provenance on the v2 agent's row alone."""
    engine = v2.engine
    with session_scope(engine) as s:
        cohort = s.exec(select(Cohort)).one()
        cohort.methodology_version, cohort.constants = "v1", Methodology().stamp()
        s.add(cohort)
    v2.models.script_model("test/a", answer(bet(("200", "NO", 500)), "test/a"))
    v2.decide(RUN, Methodology())
    week2 = WEEK1 + timedelta(weeks=1)
    start_cohort(engine, week2, v2.lineup, V2)
    v2.models.script_model(
        "test/a",
        answer({"action": "HOLD", "reasoning": "w"}, "test/a"),
        answer(bet(("100", "YES", 500)), "test/a"),
    )
    v2.decide(week2 + timedelta(minutes=5))
    before = len(v2.clob.requests_to("POST", "/books"))
    v2.snapshot(week2 + timedelta(hours=1))
    posts = v2.clob.requests_to("POST", "/books")[before:]
    assert [[entry["token_id"] for entry in post.body] for post in posts] == [["t100y"]]
    with session_scope(engine) as s:
        rows = s.exec(
            select(PortfolioSnapshot, Agent, Cohort)
            .join(Agent, col(Agent.id) == PortfolioSnapshot.agent_id)
            .join(Cohort, col(Cohort.id) == Agent.cohort_id)
        ).all()
    by_version = {cohort.methodology_version: row for row, _agent, cohort in rows}
    assert by_version["v1"].price_provenance is None
    assert by_version["v1"].positions_value == mark_value(D("666.666666"), D("0.75"))
    (record,) = (by_version["v2"].price_provenance or {}).values()
    assert (record["source"], record["mark"]) == ("clob_mid", "0.43")
