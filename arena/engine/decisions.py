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

A cohort stamped with the extension `book_execution` (docs/book-execution.md) needs the books
of its run: the run stores them whatever `record_books` says (through the CLOB reader), loads
them once (`load_run_books`) and its legs walk them (`plan_execution(..., books=...)`), its buys
paying the taker fee as its stamp's `fee_charged` says (`book_legs.charging`).

A cohort stamped methodology v2 (docs/methodology-v2.md) gets its own frozen snapshot, priced
at validated CLOB midpoints, the v2 prompt, and the total bet cap: a plan whose bets add up to
more than the cap is answered like a malformed one (`answer_error`). Under the original's rule
set (`source-7c78b0c`) a bet below the minimum spoils the answer the same way, the legs execute
only at CLOB midpoints re-read after the answer (`arena.engine.requote`), and a BET batch is
all or nothing. The cohort's stamp decides, constants included (`stamped_methodology`), so a v1
cohort keeps v1's rules in a deployment that has switched to v2.

Every model attempt is stored as it returns; the trades and the decision's final status are
written together in one transaction that first checks the claim is still ours, so a crash
between an answer and its trades leaves a re-claimable row and no half-executed decision.

The claim and every write under it are `arena.engine.decision_claims` (each redacting the
responder's key); the frozen snapshot and the agent's inputs are `arena.engine.decision_inputs`.
"""

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, NoReturn

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arena.agents.baselines import BaselineInput
from arena.agents.llm import LLMError
from arena.agents.parsing import FALLBACK, parse_decision, retry_feedback
from arena.agents.parsing import Decision as ParsedDecision
from arena.agents.prompts import system_prompt, user_prompt
from arena.agents.responders import Responder, ResponderFactory
from arena.config import (
    STATED_PROBABILITY,
    Methodology,
    executes_on_books,
    is_v2,
    runs_source_rules,
    stamped_extensions,
    stamped_fee_charged,
    stamped_horizon_days,
    stamped_methodology,
    stamped_replicates,
)
from arena.core.book_legs import charging
from arena.core.errors import ArenaError
from arena.core.execution import ExecutionQuotes, HeldPosition, answer_error, plan_execution
from arena.core.fees import FEE_USDC_ON_TOP, FeeCharged
from arena.core.money import money
from arena.engine.cohorts import cohorts_deciding, decision_week
from arena.engine.decision_claims import (
    Claim,
    claim_decision,
    finish_error,
    new_owner,
    owned_decision,
    record_attempts,
    save_row,
    store_prompts,
    sum_attempts,
)
from arena.engine.decision_inputs import (
    FrozenUniverse,
    bet_limits,
    freeze_run_universe,
    load_inputs,
    load_run_books,
    load_universe,
)
from arena.engine.execution import apply_plan
from arena.engine.logs import log_event
from arena.engine.provenance import PriceReader
from arena.engine.requote import Requote, clob_requote, frozen_quotes
from arena.lineup import FamilySpec, Lineup
from arena.storage.db import session_scope
from arena.storage.models import Agent, Cohort

log = logging.getLogger("arena.engine.decisions")


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
    prices: Callable[[], PriceReader] | None = None,
    books: Callable[[], PriceReader] | None = None,
) -> DecideResult:
    """Decide for every agent of every cohort in its window; one frozen snapshot per run and
    methodology version (without the markets whose `source` is `exclude_source`:
    `universe.tradable_markets`).

    A v2 cohort's snapshot is priced through `prices()` (the CLOB reader, built on first use:
    a run without a v2 cohort never reads the CLOB); the version is the cohort's stamp.
    With `books` (book recording on) every run stores the books of its universe's tokens,
    whatever the version, through `books()` (a v2 run through its own read: no second one).
    `snapshot_id` reports the run's first snapshot."""
    owner = owner or new_owner()
    result = DecideResult()
    with session_scope(engine) as session:
        cohorts = cohorts_deciding(session, at, methodology.decision_window_weeks)
        work = [(cohort, _agents(session, cohort)) for cohort in cohorts]
    result.cohorts = len(work)
    if books is None and prices is None and any(executes_on_books(c.constants) for c, _ in work):
        _no_reader()  # before any claim: a refused run leaves nothing to re-claim
    universes: dict[tuple[str, int | None], FrozenUniverse] = {}
    requote = clob_requote(engine, prices) if prices is not None else None
    for cohort, agents in work:
        rules = stamped_methodology(cohort.methodology_version, cohort.constants)
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
            key = universe_key(cohort)
            universe = universes.get(key)
            if universe is None:
                universe = universes[key] = _freeze(
                    engine,
                    at,
                    methodology,
                    [c for c, _ in work],
                    exclude_source,
                    key,
                    prices,
                    books,
                )
                if result.snapshot_id is None:
                    result.snapshot_id = universe.snapshot_id
            status, trades = decide_or_fail(
                engine, claim, agent, cohort, week, at, responder, universe, rules, requote
            )
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


def _freeze(
    engine: Engine,
    at: datetime,
    methodology: Methodology,
    cohorts: list[Cohort],
    exclude_source: str | None,
    key: tuple[str, int | None],
    prices: Callable[[], PriceReader] | None,
    books: Callable[[], PriceReader] | None = None,
) -> FrozenUniverse:
    """The run's snapshot for the cohorts of one methodology version and horizon (`universe_key`),
    loaded; with the run's books when one of them walks books (`book_execution` records them
    whatever the settings)."""
    version, days = key
    same = [c for c in cohorts if universe_key(c) == key]
    walks = any(executes_on_books(c.constants) for c in same)
    if walks and books is None:
        if prices is None:
            _no_reader()
        books = prices
    reader = None
    if is_v2(version):
        if prices is None:
            raise ArenaError(
                "a v2 cohort decides at CLOB prices, but this run has no CLOB reader",
                "run it through the scheduler or `arena decide` (ARENA_CLOB_URL)",
            )
        reader = prices()
    recorder = reader if reader is not None or books is None else _recorder(books)
    snapshot_id = freeze_run_universe(
        engine,
        at,
        methodology,
        same,
        exclude_source,
        reader,
        recorder if books else None,
        None if days is None else timedelta(days=days),
    )
    with session_scope(engine) as session:
        universe = load_universe(session, snapshot_id)
        return replace(universe, books=load_run_books(session, snapshot_id)) if walks else universe


def universe_key(cohort: Cohort) -> tuple[str, int | None]:
    """Which of a run's universes a cohort decides on: one per methodology version and horizon
    (extension `horizon`, its days; None without it), so a v1 cohort's universe is the one it
    had before horizons existed, and cohorts of different horizons never share one."""
    return cohort.methodology_version, stamped_horizon_days(cohort.constants)


def _no_reader() -> NoReturn:
    raise ArenaError(
        "a book_execution cohort walks the run's order books, but this run has no CLOB "
        "reader to record them",
        "run it through the scheduler or `arena decide` (ARENA_CLOB_URL)",
    )


def _recorder(books: Callable[[], PriceReader]) -> PriceReader | None:
    """The reader that records a v1 run's books; None (one WARNING) when it cannot be built:
    recording never blocks a run."""
    try:
        return books()
    except Exception as exc:
        log.warning("decision books not recorded: no CLOB reader (%s)", exc)
        return None


def _agents(session: Session, cohort: Cohort) -> list[Agent]:
    query = select(Agent).where(Agent.cohort_id == cohort.id).order_by(col(Agent.id))
    return list(session.exec(query))


def _family(lineup: Lineup, agent: Agent) -> FamilySpec | None:
    try:
        return lineup.get(agent.family_id)
    except KeyError:
        return None


def decide_or_fail(
    engine: Engine,
    claim: Claim,
    agent: Agent,
    cohort: Cohort,
    week: int,
    at: datetime,
    responder: Responder,
    universe: FrozenUniverse,
    methodology: Methodology,
    requote: Requote | None = None,
) -> tuple[str, int]:
    """`decide_one`, with an unexpected failure made this decision's `error` row (logged, its
    message one line and key-free): one agent's failure never stops a run."""
    try:
        return decide_one(
            engine, claim, agent, cohort, week, at, responder, universe, methodology, requote
        )
    except Exception as exc:
        log.exception("decision of agent %s failed", agent.id)
        message = _describe(exc)
        return finish_error(engine, claim, message, [], 0, at, _secrets_of(responder)), 0


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
    requote: Requote | None = None,
) -> tuple[str, int]:
    """Prompt, ask (retrying malformed answers), execute; returns (status, trades written).

    `methodology` is the cohort's stamped constants. Under v2's original rule set the legs
    execute at `requote`'s prices (the run's CLOB re-read; the frozen quotes without one, as a
    late entrant's replay of the past has)."""
    with session_scope(engine) as session:
        inputs = load_inputs(session, agent.id, universe, methodology)  # type: ignore[arg-type]
    stated = STATED_PROBABILITY in stamped_extensions(cohort.constants)
    v2 = is_v2(cohort.methodology_version)
    source = runs_source_rules(cohort.methodology_version, cohort.constants)
    system = system_prompt(
        methodology.min_bet,
        methodology.max_bet_fraction,
        methodology.starting_balance,
        stated_probability=stated,
        total_cap=v2,
        book_execution=executes_on_books(cohort.constants),
        fee_charged=stamped_fee_charged(cohort.constants) or FEE_USDC_ON_TOP,
        horizon_days=stamped_horizon_days(cohort.constants),
    )
    user = user_prompt(
        at, week, inputs.portfolio, universe.markets, market_lines=universe.lines, total_cap=v2
    )
    secrets = _secrets_of(responder)
    store_prompts(engine, claim, universe.snapshot_id, system, user, at)
    replicated = stamped_replicates(cohort.constants) > 1
    context = BaselineInput(
        at,
        cohort.number,
        week,
        inputs.portfolio,
        universe.markets,
        stated_probability=stated,
        replicate=agent.replicate if replicated else None,
        total_cap=v2,
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
            record_attempts(engine, claim, exc.attempts, None, None, at, secrets)
            return finish_error(engine, claim, exc.one_line(), errors, answers, at, secrets), 0
        except Exception as exc:  # a broken responder is this decision's error, not the run's
            message = _describe(exc)
            return finish_error(engine, claim, message, errors, answers, at, secrets), 0
        answers += 1
        outcome = parse_decision(answer.content, stated_probability=stated)
        error = outcome.error
        if outcome.ok is not None and v2:  # v2: a plan over the total cap is invalid as a whole
            limits = bet_limits(methodology)
            error = answer_error(outcome.ok, inputs.portfolio.cash, limits, leg_minimum=source)
        record_attempts(engine, claim, answer.attempts, answer, error, at, secrets)
        if outcome.ok is not None and error is None:
            parsed = outcome.ok
            break
        errors.append(error or "malformed")
        messages += [
            {"role": "assistant", "content": answer.content},
            {"role": "user", "content": retry_feedback(error or "malformed")},
        ]
    quotes = None  # a walk of the run's stored books is the price: nothing to re-read
    walks = executes_on_books(cohort.constants)
    if source and not walks and parsed is not None and parsed.action in ("BET", "SELL"):
        reread = requote or frozen_quotes(universe.snapshot)
        quotes = reread(_touched(parsed, inputs.held))
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
        on_books=stamped_fee_charged(cohort.constants),
        execution_quotes=quotes,
        all_or_nothing=source,
    )


def _touched(decision: ParsedDecision, held: Sequence[HeldPosition]) -> list[str]:
    """The markets a decision's legs trade in: its bets' and the positions it sells."""
    of_position = {p.position_id: p.market_id for p in held}
    sold = [of_position.get(leg.position_id) for leg in decision.sells]
    return [leg.market_id for leg in decision.bets] + [m for m in sold if m is not None]


def _describe(exc: BaseException) -> str:
    """One line for a failed decision: the ArenaError text, or the exception's type and text."""
    if isinstance(exc, ArenaError):
        return exc.one_line()
    return " ".join(f"unexpected {type(exc).__name__}: {exc}".split())[:500]


def _secrets_of(responder: Responder | None) -> tuple[str, ...]:
    """The key a responder sends (an LLM family's), none for a baseline."""
    return tuple(getattr(responder, "secrets", ()))


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
    *,
    on_books: FeeCharged | None = None,
    execution_quotes: ExecutionQuotes | None = None,
    all_or_nothing: bool = False,
) -> tuple[str, int]:
    """Execute and close the decision in one transaction, re-reading the agent's state;
    `on_books` (extension `book_execution`): the legs walk the run's stored books, their buys
    paying the fee as this convention (the cohort's stamped `fee_charged`) says;
    `execution_quotes` and `all_or_nothing` (v2's original rule set): the legs' prices re-read
    after the answer, and a BET batch with a failing leg executes none."""
    with session_scope(engine) as session:
        row = owned_decision(session, claim)
        if row is None:
            return "lost_claim", 0
        agent = session.exec(select(Agent).where(Agent.id == agent_id).with_for_update()).one()
        inputs = load_inputs(session, agent_id, universe, methodology)
        decision = parsed or FALLBACK
        touched = {leg.market_id for leg in decision.bets} | {p.market_id for p in inputs.held}
        snapshot = universe.tradable_now(session, touched)
        books = charging(universe.books or {}, on_books) if on_books else None
        limits = bet_limits(methodology)
        plan = plan_execution(
            decision,
            agent.cash_balance,
            inputs.held,
            snapshot,
            limits,
            books,
            execution_quotes,
            all_or_nothing=all_or_nothing,
        )
        apply_plan(session, agent, row.id, plan, at, snapshot)  # type: ignore[arg-type]
        if parsed is None:
            status = "fallback_hold"
        elif decision.action == "HOLD" or plan.executed > 0:
            status = "ok"
        else:
            status = "zero_trade"
        sum_attempts(session, row)
        row.status, row.action, row.attempts = status, decision.action, answers
        row.parsed_response = decision.model_dump(mode="json") if parsed else None
        row.validation_errors = errors
        row.legs = [leg.record() for leg in plan.legs]
        for column, value in plan.tallies().items():
            setattr(row, column, value)
        row.error = None if status != "zero_trade" else "no leg executed"
        row.decided_at = at
        row.updated_at = at
        save_row(session, row, secrets)
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
