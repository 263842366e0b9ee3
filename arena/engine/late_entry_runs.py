"""What a late entrant replays (methodology §20): the original cohort's decision runs, their
frozen universes with tradability as it was, the recorded resolutions, and the marks between.

Why apart from `arena.engine.late_entry` (the command): these are the reads and writes of one
replayed run, each taking the run's own time (`at`), as every engine job does.

- A run is the frozen snapshot most of the original's decisions of a week were made on, at
  its `taken_at` (the run's `at`, which the prompt names).
- Tradability is frozen too: a market of the universe (rank ≤ its size) was open when it was
  frozen; one added because it was held is tradable unless its recorded resolution came before
  the run. The live re-read just before execution (`FrozenUniverse.tradable_now`) would see
  today's closed markets, so a replayed universe skips it (`replayed`).
- Settlement replays the recorded resolutions, each at its recorded time: the resolve job's
  (final in `markets`), else one asked of the source for a late entrant
  (`late_entry_resolutions`, kept by `record_asked`), at the time it was asked.
- A `book_execution` cohort's replay walks the books its run stored.
- Marks: the run's frozen price where the universe has the market; else the CLOB's price
  history at the run's time where a reader can get it; else the last mark (carried). Each
  snapshot records which, by position (`price_provenance`).
"""

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arena.core.accounting import (
    TradeRejected,
    choose_mark,
    mark_value,
    named_outcome,
    side_price,
)
from arena.core.timeutil import slot_start
from arena.engine.decision_inputs import (
    FrozenUniverse,
    load_run_books,
    load_universe,
    open_positions,
)
from arena.engine.logs import log_event
from arena.engine.provenance import PriceReader
from arena.engine.settlement import settle_positions
from arena.engine.snapshots import write_agent_snapshot
from arena.markets.resolution import Verdict
from arena.markets.types import ParsedMarket
from arena.storage.db import session_scope, transaction
from arena.storage.models import (
    FINAL_STATUSES,
    Agent,
    BrierScore,
    Decision,
    LateEntryResolution,
    Market,
    MarketSnapshot,
    MarketSnapshotItem,
    Position,
)

log = logging.getLogger("arena.engine.late_entry")

# Where a replayed mark came from (`price_provenance[...]["source"]`, and the result's counts).
MARK_RUN = "run"
MARK_CLOB_HISTORY = "clob_history"
MARK_CARRIED = "carried"
MARK_SOURCES = (MARK_RUN, MARK_CLOB_HISTORY, MARK_CARRIED)
HISTORY_LOOKBACK = timedelta(days=1)  # how far before a run a CLOB history point may be


@dataclass(frozen=True)
class OriginalRun:
    """One decision run of the original cohort, as its late entrant replays it."""

    week: int
    snapshot_id: int
    at: datetime


def original_runs(session: Session, cohort_id: int) -> list[OriginalRun]:
    """Per decision week, the snapshot most of the original's decisions used (ties: the
    earliest), at its freeze time; a week no decision reached a prompt in is left out."""
    rows = session.exec(
        select(Decision.decision_week, Decision.market_snapshot_id, func.count())
        .where(Decision.cohort_id == cohort_id, col(Decision.market_snapshot_id).is_not(None))
        .group_by(col(Decision.decision_week), col(Decision.market_snapshot_id))
    ).all()
    best: dict[int, tuple[int, int]] = {}
    for week, snapshot_id, count in rows:
        assert snapshot_id is not None
        key = (-int(count), int(snapshot_id))
        if week not in best or key < best[week]:
            best[week] = key
    runs = []
    for week in sorted(best):
        snapshot_id = best[week][1]
        taken = session.exec(
            select(MarketSnapshot.taken_at).where(MarketSnapshot.id == snapshot_id)
        ).one()
        runs.append(OriginalRun(int(week), snapshot_id, taken))
    return runs


def replay_universe(session: Session, run: OriginalRun, walks_books: bool) -> FrozenUniverse:
    """The run's frozen universe with tradability as it was at the run (module docstring),
    `replayed` so execution never re-reads today's market status; with the run's stored books
    when the cohort walks books."""
    universe = load_universe(session, run.snapshot_id)
    size = session.get(MarketSnapshot, run.snapshot_id).market_count  # type: ignore[union-attr]
    ranks = dict(
        session.exec(
            select(MarketSnapshotItem.market_id, MarketSnapshotItem.rank).where(
                MarketSnapshotItem.snapshot_id == run.snapshot_id
            )
        ).all()
    )
    resolved = dict(
        session.exec(
            select(Market.id, Market.resolved_at).where(col(Market.id).in_(list(ranks)))
        ).all()
    )
    snapshot = {}
    for market_id, item in universe.snapshot.items():
        was_open = ranks[market_id] <= size or _unresolved_at(resolved.get(market_id), run.at)
        snapshot[market_id] = replace(item, tradable=bool(item.prices) and was_open)
    books = load_run_books(session, run.snapshot_id) if walks_books else None
    return replace(universe, snapshot=snapshot, books=books, replayed=True)


def _unresolved_at(resolved_at: datetime | None, at: datetime) -> bool:
    return resolved_at is None or resolved_at > at


def settle_recorded(engine: Engine, agent_id: int, until: datetime | None) -> list[datetime]:
    """Settle the agent's open positions in markets whose resolution is recorded, at or before
    `until` (None: any time), each market at its recorded time, oldest first; the times
    settled at. Recorded: final in `markets` (the live resolve job's), else asked for a late
    entrant (`late_entry_resolutions`). The Brier rows of the agent's BUYs there are written
    with them (the live settlement's rules: `settlement.settle_positions`)."""
    with session_scope(engine) as session:
        held = select(Position.market_id).where(
            Position.agent_id == agent_id, Position.status == "open"
        )
        due: list[tuple[datetime, str, Verdict]] = []
        for market in session.exec(
            select(Market).where(
                col(Market.id).in_(held),
                col(Market.status).in_(FINAL_STATUSES),
                col(Market.resolved_at).is_not(None),
            )
        ):
            assert market.resolved_at is not None
            due.append((market.resolved_at, market.id, recorded_verdict(market)))
        for asked in session.exec(
            select(LateEntryResolution).where(
                col(LateEntryResolution.market_id).in_(held),
                col(LateEntryResolution.market_id).not_in(
                    select(Market.id).where(col(Market.status).in_(FINAL_STATUSES))
                ),
            )
        ):
            due.append((asked.asked_at, asked.market_id, asked_verdict(asked)))
    due = sorted(d for d in due if until is None or d[0] <= until)  # (time, id): the ids break ties
    times = []
    for settled_at, market_id, verdict in due:
        with session_scope(engine) as session:
            row = session.get(Market, market_id)
            assert row is not None
            settle_positions(session, row, verdict, settled_at, agent_id)
        times.append(settled_at)
    return times


def recorded_verdict(market: Market) -> Verdict:
    """A final market's recorded resolution as the settlement's verdict."""
    if market.status == "cancelled" or market.resolution_outcome in (None, "CANCELLED"):
        return Verdict("cancelled", None, "recorded: cancelled")
    return Verdict("resolved", market.resolution_outcome, "recorded resolution")


def asked_verdict(asked: LateEntryResolution) -> Verdict:
    """A resolution asked for a late entrant as the settlement's verdict."""
    if asked.state == "cancelled":
        return Verdict("cancelled", None, asked.reason)
    return Verdict("resolved", asked.resolution_outcome, asked.reason)


def record_asked(
    engine: Engine, fresh: ParsedMarket, verdict: Verdict, source: str, at: datetime
) -> None:
    """Keep a decided answer of the source with its provenance (the first one kept: a second
    late entry reads it instead of asking), and log it."""
    with session_scope(engine) as session:
        if session.get(LateEntryResolution, fresh.id) is not None:
            return
        session.add(
            LateEntryResolution(
                market_id=fresh.id,
                source=source,
                asked_at=at,
                state=verdict.state,
                resolution_outcome=verdict.winner or "CANCELLED",
                closed=fresh.closed,
                uma_resolution_status=fresh.uma_resolution_status,
                prices=[str(p) for p in fresh.prices or ()],
                reason=verdict.reason,
            )
        )
        log_event(
            session,
            at,
            "INFO",
            "late-entry",
            f"market {fresh.id} resolution asked of {source} for a late entrant: "
            f"{verdict.state} {verdict.winner or ''}".rstrip(),
            market_id=fresh.id,
            asked=source,
            reason=verdict.reason,
        )


@dataclass(frozen=True)
class Mark:
    price: Decimal
    source: str


HistoryReader = Callable[[str, datetime], Decimal | None]


def clob_history(reader: PriceReader) -> HistoryReader:
    """A token's last CLOB price-history point at most `HISTORY_LOOKBACK` before `at` (None
    when the reader has no history or cannot answer: the mark is then carried)."""

    def read(token_id: str, at: datetime) -> Decimal | None:
        history = getattr(reader, "price_history", None)
        if history is None:
            return None
        end = int(at.timestamp())
        start = int((at - HISTORY_LOOKBACK).timestamp())
        try:
            points = history(token_id, start_ts=start, end_ts=end, fidelity=60)
        except Exception as exc:  # the CLOB's failure is a carried mark, not a failed entry
            log.warning("CLOB price history of %s unavailable: %s", token_id, exc)
            return None
        before = [p for p in points if p.t <= end]
        return Decimal(str(before[-1].p)) if before else None

    return read


def snapshot_shadow(
    engine: Engine,
    agent_id: int,
    universe: FrozenUniverse | None,
    at: datetime,
    interval_minutes: int,
    history: HistoryReader | None = None,
) -> Counter[str]:
    """The late entrant's portfolio snapshot at `at` (its slot; upsert), its open positions
    marked by the run's frozen prices, the CLOB history or carried (module docstring); the
    marks by source. The positions keep their new marks, as a live pass's do."""
    counts: Counter[str] = Counter()
    with session_scope(engine) as session:
        agent = session.get(Agent, agent_id)
        assert agent is not None
        positions = open_positions(session, agent_id)
        values, provenance = [], {}
        for position in positions:
            mark = _mark(session, position, universe, at, history)
            counts[mark.source] += 1
            position.mark_price, position.marked_at = mark.price, at
            session.add(position)
            values.append(mark_value(position.shares, mark.price))
            provenance[str(position.id)] = {"source": mark.source, "price": f"{mark.price:.6f}"}
        brier = session.exec(
            select(func.avg(BrierScore.brier_score), func.count()).where(
                BrierScore.agent_id == agent_id
            )
        ).one()
        cash, starting = agent.cash_balance, agent.starting_balance
    with transaction(engine) as conn:
        write_agent_snapshot(
            conn,
            agent_id,
            cash,
            starting,
            values,
            provenance or None,
            (float(brier[0]), int(brier[1])) if brier[1] else None,
            slot_start(at, interval_minutes),
            at,
        )
    return counts


def _mark(
    session: Session,
    position: Position,
    universe: FrozenUniverse | None,
    at: datetime,
    history: HistoryReader | None,
) -> Mark:
    frozen = universe.snapshot.get(position.market_id) if universe is not None else None
    if frozen is not None and frozen.tradable:
        try:
            price = side_price(frozen.market_type, frozen.outcomes, frozen.prices, position.side)
            return Mark(price, MARK_RUN)
        except TradeRejected:
            pass
    if history is not None:
        past = _history_price(session, position, at, history)
        if past is not None:
            return Mark(past, MARK_CLOB_HISTORY)
    carried = choose_mark(False, None, position.mark_price, position.avg_entry_price)
    return Mark(carried, MARK_CARRIED)


def _history_price(
    session: Session, position: Position, at: datetime, history: HistoryReader
) -> Decimal | None:
    """The side's CLOB history price at `at`: its outcome's token (a binary NO from its own
    token, or 1 − YES when only YES has one)."""
    market = session.get(Market, position.market_id)
    if market is None or not market.clob_token_ids:
        return None
    tokens = list(market.clob_token_ids)
    outcomes = [str(o) for o in market.outcomes or []]
    try:
        index = _outcome_index(position.side, market.market_type, outcomes)
    except (TradeRejected, ValueError):
        return None
    if index >= len(tokens):
        return None
    found = history(tokens[index], at)
    if found is None or not Decimal(0) <= found <= Decimal(1):
        return None
    return found


def _outcome_index(side: str, market_type: str, outcomes: Iterable[str]) -> int:
    """Which outcome (and so which token) a side holds."""
    listed = list(outcomes)
    if market_type == "binary":
        wanted = side.strip().upper()
        upper = [o.strip().upper() for o in listed]
        return upper.index(wanted) if wanted in upper else (0 if wanted == "YES" else 1)
    return listed.index(named_outcome(side, market_type, listed))
