"""`arena decide`: the weekly decision run with claim-before-call (methodology §8, §9).

For every cohort inside its decision window, agents are processed one after another, all
shown the run's one frozen market snapshot. Before any network call an agent's decision row
(unique per agent × decision week) is claimed:

- a finished row (`ok`, `fallback_hold`) is never redone;
- `error` and `zero_trade` rows are re-claimed by the next run and updated in place;
- an `in_progress` claim older than the stale timeout (a crashed process) is re-claimed.

A cohort stamped with the protocol extension `stated_probability` (methodology §18) gets the
extended system prompt, its answers are read with the extension's parser and the baselines are
told; what the cohort's stamp says decides, not the settings of the process that runs it.

Every model attempt is stored as it returns; the trades and the decision's final status are
written together in one transaction that first checks the claim is still ours, so a crash
between an answer and its trades leaves a re-claimable row and no half-executed decision.

Every decision and attempt row goes through `_save`, which redacts every text column it
changed (JSON columns string by string) of the responder's key, in any case and any escaped
form, and of `sk-or-…` keys: an endpoint that echoes the key back cannot get it stored, not in
the raw answer, the parsed reasoning, a validation error or an error message (issue 31).
"""

import logging
import os
import socket
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import func, inspect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from arena.agents.baselines import BaselineInput
from arena.agents.llm import ChatResult, LLMError
from arena.agents.parsing import FALLBACK, parse_decision, retry_feedback
from arena.agents.parsing import Decision as ParsedDecision
from arena.agents.prompts import (
    PortfolioView,
    PromptMarket,
    PromptPosition,
    format_market_line,
    system_prompt,
    user_prompt,
)
from arena.agents.responders import Responder, ResponderFactory
from arena.agents.secrets import redact, redact_value
from arena.config import (
    STATED_PROBABILITY,
    Methodology,
    stamped_extensions,
    stamped_replicates,
)
from arena.core.accounting import (
    BetLimits,
    Holding,
    TradeRejected,
    choose_mark,
    mark_value,
    side_price,
)
from arena.core.errors import ArenaError
from arena.core.execution import HeldPosition, SnapshotMarket, plan_execution
from arena.core.money import money
from arena.engine.cohorts import cohorts_deciding, decision_week
from arena.engine.execution import apply_plan
from arena.engine.logs import log_event
from arena.engine.universe import freeze_universe, snapshot_items
from arena.lineup import FamilySpec, Lineup
from arena.storage.db import session_scope
from arena.storage.models import (
    Agent,
    Cohort,
    Decision,
    DecisionAttempt,
    Market,
    MarketSnapshot,
    Position,
)

log = logging.getLogger("arena.engine.decisions")

FINISHED = ("ok", "fallback_hold")


@dataclass
class DecideResult:
    """What one decision run did, for the job log and the CLI."""

    cohorts: int = 0
    claimed: int = 0
    skipped: int = 0
    unavailable: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    trades: int = 0
    snapshot_id: int | None = None

    def counts(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Claim:
    decision_id: int
    token: str


def new_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def claim_decision(
    engine: Engine, agent: Agent, week: int, at: datetime, stale_after: timedelta, owner: str
) -> Claim | None:
    """Claim this agent's decision for `week`, or None if it is finished or held elsewhere."""
    token = uuid.uuid4().hex
    assert agent.id is not None
    try:
        with session_scope(engine) as session:
            row = session.exec(
                select(Decision)
                .where(Decision.agent_id == agent.id, Decision.decision_week == week)
                .with_for_update()
            ).first()
            if row is None:
                row = Decision(
                    agent_id=agent.id,
                    cohort_id=agent.cohort_id,
                    decision_week=week,
                    created_at=at,
                )
            elif row.status in FINISHED or (
                row.status == "in_progress" and row.claimed_at and row.claimed_at > at - stale_after
            ):
                return None
            row.status = "in_progress"
            row.claim_token = token
            row.claimed_at = at
            row.updated_at = at
            row.error = None
            _save(session, row, ())
            session.flush()
            assert row.id is not None
            log_event(
                session,
                at,
                "INFO",
                "decide",
                f"claimed decision {row.id}",
                agent_id=agent.id,
                week=week,
                owner=owner,
            )
            return Claim(row.id, token)
    except IntegrityError:
        return None  # another process inserted the row first: it owns this decision


def run_decisions(
    engine: Engine,
    at: datetime,
    lineup: Lineup,
    methodology: Methodology,
    responders: ResponderFactory,
    *,
    stale_after: timedelta = timedelta(minutes=60),
    owner: str | None = None,
    exclude_source: str | None = None,
) -> DecideResult:
    """Decide for every agent of every cohort in its window; one frozen snapshot per run
    (without the markets whose `source` is `exclude_source`: `universe.tradable_markets`)."""
    owner = owner or new_owner()
    result = DecideResult()
    with session_scope(engine) as session:
        cohorts = cohorts_deciding(session, at, methodology.decision_window_weeks)
        work = [(cohort, _agents(session, cohort)) for cohort in cohorts]
    result.cohorts = len(work)
    universe: FrozenUniverse | None = None
    for cohort, agents in work:
        week = decision_week(cohort.week_start, at)
        for agent in agents:
            family = _family(lineup, agent)
            responder = responders(family) if family else None
            if responder is None:
                result.unavailable.append(f"{cohort.number}:{agent.family_id}")
                continue
            claim = claim_decision(engine, agent, week, at, stale_after, owner)
            if claim is None:
                result.skipped += 1
                continue
            result.claimed += 1
            if universe is None:
                cohorts = [c for c, _ in work]
                result.snapshot_id = _freeze(engine, at, methodology, cohorts, exclude_source)
                with session_scope(engine) as session:
                    universe = load_universe(session, result.snapshot_id)
            try:
                status, trades = decide_one(
                    engine,
                    claim,
                    agent,
                    cohort,
                    week,
                    at,
                    responder,
                    universe,
                    methodology,
                )
            except Exception as exc:  # one agent's failure never stops the run
                log.exception("decision of agent %s failed", agent.id)
                message = _describe(exc)
                status = _finish_error(engine, claim, message, [], 0, at, _secrets_of(responder))
                trades = 0
            result.statuses[status] = result.statuses.get(status, 0) + 1
            result.trades += trades
    with session_scope(engine) as session:
        if result.unavailable:
            log_event(
                session,
                at,
                "WARNING",
                "decide",
                f"{len(result.unavailable)} agent(s) skipped: no usable endpoint or key",
                agents=result.unavailable,
            )
        log_event(
            session,
            at,
            "INFO",
            "decide",
            f"decision run: {result.claimed} claimed",
            **result.counts(),
        )
    return result


def _agents(session: Session, cohort: Cohort) -> list[Agent]:
    query = select(Agent).where(Agent.cohort_id == cohort.id).order_by(col(Agent.id))
    return list(session.exec(query))


def _family(lineup: Lineup, agent: Agent) -> FamilySpec | None:
    try:
        return lineup.get(agent.family_id)
    except KeyError:
        return None


def _freeze(
    engine: Engine,
    at: datetime,
    methodology: Methodology,
    cohorts: list[Cohort],
    exclude_source: str | None = None,
) -> int:
    """The run's one market snapshot: the universe plus every market the agents hold."""
    with session_scope(engine) as session:
        cohort_ids = [c.id for c in cohorts]
        held = session.exec(
            select(Position.market_id)
            .join(Agent, col(Agent.id) == Position.agent_id)
            .where(col(Agent.cohort_id).in_(cohort_ids), Position.status == "open")
            .distinct()
        ).all()
        snapshot = freeze_universe(
            session, at, methodology.market_universe_size, held, exclude_source
        )
        assert snapshot.id is not None
        return snapshot.id


@dataclass(frozen=True)
class FrozenUniverse:
    """A run's market snapshot, loaded once and shared by every agent of the run."""

    snapshot_id: int
    markets: list[PromptMarket]  # what every prompt lists (ranks 1…market_count)
    snapshot: dict[str, SnapshotMarket]  # every frozen market, tradability as loaded
    questions: dict[str, str]
    lines: list[str] = field(default_factory=list)  # `markets` rendered once for every prompt

    def tradable_now(self, session: Session, market_ids: set[str]) -> dict[str, SnapshotMarket]:
        """The snapshot with tradability re-read for `market_ids`: a market can close while
        a model is thinking, and a leg must not execute in a closed market."""
        frozen = self.snapshot
        ids = sorted(market_ids & frozen.keys())
        if not ids:
            return frozen
        rows = session.exec(
            select(Market.id, Market.status, Market.closed).where(col(Market.id).in_(ids))
        )
        current = dict(frozen)
        for market_id, status, closed in rows:
            item = frozen[market_id]
            current[market_id] = replace(item, tradable=_tradable(status, closed, item.prices))
        return current


def _tradable(status: str, closed: bool, prices: list[str]) -> bool:
    return status == "open" and not closed and bool(prices)


def load_universe(session: Session, snapshot_id: int) -> FrozenUniverse:
    """The frozen snapshot as the prompts and the executor need it (one read per run)."""
    items = snapshot_items(session, snapshot_id)
    universe_size = session.get(MarketSnapshot, snapshot_id).market_count  # type: ignore[union-attr]
    market_rows = {
        m.id: m
        for m in session.exec(
            select(Market).where(col(Market.id).in_([i.market_id for i in items]))
        )
    }
    snapshot: dict[str, SnapshotMarket] = {}
    markets: list[PromptMarket] = []
    for item in items:
        row = market_rows[item.market_id]
        snapshot[item.market_id] = SnapshotMarket(
            item.market_id,
            item.market_type,
            list(item.outcomes),
            list(item.prices),
            _tradable(row.status, row.closed, item.prices),
        )
        if item.rank <= universe_size:
            markets.append(
                PromptMarket(
                    market_id=item.market_id,
                    question=item.question,
                    event_title=row.event_title,
                    category=row.category,
                    market_type=item.market_type,  # type: ignore[arg-type]
                    outcomes=list(item.outcomes),
                    prices=[Decimal(p) for p in item.prices],
                    volume=item.volume,
                    close_date=item.end_date,
                )
            )
    questions = {market_id: row.question for market_id, row in market_rows.items()}
    lines = [format_market_line(market) for market in markets]
    return FrozenUniverse(snapshot_id, markets, snapshot, questions, lines)


@dataclass(frozen=True)
class DecisionInputs:
    """The agent's own state, read fresh: its portfolio view and its open positions."""

    portfolio: PortfolioView
    held: list[HeldPosition]


def load_inputs(
    session: Session, agent_id: int, universe: FrozenUniverse, methodology: Methodology
) -> DecisionInputs:
    """The agent's cash and open positions, marked at the frozen snapshot's prices."""
    agent = session.get(Agent, agent_id)
    assert agent is not None
    positions = list(
        session.exec(
            select(Position)
            .where(Position.agent_id == agent_id, Position.status == "open")
            .order_by(col(Position.id))
        )
    )
    held, shown = [], []
    for position in positions:
        held.append(
            HeldPosition(
                position.id,
                position.market_id,
                position.side,
                Holding(position.shares, position.cost_basis, position.realized_pnl),
            )
        )
        frozen = universe.snapshot.get(position.market_id)
        live = None
        if frozen is not None:
            try:
                live = side_price(frozen.market_type, frozen.outcomes, frozen.prices, position.side)
            except TradeRejected:
                live = None
        mark = choose_mark(
            frozen is not None and frozen.tradable,
            live,
            position.mark_price,
            position.avg_entry_price,
        )
        value = mark_value(position.shares, mark)
        shown.append(
            PromptPosition(
                position_id=position.id,  # type: ignore[arg-type]
                market_id=position.market_id,
                question=universe.questions.get(position.market_id, ""),
                side=position.side,
                shares=position.shares,
                avg_entry_price=position.avg_entry_price,
                current_price=mark,
                market_value=value,
                unrealized_pnl=value - position.cost_basis,
            )
        )
    limits = _limits(methodology)
    portfolio = PortfolioView(
        cash=agent.cash_balance,
        max_bet=limits.max_bet(agent.cash_balance),
        min_bet=limits.min_bet,
        positions=shown,
    )
    return DecisionInputs(portfolio, held)


def _limits(methodology: Methodology) -> BetLimits:
    return BetLimits(min_bet=methodology.min_bet, max_bet_fraction=methodology.max_bet_fraction)


def decide_one(
    engine: Engine,
    claim: Claim,
    agent: Agent,
    cohort: Cohort,
    week: int,
    at: datetime,
    responder: Responder,
    universe: FrozenUniverse,
    methodology: Methodology,
) -> tuple[str, int]:
    """Prompt, ask (retrying malformed answers), execute; returns (status, trades written)."""
    with session_scope(engine) as session:
        inputs = load_inputs(session, agent.id, universe, methodology)  # type: ignore[arg-type]
    stated = STATED_PROBABILITY in stamped_extensions(cohort.constants)
    system = system_prompt(
        methodology.min_bet,
        methodology.max_bet_fraction,
        methodology.starting_balance,
        stated_probability=stated,
    )
    user = user_prompt(at, week, inputs.portfolio, universe.markets, market_lines=universe.lines)
    secrets = _secrets_of(responder)
    _store_prompts(engine, claim, universe.snapshot_id, system, user, at)
    replicated = stamped_replicates(cohort.constants) > 1
    context = BaselineInput(
        at,
        cohort.number,
        week,
        inputs.portfolio,
        universe.markets,
        stated_probability=stated,
        replicate=agent.replicate if replicated else None,
    )
    messages: list[dict[str, str]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    errors: list[str] = []
    parsed: ParsedDecision | None = None
    answers = 0
    for _ in range(1 + methodology.malformed_retries):
        try:
            answer = responder.respond(messages, context)
        except LLMError as exc:
            _record_attempts(engine, claim, exc.attempts, None, None, at, secrets)
            return _finish_error(engine, claim, exc.one_line(), errors, answers, at, secrets), 0
        except Exception as exc:  # a broken responder is this decision's error, not the run's
            message = _describe(exc)
            return _finish_error(engine, claim, message, errors, answers, at, secrets), 0
        answers += 1
        outcome = parse_decision(answer.content, stated_probability=stated)
        _record_attempts(engine, claim, answer.attempts, answer, outcome.error, at, secrets)
        if outcome.ok is not None:
            parsed = outcome.ok
            break
        errors.append(outcome.error or "malformed")
        messages += [
            {"role": "assistant", "content": answer.content},
            {"role": "user", "content": retry_feedback(outcome.error or "malformed")},
        ]
    return _finish(
        engine,
        claim,
        agent.id,  # type: ignore[arg-type]
        parsed,
        errors,
        answers,
        universe,
        methodology,
        at,
        secrets,
    )


def _describe(exc: BaseException) -> str:
    """One line for a failed decision: the ArenaError text, or the exception's type and text."""
    if isinstance(exc, ArenaError):
        return exc.one_line()
    return " ".join(f"unexpected {type(exc).__name__}: {exc}".split())[:500]


def _secrets_of(responder: Responder | None) -> tuple[str, ...]:
    """The key a responder sends (an LLM family's), none for a baseline."""
    return tuple(getattr(responder, "secrets", ()))


def _save(session: Session, row: Decision | DecisionAttempt, secrets: Sequence[str]) -> None:
    """Add `row` with every text column it changed redacted (`redact_value`: JSON columns
    string by string): the one way this module writes the rows a model's answer reaches, so
    no column, present or future, carries the key. Bearer-looking words are left alone here
    (prompts quote market questions: "the flag bearer at …"); the client redacted real ones."""
    state = inspect(row)
    for attribute in state.mapper.column_attrs:
        name = attribute.key
        if state.persistent and not state.attrs[name].history.has_changes():
            continue
        value = getattr(row, name)
        if isinstance(value, str | dict | list):
            cleaned = redact_value(value, secrets, bearer=False)
            if cleaned != value:
                setattr(row, name, cleaned)
    session.add(row)


def _store_prompts(
    engine: Engine, claim: Claim, snapshot_id: int, system: str, user: str, at: datetime
) -> None:
    with session_scope(engine) as session:
        row = _owned(session, claim)
        if row is None:
            return
        row.prompt_system, row.prompt_user = system, user
        row.market_snapshot_id = snapshot_id
        row.updated_at = at
        _save(session, row, ())


def _owned(session: Session, claim: Claim) -> Decision | None:
    """The decision row if our claim still holds (locked for the rest of the transaction)."""
    row = session.exec(
        select(Decision).where(Decision.id == claim.decision_id).with_for_update()
    ).one()
    return row if row.claim_token == claim.token and row.status == "in_progress" else None


def _record_attempts(
    engine: Engine,
    claim: Claim,
    attempts: Sequence[Any],
    answer: ChatResult | None,
    parse_error: str | None,
    at: datetime,
    secrets: Sequence[str],
) -> None:
    """Store every HTTP attempt of one answer; the last one carries the raw text and verdict."""
    with session_scope(engine) as session:
        next_no = (
            session.exec(
                select(func.max(DecisionAttempt.attempt_no)).where(
                    DecisionAttempt.decision_id == claim.decision_id
                )
            ).one()
            or 0
        ) + 1
        for offset, record in enumerate(attempts):
            last = answer is not None and offset == len(attempts) - 1
            if last:
                outcome = "malformed" if parse_error else "valid"
            else:
                outcome = "transport_error" if record.outcome == "error" else "transport_retry"
            _save(
                session,
                DecisionAttempt(
                    decision_id=claim.decision_id,
                    attempt_no=next_no + offset,
                    outcome=outcome,
                    raw_response=answer.content if last and answer else None,
                    error=parse_error if last else record.error,
                    tokens_in=record.tokens_in,
                    tokens_out=record.tokens_out,
                    cost_usd=record.cost_usd,
                    latency_ms=record.latency_ms,
                    served_model=record.served_model,
                    provider=record.provider,
                    created_at=at,
                ),
                secrets,
            )


def _totals(session: Session, row: Decision) -> None:
    """Tokens, cost and latency summed over every attempt the decision ever made."""
    attempts = list(
        session.exec(
            select(DecisionAttempt)
            .where(DecisionAttempt.decision_id == row.id)
            .order_by(col(DecisionAttempt.attempt_no))
        )
    )
    row.tokens_in = sum(a.tokens_in for a in attempts)
    row.tokens_out = sum(a.tokens_out for a in attempts)
    row.cost_usd = sum(a.cost_usd for a in attempts)
    row.latency_ms = sum(a.latency_ms for a in attempts)
    answered = [a for a in attempts if a.raw_response is not None]
    if answered:
        row.raw_response = answered[-1].raw_response
        row.served_model = answered[-1].served_model
        row.provider = answered[-1].provider


def _finish_error(
    engine: Engine,
    claim: Claim,
    message: str,
    errors: list[str],
    answers: int,
    at: datetime,
    secrets: Sequence[str],
) -> str:
    message = redact(message, secrets, bearer=False)  # the event log gets it too
    with session_scope(engine) as session:
        row = _owned(session, claim)
        if row is None:
            return "lost_claim"
        _totals(session, row)
        row.status, row.error, row.attempts = "error", message, answers
        row.validation_errors = errors
        row.updated_at = at
        _save(session, row, secrets)
        log_event(
            session,
            at,
            "ERROR",
            "decide",
            f"decision {row.id} failed: {message}",
            decision_id=row.id,
        )
    return "error"


def _finish(
    engine: Engine,
    claim: Claim,
    agent_id: int,
    parsed: ParsedDecision | None,
    errors: list[str],
    answers: int,
    universe: FrozenUniverse,
    methodology: Methodology,
    at: datetime,
    secrets: Sequence[str],
) -> tuple[str, int]:
    """Execute and close the decision in one transaction, re-reading the agent's state."""
    with session_scope(engine) as session:
        row = _owned(session, claim)
        if row is None:
            return "lost_claim", 0
        agent = session.exec(select(Agent).where(Agent.id == agent_id).with_for_update()).one()
        inputs = load_inputs(session, agent_id, universe, methodology)
        decision = parsed or FALLBACK
        touched = {leg.market_id for leg in decision.bets} | {p.market_id for p in inputs.held}
        snapshot = universe.tradable_now(session, touched)
        plan = plan_execution(
            decision, agent.cash_balance, inputs.held, snapshot, _limits(methodology)
        )
        apply_plan(session, agent, row.id, plan, at)  # type: ignore[arg-type]
        if parsed is None:
            status = "fallback_hold"
        elif decision.action == "HOLD" or plan.executed > 0:
            status = "ok"
        else:
            status = "zero_trade"
        _totals(session, row)
        row.status, row.action, row.attempts = status, decision.action, answers
        row.parsed_response = decision.model_dump(mode="json") if parsed else None
        row.validation_errors = errors
        row.legs = [leg.record() for leg in plan.legs]
        for column, value in plan.tallies().items():
            setattr(row, column, value)
        row.error = None if status != "zero_trade" else "no leg executed"
        row.decided_at = at
        row.updated_at = at
        _save(session, row, secrets)
        log_event(
            session,
            at,
            "INFO",
            "decide",
            f"decision {row.id}: {decision.action} → {status}, {plan.executed} trade(s), "
            f"cash {money(plan.cash_before)} → {money(plan.cash_after)}",
            decision_id=row.id,
        )
        return status, plan.executed
