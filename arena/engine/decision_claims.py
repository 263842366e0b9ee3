"""The decision row's claim (methodology §8, §9) and every write made under it.

Before any network call an agent's decision row (unique per agent × decision week) is claimed:

- a finished row (`ok`, `fallback_hold`) is never redone;
- `error` and `zero_trade` rows are re-claimed by the next run and updated in place;
- an `in_progress` claim older than the stale timeout (a crashed process) is re-claimed.

Every later write checks the claim is still ours (`owned_decision`, the row locked), so a
run whose claim was taken over writes nothing.

Every decision and attempt row goes through `save_row`, which redacts every text column it
changed (JSON columns string by string) of the responder's key, in any case and any escaped
form, and of `sk-or-…` keys: an endpoint that echoes the key back cannot get it stored, not in
the raw answer, the parsed reasoning, a validation error or an error message.
"""

import os
import socket
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, inspect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from arena.agents.llm import ChatResult
from arena.agents.secrets import redact, redact_value
from arena.engine.logs import log_event
from arena.storage.db import session_scope
from arena.storage.models import Agent, Decision, DecisionAttempt

FINISHED = ("ok", "fallback_hold")


@dataclass(frozen=True)
class Claim:
    """A held claim: the decision row and the token only its claimant knows."""

    decision_id: int
    token: str


def new_owner() -> str:
    """This process, as the decision log names a claim's owner (host:pid:random)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def claim_decision(
    engine: Engine,
    agent: Agent,
    week: int,
    at: datetime,
    stale_after: timedelta,
    owner: str,
    *,
    claimed_at: datetime | None = None,
) -> Claim | None:
    """Claim this agent's decision for `week`, or None if it is finished or held elsewhere.

    `claimed_at`: the claim's own clock when the decision's time is not now (a late entrant
    replays a past run at `at`, but a claim its killed process left goes stale by now)."""
    clock = claimed_at or at
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
                row.status == "in_progress"
                and row.claimed_at
                and row.claimed_at > clock - stale_after
            ):
                return None
            row.status = "in_progress"
            row.claim_token = token
            row.claimed_at = clock
            row.updated_at = at
            row.error = None
            save_row(session, row, ())
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


def save_row(session: Session, row: Decision | DecisionAttempt, secrets: Sequence[str]) -> None:
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


def store_prompts(
    engine: Engine, claim: Claim, snapshot_id: int, system: str, user: str, at: datetime
) -> None:
    with session_scope(engine) as session:
        row = owned_decision(session, claim)
        if row is None:
            return
        row.prompt_system, row.prompt_user = system, user
        row.market_snapshot_id = snapshot_id
        row.updated_at = at
        save_row(session, row, ())


def owned_decision(session: Session, claim: Claim) -> Decision | None:
    """The decision row if our claim still holds (locked for the rest of the transaction)."""
    row = session.exec(
        select(Decision).where(Decision.id == claim.decision_id).with_for_update()
    ).one()
    return row if row.claim_token == claim.token and row.status == "in_progress" else None


def record_attempts(
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
            save_row(
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


def sum_attempts(session: Session, row: Decision) -> None:
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


def finish_error(
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
        row = owned_decision(session, claim)
        if row is None:
            return "lost_claim"
        sum_attempts(session, row)
        row.status, row.error, row.attempts = "error", message, answers
        row.validation_errors = errors
        row.updated_at = at
        save_row(session, row, secrets)
        log_event(
            session,
            at,
            "ERROR",
            "decide",
            f"decision {row.id} failed: {message}",
            decision_id=row.id,
        )
    return "error"
