"""Read models of decisions: the filterable list, and everything about one decision.

Why a detail model: a researcher auditing a result must see exactly what the model was shown
(system and user prompt, the frozen market snapshot), what it answered on every attempt
(including malformed answers and transport failures), how the answer was parsed and validated,
and which legs executed or were rejected and why — with tokens, cost, latency and the model
that actually served it. Model output is untrusted text: the dashboard shows it as text.
"""

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Connection, Engine

from arena.agents.json_extraction import split_thinking
from arena.analytics.query.frames import (
    BOOL,
    FLOAT,
    INT,
    MONEY,
    NULLABLE_INT,
    TEXT,
    TIME,
    Values,
    column_array,
    columns_frame,
    json_as_stored,
    query_columns,
)
from arena.analytics.query.scope import live_cohort_of
from arena.analytics.query.selects import (
    agent_display_name,
    agent_ids,
    fetch,
    late_agent_ids,
    typed_frame,
)
from arena.analytics.views.cohorts import leg_tallies
from arena.analytics.views.markets import priced_frame
from arena.config import STATED_PROBABILITY, stamped_extensions
from arena.core.late_entry import LateEntryStamp, entrant_name, stamped_late_entry
from arena.storage.tables import AGENTS, COHORTS, DECISIONS, FAMILIES, MARKETS, TRADES, live_cohort
from arena.storage.tables import DECISION_ATTEMPTS as ATTEMPTS
from arena.storage.tables import MARKET_SNAPSHOT_ITEMS as UNIVERSE_ITEMS
from arena.storage.tables import MARKET_SNAPSHOTS as UNIVERSES

# The list's cap, as the other dashboard lists have (markets, job runs, log lines): the newest
# 1,000 matching decisions, about five weeks of ten agents × five cohorts. Older ones are a
# cohort filter away (a cohort's whole life is 50 decisions), and Exports has every row.
DEFAULT_LIMIT = 1_000

DECISION_COLUMNS: dict[str, str] = {
    "decision_id": INT,
    "cohort_number": INT,
    "family_id": TEXT,
    "display_name": TEXT,
    "decision_week": INT,
    "action": TEXT,
    "status": TEXT,
    "attempts": INT,
    "bets": INT,
    "sells": INT,
    "rejected": INT,
    "amount": MONEY,
    "tokens_in": INT,
    "tokens_out": INT,
    "cost_usd": FLOAT,
    "latency_ms": INT,
    "served_model": TEXT,
    "market_snapshot_id": INT,
    "decided_at": TIME,
}


def decisions(
    engine: Engine,
    *,
    cohort: int | None = None,
    family: str | None = None,
    week: int | None = None,
    action: str | None = None,
    status: str | None = None,
    limit: int = DEFAULT_LIMIT,
    replicate: int | None = None,
    late_entry: str | None = None,
) -> pd.DataFrame:
    """Decisions matching every given filter, newest first, at most `limit` rows
    (`replicate`: only that replicate of the family, in a replicated cohort; `late_entry`: the
    decisions the late entrant of that family made replaying cohort `cohort`, or every cohort
    it replayed, instead of live ones: `family` and `replicate` do not apply).

    Columns: ``decision_id``, ``cohort_number``, ``family_id``, ``display_name``,
    ``decision_week``, ``action`` (BET | SELL | HOLD; empty while in progress), ``status``
    (in_progress | ok | fallback_hold | error | zero_trade), ``attempts`` (model answers of
    the final run); from the legs ``bets`` / ``sells`` executed, ``rejected`` and ``amount``
    ($ bet); ``tokens_in``, ``tokens_out``, ``cost_usd``, ``latency_ms`` (sums over every
    attempt); ``served_model``; ``market_snapshot_id`` (the frozen universe it saw, 0 if
    none); ``decided_at``.
    """
    query = (
        select(
            *_list_columns(),
            func.coalesce(DECISIONS.c.decided_at, DECISIONS.c.created_at).label("decided_at"),
        )
        .order_by(DECISIONS.c.id.desc())
        .limit(limit)
    )
    # live agents only, even unfiltered: a late entrant's decisions (played after the live
    # ones, so the newest ids) are no live decisions (`agent_id` is in the list's index)
    # (`late_entry`: that late entrant's instead)
    whose = (
        agent_ids(cohort, family, replicate)
        if late_entry is None
        else late_agent_ids(cohort, late_entry)
    )
    query = query.where(DECISIONS.c.agent_id.in_(whose))
    if week is not None:
        query = query.where(DECISIONS.c.decision_week == week)
    if action is not None:
        query = query.where(DECISIONS.c.action == action)
    if status is not None:
        query = query.where(DECISIONS.c.status == status)
    with engine.connect() as conn:
        columns, rows = query_columns(conn, query, {**DECISION_COLUMNS, "agent_id": INT})
        names = _AGENT_NAMES if late_entry is None else _late_names(late_entry)
        agents, _count = query_columns(conn, names, _AGENT_NAME_KINDS)
        if late_entry is not None:
            agents["display_name"] = _entrant_names(conn, late_entry, agents)
    columns.update(_of_each_decision(agents, columns.pop("agent_id"), rows))
    return columns_frame(columns, DECISION_COLUMNS, rows)


def _list_columns() -> tuple[Any, ...]:
    """The list's own columns of a decision, with its ``agent_id`` (its names are matched
    afterwards, `_of_each_decision`) and its leg tallies, the numbers the engine writes with
    the legs (`leg_tallies`).

    Every one is in the covering `ix_decisions_list` (id first: the list's order), so the
    list is read off the index, newest first: on SQLite a row's list columns sit behind its
    inline prompts.
    """
    return (
        DECISIONS.c.id.label("decision_id"),
        DECISIONS.c.agent_id,
        DECISIONS.c.decision_week,
        DECISIONS.c.action,
        DECISIONS.c.status,
        DECISIONS.c.attempts,
        *leg_tallies(),
        DECISIONS.c.tokens_in,
        DECISIONS.c.tokens_out,
        DECISIONS.c.cost_usd,
        DECISIONS.c.latency_ms,
        DECISIONS.c.served_model,
        DECISIONS.c.market_snapshot_id,
    )


def _agent_names(on: Any, *where: Any) -> Any:
    """Select of each agent's id, cohort number, family and display name (cohorts joined
    `on`, rows `where`)."""
    return (
        select(
            AGENTS.c.id.label("agent_id"),
            COHORTS.c.number.label("cohort_number"),
            AGENTS.c.family_id,
            agent_display_name(),
        )
        .join(COHORTS, on)
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .where(*where)
    )


_AGENT_NAMES = _agent_names(live_cohort_of(AGENTS.c.cohort_id))


def _late_names(family: str) -> Any:
    """`_AGENT_NAMES` of the late entrant `family`'s agents (its shadows), not live ones."""
    return _agent_names(
        COHORTS.c.id == AGENTS.c.cohort_id, COHORTS.c.late_entry_family == family, ~live_cohort()
    )


def _entrant_names(conn: Connection, family: str, agents: dict[str, Values]) -> list[str]:
    """The late entrant's name on each of its agents' rows: "Qwen 3 · late entry", with
    ", contaminated" where that shadow is stamped so (the list says so, as every page)."""
    stamps = dict(
        conn.execute(
            select(AGENTS.c.id, COHORTS.c.constants)
            .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
            .where(COHORTS.c.late_entry_family == family, ~live_cohort())
        ).all()
    )
    names = []
    for agent_id, name in zip(agents["agent_id"], agents["display_name"], strict=True):
        stamp = stamped_late_entry(stamps.get(int(agent_id)))
        names.append(entrant_name(str(name), stamp is not None and stamp.contaminated))
    return names


# By label: iterating a ColumnCollection yields its columns, not their labels.
_AGENT_NAME_KINDS = {
    label: DECISION_COLUMNS.get(label, INT)
    for label in _AGENT_NAMES.selected_columns.keys()  # noqa: SIM118
}


def _of_each_decision(agents: dict[str, Values], agent_ids: Values, rows: int) -> dict[str, Any]:
    """Each decision's ``cohort_number``, ``family_id`` and ``display_name``, by its agent.

    `agents`: the columns of `_AGENT_NAMES` (hundreds of rows), typed once per agent and
    taken per decision by position. Joined in SQL, PostgreSQL hashed the agents and sorted
    the list again; typing the names per decision, or matching as frames, cost more than the
    match itself.
    """
    position = {agent_id: i for i, agent_id in enumerate(agents["agent_id"])}
    try:
        at = np.fromiter(map(position.__getitem__, agent_ids), np.intp, rows)
    except KeyError:  # the foreign key makes this impossible; never show a wrong name
        raise LookupError("a decision's agent is missing from the agents table") from None
    return {
        label: column_array(values, DECISION_COLUMNS[label]).take(at)
        for label, values in agents.items()
        if label != "agent_id"
    }


def decision_weeks(engine: Engine) -> list[int]:
    """The decision weeks that have at least one decision, ascending (for a filter)."""
    query = select(DECISIONS.c.decision_week).distinct().order_by(DECISIONS.c.decision_week)
    with engine.connect() as conn:
        return [int(week) for week in conn.execute(query).scalars()]


ATTEMPT_COLUMNS: dict[str, str] = {
    "attempt_no": INT,
    "outcome": TEXT,
    "raw_response": TEXT,
    "error": TEXT,
    "tokens_in": INT,
    "tokens_out": INT,
    "cost_usd": FLOAT,
    "latency_ms": INT,
    "served_model": TEXT,
    "provider": TEXT,
    "created_at": TIME,
}

LEG_COLUMNS: dict[str, str] = {
    "leg": INT,
    "kind": TEXT,
    "executed": BOOL,
    "market_id": TEXT,
    "question": TEXT,
    "side": TEXT,
    "requested": TEXT,
    "amount": MONEY,
    "price": FLOAT,
    "shares": FLOAT,
    "implied_confidence": FLOAT,
    "position_id": NULLABLE_INT,
    "reason": TEXT,
    "message": TEXT,
}
# In a cohort stamped with the extension `stated_probability` the legs carry one more column.
STATED_LEG_COLUMNS: dict[str, str] = {**LEG_COLUMNS, "probability": FLOAT}


@dataclass(frozen=True)
class DecisionDetail:
    """Everything recorded about one decision (see the module docstring)."""

    decision_id: int
    cohort_number: int
    family_id: str
    display_name: str
    model_id: str
    decision_week: int
    status: str
    action: str | None
    attempts: int
    prompt_system: str | None
    prompt_user: str | None
    raw_response: str | None
    parsed_response: Any
    validation_errors: list[str]
    error: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    latency_ms: int
    served_model: str | None
    provider: str | None
    decided_at: datetime | None
    market_snapshot_id: int | None
    snapshot_taken_at: datetime | None
    snapshot_markets: int
    legs: pd.DataFrame = field(repr=False)
    attempt_log: pd.DataFrame = field(repr=False)
    # The cohort is stamped with `stated_probability`: its prompt asked for each bet's
    # probability, and `legs` has the ``probability`` column (`STATED_LEG_COLUMNS`).
    asks_probability: bool = False
    # A late entrant's decision (methodology §20): its shadow's `late_entry` record.
    late_entry: LateEntryStamp | None = None

    @property
    def reasoning(self) -> str | None:
        """The model's own rationale: the parsed answer's ``reasoning`` text (None when
        nothing parsed or it gave none)."""
        payload = self.parsed_response
        text = payload.get("reasoning") if isinstance(payload, dict) else None
        return (text.strip() or None) if isinstance(text, str) else None

    @property
    def notes(self) -> list[str]:
        """The parsed answer's ``notes`` (what the model asked to remember), as text."""
        payload = self.parsed_response
        notes = payload.get("notes") if isinstance(payload, dict) else None
        if isinstance(notes, str):
            notes = [notes]
        return [str(note) for note in notes or [] if str(note).strip()]

    @property
    def parsed_json(self) -> str:
        """The parsed payload pretty-printed (empty when nothing parsed)."""
        if self.parsed_response is None:
            return ""
        return json.dumps(self.parsed_response, indent=2, ensure_ascii=False, sort_keys=False)


def legs_frame(
    legs: list[dict[str, Any]],
    questions: dict[str, str] | None = None,
    probabilities: dict[int, float | None] | None = None,
) -> pd.DataFrame:
    """A decision's `legs` JSON as a table: one row per leg, executed or rejected.

    Columns: ``leg`` (0-based index in the answer), ``kind`` (BET | SELL), ``executed``,
    ``market_id``, ``question`` (the market's, from `questions` by id; missing for an id that
    names no market), ``side``, ``requested`` (the leg as the model wrote it, JSON text),
    ``amount`` ($ moved), ``price``, ``shares``, ``implied_confidence``, ``position_id``,
    ``reason`` (rejection code, e.g. below_min) and ``message``. With `probabilities` (a
    `stated_probability` cohort's BUY trades: leg index → the stored ``trades.probability``)
    one more, ``probability``: the probability the model stated that the side it bought
    wins, on executed BET legs; NaN when it stated none (missing, never filled in), and on
    SELL and rejected legs, which bought nothing.
    """
    rows = []
    stated = probabilities or {}
    for leg in legs:
        request = leg.get("request") or {}
        bought = leg.get("kind") == "BET" and leg.get("executed") and leg.get("index") is not None
        market_id = leg.get("market_id") or request.get("market_id")
        rows.append(
            {
                "leg": leg.get("index"),
                "kind": leg.get("kind"),
                "executed": bool(leg.get("executed")),
                "market_id": market_id,
                "question": (questions or {}).get(str(market_id)),
                "side": leg.get("side") or request.get("side"),
                "requested": json.dumps(request, ensure_ascii=False),
                "amount": leg.get("amount"),
                "price": leg.get("price"),
                "shares": leg.get("shares"),
                "implied_confidence": leg.get("implied_confidence"),
                "position_id": leg.get("position_id") or request.get("position_id"),
                "reason": leg.get("reason"),
                "message": leg.get("message"),
                "probability": stated.get(int(leg["index"])) if bought else None,
            }
        )
    return typed_frame(rows, LEG_COLUMNS if probabilities is None else STATED_LEG_COLUMNS)


def decision_detail(engine: Engine, decision_id: int) -> DecisionDetail | None:
    """Everything about decision `decision_id`, or None when there is no such decision."""
    query = (
        select(
            DECISIONS,
            COHORTS.c.number.label("cohort_number"),
            AGENTS.c.family_id,
            AGENTS.c.model_id,
            agent_display_name(),
            COHORTS.c.constants.label("cohort_constants"),
            UNIVERSES.c.taken_at.label("snapshot_taken_at"),
            UNIVERSES.c.market_count.label("snapshot_markets"),
        )
        .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
        .join(COHORTS, COHORTS.c.id == DECISIONS.c.cohort_id)
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .outerjoin(UNIVERSES, UNIVERSES.c.id == DECISIONS.c.market_snapshot_id)
        .where(DECISIONS.c.id == decision_id)
    )
    attempts = (
        select(ATTEMPTS)
        .where(ATTEMPTS.c.decision_id == decision_id)
        .order_by(ATTEMPTS.c.created_at, ATTEMPTS.c.id)
    )
    with engine.connect() as conn:
        row = conn.execute(query).mappings().first()
        if row is None:
            return None
        attempt_rows = fetch(conn, attempts)
        legs = list(row["legs"] or [])
        questions = _leg_questions(conn, legs)
        asks = STATED_PROBABILITY in stamped_extensions(row["cohort_constants"])
        probabilities = _stated_probabilities(conn, decision_id) if asks else None
    return DecisionDetail(
        decision_id=int(row["id"]),
        cohort_number=int(row["cohort_number"]),
        family_id=str(row["family_id"]),
        display_name=str(row["display_name"]),
        model_id=str(row["model_id"]),
        decision_week=int(row["decision_week"]),
        status=str(row["status"]),
        action=row["action"],
        attempts=int(row["attempts"] or 0),
        prompt_system=row["prompt_system"],
        prompt_user=row["prompt_user"],
        raw_response=row["raw_response"],
        parsed_response=row["parsed_response"],
        validation_errors=[str(e) for e in row["validation_errors"] or []],
        error=row["error"],
        tokens_in=int(row["tokens_in"] or 0),
        tokens_out=int(row["tokens_out"] or 0),
        cost_usd=float(row["cost_usd"] or 0.0),
        latency_ms=int(row["latency_ms"] or 0),
        served_model=row["served_model"],
        provider=row["provider"],
        decided_at=row["decided_at"] or row["created_at"],
        market_snapshot_id=row["market_snapshot_id"],
        snapshot_taken_at=row["snapshot_taken_at"],
        snapshot_markets=int(row["snapshot_markets"] or 0),
        legs=legs_frame(legs, questions, probabilities),
        attempt_log=typed_frame(attempt_rows, ATTEMPT_COLUMNS),
        asks_probability=asks,
        late_entry=stamped_late_entry(row["cohort_constants"]),
    )


def _stated_probabilities(conn: Connection, decision_id: int) -> dict[int, float | None]:
    """The stated probability of each BUY trade of a decision, by its leg index (None where
    the model stated none): as stored on the trade, the value the extension's figures read."""
    query = select(TRADES.c.leg_index, TRADES.c.probability).where(
        TRADES.c.decision_id == decision_id, TRADES.c.trade_type == "BUY"
    )
    return {
        int(leg): None if p is None else float(p)
        for leg, p in conn.execute(query)
        if leg is not None
    }


def _leg_questions(conn: Connection, legs: list[dict[str, Any]]) -> dict[str, str]:
    """The question of each market a decision's legs name, by market id (a leg naming a
    market we never synced, which validation rejects, has none)."""
    ids = set()
    for leg in legs:
        market_id = leg.get("market_id") or (leg.get("request") or {}).get("market_id")
        if market_id is not None:
            ids.add(str(market_id)[:64])
    if not ids:
        return {}
    query = select(MARKETS.c.id, MARKETS.c.question).where(MARKETS.c.id.in_(sorted(ids)))
    return {str(market_id): str(question) for market_id, question in conn.execute(query)}


SNAPSHOT_ITEM_COLUMNS: dict[str, str] = {
    "rank": INT,
    "market_id": TEXT,
    "question": TEXT,
    "market_type": TEXT,
    "outcomes": TEXT,
    "prices": TEXT,
    "volume": FLOAT,
    "end_date": TIME,
}


def snapshot_markets(engine: Engine, snapshot_id: int) -> pd.DataFrame:
    """The frozen market universe `snapshot_id` exactly as the agents saw it, by rank.

    Columns: ``rank`` (1… the universe; higher ranks are held markets outside it),
    ``market_id``, ``question``, ``market_type``, ``outcomes`` and ``prices`` (JSON text, as
    shown), ``volume``, ``end_date``.
    """
    query = (
        select(
            UNIVERSE_ITEMS.c.rank,
            UNIVERSE_ITEMS.c.market_id,
            UNIVERSE_ITEMS.c.question,
            UNIVERSE_ITEMS.c.market_type,
            json_as_stored(UNIVERSE_ITEMS.c.outcomes),
            json_as_stored(UNIVERSE_ITEMS.c.prices),
            UNIVERSE_ITEMS.c.volume,
            UNIVERSE_ITEMS.c.end_date,
        )
        .where(UNIVERSE_ITEMS.c.snapshot_id == snapshot_id)
        .order_by(UNIVERSE_ITEMS.c.rank)
    )
    return priced_frame(engine, query, SNAPSHOT_ITEM_COLUMNS)


def snapshot_info(engine: Engine, snapshot_id: int) -> dict[str, Any] | None:
    """When a frozen universe was taken and how many markets it holds (None: unknown id)."""
    query = select(UNIVERSES.c.id, UNIVERSES.c.taken_at, UNIVERSES.c.market_count).where(
        UNIVERSES.c.id == snapshot_id
    )
    with engine.connect() as conn:
        row = conn.execute(query).mappings().first()
    return dict(row) if row is not None else None


def response_parts(raw: str) -> tuple[str, str]:
    """A stored raw response as (thinking, answer): the parser's own split, so the drill-down
    shows a reasoning model's thinking apart from the answer the decision was read from."""
    return split_thinking(raw)
