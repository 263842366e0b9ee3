"""The extension `horizon` on a real database: the universe filter on its boundary dates and
held markets, and a bet whose market's end date moves past the horizon."""

from datetime import timedelta
from decimal import Decimal as D

import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.agents.prompts import HORIZON_HEADING
from arena.agents.responders import default_responders
from arena.analytics.views.horizon import horizon_overruns, horizon_summary
from arena.config import Methodology, cohort_stamp, load_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.settlement import settle_market
from arena.engine.snapshots import take_snapshots
from arena.engine.universe import freeze_universe, snapshot_items, tradable_markets
from arena.lineup import Lineup, load_lineup
from arena.markets.resolution import Verdict
from arena.storage.db import session_scope
from arena.storage.models import Cohort, Decision, Market, PortfolioSnapshot, Position
from tests.factories import WEEK1, market, new_cohort_agents, trade_into

AT = WEEK1 + timedelta(minutes=5)
D14 = timedelta(days=14)


def test_the_horizon_universe_on_its_boundary_dates_and_held_markets(engine: Engine) -> None:
    ends = {
        "1": AT + D14,  # exactly at + D: in
        "2": AT + D14 + timedelta(microseconds=1),  # one microsecond later: out
        "3": AT,  # ends at the run: out (as in v1)
        "4": None,  # no end date: out (in v1)
        "5": AT + timedelta(days=1),  # in
        "6": AT + timedelta(days=90),  # out, but held below
    }
    with session_scope(engine) as s:
        for rank, (mid, end) in enumerate(ends.items()):
            s.add(market(mid, end_date=end, volume=1000.0 - rank))
    with session_scope(engine) as s:
        v1 = [m.id for m in tradable_markets(s, AT, 10)]
        assert v1 == ["1", "2", "4", "5", "6"]  # the v1 query, untouched
        assert [m.id for m in tradable_markets(s, AT, 10, horizon=D14)] == ["1", "5"]
        assert [m.id for m in tradable_markets(s, AT, 1, horizon=D14)] == ["1"]  # top by volume
        snapshot = freeze_universe(s, AT, 10, held_market_ids=["6", "2"], horizon=D14)
        assert snapshot.id is not None and snapshot.market_count == 2
        items = [(i.market_id, i.rank) for i in snapshot_items(s, snapshot.id)]
    assert items == [("1", 1), ("5", 2), ("2", 3), ("6", 4)]  # held ones follow the universe


def test_a_bet_whose_end_date_moves_past_the_horizon_stays_held_valued_and_settles(
    engine: Engine,
) -> None:
    with session_scope(engine) as s:
        s.add(market("842093", end_date=AT + timedelta(days=10)))
    (agent_id,) = new_cohort_agents(engine, ("gpt-5.1",))
    with session_scope(engine) as s:
        cohort = s.exec(select(Cohort)).one()
        cohort.constants = cohort_stamp(Methodology(), horizon_days=14)
        s.add(cohort)
        snapshot = freeze_universe(s, AT, 10, horizon=D14)
        snapshot_id = snapshot.id
    position_id = trade_into(engine, agent_id, "842093", "YES", "500", "0.4", AT)
    with session_scope(engine) as s:
        decision = s.exec(select(Decision)).one()
        decision.market_snapshot_id = snapshot_id
        row = s.get(Market, "842093")
        assert row is not None
        row.end_date = AT + timedelta(days=40)  # Polymarket moved the end after the bet
        row.prices = ["0.5", "0.5"]  # and the market moved: valued at it as usual
        s.add_all([decision, row])

    later = AT + timedelta(days=20)
    take_snapshots(engine, later)
    with session_scope(engine) as s:
        position = s.get(Position, position_id)
        assert position is not None and position.status == "open"
        assert position.mark_price == D("0.5") and position.marked_at == later
        valued = s.exec(select(PortfolioSnapshot)).one()
        assert valued.positions_value == D("625") and valued.total_value == D("10125")

    overruns = horizon_overruns(engine)
    assert overruns[["cohort", "market_id", "side"]].values.tolist() == [[1, "842093", "YES"]]
    assert abs(overruns["days_past"].iloc[0] - 26.0) < 1e-9  # end (at + 40 d) - (at + 14 d)
    summary = horizon_summary(engine).iloc[0]
    assert (summary["bets"], summary["overrun_bets"], summary["overrun_markets"]) == (1, 1, 1)
    assert summary["expected_completion"] == AT + D14
    assert summary["window_end"] == WEEK1 + timedelta(weeks=5)
    assert summary["last_resolution"] is None and summary["open_positions"] == 1
    pd.testing.assert_frame_equal(horizon_summary(engine, [1]), horizon_summary(engine))
    assert horizon_summary(engine, [2]).empty  # a page asks only for the cohorts it shows

    settled_at = AT + timedelta(days=41)
    settle_market(engine, "842093", Verdict("resolved", "Yes", "test"), settled_at)
    with session_scope(engine) as s:
        position = s.get(Position, position_id)
        assert position is not None and position.status == "won"
    summary = horizon_summary(engine).iloc[0]
    assert summary["open_positions"] == 0 and summary["last_resolution"] == settled_at
    assert abs(summary["days_late"] - 27.0) < 1e-9


# The bundled lineup's cash baseline alone (as tests/bench/test_make_year.py picks it).
CASH_ONLY = Lineup(families=[f for f in load_lineup(None).families if f.id == "baseline-cash"])


def test_a_run_gives_v1_and_horizon_cohorts_their_own_universes(engine: Engine) -> None:
    run = WEEK1 + timedelta(weeks=1, minutes=5)
    with session_scope(engine) as s:
        s.add(market("10", end_date=run + timedelta(days=3), volume=10.0))
        s.add(market("20", end_date=run + timedelta(days=60), volume=20.0))
    lineup = CASH_ONLY
    start_cohort(engine, WEEK1, lineup, Methodology())
    start_cohort(engine, run, lineup, Methodology(), horizon_days=14)
    responders, close = default_responders(load_settings(), sleep=lambda _s: None)
    try:
        run_decisions(engine, run, lineup, Methodology(), responders)
    finally:
        close()
    with session_scope(engine) as s:
        rows = s.exec(select(Cohort.number, Decision).join(Decision)).all()
        shown = {
            number: (
                [i.market_id for i in snapshot_items(s, d.market_snapshot_id or 0)],
                HORIZON_HEADING in (d.prompt_system or ""),
            )
            for number, d in rows
        }
    assert shown == {1: (["20", "10"], False), 2: (["10"], True)}
