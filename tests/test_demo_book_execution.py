"""Issue 34: a demo season under the protocol extension `book_execution` (the suite's one
played book_execution season: the baselines and the oracle for nine days against the simulated
CLOB's books, `arena.sim.books`, served by `arena.sim.clob_server`).

Its BETs fill by walking the books each decision run stored (recording forced by the stamp:
the suite turns `record_books` off), its positions are marked at the bid with the mid beside
them, its books balance, and its figures stay out of v1's.
"""

from collections.abc import Iterator
from decimal import Decimal as D

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.analytics.query.scope import excluded_cohorts
from arena.storage.book_models import DecisionBook
from arena.storage.db import create_db_engine, session_scope
from arena.storage.models import Cohort, PortfolioSnapshot, Trade
from tests.faults.invariants import assert_books_balance
from tests.stated_season import BASELINE_DAYS, BASELINES, DemoSeasons


@pytest.fixture(scope="module")
def season(demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    folder = tmp_path_factory.mktemp("demo_book_execution")
    engine = create_db_engine(demo_seasons.copy(folder, BASELINES, "book_execution", BASELINE_DAYS))
    yield engine
    engine.dispose()


def test_the_season_trades_by_walking_its_stored_books(season: Engine) -> None:
    with session_scope(season) as s:
        cohorts = list(s.exec(select(Cohort)))
        buys = [t for t in s.exec(select(Trade)) if t.trade_type == "BUY"]
        stored = s.exec(select(DecisionBook)).first()
    assert cohorts and all(c.constants["extensions"] == ["book_execution"] for c in cohorts)
    assert stored is not None  # stored although the suite turns recording off
    assert buys and all(t.price_source == "book_walk" and t.book_fill for t in buys)
    for trade in buys:
        fill = trade.book_fill or {}
        assert D(fill["amount"]) == trade.amount and D(fill["shares"]) == trade.shares
        spent = sum((D(p) * D(n) for p, n in fill["levels"]), D(0))
        assert spent >= trade.amount - D("0.000001")  # never less than the levels asked


def test_the_season_books_balance(season: Engine) -> None:
    assert_books_balance(season)


def test_positions_are_marked_at_the_bid_with_the_mid_beside(season: Engine) -> None:
    with session_scope(season) as s:
        records = [
            record
            for row in s.exec(select(PortfolioSnapshot))
            for record in (row.price_provenance or {}).values()
        ]
    at_bid = [r for r in records if r["source"] == "book_bid"]
    assert at_bid and all(r["mid"] is not None for r in at_bid)
    assert all(D(r["mark"]) <= D(r["mid"]) for r in at_bid)  # the bid walk is below the mid


def test_its_figures_stay_out_of_v1s(season: Engine) -> None:
    with session_scope(season) as s:
        numbers = sorted(c.number for c in s.exec(select(Cohort)))
    assert excluded_cohorts(season) == numbers
