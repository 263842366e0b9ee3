"""The bad-input corpus: real-looking model answers that must never crash or trade illegally.

`answers.jsonl` holds the stored cases, one JSON object a line:

    {"id": ..., "category": ..., "raw": <the model's text>, "expect": "valid" | "malformed",
     "action": <BET|SELL|HOLD, valid cases>, "executed": <legs executed, optional>}

Cases far too large to store (a megabyte of text, answers at the 200,000-character limit) are
made by `generated_cases()` below; the stored cases are the large majority.

To add a case, append a line to answers.jsonl (keep ids unique; `executed` is the number of
legs the planner executes against the fixed world below, with $10,000 cash and position 7).

Each case is checked three ways:

1. `parse_decision` never raises, agrees with `expect`, and every error is one line of at
   most 400 characters (it is fed back to the model);
2. every case that parses is planned with `plan_execution` against a fixed snapshot and
   portfolio, and every EXECUTED leg is checked against the rules independently of the
   executor: bet size within [$50, 25% of the cash at that moment], market offered and
   tradable, side an outcome of it, side-correct price in (0, 1), sells only of the agent's
   own position, cash never negative, and the books conserved;
3. a few cases go end to end through the real decision run against the scripted
   OpenAI-compatible server (malformed three times → `fallback_hold`; malformed then valid →
   `ok`; text a database may refuse → stored or refused as malformed, never a crash).
"""

import json
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from decimal import ROUND_DOWN, Decimal
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.json_extraction import FROM_THINKING_NOTE, MAX_RAW_CHARS
from arena.agents.parsing import MAX_LEGS, BetLeg, Decision, SellLeg, parse_decision
from arena.agents.responders import default_responders
from arena.config import Methodology, Settings, load_settings
from arena.core.accounting import BetLimits, Holding
from arena.core.execution import ExecutionPlan, HeldPosition, SnapshotMarket, plan_execution
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import DecideResult, run_decisions
from arena.engine.market_sync import upsert_markets
from arena.lineup import Lineup, parse_lineup
from arena.markets.types import ParsedMarket
from arena.storage.db import session_scope
from arena.storage.models import Agent, DecisionAttempt, Trade
from arena.storage.models import Decision as DecisionRow
from tests.engine.chat_server import PerModelServer, answer, serve_models
from tests.factories import WEEK1

CORPUS = Path(__file__).with_name("answers.jsonl")
MICRO = Decimal("0.000001")


@dataclass(frozen=True)
class Case:
    """One model answer and what it must end as."""

    id: str
    category: str
    raw: str
    expect: str
    action: str | None = None
    executed: int | None = None


def stored_cases() -> list[Case]:
    """Every case of answers.jsonl, in file order."""
    with CORPUS.open(encoding="utf-8") as handle:
        return [Case(**json.loads(line)) for line in handle if line.strip()]


def _pad(text: str, total: int) -> str:
    """`text` repeated and cut to exactly `total` characters."""
    return (text * (total // len(text) + 1))[:total]


def generated_cases() -> list[Case]:
    """The cases too large to store: a megabyte of text and answers at the size limit.

    Sizes are chosen around MAX_RAW_CHARS (200,000): a megabyte is refused before any scan;
    an answer of exactly the limit is read; junk that only *looks* like JSON up to the limit
    exhausts the scan budget and is refused quickly (a retry, not a hang).
    """
    hold = json.dumps({"action": "HOLD", "reasoning": "Prices look fair."})
    bet = json.dumps(
        {
            "action": "BET",
            "bets": [{"market_id": "501", "side": "YES", "amount": 500}],
            "reasoning": "cheap",
        }
    )
    big = "large_text"
    return [
        Case(
            "gen-1mb-prose",
            big,
            _pad("The market looks efficient to me. ", 1_000_000 - len(hold)) + hold,
            "malformed",
        ),
        Case(
            "gen-1mb-reasoning",
            big,
            json.dumps({"action": "HOLD", "reasoning": "why " * 250_000}),
            "malformed",
        ),
        Case("gen-1mb-zero-width", big, "\u200b" * 1_000_000 + hold, "malformed"),
        Case("gen-1mb-open-braces", big, "{" * 1_000_000, "malformed"),
        Case("gen-1mb-fences", big, _pad("```json\n" + bet + "\n```\n", 1_000_000), "malformed"),
        Case(
            "gen-limit-exact",
            big,
            _pad("Thinking it over. ", MAX_RAW_CHARS - len(bet)) + bet,
            "valid",
            "BET",
            1,
        ),
        Case(
            "gen-limit-plus-one",
            big,
            _pad("Thinking it over. ", MAX_RAW_CHARS + 1 - len(bet)) + bet,
            "malformed",
        ),
        Case(
            "gen-broken-arrays-then-answer",
            big,
            _pad('{"a": [1, ', MAX_RAW_CHARS - 1_000) + hold,
            "malformed",
        ),
        Case(
            "gen-keyless-braces-then-answer",
            big,
            _pad("{maybe} {not} ", MAX_RAW_CHARS - 1_000) + bet,
            "valid",
            "BET",
            1,
        ),
        Case(
            "gen-empty-fences-then-answer",
            big,
            _pad("```json\n{}\n```\n", MAX_RAW_CHARS - 1_000) + bet,
            "valid",
            "BET",
            1,
        ),
        Case("gen-deep-arrays", big, "[" * 99_000 + hold + "]" * 99_000, "valid", "HOLD"),
        Case("gen-deep-objects", big, '{"a":' * 33_000 + hold + "}" * 33_000, "malformed"),
    ]


STORED = stored_cases()
GENERATED = generated_cases()
ALL = STORED + GENERATED
VALID = [case for case in ALL if case.expect == "valid"]

REQUIRED_CATEGORIES = {
    "fences",
    "prose",
    "trailing_commas",
    "nan_infinity",
    "huge_numbers",
    "negative_amounts",
    "amounts_as_strings",
    "duplicate_legs",
    "unknown_actions",
    "nested_json",
    "large_text",
    "unicode",
    "prompt_injection",
    "truncated",
    "empty",
    "html",
    "yaml",
    "multiple_objects",
    "wrong_types",
    "missing_legs",
    "percentages",
    "foreign_positions",
    "unknown_markets",
    "bad_sides",
    "over_limits",
    "total_above_cash",
    "thinking",
}

# ------------------------------------------------------------------ the fixed world

SNAPSHOT: dict[str, SnapshotMarket] = {
    m.market_id: m
    for m in (
        SnapshotMarket("501", "binary", ["Yes", "No"], ["0.40", "0.60"]),
        SnapshotMarket("502", "binary", ["No", "Yes"], ["0.70", "0.30"]),
        SnapshotMarket("503", "named", ["Red", "Blue", "Green"], ["0.5", "0.3", "0.2"]),
        SnapshotMarket("504", "binary", ["Yes", "No"], ["0.9", "0.1"], tradable=False),
        SnapshotMarket("505", "binary", ["Yes", "No"], ["1", "0"]),
        SnapshotMarket("506", "named", ["Over 2.5", "Under 2.5"], ["0.55", "0.45"]),
    )
}
OWN_POSITION = HeldPosition(7, "501", "YES", Holding(Decimal("1000"), Decimal("400")))
HELD = [OWN_POSITION]
CASH = Decimal("10000")
LIMITS = BetLimits()


def _price(market: SnapshotMarket, side: str) -> Decimal:
    """The side-correct price, computed here without the executor's helpers."""
    if market.market_type == "binary":
        yes = Decimal(market.prices[[o.upper() for o in market.outcomes].index("YES")])
        return yes if side == "YES" else 1 - yes
    return Decimal(market.prices[market.outcomes.index(side)])


def assert_legal(decision: Decision, plan: ExecutionPlan, cash: Decimal) -> None:
    """Every executed leg obeys the rules; rejected legs change nothing; the books balance."""
    holdings = {(p.market_id, p.side): p.holding for p in HELD}
    own_ids = {p.position_id: (p.market_id, p.side) for p in HELD}
    start = cash + sum(h.cost_basis - h.realized_pnl for h in holdings.values())
    requests: Sequence[BetLeg | SellLeg] = []
    if decision.action == "BET":
        requests = decision.bets
    elif decision.action == "SELL":
        requests = decision.sells
    assert [leg.index for leg in plan.legs] == list(range(len(requests)))
    assert plan.cash_before == cash and plan.executed <= MAX_LEGS
    for leg, request in zip(plan.legs, requests, strict=True):
        if not leg.executed:
            assert leg.reason and leg.message, leg
            continue
        assert leg.cash_before == cash, "each leg sees the cash left by the legs before it"
        assert leg.market_id in SNAPSHOT and leg.side is not None
        market = SNAPSHOT[leg.market_id]
        assert market.tradable, f"traded closed market {leg.market_id}"
        price = _price(market, leg.side)
        assert leg.price == price and Decimal(0) < price < Decimal(1)
        assert leg.amount is not None and leg.shares is not None and leg.shares > 0
        key = (leg.market_id, leg.side)
        before = holdings.get(key, Holding())
        after = leg.holding_after
        assert after is not None
        if isinstance(request, BetLeg):
            assert leg.kind == "BET"
            assert leg.market_id == request.market_id
            if market.market_type == "binary":
                assert leg.side in ("YES", "NO")
            else:
                assert leg.side in market.outcomes
            wanted = request.side.strip().casefold()
            assert leg.side.casefold() == wanted, "the side traded is the side asked for"
            assert LIMITS.min_bet <= leg.amount <= cash * LIMITS.max_bet_fraction
            assert abs(leg.amount - request.amount) <= MICRO
            assert leg.shares == (leg.amount / price).quantize(MICRO, rounding=ROUND_DOWN)
            assert leg.implied_confidence is not None and 0 < leg.implied_confidence <= 1
            assert after.shares == before.shares + leg.shares
            assert after.cost_basis == before.cost_basis + leg.amount
            assert after.realized_pnl == before.realized_pnl
            cash -= leg.amount
        else:
            assert leg.kind == "SELL"
            position_id = request.position_id
            assert position_id in own_ids and own_ids[position_id] == key, "sold a foreign one"
            assert leg.position_id == position_id
            assert Decimal(0) < request.percentage <= 100
            assert leg.shares <= before.shares and leg.amount >= 0
            assert leg.amount == (leg.shares * price).quantize(MICRO, rounding=ROUND_DOWN)
            removed = before.cost_basis - after.cost_basis
            assert Decimal(0) <= removed <= before.cost_basis
            assert after.shares == before.shares - leg.shares
            assert after.realized_pnl == before.realized_pnl + leg.amount - removed
            cash += leg.amount
        holdings[key] = after
        assert cash >= 0, "cash went negative"
    assert plan.cash_after == cash
    total = cash + sum(h.cost_basis - h.realized_pnl for h in holdings.values())
    assert total == start, "cash + cost basis − realized P&L must be conserved"


# ------------------------------------------------------------------ 0. the corpus itself


def test_the_corpus_is_large_varied_and_mostly_stored() -> None:
    ids = [case.id for case in ALL]
    assert len(ids) == len(set(ids)), "case ids are unique"
    assert len(STORED) >= 150 and len(STORED) > 2 * len(GENERATED)
    categories = Counter(case.category for case in ALL)
    assert set(categories) >= REQUIRED_CATEGORIES, REQUIRED_CATEGORIES - set(categories)
    assert all(case.expect in ("valid", "malformed") for case in ALL)
    assert all(case.action in ("BET", "SELL", "HOLD") for case in VALID)
    assert any(len(case.raw) >= 1_000_000 for case in GENERATED)
    assert sum(case.expect == "malformed" for case in ALL) >= 100


# ------------------------------------------------------------------ 1. the parser


@pytest.mark.parametrize("case", ALL, ids=[case.id for case in ALL])
def test_parser_never_raises_and_agrees_with_the_corpus(case: Case) -> None:
    started = time.perf_counter()
    result = parse_decision(case.raw)
    elapsed = time.perf_counter() - started
    assert (result.ok is None) != (result.error is None)
    assert elapsed < 2.0, f"parsing took {elapsed:.2f}s"
    if case.expect == "malformed":
        assert result.error is not None, f"expected malformed, parsed {result.ok}"
        assert result.error.strip() and len(result.error) <= 400
        assert "\n" not in result.error and "\r" not in result.error
    else:
        assert result.ok is not None, result.error
        assert result.ok.action == case.action


# ------------------------------------------------------------------ 2. the executor


@pytest.mark.parametrize("case", VALID, ids=[case.id for case in VALID])
def test_every_executed_leg_is_legal(case: Case) -> None:
    decision = parse_decision(case.raw).ok
    assert decision is not None
    plan = plan_execution(decision, CASH, HELD, SNAPSHOT, LIMITS)
    assert_legal(decision, plan, CASH)
    if case.executed is not None:
        reasons = [leg.reason for leg in plan.legs]
        assert plan.executed == case.executed, reasons
    for low_cash in (Decimal("333.33"), Decimal("199.99"), Decimal("0")):
        poor = plan_execution(decision, low_cash, HELD, SNAPSHOT, LIMITS)
        assert_legal(decision, poor, low_cash)


# ------------------------------------------------------------------ 3. end to end

E2E_MARKETS = [
    ParsedMarket(
        id=market.market_id,
        question=f"Corpus market {market.market_id}?",
        market_type=market.market_type,
        outcomes=market.outcomes,
        prices=[Decimal(p) for p in market.prices],
        volume=10_000.0 - index,
        end_date=WEEK1 + timedelta(days=30),
    )
    for index, market in enumerate(SNAPSHOT.values())
    if market.market_id in ("501", "502", "503", "506")
]
RUN_AT = WEEK1 + timedelta(minutes=5)


def raw_of(case_id: str) -> str:
    """The stored raw text of one corpus case."""
    (case,) = [case for case in STORED if case.id == case_id]
    return case.raw


@dataclass
class World:
    """A cohort of two LLM agents over the corpus markets, answered by a scripted server."""

    engine: Engine
    server: PerModelServer
    settings: Settings
    lineup: Lineup

    def script(self, family_id: str, *raws: str) -> None:
        model = f"test/{family_id}"
        self.server.script_model(model, *(answer(raw, model) for raw in raws))

    def decide(self) -> DecideResult:
        responders, close = default_responders(self.settings, sleep=lambda _s: None)
        try:
            return run_decisions(
                self.engine, RUN_AT, self.lineup, self.settings.methodology, responders
            )
        finally:
            close()

    def decision(self, family_id: str) -> DecisionRow:
        with session_scope(self.engine) as s:
            return s.exec(
                select(DecisionRow)
                .join(Agent, col(Agent.id) == DecisionRow.agent_id)
                .where(Agent.family_id == family_id)
            ).one()

    def attempts(self, family_id: str) -> list[DecisionAttempt]:
        row = self.decision(family_id)
        with session_scope(self.engine) as s:
            query = (
                select(DecisionAttempt)
                .where(DecisionAttempt.decision_id == row.id)
                .order_by(col(DecisionAttempt.attempt_no))
            )
            return list(s.exec(query))

    def trades(self, family_id: str) -> list[Trade]:
        with session_scope(self.engine) as s:
            query = (
                select(Trade)
                .join(Agent, col(Agent.id) == Trade.agent_id)
                .where(Agent.family_id == family_id)
                .order_by(col(Trade.id))
            )
            return list(s.exec(query))

    def cash(self, family_id: str) -> Decimal:
        with session_scope(self.engine) as s:
            return s.exec(select(Agent).where(Agent.family_id == family_id)).one().cash_balance


@contextmanager
def world_of(engine: Engine, *family_ids: str) -> Iterator[World]:
    """A started cohort of one LLM agent per family id (model `test/<id>`)."""
    lineup = parse_lineup(
        "\n".join(
            f'[[family]]\nid = "{fid}"\ndisplay_name = "{fid}"\nprovider = "Test"\n'
            f'model = "test/{fid}"\n'
            for fid in family_ids
        )
    )
    with serve_models() as server:
        settings = load_settings(llm_api_key="sk-corpus-test", llm_base_url=server.url)
        with session_scope(engine) as s:
            upsert_markets(s, E2E_MARKETS, WEEK1)
        start_cohort(engine, WEEK1, lineup, Methodology())
        yield World(engine, server, settings, lineup)


def test_retries_fallback_and_legal_trades_end_to_end(engine: Engine) -> None:
    """Malformed ×3 → fallback_hold; malformed then valid → ok; only legal legs trade."""
    with world_of(engine, "always-bad", "always-empty", "bad-then-good", "injected") as world:
        world.script(
            "always-bad", raw_of("trunc-60"), raw_of("yaml-block"), raw_of("uni-smart-quotes")
        )
        world.script("always-empty", raw_of("empty-string"))  # the last reply repeats
        world.script("bad-then-good", raw_of("nan-amount"), raw_of("inj-chatml-tokens"))
        world.script("injected", raw_of("str-dollar"), raw_of("cash-descending"))

        result = world.decide()

        assert result.statuses == {"fallback_hold": 2, "ok": 2}
        for family_id in ("always-bad", "always-empty"):
            row = world.decision(family_id)
            assert (row.status, row.action, row.attempts) == ("fallback_hold", "HOLD", 3)
            assert len(row.validation_errors) == 3 and world.trades(family_id) == []
            assert [a.outcome for a in world.attempts(family_id)] == ["malformed"] * 3
            assert world.cash(family_id) == CASH
            requests = world.server.requests_for(f"test/{family_id}")
            assert len(requests) == 3
            for request, error in zip(requests[1:], row.validation_errors, strict=False):
                feedback = request.json["messages"][-1]
                assert feedback["role"] == "user" and error.rstrip(".") in feedback["content"]

        good = world.decision("bad-then-good")
        assert (good.status, good.action, good.attempts) == ("ok", "BET", 2)
        (trade,) = world.trades("bad-then-good")  # $5,000 is above the limit, $2,500 is not
        assert (trade.market_id, trade.side, trade.amount) == ("503", "Blue", Decimal("2500"))

        injected = world.decision("injected")
        assert (injected.status, injected.attempts) == ("ok", 2)
        trades = world.trades("injected")
        assert len(trades) == 12
        cash = CASH
        for trade in trades:
            assert trade.cash_before == cash
            assert LIMITS.min_bet <= trade.amount <= cash * LIMITS.max_bet_fraction
            cash -= trade.amount
        assert world.cash("injected") == cash >= 0


def test_thinking_is_stored_whole_and_a_decision_from_it_is_noted(engine: Engine) -> None:
    """The raw answer keeps the thinking; the answer outside it decides; a draft is noted."""
    with world_of(engine, "answers-outside", "truncated-thinker") as world:
        world.script("answers-outside", raw_of("think-two-blocks"))
        world.script("truncated-thinker", raw_of("think-unclosed-draft-only"))

        world.decide()

        outside = world.decision("answers-outside")
        assert (outside.status, outside.action) == ("ok", "BET")
        assert outside.raw_response == raw_of("think-two-blocks")
        assert outside.parsed_response is not None and outside.parsed_response["notes"] == []
        truncated = world.decision("truncated-thinker")
        assert (truncated.status, truncated.action, truncated.attempts) == ("ok", "BET", 1)
        assert truncated.raw_response == raw_of("think-unclosed-draft-only")
        assert truncated.parsed_response is not None
        assert truncated.parsed_response["notes"] == [FROM_THINKING_NOTE]
        assert [a.raw_response for a in world.attempts("truncated-thinker")] == [
            raw_of("think-unclosed-draft-only")
        ]
        assert len(world.trades("truncated-thinker")) == 1


HOLD_WITH = '{{"action": "HOLD", "reasoning": "{}"}}'
# Legal model text that a database may refuse to store as is.
AWKWARD_TEXT = {
    "nul-character": HOLD_WITH.format("a\x00b"),
    "escaped-nul": HOLD_WITH.format("a\\u0000b"),
    "escaped-lone-surrogate": HOLD_WITH.format("x\\ud800y"),
    "lone-surrogate-character": HOLD_WITH.format("x\ud800y"),
}


def test_text_a_database_may_refuse_still_ends_the_decision(engine: Engine) -> None:
    """A NUL or a lone surrogate in an answer ends as ok or fallback_hold, never `error`.

    `error` is for transport failures and is re-claimed by every later run: an answer the
    database cannot store would fail the same way forever.
    """
    with world_of(engine, *AWKWARD_TEXT, "control") as world:
        for family_id, raw in AWKWARD_TEXT.items():
            world.script(family_id, raw)
        world.script("control", raw_of("str-500"))

        world.decide()

        outcomes = {}
        for family_id in AWKWARD_TEXT:
            row = world.decision(family_id)
            outcomes[family_id] = (row.status, (row.error or "")[:120])
            assert world.trades(family_id) == []
        assert all(status in ("ok", "fallback_hold") for status, _ in outcomes.values()), outcomes
        assert world.decision("control").status == "ok" and len(world.trades("control")) == 1
