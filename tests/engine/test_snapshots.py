"""`arena snapshot`: hand-computed valuations, §12.4 fallbacks, upsert per slot, cohort status
upkeep, all-or-nothing, and a statement count that does not grow with the number of positions."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from decimal import Decimal as D
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.engine import snapshots
from arena.engine.settlement import settle_market
from arena.engine.snapshots import take_snapshots, value_position
from arena.markets.resolution import Verdict
from arena.storage.db import session_scope
from arena.storage.models import Cohort, Market, PortfolioSnapshot, Position, SystemLog
from tests.factories import WEEK1, market, new_cohort_agents, trade_into

BOUGHT = WEEK1 + timedelta(minutes=5)
AT = WEEK1 + timedelta(days=1, minutes=3)  # slot WEEK1 + 1 day 00:00
SLOT = WEEK1 + timedelta(days=1)
AFTER_WINDOW = WEEK1 + timedelta(weeks=5, minutes=1)


def add_markets(engine: Engine, *markets: Market) -> None:
    with session_scope(engine) as s:
        for row in markets:
            s.add(row)


def set_market(engine: Engine, market_id: str, **fields: Any) -> None:
    with session_scope(engine) as s:
        row = s.get(Market, market_id)
        assert row is not None
        for name, value in fields.items():
            setattr(row, name, value)
        s.add(row)


def snapshot_rows(engine: Engine) -> list[PortfolioSnapshot]:
    with session_scope(engine) as s:
        query = select(PortfolioSnapshot).order_by(
            col(PortfolioSnapshot.agent_id), col(PortfolioSnapshot.slot)
        )
        return list(s.exec(query))


def row_of(engine: Engine, agent_id: int, slot: datetime = SLOT) -> PortfolioSnapshot:
    rows = [r for r in snapshot_rows(engine) if r.agent_id == agent_id and r.slot == slot]
    assert len(rows) == 1
    return rows[0]


def position(engine: Engine, position_id: int) -> Position:
    with session_scope(engine) as s:
        row = s.get(Position, position_id)
        assert row is not None
        return row


def cohort(engine: Engine, number: int = 1) -> Cohort:
    with session_scope(engine) as s:
        return s.exec(select(Cohort).where(Cohort.number == number)).one()


@contextmanager
def statement_counter(engine: Engine) -> Iterator[list[str]]:
    """Every statement SQLAlchemy sends to the driver while the block runs."""
    seen: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_a_yes_position_marked_by_hand(engine: Engine) -> None:
    """$500 YES at 0.4 = 1250 shares; the price moves to 0.5: 625 + 9500 cash = 10125."""
    add_markets(engine, market("m1"))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    pid = trade_into(engine, agent, "m1", "YES", "500", "0.4", BOUGHT)
    set_market(engine, "m1", prices=["0.5", "0.5"])

    result = take_snapshots(engine, AT)

    assert (result.agents, result.rows_written, result.positions_marked) == (1, 1, 1)
    row = row_of(engine, agent)
    assert row.snapshot_timestamp == AT
    assert row.cash_balance == D("9500")
    assert row.positions_value == D("625")
    assert row.total_value == D("10125")
    assert row.total_pnl == D("125")
    assert row.total_pnl_percent == pytest.approx(1.25)
    assert (row.brier_score, row.num_resolved_bets) == (None, 0)
    held = position(engine, pid)
    assert (held.mark_price, held.marked_at) == (D("0.5"), AT)


def test_no_side_is_one_minus_yes_on_a_no_first_market(engine: Engine) -> None:
    """Outcomes [No, Yes] priced [0.65, 0.3]: NO is 1 − 0.3 = 0.7, not the listed 0.65."""
    add_markets(engine, market("m2", outcomes=["No", "Yes"], prices=["0.5", "0.5"]))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    trade_into(engine, agent, "m2", "NO", "500", "0.5", BOUGHT)  # 1000 shares
    set_market(engine, "m2", prices=["0.65", "0.3"])

    take_snapshots(engine, AT)

    row = row_of(engine, agent)
    assert row.positions_value == D("700")
    assert row.total_value == D("10200")
    assert row.total_pnl_percent == pytest.approx(2.0)


def test_named_outcome_is_priced_as_listed(engine: Engine) -> None:
    add_markets(
        engine,
        market(
            "m3",
            market_type="named",
            outcomes=["Team Spirit", "Vitality"],
            prices=["0.5", "0.5"],
        ),
    )
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    trade_into(engine, agent, "m3", "Team Spirit", "250", "0.5", BOUGHT)  # 500 shares
    set_market(engine, "m3", prices=["0.55", "0.45"])

    take_snapshots(engine, AT)

    row = row_of(engine, agent)
    assert row.positions_value == D("275")
    assert row.total_value == D("10025")
    assert row.total_pnl == D("25")


@pytest.mark.parametrize("status", ["open", "closed"])
def test_closed_but_unresolved_keeps_the_prior_mark(engine: Engine, status: str) -> None:
    """§12.4: a closed market's leftover 0.9995 is not a valuation; the last mark stands."""
    add_markets(engine, market("m1"))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    pid = trade_into(engine, agent, "m1", "YES", "500", "0.4", BOUGHT)  # 1250 shares
    set_market(engine, "m1", prices=["0.5", "0.5"])
    take_snapshots(engine, AT)
    set_market(engine, "m1", closed=True, status=status, prices=["0.9995", "0.0005"])

    later = AT + timedelta(minutes=10)
    result = take_snapshots(engine, later)

    assert result.positions_marked == 0
    row = row_of(engine, agent, SLOT + timedelta(minutes=10))
    assert row.positions_value == D("625")  # 1250 × 0.5, not × 0.9995
    held = position(engine, pid)
    assert (held.mark_price, held.marked_at) == (D("0.5"), AT)


@pytest.mark.parametrize("prices", [[], ["0.5"], ["abc", "0.5"], ["1.5", "-0.5"]])
def test_unusable_prices_keep_the_prior_mark(engine: Engine, prices: list[str]) -> None:
    add_markets(engine, market("m1"))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    pid = trade_into(engine, agent, "m1", "YES", "500", "0.4", BOUGHT)
    set_market(engine, "m1", prices=["0.6", "0.4"])
    take_snapshots(engine, AT)
    set_market(engine, "m1", prices=prices)

    take_snapshots(engine, AT + timedelta(minutes=10))

    assert row_of(engine, agent, SLOT + timedelta(minutes=10)).positions_value == D("750")
    assert position(engine, pid).mark_price == D("0.6")


def test_a_position_not_marked_since_its_fill_is_valued_at_entry(engine: Engine) -> None:
    add_markets(engine, market("m1"))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    pid = trade_into(engine, agent, "m1", "YES", "500", "0.4", BOUGHT)
    set_market(engine, "m1", closed=True, status="closed", prices=["0.9995", "0.0005"])

    take_snapshots(engine, AT)

    row = row_of(engine, agent)
    assert row.positions_value == D("500")  # 1250 × 0.4 entry
    assert row.total_value == D("10000") and row.total_pnl == D("0")
    assert position(engine, pid).mark_price == D("0.4")  # the fill's mark: nothing live since


def test_same_slot_upserts_and_a_new_slot_adds_rows(engine: Engine) -> None:
    add_markets(engine, market("m1"))
    a, b = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    trade_into(engine, a, "m1", "YES", "500", "0.4", BOUGHT)
    set_market(engine, "m1", prices=["0.5", "0.5"])
    take_snapshots(engine, SLOT + timedelta(minutes=3))
    set_market(engine, "m1", prices=["0.6", "0.4"])

    take_snapshots(engine, SLOT + timedelta(minutes=7))  # same 10-minute slot

    rows = snapshot_rows(engine)
    assert [(r.agent_id, r.slot) for r in rows] == [(a, SLOT), (b, SLOT)]
    assert rows[0].snapshot_timestamp == SLOT + timedelta(minutes=7)
    assert rows[0].positions_value == D("750")  # the later run's price
    assert rows[1].total_value == D("10000")  # an agent with no position is still snapshotted

    take_snapshots(engine, SLOT + timedelta(minutes=10))

    rows = snapshot_rows(engine)
    assert len(rows) == 4
    assert {r.slot for r in rows} == {SLOT, SLOT + timedelta(minutes=10)}


def test_brier_average_and_count(engine: Engine) -> None:
    """Conf 500/2500 = 0.2 on a winner → 0.64; conf 950/2375 = 0.4 on a loser → 0.16."""
    add_markets(engine, market("m1"), market("m2"))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    trade_into(engine, agent, "m1", "YES", "500", "0.4", BOUGHT)
    trade_into(engine, agent, "m2", "YES", "950", "0.5", BOUGHT)  # 1900 shares
    take_snapshots(engine, AT)
    assert (row_of(engine, agent).brier_score, row_of(engine, agent).num_resolved_bets) == (
        None,
        0,
    )

    settle_market(engine, "m1", Verdict("resolved", "Yes", "test"), AT)
    settle_market(engine, "m2", Verdict("resolved", "No", "test"), AT)
    later = AT + timedelta(minutes=10)
    take_snapshots(engine, later)

    row = row_of(engine, agent, SLOT + timedelta(minutes=10))
    assert row.brier_score == pytest.approx((0.64 + 0.16) / 2)
    assert row.num_resolved_bets == 2
    # 8550 cash + 1250 won shares; the lost position is no longer open.
    assert (row.cash_balance, row.positions_value, row.total_value) == (
        D("9800"),
        D("0"),
        D("9800"),
    )
    assert row.total_pnl_percent == pytest.approx(-2.0)


def test_cohort_status_deciding_tracking_completed(engine: Engine) -> None:
    add_markets(engine, market("m1"))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    trade_into(engine, agent, "m1", "YES", "500", "0.4", BOUGHT)

    take_snapshots(engine, AT)
    assert cohort(engine).status == "deciding"
    take_snapshots(engine, WEEK1 + timedelta(weeks=5) - timedelta(minutes=1))
    assert cohort(engine).status == "deciding"  # last minute of week 5

    result = take_snapshots(engine, AFTER_WINDOW)
    assert (cohort(engine).status, result.cohorts_completed) == ("tracking", 0)

    settle_market(engine, "m1", Verdict("resolved", "Yes", "test"), AFTER_WINDOW)
    done_at = AFTER_WINDOW + timedelta(minutes=10)
    result = take_snapshots(engine, done_at)
    assert result.cohorts_completed == 1
    final = cohort(engine)
    assert (final.status, final.completed_at) == ("completed", done_at)
    # The completing pass still wrote the cohort's final valuation: 9500 + 1250 won.
    assert row_of(engine, agent, slot=done_at - timedelta(minutes=1)).total_value == D("10750")

    result = take_snapshots(engine, done_at + timedelta(minutes=10))
    assert (result.agents, result.rows_written, result.cohorts_completed) == (0, 0, 0)
    assert cohort(engine).completed_at == done_at


def test_a_cohort_without_positions_completes_only_after_its_window(engine: Engine) -> None:
    new_cohort_agents(engine, ("gpt-5.1",))
    take_snapshots(engine, AT)
    assert cohort(engine).status == "deciding"
    result = take_snapshots(engine, AFTER_WINDOW)
    assert (result.cohorts_tracking, result.cohorts_completed) == (1, 1)
    assert cohort(engine).status == "completed"


def test_only_cohorts_with_nothing_open_complete(engine: Engine) -> None:
    """Two cohorts past their window: the one still holding a position keeps tracking."""
    add_markets(engine, market("m1"))
    (holder,) = new_cohort_agents(engine, ("gpt-5.1",), number=1)
    new_cohort_agents(engine, ("gpt-5.1",), number=2)
    trade_into(engine, holder, "m1", "YES", "500", "0.4", BOUGHT)

    result = take_snapshots(engine, WEEK1 + timedelta(weeks=6, minutes=1))

    assert (result.cohorts_tracking, result.cohorts_completed) == (2, 1)
    assert (cohort(engine, 1).status, cohort(engine, 2).status) == ("tracking", "completed")
    assert cohort(engine, 1).completed_at is None


def test_a_settled_position_keeps_its_final_mark(engine: Engine) -> None:
    """The mark write is guarded by status = 'open' (a resolve racing the snapshot)."""
    add_markets(engine, market("m1"))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    pid = trade_into(engine, agent, "m1", "YES", "500", "0.4", BOUGHT)
    settle_market(engine, "m1", Verdict("resolved", "Yes", "test"), AT)
    with session_scope(engine) as s:
        snapshots._store_marks(s.connection(), [{"b_id": pid, "b_mark": D("0.3")}], AT)
    assert position(engine, pid).mark_price == D("1")


def test_the_window_parameter_applies_to_unstamped_cohorts(engine: Engine) -> None:
    new_cohort_agents(engine, ("gpt-5.1",))
    with session_scope(engine) as s:
        row = s.exec(select(Cohort)).one()
        row.constants = {k: v for k, v in row.constants.items() if k != "decision_window_weeks"}
        s.add(row)
    take_snapshots(
        engine, WEEK1 + timedelta(weeks=2) - timedelta(minutes=1), decision_window_weeks=2
    )
    assert cohort(engine).status == "deciding"
    take_snapshots(engine, WEEK1 + timedelta(weeks=2), decision_window_weeks=2)
    assert cohort(engine).status == "completed"


def test_cohorts_not_yet_started_are_ignored(engine: Engine) -> None:
    (first,) = new_cohort_agents(engine, ("gpt-5.1",), number=1)
    new_cohort_agents(engine, ("gpt-5.1",), number=2)  # starts WEEK1 + 1 week

    result = take_snapshots(engine, AT)

    assert result.agents == 1
    assert [r.agent_id for r in snapshot_rows(engine)] == [first]
    assert cohort(engine, 2).status == "deciding"  # untouched default


def test_the_pass_is_all_or_nothing(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure after marks and rows were written leaves no trace at all."""
    add_markets(engine, market("m1"))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    pid = trade_into(engine, agent, "m1", "YES", "500", "0.4", BOUGHT)
    set_market(engine, "m1", prices=["0.5", "0.5"])

    def boom(*args: Any, **kwargs: Any) -> tuple[int, int]:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(snapshots, "_update_cohort_statuses", boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        take_snapshots(engine, AFTER_WINDOW)

    assert snapshot_rows(engine) == []
    assert position(engine, pid).mark_price == D("0.4")  # still the fill's, not the pass's 0.5
    with session_scope(engine) as s:
        assert s.exec(select(SystemLog).where(SystemLog.source == "snapshot")).all() == []


def test_one_info_log_line_with_the_counts(engine: Engine) -> None:
    add_markets(engine, market("m1"))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    trade_into(engine, agent, "m1", "YES", "500", "0.4", BOUGHT)

    result = take_snapshots(engine, AT)

    with session_scope(engine) as s:
        logs = s.exec(select(SystemLog).where(SystemLog.source == "snapshot")).all()
    assert len(logs) == 1
    assert logs[0].level == "INFO" and logs[0].at == AT
    assert logs[0].context == result.counts()
    assert result.counts()["slot"] == SLOT.isoformat()


def test_naive_time_is_refused(engine: Engine) -> None:
    with pytest.raises(ValueError, match="aware"):
        take_snapshots(engine, AT.replace(tzinfo=None))


def seed_positions(engine: Engine, per_agent: int) -> None:
    """Two agents with `per_agent` open positions each, in as many open markets."""
    a, b = new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    with session_scope(engine) as s:
        for k in range(per_agent):
            s.add(market(f"q{k}", prices=["0.45", "0.55"]))
        s.flush()
        for agent in (a, b):
            for k in range(per_agent):
                s.add(
                    Position(
                        agent_id=agent,
                        market_id=f"q{k}",
                        side="YES" if agent == a else "NO",
                        shares=D("100"),
                        cost_basis=D("40"),
                        avg_entry_price=D("0.4"),
                        opened_at=BOUGHT,
                    )
                )


@pytest.mark.parametrize("per_agent", [3, 30])
def test_statement_count_does_not_grow_with_positions(engine: Engine, per_agent: int) -> None:
    seed_positions(engine, per_agent)
    with statement_counter(engine) as seen:
        result = take_snapshots(engine, AT)
    assert result.positions_marked == 2 * per_agent
    assert result.rows_written == 2
    # The v2 holdings read in its own short transaction (methodology v2: it finds none, so no
    # CLOB read), then BEGIN (SQLite only, each transaction), read, Brier, changed marks,
    # upsert, rollups, cohort read, log; no status UPDATE: no cohort changes status here.
    expected = 8 + 2 * (engine.dialect.name == "sqlite")
    assert len(seen) == expected, seen
    rows = snapshot_rows(engine)
    assert rows[0].positions_value == D("45") * per_agent  # 100 YES shares × 0.45 each
    assert rows[1].positions_value == D("55") * per_agent  # 100 NO shares × 0.55 each


def test_value_position_pure() -> None:
    live = value_position("binary", ["Yes", "No"], ["0.3", "0.7"], "NO", True, None, D("0.5"))
    assert live.mark == D("0.7") and live.live
    kept = value_position("binary", ["Yes", "No"], ["0.3", "0.7"], "NO", False, D("0.6"), D("0.5"))
    assert kept.mark == D("0.6") and not kept.live
    entry = value_position("named", ["A", "B"], None, "A", True, None, D("0.5"))
    assert entry.mark == D("0.5") and not entry.live


def test_a_cohort_keeps_its_stamped_decision_window(engine: Engine) -> None:
    """A cohort stamped with W = 8 is still deciding in week 6, whatever the default."""
    new_cohort_agents(engine, ("gpt-5.1",))
    with session_scope(engine) as s:
        row = s.exec(select(Cohort)).one()
        row.constants = {**row.constants, "decision_window_weeks": 8}
        s.add(row)
    take_snapshots(engine, AFTER_WINDOW, decision_window_weeks=5)
    assert cohort(engine).status == "deciding"
    take_snapshots(engine, WEEK1 + timedelta(weeks=8), decision_window_weeks=5)
    assert cohort(engine).status == "completed"
