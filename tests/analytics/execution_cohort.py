"""A scripted cohort for the execution-sensitivity tests: two families on one real market
whose YES book is a recorded real one (tests/fixtures/clob/book_spurs_2025-10.raw.json).

Built through the real executor (`tests.factories.trade_into`) and the real models: the
decisions point at a frozen snapshot whose item shows Gamma's prices, and (when `books`) the
snapshot stores the YES token's recorded book and a NO token the CLOB did not know, as a
decision run stores them (`arena.engine.books.book_row`).
"""

import json
from datetime import timedelta
from decimal import Decimal as D
from pathlib import Path

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine

from arena.config import Methodology
from arena.engine.books import BookToken, book_row
from arena.markets.clob_wire import parse_book
from arena.markets.price_source import quote_from_book
from arena.storage.book_models import DecisionBook
from arena.storage.db import session_scope
from arena.storage.models import MarketSnapshot, MarketSnapshotItem
from arena.storage.tables import COHORTS, DECISIONS, POSITIONS
from tests.factories import WEEK1, market, new_cohort_agents, trade_into

BOOK = Path(__file__).resolve().parents[1] / "fixtures" / "clob" / "book_spurs_2025-10.raw.json"
YES_TOKEN = "yes-spurs"
NO_TOKEN = "no-spurs"


def scripted_cohort(
    engine: Engine, number: int = 1, *, books: bool = True, version: str = "v1"
) -> list[int]:
    """Family A buys YES for $1,000 at the display 0.60, family B NO for $500 at 0.40; both
    positions marked at the book's mid (YES 0.615, NO 0.385). Returns the agent ids."""
    mid = f"spurs-{number}"
    with session_scope(engine) as s:
        s.add(market(mid, prices=["0.6", "0.4"], clob_token_ids=[YES_TOKEN, NO_TOKEN]))
    agents = new_cohort_agents(engine, ("fam-a", "fam-b"), number=number)
    at = WEEK1 + timedelta(weeks=number - 1, hours=1)
    trade_into(engine, agents[0], mid, "YES", "1000", "0.6", at)
    trade_into(engine, agents[1], mid, "NO", "500", "0.4", at)
    quotes = None
    if version == "v2":
        quotes = [
            {
                "price": "0.615",
                "source": "clob_mid",
                "status": "accepted",
                "gamma_price": "0.6",
                "clob_price": "0.615",
                "disagreement": "0.015",
                "fallback_reason": None,
            },
            {
                "price": "0.385",
                "source": "clob_mid",
                "status": "accepted",
                "gamma_price": "0.4",
                "clob_price": "0.385",
                "disagreement": "0.015",
                "fallback_reason": None,
            },
        ]
    with session_scope(engine) as s:
        snap = MarketSnapshot(taken_at=at, market_count=1)
        s.add(snap)
        s.flush()
        assert snap.id is not None
        s.add(
            MarketSnapshotItem(
                snapshot_id=snap.id,
                market_id=mid,
                rank=1,
                question="Spurs?",
                market_type="binary",
                outcomes=["Yes", "No"],
                prices=["0.6", "0.4"],
                quotes=quotes,
            )
        )
        s.flush()
        snapshot_id = snap.id
    with engine.begin() as conn:
        conn.execute(
            update(DECISIONS)
            .where(DECISIONS.c.agent_id.in_(agents))
            .values(market_snapshot_id=snapshot_id)
        )
        for agent_id, mark in zip(agents, ("0.615", "0.385"), strict=True):
            conn.execute(
                update(POSITIONS).where(POSITIONS.c.agent_id == agent_id).values(mark_price=D(mark))
            )
        if version != "v1":
            cohort_id = conn.execute(
                select(DECISIONS.c.cohort_id).where(DECISIONS.c.agent_id == agents[0])
            ).scalar_one()
            # stamped as every new cohort of `version` is (v2: the original's rule set)
            stamp = Methodology(version=version).stamp()
            conn.execute(
                update(COHORTS)
                .where(COHORTS.c.id == cohort_id)
                .values(methodology_version=version, constants=stamp)
            )
        if books:
            quote = quote_from_book(parse_book(json.loads(BOOK.read_text())))
            rows = [
                book_row(snapshot_id, BookToken(YES_TOKEN, mid, "Yes"), quote),
                book_row(snapshot_id, BookToken(NO_TOKEN, mid, "No"), None),
            ]
            rows[1]["status"] = "unknown_token"
            conn.execute(insert(DecisionBook.__table__), rows)  # type: ignore[attr-defined]
    return agents
