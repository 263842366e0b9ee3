"""`arena late-entry`'s player on the finished test season, on both backends.

The late entrant is a baseline-strategy family (`favorite`), answered in process: what is
under test is the replay, not a model client (the demo's test plays one over HTTP). Checked:
its prompts are the incumbents' of the same run but for its own portfolio block; its fills
are at the run's frozen prices; a second run does nothing; a run killed mid-way resumes
without duplicating; the leakage guard refuses before writing; recorded resolutions settle
it and the market source answers the rest.
"""

import re
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.agents.baselines import BaselineInput
from arena.agents.llm import ChatResult
from arena.agents.responders import BaselineResponder, Messages
from arena.analytics.views.late_entry import late_entries, mark_sources
from arena.core.accounting import side_price
from arena.core.errors import InputError
from arena.core.late_entry import stamped_late_entry
from arena.engine.late_entry import LateEntryResult, play_late_entry
from arena.engine.late_entry_runs import clob_history, snapshot_shadow
from arena.lineup import FamilySpec, Lineup
from arena.markets.clob import ClobClient
from arena.storage.db import create_db_engine
from arena.storage.tables import (
    AGENTS,
    COHORTS,
    DECISIONS,
    FAMILIES,
    MARKET_SNAPSHOT_ITEMS,
    MARKETS,
    PORTFOLIO_SNAPSHOTS,
    POSITIONS,
    TRADES,
)
from tests.analytics.finished_season import (
    FINISHED_AT,
    ResolvedSource,
    finished_copy,
    finished_season,
)
from tests.analytics.season import writable_copy
from tests.late_entry_rows import baseline_responders, newcomer, season_lineup_with
from tests.markets.clob_server import serve

NOW = FINISHED_AT + timedelta(days=2)
NEWCOMER = newcomer()


def _lineup(*extra: FamilySpec) -> Lineup:
    return season_lineup_with(NEWCOMER, *extra)


_responders = baseline_responders


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    with finished_copy(request, tmp_path) as url:
        eng = create_db_engine(url)
        yield eng
        eng.dispose()


def _play(engine: Engine, **options: Any) -> LateEntryResult:
    lineup = options.pop("lineup", _lineup())
    family = options.pop("family", NEWCOMER.id)
    numbers = options.pop("numbers", [1, 2])
    responders = options.pop("responders", _responders)
    at = options.pop("at", NOW)
    return play_late_entry(engine, at, lineup, family, numbers, responders, **options)


def _rows(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            table.name: conn.execute(select(func.count()).select_from(table)).scalar_one()
            for table in (
                COHORTS,
                FAMILIES,
                AGENTS,
                DECISIONS,
                TRADES,
                POSITIONS,
                PORTFOLIO_SNAPSHOTS,
            )
        }


_PORTFOLIO = re.compile(r"YOUR PORTFOLIO\n.*?\n\nMARKETS", re.DOTALL)


def test_the_late_entrant_sees_what_the_incumbents_saw_and_fills_at_frozen_prices(
    engine: Engine,
) -> None:
    result = _play(engine)
    assert result.shadows_created == 2 and result.runs == 5 and result.trades > 0
    with engine.connect() as conn:
        shadows = conn.execute(
            select(COHORTS.c.id, COHORTS.c.number, COHORTS.c.late_entry_of, COHORTS.c.constants)
            .where(COHORTS.c.late_entry_of.is_not(None))
            .order_by(COHORTS.c.number)
        ).all()
        assert [s.number for s in shadows] == [1, 2]
        stamp = stamped_late_entry(shadows[0].constants)
        assert stamp is not None and stamp.family == "newcomer" and not stamp.contaminated
        assert "late_entry" in shadows[0].constants["extensions"]
        late = (
            conn.execute(
                select(DECISIONS).where(DECISIONS.c.cohort_id.in_([s.id for s in shadows]))
            )
            .mappings()
            .all()
        )
        compared = 0
        for row in late:
            original = next(s.late_entry_of for s in shadows if s.id == row["cohort_id"])
            incumbent = conn.execute(
                select(DECISIONS.c.prompt_system, DECISIONS.c.prompt_user).where(
                    DECISIONS.c.cohort_id == original,
                    DECISIONS.c.decision_week == row["decision_week"],
                    DECISIONS.c.market_snapshot_id == row["market_snapshot_id"],
                )
            ).first()
            assert incumbent is not None
            assert row["prompt_system"] == incumbent.prompt_system
            assert row["prompt_user"] != incumbent.prompt_user or row["decision_week"] == 1
            assert _PORTFOLIO.sub("", row["prompt_user"]) == _PORTFOLIO.sub(
                "", incumbent.prompt_user
            )
            compared += 1
        assert compared == 5
        buys = conn.execute(
            select(
                TRADES.c.market_id, TRADES.c.side, TRADES.c.price, DECISIONS.c.market_snapshot_id
            )
            .join(DECISIONS, DECISIONS.c.id == TRADES.c.decision_id)
            .where(DECISIONS.c.cohort_id.in_([s.id for s in shadows]), TRADES.c.trade_type == "BUY")
        ).all()
        assert buys
        for buy in buys:
            item = (
                conn.execute(
                    select(MARKET_SNAPSHOT_ITEMS).where(
                        MARKET_SNAPSHOT_ITEMS.c.snapshot_id == buy.market_snapshot_id,
                        MARKET_SNAPSHOT_ITEMS.c.market_id == buy.market_id,
                    )
                )
                .mappings()
                .one()
            )
            frozen = side_price(item["market_type"], item["outcomes"], item["prices"], buy.side)
            assert Decimal(buy.price) == frozen
    _marks_from_clob_history(engine)


def _marks_from_clob_history(engine: Engine) -> None:
    """Between runs, a market without a frozen price is marked from the CLOB's price history
    (a real client on a loopback CLOB), else carried; each snapshot records which."""
    with engine.connect() as conn:
        held = conn.execute(
            select(POSITIONS.c.agent_id, POSITIONS.c.id, POSITIONS.c.side, MARKETS.c.clob_token_ids)
            .join(MARKETS, MARKETS.c.id == POSITIONS.c.market_id)
            .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
            .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
            .where(COHORTS.c.late_entry_of.is_not(None), POSITIONS.c.status == "open")
            .order_by(POSITIONS.c.id)
        ).all()
    agent_id = held[0].agent_id
    mine = [row for row in held if row.agent_id == agent_id]
    assert len(mine) >= 2 and all(row.clob_token_ids for row in mine)
    at = NOW + timedelta(days=1)
    with serve() as clob:
        first = mine[0]
        token = first.clob_token_ids[0 if first.side.upper() == "YES" else 1]
        clob.history[token] = [{"t": int(at.timestamp()) - 600, "p": 0.42}]
        client = ClobClient(clob.url, min_interval=0.0, timeout=2.0)
        try:
            counts = snapshot_shadow(engine, agent_id, None, at, 10, clob_history(client))
        finally:
            client.close()
    assert counts == {"clob_history": 1, "carried": len(mine) - 1}
    with engine.connect() as conn:
        provenance = conn.execute(
            select(PORTFOLIO_SNAPSHOTS.c.price_provenance).where(
                PORTFOLIO_SNAPSHOTS.c.agent_id == agent_id,
                PORTFOLIO_SNAPSHOTS.c.slot == at,
            )
        ).scalar_one()
    assert provenance[str(first.id)] == {"source": "clob_history", "price": "0.420000"}


def test_a_second_run_does_nothing_and_the_source_settles_the_rest(engine: Engine) -> None:
    first = _play(engine)
    assert first.completed == []  # the newcomer holds markets the season never resolved
    recorded = mark_sources(engine, late_entries(engine))  # what the Leaderboard says
    assert recorded == {"run": 0, "clob_history": 0, "carried": 0, **first.marks}
    assert sum(recorded.values()) > 0
    before = _rows(engine)
    again = _play(engine)
    assert again.shadows_created == 0 and again.trades == 0 and again.decided == {}
    assert again.already_done == first.runs and again.marks == {}
    assert _rows(engine) == before
    settled = _play(engine, source=ResolvedSource(engine, void="none"))
    assert settled.asked and settled.completed == [1, 2]
    with engine.connect() as conn:
        statuses = conn.execute(
            select(COHORTS.c.status, COHORTS.c.completed_at).where(
                COHORTS.c.late_entry_of.is_not(None)
            )
        ).all()
    assert {s.status for s in statuses} == {"completed"}


class _Killed(BaseException):
    """What a kill looks like to the player: nothing below it catches it."""


class _KillOnWeek:
    """The newcomer's baseline, but its process dies when asked about `week`."""

    def __init__(self, week: int) -> None:
        self.week = week
        self.inner = BaselineResponder(NEWCOMER, 0, None)

    def respond(self, messages: Messages, context: BaselineInput) -> ChatResult:
        if context.decision_week == self.week:
            raise _Killed()
        return self.inner.respond(messages, context)


def test_a_kill_in_the_middle_resumes_without_duplicating(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    killer = _KillOnWeek(2)
    with pytest.raises(_Killed):
        _play(engine, numbers=[1], responders=lambda family: killer)
    with engine.connect() as conn:
        held = conn.execute(
            select(DECISIONS.c.decision_week, DECISIONS.c.status)
            .join(COHORTS, COHORTS.c.id == DECISIONS.c.cohort_id)
            .where(COHORTS.c.late_entry_of.is_not(None))
            .order_by(DECISIONS.c.decision_week)
        ).all()
    assert [tuple(r) for r in held] == [(1, "ok"), (2, "in_progress")]
    soon = _play(engine, numbers=[1], at=NOW + timedelta(minutes=5))  # the claim is not stale
    assert soon.decided == {} and soon.held == [1] and soon.trades == 0
    resumed = _play(engine, numbers=[1], at=NOW + timedelta(hours=2))
    assert resumed.decided == {"ok": 2} and resumed.shadows_created == 0
    with engine.connect() as conn:
        weeks = conn.execute(
            select(DECISIONS.c.decision_week, func.count())
            .join(COHORTS, COHORTS.c.id == DECISIONS.c.cohort_id)
            .where(COHORTS.c.late_entry_of.is_not(None))
            .group_by(DECISIONS.c.decision_week)
        ).all()
        legs = conn.execute(
            select(TRADES.c.decision_id, TRADES.c.leg_index, func.count())
            .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
            .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
            .where(COHORTS.c.late_entry_of.is_not(None), TRADES.c.decision_id.is_not(None))
            .group_by(TRADES.c.decision_id, TRADES.c.leg_index)
        ).all()
        cash = conn.execute(
            select(AGENTS.c.cash_balance)
            .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
            .where(COHORTS.c.late_entry_of.is_not(None))
        ).scalar_one()
    assert sorted(w for w, _ in weeks) == [1, 2, 4] and {n for _, n in weeks} == {1}
    assert legs and {n for *_, n in legs} == {1}
    # the same late entry played without a kill ends with the same cash, to the cent
    finished = finished_season(tmp_path_factory.getbasetemp())
    fresh = create_db_engine(writable_copy(finished, tmp_path / "fresh.db"))
    try:
        _play(fresh, numbers=[1])
        with fresh.connect() as conn:
            uninterrupted = conn.execute(
                select(AGENTS.c.cash_balance)
                .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
                .where(COHORTS.c.late_entry_of.is_not(None))
            ).scalar_one()
    finally:
        fresh.dispose()
    assert cash == uninterrupted


def test_the_leakage_guard_refuses_before_writing_and_the_flag_stamps_contaminated(
    engine: Engine,
) -> None:
    before = _rows(engine)
    late_cutoff = NEWCOMER.model_copy(update={"id": "recent", "knowledge_cutoff": date(2026, 1, 4)})
    no_cutoff = NEWCOMER.model_copy(update={"id": "unstated", "knowledge_cutoff": None})
    lineup = _lineup(late_cutoff, no_cutoff)
    with pytest.raises(InputError) as refused:
        _play(engine, lineup=lineup, family="recent")
    line = refused.value.one_line()
    assert "cohort 1 starts 2026-01-04, on or before the family's knowledge cutoff 2026-01-04" in (
        line
    )
    assert "cohort 2" not in line  # week of 2026-01-11: after the cutoff
    with pytest.raises(InputError, match="states no knowledge_cutoff"):
        _play(engine, lineup=lineup, family="unstated", numbers=[2])
    with pytest.raises(InputError, match="cohort 9 does not exist"):
        _play(engine, numbers=[1, 9])
    with pytest.raises(InputError, match="cohort 1 is still deciding"):  # its window not over
        _play(engine, at=datetime.fromisoformat("2026-01-20T00:00:00+00:00"))
    assert _rows(engine) == before
    played = _play(engine, lineup=lineup, family="recent", allow_contaminated=True)
    assert played.contaminated == [1]
    with engine.connect() as conn:
        stamps = dict(
            conn.execute(
                select(COHORTS.c.number, COHORTS.c.constants).where(
                    COHORTS.c.late_entry_family == "recent"
                )
            ).all()
        )
    assert stamped_late_entry(stamps[1]).contaminated  # type: ignore[union-attr]
    assert not stamped_late_entry(stamps[2]).contaminated  # type: ignore[union-attr]
