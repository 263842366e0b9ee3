"""What a decision sees: the run's one frozen market snapshot and the agent's own state.

Every agent of a run is shown the same snapshot, frozen once (the universe plus every market
the run's agents hold) and loaded once; the agent's cash and positions are read fresh and
marked at the snapshot's prices. Tradability is re-read just before execution
(`FrozenUniverse.tradable_now`): a market can close while a model is thinking. A
`book_execution` cohort's legs walk the books the run stored, loaded once (`load_run_books`).
"""

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arena.agents.prompts import PortfolioView, PromptMarket, PromptPosition, format_market_line
from arena.config import Methodology
from arena.core.accounting import (
    BetLimits,
    Holding,
    TradeRejected,
    choose_mark,
    mark_value,
    side_price,
)
from arena.core.book_legs import LegBook
from arena.core.execution import HeldPosition, SnapshotMarket
from arena.core.fees import FeeSchedule
from arena.engine.books import load_books
from arena.engine.provenance import PriceReader
from arena.engine.universe import freeze_universe, snapshot_items
from arena.storage.db import session_scope
from arena.storage.models import Agent, Cohort, Market, MarketSnapshot, Position


def freeze_run_universe(
    engine: Engine,
    at: datetime,
    methodology: Methodology,
    cohorts: list[Cohort],
    exclude_source: str | None = None,
    reader: PriceReader | None = None,
    books: PriceReader | None = None,
    horizon: timedelta | None = None,
) -> int:
    """The run's market snapshot for `cohorts`: the universe plus every market their agents
    hold; priced at validated CLOB midpoints through `reader` for v2 cohorts (one per version
    and run), at the synced Gamma prices without it (v1); with `books`, every token's book is
    stored beside it (`arena.engine.books`), whatever the version. `horizon`: the cohorts run
    the extension `horizon` with that many days (one universe per distinct horizon and run)."""
    with session_scope(engine) as session:
        cohort_ids = [c.id for c in cohorts]
        held = session.exec(
            select(Position.market_id)
            .join(Agent, col(Agent.id) == Position.agent_id)
            .where(col(Agent.cohort_id).in_(cohort_ids), Position.status == "open")
            .distinct()
        ).all()
        snapshot = freeze_universe(
            session,
            at,
            methodology.market_universe_size,
            held,
            exclude_source,
            reader,
            books,
            horizon,
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
    # Extension `book_execution`: the run's stored books by market, one per outcome in order;
    # None when no cohort of the run walks books (v1 / v2 never read them here).
    books: dict[str, tuple[LegBook, ...]] | None = None
    # A late entrant's replay of a past run (`arena.engine.late_entry_runs`): tradability is
    # frozen as it was at the run, never re-read from today's markets.
    replayed: bool = False

    def tradable_now(self, session: Session, market_ids: set[str]) -> dict[str, SnapshotMarket]:
        """The snapshot with tradability re-read for `market_ids`: a market can close while
        a model is thinking, and a leg must not execute in a closed market."""
        frozen = self.snapshot
        ids = sorted(market_ids & frozen.keys())
        if not ids or self.replayed:
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
            quotes=item.quotes,
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


def load_run_books(session: Session, snapshot_id: int) -> dict[str, tuple[LegBook, ...]]:
    """The run's stored books as the book-walk planner reads them: per market, each outcome's
    book (or its stored status; `no_book` when the run stored no row for the token) with the
    market's fee schedule. One read of `decision_books` per run, like the frozen universe."""
    stored = load_books(session, snapshot_id)
    ids = [item.market_id for item in snapshot_items(session, snapshot_id)]
    rows = session.exec(
        select(Market.id, Market.clob_token_ids, Market.fee_schedule).where(col(Market.id).in_(ids))
    )
    books: dict[str, tuple[LegBook, ...]] = {}
    for market_id, token_ids, schedule in rows:
        fees = FeeSchedule.from_json(schedule) if schedule else None
        entries = []
        for token in token_ids or ():
            found = stored.get(token)
            entries.append(
                LegBook(None, "no_book")
                if found is None
                else LegBook(found.book, found.status, fees)
            )
        books[market_id] = tuple(entries)
    return books


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
    positions = open_positions(session, agent_id)
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
    limits = bet_limits(methodology)
    portfolio = PortfolioView(
        cash=agent.cash_balance,
        max_bet=limits.max_bet(agent.cash_balance),
        min_bet=limits.min_bet,
        positions=shown,
    )
    return DecisionInputs(portfolio, held)


def open_positions(session: Session, agent_id: int) -> list[Position]:
    """The agent's open positions, oldest first (the order a prompt lists them in)."""
    query = select(Position).where(Position.agent_id == agent_id, Position.status == "open")
    return list(session.exec(query.order_by(col(Position.id))))


def bet_limits(methodology: Methodology) -> BetLimits:
    return BetLimits(min_bet=methodology.min_bet, max_bet_fraction=methodology.max_bet_fraction)
