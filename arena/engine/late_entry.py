"""`arena late-entry FAMILY --cohorts A-B`: a family plays finished past cohorts afterwards
(methodology §20).

For each chosen live cohort a *shadow cohort* (`cohorts.late_entry_of`) holds the late
entrant's one agent. The original's decision runs are replayed in order, each at its own time,
on its frozen universe and prices (`arena.engine.late_entry_runs`), through the same prompts,
validation, retries and fallback as every live decision (`decisions.decide_or_fail`) and the
real client; the original cohort's stamp (version, extensions, constants) sets the rules.
Between runs the recorded resolutions settle its positions. After the last run a market the
database never saw resolved is asked of the market source now; a decided answer is kept apart
in `late_entry_resolutions` (never in `markets`, so no live figure moves) and settles this late
entrant alone. Another late entrant holding that market later settles from the record instead
of asking again (`late_entry_runs.settle_recorded`).

Idempotent per family × cohort, in the database: the shadow is unique per original × family,
and each replayed decision is claimed under the engine's claims (unique per agent × week;
finished ones are never redone; a claim left by a killed run is taken over once stale), so a
second run finds the work done and an interrupted one resumes without duplicating a trade.

A week the model was never asked is not played (`arena.engine.late_entry_outage`): the
endpoint is probed before anything is written, and a decision lost to the endpoint keeps its
re-claimable `error` row, unvalued; the week is asked again, and after `OUTAGE_STOP_AFTER` in a
row the whole entry stops (LateEntryStopped) before any later week, so the next run plays it.
"""

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from arena.agents.llm import LLMError
from arena.agents.responders import ResponderFactory
from arena.config import Methodology, executes_on_books, stamped_methodology
from arena.core.errors import InputError
from arena.core.late_entry import (
    OUTAGE_STOP_AFTER,
    HeldRun,
    LateEntryStamp,
    leakage_guard,
    outage_stop,
    shadow_stamp,
    unreachable,
)
from arena.core.timeutil import slot_start
from arena.engine.cohorts import window_weeks_of
from arena.engine.decision_claims import claim_decision, new_owner
from arena.engine.decisions import decide_or_fail
from arena.engine.late_entry_outage import WatchedResponder, endpoint_of, probe_endpoint
from arena.engine.late_entry_runs import (
    OriginalRun,
    clob_history,
    original_runs,
    record_asked,
    replay_universe,
    settle_recorded,
    snapshot_shadow,
)
from arena.engine.logs import log_event
from arena.engine.provenance import PriceReader
from arena.engine.sources import MarketSource, foreign_markets
from arena.lineup import FamilySpec, Lineup
from arena.markets.resolution import resolution_verdict
from arena.storage.db import session_scope
from arena.storage.models import (
    FINAL_STATUSES,
    Agent,
    Cohort,
    Decision,
    Market,
    PortfolioSnapshot,
    Position,
)
from arena.storage.seed import sync_families

SOURCE = "late-entry"


@dataclass
class LateEntryResult:
    """What one `arena late-entry` run did, for the CLI and the log."""

    family: str
    cohorts: list[int] = field(default_factory=list)
    shadows_created: int = 0
    runs: int = 0
    decided: dict[str, int] = field(default_factory=dict)
    already_done: int = 0
    trades: int = 0
    settled_recorded: int = 0
    asked: list[str] = field(default_factory=list)  # markets asked of the source now
    marks: dict[str, int] = field(default_factory=dict)  # by source (late_entry_runs)
    completed: list[int] = field(default_factory=list)
    contaminated: list[int] = field(default_factory=list)
    # Cohorts left where another process holds a run's claim (not yet stale): run again later.
    held: list[int] = field(default_factory=list)
    held_runs: list[HeldRun] = field(default_factory=list)  # which run, since when
    # Decisions lost to the endpoint (`is_outage`): asked again, never counted as played.
    endpoint_failures: int = 0
    # Markets of the other kind than the source's (a demo database's, for Gamma): never asked.
    left_alone: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        """The result as the system log's context (JSON)."""
        counts = dict(vars(self))
        counts["held_runs"] = [
            {**vars(h), "since": h.since.isoformat(), "stale_at": h.stale_at.isoformat()}
            for h in self.held_runs
        ]
        return counts


@dataclass(frozen=True)
class _Entry:
    """One chosen cohort: the original, its shadow, and the shadow's one agent."""

    original: Cohort
    shadow: Cohort
    agent: Agent


def play_late_entry(
    engine: Engine,
    at: datetime,
    lineup: Lineup,
    family_id: str,
    numbers: Sequence[int],
    responders: ResponderFactory,
    *,
    allow_contaminated: bool = False,
    source: MarketSource | None = None,
    prices: Callable[[], PriceReader] | None = None,
    stale_after: timedelta = timedelta(minutes=60),
    owner: str | None = None,
) -> LateEntryResult:
    """Play `family_id` over live cohorts `numbers` (module docstring); `at` is now (the shadow's
    stamp and the claims' clock), every replayed run keeps its own time. Refused before any
    write: an unknown family or cohort, a cohort still deciding, a cohort the leakage guard
    refuses (unless `allow_contaminated`), a family no responder can answer for."""
    family = _family(lineup, family_id)
    responder = responders(family)
    if responder is None:
        raise InputError(
            f"family {family_id!r} has no usable endpoint or key",
            "set its base_url / API key (see the lineup) and run again",
        )
    originals = _originals(engine, numbers, at)
    verdicts = {
        c.number: leakage_guard(c.number, c.week_start, family.knowledge_cutoff, allow_contaminated)
        for c in originals
    }
    refused = [v.reason for v in verdicts.values() if not v.allowed and v.reason]
    if refused:
        raise InputError(
            "late entry refused by the leakage guard: " + "; ".join(refused),
            "--allow-contaminated plays them anyway, stamped contaminated on every page",
        )
    endpoint = endpoint_of(responder)
    if endpoint is not None:  # before anything is written: a dead endpoint plays no week
        reason = probe_endpoint(endpoint)
        if reason is not None:
            raise unreachable(family_id, endpoint, reason)
    sync_families(engine, lineup)  # the family's row, written only once nothing refused
    result = LateEntryResult(family_id, [c.number for c in originals])
    result.contaminated = [n for n, v in verdicts.items() if v.contaminated]
    owner = owner or new_owner()
    history = clob_history(prices()) if prices is not None else None
    watched = WatchedResponder(responder)
    play = _Play(engine, watched, at, stale_after, owner, history, result)
    marks: Counter[str] = Counter()
    for original in originals:
        stamp = LateEntryStamp(
            original.number,
            family_id,
            at,
            verdicts[original.number].contaminated,
            family.knowledge_cutoff,
        )
        entry = _ensure_shadow(engine, original, family, stamp, at, result)
        methodology = methodology_of(original)
        runs = _runs(engine, original)
        for run in runs:
            result.runs += 1
            played = _play_week(play, entry, run, methodology)
            if isinstance(played, HeldRun):  # held by a running process: later runs must wait
                result.held.append(original.number)
                result.held_runs.append(played)
                break
            marks += played
        else:
            last = runs[-1].at if runs else None
            marks += _finish(engine, entry, methodology, source, at, last, history, result)
    result.marks = dict(marks)
    _log(engine, at, "INFO", f"late entry of {family_id}", result)
    return result


@dataclass(frozen=True)
class _Play:
    """What every replayed run of one late entry shares: the database, the watched responder,
    now (`at`, the claims' clock), the claim rules, the price history and the summary."""

    engine: Engine
    responder: WatchedResponder
    at: datetime
    stale_after: timedelta
    owner: str
    history: Any
    result: LateEntryResult


def _play_week(
    play: _Play, entry: _Entry, run: OriginalRun, methodology: Methodology
) -> Counter[str] | HeldRun:
    """`_replay_run`, the week asked again while the endpoint fails it; after
    `OUTAGE_STOP_AFTER` failures in a row the whole late entry stops (LateEntryStopped), so no
    later week is played over one the model was never asked."""
    result = play.result
    lost: LLMError | None = None
    for _ in range(OUTAGE_STOP_AFTER):
        played = _replay_run(play, entry, run, methodology)
        if not isinstance(played, LLMError):
            return played
        lost = played
        result.endpoint_failures += 1
    assert lost is not None
    family = entry.shadow.late_entry_family or entry.agent.family_id
    _log(play.engine, play.at, "WARNING", f"late entry of {family} stopped", result)
    endpoint = endpoint_of(play.responder.inner) or "?"
    number = entry.original.number
    stopped = outage_stop(family, endpoint, number, run.week, OUTAGE_STOP_AFTER, lost.message)
    stopped.played = result
    raise stopped


def _log(engine: Engine, at: datetime, level: str, what: str, result: LateEntryResult) -> None:
    with session_scope(engine) as session:
        cohorts = ", ".join(map(str, result.cohorts))
        log_event(session, at, level, SOURCE, f"{what} over cohort(s) {cohorts}", **result.counts())


def _family(lineup: Lineup, family_id: str) -> FamilySpec:
    try:
        return lineup.get(family_id)
    except KeyError:
        known = ", ".join(f.id for f in lineup.families)
        raise InputError(f"family {family_id!r} is not in the lineup", f"known: {known}") from None


def _originals(engine: Engine, numbers: Sequence[int], at: datetime) -> list[Cohort]:
    """The live cohorts `numbers`, each past its decision window at `at` (every run it will
    ever have has happened); InputError naming what is wrong."""
    if not numbers:
        raise InputError("no cohort named", "write e.g. --cohorts 1-4")
    with session_scope(engine) as session:
        found = {
            c.number: c
            for c in session.exec(
                select(Cohort).where(
                    col(Cohort.number).in_(list(numbers)), col(Cohort.late_entry_of).is_(None)
                )
            )
        }
        missing = [n for n in numbers if n not in found]
        if missing:
            latest = session.exec(
                select(Cohort.number)
                .where(col(Cohort.late_entry_of).is_(None))
                .order_by(col(Cohort.number).desc())
            ).first()
            hint = f"cohorts are numbered 1 to {latest}" if latest else "no cohort exists yet"
            named = ", ".join(map(str, missing))
            verb = "cohort {} does not exist" if len(missing) == 1 else "cohorts {} do not exist"
            raise InputError(verb.format(named), hint)
        for number in numbers:
            cohort = found[number]
            ends = cohort.week_start + timedelta(weeks=window_weeks_of(cohort, 5))
            if at < ends:
                raise InputError(
                    f"cohort {number} is still deciding (its window ends {ends:%Y-%m-%d %H:%M})",
                    "a late entrant plays finished decision runs only; run it after the window",
                )
        return [found[n] for n in sorted(numbers)]


def methodology_of(cohort: Cohort) -> Methodology:
    """The constants a cohort was stamped with, as the Methodology its runs used."""
    return stamped_methodology(cohort.methodology_version, cohort.constants)


def _ensure_shadow(
    engine: Engine,
    original: Cohort,
    family: FamilySpec,
    stamp: LateEntryStamp,
    at: datetime,
    result: LateEntryResult,
) -> _Entry:
    """The shadow of `original` for the family and its one agent, created once (the unique
    original × family key: a racing second process reads the winner's)."""
    for _ in range(2):
        with session_scope(engine) as session:
            found = _shadow_of(session, original, family.id)
            if found is not None:
                return found
        try:
            with session_scope(engine) as session:
                shadow = Cohort(
                    number=original.number,
                    week_start=original.week_start,
                    methodology_version=original.methodology_version,
                    constants=shadow_stamp(original.constants, stamp),
                    status="deciding",
                    created_at=at,
                    late_entry_of=original.id,
                    late_entry_family=family.id,
                )
                session.add(shadow)
                session.flush()
                balance = methodology_of(original).starting_balance
                session.add(
                    Agent(
                        cohort_id=shadow.id,  # type: ignore[arg-type]
                        family_id=family.id,
                        replicate=1,
                        model_id=family.model,
                        display_name=family.display_name,
                        starting_balance=balance,
                        cash_balance=balance,
                        created_at=at,
                    )
                )
                log_event(
                    session,
                    at,
                    "INFO",
                    SOURCE,
                    f"late entrant {family.id} started on cohort {original.number}",
                    cohort=original.number,
                    family=family.id,
                    contaminated=stamp.contaminated,
                )
            result.shadows_created += 1
        except IntegrityError:
            continue  # another process created it first: read it again
    with session_scope(engine) as session:
        found = _shadow_of(session, original, family.id)
        assert found is not None
        return found


def _shadow_of(session: Session, original: Cohort, family_id: str) -> _Entry | None:
    shadow = session.exec(
        select(Cohort).where(
            Cohort.late_entry_of == original.id, Cohort.late_entry_family == family_id
        )
    ).first()
    if shadow is None:
        return None
    agent = session.exec(select(Agent).where(Agent.cohort_id == shadow.id)).one()
    return _Entry(original, shadow, agent)


def _runs(engine: Engine, original: Cohort) -> list[OriginalRun]:
    with session_scope(engine) as session:
        return original_runs(session, original.id)  # type: ignore[arg-type]


def _replay_run(
    play: _Play, entry: _Entry, run: OriginalRun, methodology: Methodology
) -> Counter[str] | HeldRun | LLMError:
    """One original run: settle what resolved before it, decide (claimed), value at its prices;
    the held run when another process holds the run's claim (nothing after it may be played
    yet); the endpoint's failure when the decision was lost to it (`is_outage`): then the week
    is not played, its `error` row stays re-claimable and it is not valued."""
    engine, responder, result, stale_after = (
        play.engine,
        play.responder,
        play.result,
        play.stale_after,
    )
    agent_id = entry.agent.id
    assert agent_id is not None
    result.settled_recorded += len(settle_recorded(engine, agent_id, run.at))
    with session_scope(engine) as session:
        played_on = _played_past(session, agent_id, run)
    claim = None
    if not played_on:
        claim = claim_decision(
            engine, entry.agent, run.week, run.at, stale_after, play.owner, claimed_at=play.at
        )
    if claim is None and not played_on:
        held = _held(engine, entry, run.week, stale_after)
        if held is not None:
            return held
    interval = methodology.snapshot_interval_minutes
    with session_scope(engine) as session:
        valued = _has_snapshot(session, agent_id, slot_start(run.at, interval))
    if claim is None and valued:  # done and valued: its universe is not read again
        result.already_done += 1
        return Counter()
    with session_scope(engine) as session:
        universe = replay_universe(session, run, executes_on_books(entry.shadow.constants))
    if claim is None:
        result.already_done += 1
    else:
        responder.take()
        status, trades = decide_or_fail(
            engine, claim, entry.agent, entry.shadow, run.week, run.at, responder, universe,
            methodology,
        )  # fmt: skip
        lost = responder.take()
        if status == "error" and lost is not None:
            return lost
        result.decided[status] = result.decided.get(status, 0) + 1
        result.trades += trades
    if valued:
        return Counter()  # valued when it was played: history is never rewritten
    return snapshot_shadow(engine, agent_id, universe, run.at, interval, play.history)


def _held(engine: Engine, entry: _Entry, week: int, stale_after: timedelta) -> HeldRun | None:
    """The run's decision when a process still within its claim holds it `in_progress`."""
    with session_scope(engine) as session:
        row = session.exec(
            select(Decision.id, Decision.status, Decision.claimed_at).where(
                Decision.agent_id == entry.agent.id, Decision.decision_week == week
            )
        ).first()
    if row is None or row[1] != "in_progress" or row[0] is None or row[2] is None:
        return None
    since = row[2]
    return HeldRun(
        row[0], entry.agent.model_id, entry.original.number, week, since, since + stale_after
    )


def _played_past(session: Session, agent_id: int, run: OriginalRun) -> bool:
    """Whether a later run was already played: then this run's decision is final whatever its
    status (re-deciding an `error` week after later weeks traded would reorder history)."""
    later = session.exec(
        select(Decision.id).where(Decision.agent_id == agent_id, Decision.decision_week > run.week)
    ).first()
    return later is not None


def _has_snapshot(session: Session, agent_id: int, slot: datetime) -> bool:
    found = session.exec(
        select(PortfolioSnapshot.id).where(
            PortfolioSnapshot.agent_id == agent_id, PortfolioSnapshot.slot == slot
        )
    ).first()
    return found is not None


def _finish(
    engine: Engine,
    entry: _Entry,
    methodology: Methodology,
    source: MarketSource | None,
    at: datetime,
    last_run: datetime | None,
    history: Any,
    result: LateEntryResult,
) -> Counter[str]:
    """After the last run: every recorded resolution, the source asked about the rest, the
    final snapshot, and the shadow's status (completed once nothing is open)."""
    agent_id = entry.agent.id
    assert agent_id is not None
    times = settle_recorded(engine, agent_id, None)
    result.settled_recorded += len(times)
    if source is not None:
        times += _ask_source(engine, agent_id, source, at, result)
    with session_scope(engine) as session:
        open_left = session.exec(
            select(Position.id).where(Position.agent_id == agent_id, Position.status == "open")
        ).first()
    marks: Counter[str] = Counter()
    if times:
        marks = snapshot_shadow(
            engine, agent_id, None, max(times), methodology.snapshot_interval_minutes, history
        )
    final = max([*times, *([last_run] if last_run else [])], default=at)
    with session_scope(engine) as session:
        shadow = session.get(Cohort, entry.shadow.id)
        assert shadow is not None
        if open_left is None:
            if shadow.status != "completed":
                shadow.status, shadow.completed_at = "completed", final
            result.completed.append(shadow.number)
        else:
            shadow.status = "tracking"
        session.add(shadow)
    return marks


def _ask_source(
    engine: Engine, agent_id: int, source: MarketSource, at: datetime, result: LateEntryResult
) -> list[datetime]:
    """Ask the source about each market the late entrant still holds that the database never
    saw resolved. A decided answer is recorded with its provenance in
    `late_entry_resolutions` (never in `markets`: a late entrant changes no live figure) and
    settles the late entrant there at `at`. Markets of the other kind are left alone
    (`foreign_markets`), as the resolve job leaves them; a market another late entry already
    asked about is settled from that record (`settle_recorded`), not asked again."""
    with session_scope(engine) as session:
        rows = session.exec(
            select(Position.market_id, Market.source)
            .join(Market, col(Market.id) == col(Position.market_id))
            .where(Position.agent_id == agent_id, Position.status == "open")
            .where(col(Market.status).not_in(FINAL_STATUSES))
            .distinct()
        ).all()
    foreign = foreign_markets(source.name)  # as the resolve job: never ask about the other kind
    result.left_alone += sorted(market_id for market_id, kind in rows if kind == foreign)
    asked = 0
    for market_id in sorted(market_id for market_id, kind in rows if kind != foreign):
        fresh = source.get_market(market_id, at)
        if fresh is None:
            continue
        verdict = resolution_verdict(fresh)
        if verdict.state == "unresolved":
            continue
        record_asked(engine, fresh, verdict, source.name, at)
        result.asked.append(market_id)
        asked += 1
    return settle_recorded(engine, agent_id, None) if asked else []  # all of them at once
