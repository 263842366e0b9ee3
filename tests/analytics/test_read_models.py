"""The dashboard's read models: hand-computed small cases on both backends (the `engine`
fixture: SQLite and PostgreSQL), then a whole season built through the real jobs, where the
models must agree with each other and with the exports."""

import io
import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import event, insert, inspect, text, update
from sqlalchemy.engine import Connection, Engine

from arena.analytics.export.bundle import README_NAME, build_bundle, bundle_name
from arena.analytics.export.tables import EXPORTS, ExportFilters, write_csv
from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.views import agents, cohorts, curves, decisions, markets, operations
from arena.core.errors import InputError
from arena.engine.rollups import rebuild_rollups
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import downgrade, upgrade
from arena.storage.models import (
    Decision,
    DecisionAttempt,
    JobRun,
    Market,
    MarketSnapshot,
    MarketSnapshotItem,
    PortfolioSnapshot,
    Position,
    SystemLog,
    Trade,
)
from tests.analytics.season import LLM_A, LLM_B, Season, sqlite_season, writable_copy
from tests.factories import WEEK1, market, new_cohort_agents, seed_basic, trade_into
from tests.factories import family as family_row
from tests.faults.invariants import assert_leg_tallies_match

AT = WEEK1 + timedelta(minutes=5)


# --------------------------------------------------------------------------------------------
# Cohorts


def test_cohort_list_standings_and_weeks(engine: Engine) -> None:
    ids = seed_basic(engine)
    with session_scope(engine) as s:
        s.execute(
            update(Decision)
            .where(Decision.agent_id == ids["agent_1_gpt-5.1"])  # type: ignore[arg-type]
            .values(legs=LEGS, **LEG_TALLIES)
        )

    frame = cohorts.cohorts(engine)

    assert list(frame.columns) == list(cohorts.COHORT_COLUMNS)
    assert frame["cohort_number"].tolist() == [2, 1]
    first = frame.set_index("cohort_number").loc[1]
    # two agents, each valued 9,937.50 in its latest snapshot
    assert first["total_value"] == pytest.approx(19875.0)
    assert first["total_pnl"] == pytest.approx(-125.0)
    assert first["return_pct"] == pytest.approx(-0.625)
    assert (first["agents"], first["decisions"], first["decision_weeks"]) == (2, 2, 1)
    assert first["open_positions"] == 2 and bool(first["is_default"])
    assert first["status"] == "deciding"
    assert first["last_snapshot"] == pd.Timestamp(AT + timedelta(minutes=20))

    frame = cohorts.cohort_standings(engine, 1)

    assert list(frame.columns) == list(cohorts.STANDINGS_COLUMNS)
    assert frame["rank"].tolist() == [1, 1]  # equal returns share the rank
    row = frame.set_index("family_id").loc["gpt-5.1"]
    assert (row["total_value"], row["cash_balance"], row["positions_value"]) == (
        9937.5,
        9500.0,
        437.5,
    )
    assert row["brier"] == pytest.approx(0.04) and row["resolved_bets"] == 1
    assert row["win_rate"] == 0.0 and row["decisions"] == 1
    assert frame.set_index("family_id").loc["baseline-cash", "kind"] == "baseline"
    assert cohorts.cohort_standings(engine, 99).empty

    weeks = cohorts.decisions_by_week(engine, 1).set_index("family_id")
    assert weeks.loc["gpt-5.1", ["bets", "sells", "rejected"]].tolist() == [1, 0, 1]
    assert weeks.loc["gpt-5.1", "amount"] == 500.0
    assert weeks.loc["baseline-cash", "bets"] == 0


LEGS: list[dict[str, Any]] = [
    {
        "index": 0,
        "kind": "BET",
        "request": {"market_id": "842093", "side": "YES", "amount": "500"},
        "executed": True,
        "market_id": "842093",
        "side": "YES",
        "position_id": 1,
        "amount": "500.000000",
        "price": "0.400000",
        "shares": "1250.000000",
        "implied_confidence": 0.2,
        "realized_pnl": "0",
    },
    {
        "index": 1,
        "kind": "BET",
        "request": {"market_id": "900001", "side": "NO", "amount": "10"},
        "executed": False,
        "reason": "below_min",
        "message": "amount 10.000000 is below the $50 minimum",
    },
]
# What the engine writes with those legs (one executed $500 BET, one rejected).
LEG_TALLIES: dict[str, Any] = {
    "bets_executed": 1,
    "sells_executed": 0,
    "legs_rejected": 1,
    "amount_bet": D("500"),
}


# --------------------------------------------------------------------------------------------
# Curves


def _snapshot(agent_id: int, slot: datetime, value: str) -> PortfolioSnapshot:
    total = D(value)
    return PortfolioSnapshot(
        agent_id=agent_id,
        slot=slot,
        snapshot_timestamp=slot,
        cash_balance=total,
        positions_value=D(0),
        total_value=total,
        total_pnl=total - D(10000),
        total_pnl_percent=float((total - D(10000)) / 100),
    )


@pytest.fixture
def curve_agents(engine: Engine) -> dict[str, int]:
    """Family x in cohorts 1 and 2, family y in cohort 1, snapshots every 10 minutes:
    x1 10,000 → 10,300; y1 10,000 then 9,900 at +30; x2 joins at +20 with 10,000 → 10,050."""
    x1, y1 = new_cohort_agents(engine, ("x", "y"), number=1)
    (x2,) = new_cohort_agents(engine, ("x",), number=2)
    minute = timedelta(minutes=1)
    with session_scope(engine) as s:
        for k, value in enumerate(("10000", "10100", "10200", "10300")):
            s.add(_snapshot(x1, WEEK1 + 10 * k * minute, value))
        s.add(_snapshot(y1, WEEK1, "10000"))
        s.add(_snapshot(y1, WEEK1 + 30 * minute, "9900"))
        s.add(_snapshot(x2, WEEK1 + 20 * minute, "10000"))
        s.add(_snapshot(x2, WEEK1 + 30 * minute, "10050"))
    rebuild_rollups(engine)  # written by hand, not by the snapshot job that keeps them
    return {"x1": x1, "y1": y1, "x2": x2}


def _series(frame: pd.DataFrame, family: str, column: str) -> list[float]:
    return frame.loc[frame["family_id"] == family, column].round(6).tolist()


def test_curves_bucket_sum_and_carry_values_forward(
    engine: Engine, curve_agents: dict[str, int]
) -> None:
    frame = curves.portfolio_curves(engine, "1H")

    assert list(frame.columns) == list(curves.CURVE_COLUMNS)
    starts = [WEEK1 + timedelta(minutes=10 * k) for k in range(4)]
    assert frame.loc[frame["family_id"] == "x", "at"].tolist() == [pd.Timestamp(t) for t in starts]
    # x2 counts from its first snapshot on: capital and agents grow at +20
    assert _series(frame, "x", "total_value") == [10000, 10100, 20200, 20350]
    assert _series(frame, "x", "capital") == [10000, 10000, 20000, 20000]
    assert _series(frame, "x", "agents") == [1, 1, 2, 2]
    assert _series(frame, "x", "return_pct") == [0.0, 1.0, 1.0, 1.75]
    # y has no snapshot at +10 and +20: its 10,000 is carried forward
    assert _series(frame, "y", "total_value") == [10000, 10000, 10000, 9900]
    assert _series(frame, "y", "total_pnl") == [0, 0, 0, -100]

    # A short range is seeded by each agent's last value before it.
    window = curves.curve_window(engine, "10M")
    assert (window.start, window.end, window.bucket_seconds) == (
        WEEK1 + timedelta(minutes=20),
        WEEK1 + timedelta(minutes=30),
        600,
    )
    short = curves.portfolio_curves(engine, "10M")
    assert _series(short, "x", "total_value") == [20200, 20350]
    assert _series(short, "y", "total_value") == [10000, 9900]  # seeded from WEEK1

    # One-hour buckets hold all four slots: each agent's LAST snapshot in it counts.
    hourly = curves.portfolio_curves(engine, "1W")
    assert hourly["at"].tolist() == [pd.Timestamp(WEEK1)] * 2
    assert _series(hourly, "x", "total_value") == [20350]
    assert _series(hourly, "y", "total_value") == [9900]

    one = curves.portfolio_curves(engine, "ALL", cohort=2, family="x")
    assert set(one["family_id"]) == {"x"}
    assert _series(one, "x", "total_value") == [10000, 10050]
    assert curves.portfolio_curves(engine, "ALL", cohort=3).empty


def test_a_sub_hour_bucket_counts_each_agent_s_last_snapshot_in_it(engine: Engine) -> None:
    """30-minute buckets (ALL over three days) come from the snapshots themselves: of the
    three slots in a bucket the last one counts, even when stored out of order."""
    (a,) = new_cohort_agents(engine, ("x",), number=1)
    minute = timedelta(minutes=1)
    with session_scope(engine) as s:
        for offset, value in ((20, "10200"), (0, "10000"), (10, "10100"), (40, "10400")):
            s.add(_snapshot(a, WEEK1 + offset * minute, value))
        s.add(_snapshot(a, WEEK1 + timedelta(days=3), "10900"))
    frame = curves.portfolio_curves(engine, "ALL")
    assert curves.curve_window(engine, "ALL").bucket_seconds == 1800
    assert frame["at"].iloc[:2].tolist() == [pd.Timestamp(WEEK1), pd.Timestamp(WEEK1 + 30 * minute)]
    assert _series(frame, "x", "total_value")[:3] == [10200, 10400, 10400]
    assert _series(frame, "x", "total_value")[-1] == 10900


def test_curve_bucket_widths_and_unknown_range() -> None:
    assert curves.bucket_width("1D", None) == 600
    assert curves.bucket_width("ALL", timedelta(days=1)) == 600
    assert curves.bucket_width("ALL", timedelta(days=30)) == 4 * 3600
    assert curves.bucket_width("ALL", timedelta(days=3650)) == 7 * 86400
    with pytest.raises(InputError):
        curves.bucket_width("5Y", None)


# --------------------------------------------------------------------------------------------
# Agents


def test_positions_show_outcome_and_marked_value(engine: Engine) -> None:
    (agent_id,) = new_cohort_agents(engine, ("gpt-5.1",))
    with session_scope(engine) as s:
        s.add(market("842093", prices=["0.5", "0.5"]))
        s.add(market("842094"))
        s.add(market("842095"))
    held = trade_into(engine, agent_id, "842093", "YES", "500", "0.4", AT)
    trade_into(engine, agent_id, "842094", "NO", "300", "0.6", AT, sell_pct="100")
    lost = trade_into(engine, agent_id, "842095", "YES", "100", "0.4", AT)
    with session_scope(engine) as s:
        s.execute(update(Position).where(Position.id == lost).values(status="lost"))  # type: ignore[arg-type]

    book = agents.positions(engine, cohort=1, family="gpt-5.1").set_index("position_id")

    assert list(book.columns) == [c for c in agents.POSITION_COLUMNS if c != "position_id"]
    assert book["outcome"].to_dict() == {held: "pending", held + 1: "sold", lost: "lost"}
    # 1,250 YES shares marked at the live 0.5: $625, bought for $500
    assert book.loc[held, "current_value"] == 625.0
    assert book.loc[held, "unrealized_pnl"] == 125.0
    assert book.loc[held, "question"] == "Will market 842093 resolve YES?"
    assert book.loc[lost, "current_value"] == 0.0 and pd.isna(book.loc[lost, "mark_price"])
    # what each risked, open or closed: a sold position's cost basis is 0, its stake is not
    assert book["stake"].to_dict() == {held: 500.0, held + 1: 300.0, lost: 100.0}
    assert book.loc[held + 1, "cost_basis"] == 0.0

    ledger = agents.trades(engine, cohort=1, family="gpt-5.1")
    assert sorted(ledger["trade_type"]) == ["BUY", "BUY", "BUY", "SELL"]
    assert ledger.loc[ledger["trade_type"] == "SELL", "realized_pnl"].tolist() == [0.0]
    assert agents.trades(engine, market_id="842094")["trade_type"].tolist() == ["SELL", "BUY"]

    # Before any snapshot: standings use cash plus open positions at cost; no curve yet.
    row = cohorts.cohort_standings(engine, 1).iloc[0]
    assert (row["cash_balance"], row["positions_value"], row["total_value"]) == (
        9400.0,
        500.0,
        9900.0,
    )
    assert pd.isna(row["last_snapshot"])
    assert curves.portfolio_curves(engine, "ALL").empty
    assert curves.curve_window(engine, "ALL").end is None

    summary = agents.agent_summary(engine, 1, "gpt-5.1").iloc[0]
    assert summary["cash_balance"] == 9400.0  # 10,000 − 500 − 300 + 300 − 100
    assert (summary["open_positions"], summary["positions"]) == (1, 3)
    assert agents.agent_summary(engine, 1, "nobody").empty
    index = agents.agent_index(engine)
    assert index[["cohort_number", "family_id"]].values.tolist() == [[1, "gpt-5.1"]]


def test_filter_options_offer_every_cohort_newest_first_and_families_with_agents(
    engine: Engine,
) -> None:
    assert agents.filter_options(engine) == agents.FilterOptions([], [])
    new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"), number=1)
    new_cohort_agents(engine, ("claude-4",), number=2)
    with session_scope(engine) as s:  # in the lineup, never in a cohort: nothing to filter
        s.add(family_row("gemini-3"))
    options = agents.filter_options(engine)
    assert options.cohorts == [2, 1]
    assert options.families == ["baseline-cash", "claude-4", "gpt-5.1"]


# --------------------------------------------------------------------------------------------
# Decisions


def _decision_with_attempts(engine: Engine) -> int:
    (agent_id,) = new_cohort_agents(engine, ("gpt-5.1",))
    with session_scope(engine) as s:
        s.add(market("842093"))
        s.flush()
        universe = MarketSnapshot(taken_at=AT, market_count=1)
        s.add(universe)
        s.flush()
        assert universe.id is not None
        s.add(
            MarketSnapshotItem(
                snapshot_id=universe.id,
                market_id="842093",
                rank=1,
                question="Will market 842093 resolve YES?",
                market_type="binary",
                outcomes=["Yes", "No"],
                prices=["0.4", "0.6"],
                volume=1000.0,
            )
        )
        decision = Decision(
            agent_id=agent_id,
            cohort_id=1,
            decision_week=2,
            market_snapshot_id=universe.id,
            status="ok",
            action="BET",
            attempts=2,
            prompt_system="system <b>prompt</b>",
            prompt_user="markets…",
            raw_response='{"action": "BET"}',
            parsed_response={"action": "BET", "bets": []},
            validation_errors=["no JSON object"],
            legs=LEGS,
            **LEG_TALLIES,
            tokens_in=2000,
            tokens_out=100,
            cost_usd=0.003,
            latency_ms=900,
            served_model="test/gpt-5.1-0325",
            decided_at=AT,
        )
        s.add(decision)
        s.flush()
        assert decision.id is not None
        # The executed leg's ledger rows, as the executor writes them with the decision.
        held = Position(
            agent_id=agent_id,
            market_id="842093",
            side="YES",
            shares=D("1250"),
            cost_basis=D("500"),
            avg_entry_price=D("0.4"),
            opened_at=AT,
        )
        s.add(held)
        s.flush()
        assert held.id is not None
        s.add(
            Trade(
                agent_id=agent_id,
                decision_id=decision.id,
                leg_index=0,
                position_id=held.id,
                market_id="842093",
                trade_type="BUY",
                side="YES",
                amount=D("500"),
                price=D("0.4"),
                shares=D("1250"),
                cash_before=D("10000"),
                implied_confidence=0.2,
                created_at=AT,
            )
        )
        for number, outcome, raw in ((1, "malformed", "prose"), (2, "valid", '{"action":"BET"}')):
            s.add(
                DecisionAttempt(
                    decision_id=decision.id,
                    attempt_no=number,
                    outcome=outcome,
                    raw_response=raw,
                    error="no JSON object" if number == 1 else None,
                    tokens_in=1000,
                    tokens_out=50,
                    cost_usd=0.0015,
                    latency_ms=450,
                    served_model="test/gpt-5.1-0325",
                    created_at=AT + timedelta(seconds=number),
                )
            )
        return decision.id


def test_migration_0005_backfills_the_leg_tallies(db_url: str) -> None:
    """A database at 0004 (no tallies) gets each decision's tallies from its legs and trades."""
    engine = create_db_engine(db_url)
    try:
        decision_id = _decision_with_attempts(engine)
        downgrade(engine, "0004")
        with engine.connect() as conn:
            columns = {c["name"] for c in inspect(conn).get_columns("decisions")}
        assert "bets_executed" not in columns
        upgrade(engine)
        with session_scope(engine) as s:
            decision = s.get(Decision, decision_id)
            assert decision is not None
            stored = {column: getattr(decision, column) for column in LEG_TALLIES}
        assert stored == LEG_TALLIES
        assert_leg_tallies_match(engine)
        row = decisions.decisions(engine).iloc[0]
        assert (row["bets"], row["rejected"], row["amount"]) == (1, 1, 500.0)
    finally:
        engine.dispose()


def test_decision_list_filters_and_detail(engine: Engine) -> None:
    decision_id = _decision_with_attempts(engine)

    listing = decisions.decisions(engine, cohort=1, family="gpt-5.1", week=2, action="BET")
    assert list(listing.columns) == list(decisions.DECISION_COLUMNS)
    row = listing.iloc[0]
    assert (row["decision_id"], row["bets"], row["rejected"], row["amount"]) == (
        decision_id,
        1,
        1,
        500.0,
    )
    assert (row["tokens_in"], row["cost_usd"], row["served_model"]) == (
        2000,
        0.003,
        "test/gpt-5.1-0325",
    )
    for miss in ({"week": 1}, {"status": "fallback_hold"}, {"family": "x"}, {"cohort": 2}):
        assert decisions.decisions(engine, **miss).empty
    assert decisions.decision_weeks(engine) == [2]

    detail = decisions.decision_detail(engine, decision_id)
    assert detail is not None
    assert detail.attempt_log["outcome"].tolist() == ["malformed", "valid"]
    assert detail.attempt_log["raw_response"].tolist() == ["prose", '{"action":"BET"}']
    assert detail.legs["executed"].tolist() == [True, False]
    assert detail.legs["reason"].tolist()[1] == "below_min"
    assert json.loads(detail.legs["requested"][1]) == LEGS[1]["request"]
    assert json.loads(detail.parsed_json) == {"action": "BET", "bets": []}
    assert detail.validation_errors == ["no JSON object"]
    assert detail.prompt_system == "system <b>prompt</b>"
    assert (detail.market_snapshot_id, detail.snapshot_markets) == (1, 1)
    assert decisions.decision_detail(engine, 999) is None

    shown = decisions.snapshot_markets(engine, 1)
    assert shown[["rank", "market_id"]].values.tolist() == [[1, "842093"]]
    assert json.loads(shown["prices"][0]) == ["0.4", "0.6"]
    info = decisions.snapshot_info(engine, 1)
    assert info is not None and info["market_count"] == 1
    assert decisions.snapshot_info(engine, 2) is None


# --------------------------------------------------------------------------------------------
# Markets


def test_market_search_is_literal_and_filters_combine(engine: Engine) -> None:
    ids = seed_basic(engine)
    with session_scope(engine) as s:
        s.add(market("777", question="Will BTC gain 50% in 2026?", category="Crypto"))
        s.add(market("778", question="Will BTC gain 500 dollars?", status="resolved"))

    assert markets.markets(engine, search="50%")["market_id"].tolist() == ["777"]
    assert markets.markets(engine, search="btc")["market_id"].tolist() == ["777", "778"]
    assert markets.markets(engine, search="8420")["market_id"].tolist() == ["842093"]
    assert markets.markets(engine, search="_")["market_id"].tolist() == []
    assert markets.markets(engine, status="resolved")["market_id"].tolist() == ["778"]
    assert markets.markets(engine, category="Crypto")["market_id"].tolist() == ["777"]
    held = markets.markets(engine, held=True)
    assert sorted(held["market_id"]) == ["842093", "900001"]
    assert held.set_index("market_id").loc["842093", ["positions", "agents"]].tolist() == [2, 2]
    assert sorted(markets.markets(engine, held=False)["market_id"]) == ["777", "778"]
    assert markets.categories(engine) == ["Crypto"]
    assert ids  # seeded


def test_market_price_path_positions_and_brier(engine: Engine) -> None:
    seed_basic(engine)
    with session_scope(engine) as s:
        for k, price in enumerate(("0.35", "0.45")):
            universe = MarketSnapshot(taken_at=AT + timedelta(weeks=k), market_count=1)
            s.add(universe)
            s.flush()
            assert universe.id is not None
            s.add(
                MarketSnapshotItem(
                    snapshot_id=universe.id,
                    market_id="842093",
                    rank=1,
                    question="q",
                    market_type="binary",
                    outcomes=["Yes", "No"],
                    prices=[price, str(1 - float(price))],
                )
            )
        s.execute(
            update(Market).where(Market.id == "842093").values(updated_at=AT + timedelta(weeks=2))  # type: ignore[arg-type]
        )

    path = markets.price_path(engine, "842093")
    yes = path[path["outcome"] == "Yes"]
    assert yes["price"].tolist() == [0.35, 0.45, 0.4]
    assert yes["source"].tolist() == ["snapshot", "snapshot", "latest sync"]
    assert yes["snapshot_id"].tolist() == [1, 2, 0]

    assert markets.market_positions(engine, "842093")["family_id"].tolist() == ["gpt-5.1"] * 2
    assert len(markets.market_trades(engine, "900001")) == 2
    scores = markets.market_brier(engine, "842093")
    assert scores["brier_score"].tolist() == [0.04, 0.04]
    assert scores["market_brier"].isna().all()  # seed_basic recorded no market price

    detail = markets.market_detail(engine, "900001").iloc[0]
    assert detail["question"] == '=HYPERLINK("http://evil")'  # data, kept verbatim
    assert json.loads(detail["outcomes"]) == ["No", "Yes"] and detail["agents"] == 2
    assert markets.market_detail(engine, "nope").empty


# --------------------------------------------------------------------------------------------
# Operations


def test_job_health_runs_logs_and_spend(engine: Engine) -> None:
    seed_basic(engine)
    hour = timedelta(hours=1)
    with session_scope(engine) as s:
        for k, status in enumerate(("ok", "failed", "ok", "failed")):
            s.add(
                JobRun(
                    job="resolve",
                    slot=WEEK1 + k * hour,
                    status=status,
                    started_at=WEEK1 + k * hour,
                    finished_at=WEEK1 + k * hour + timedelta(seconds=3),
                    error=f"boom {k}" if status == "failed" else None,
                    counts={"checked": k, "names": ["Zoë"], "a": None},
                )
            )
        s.add(JobRun(job="snapshot", slot=WEEK1, status="running", started_at=WEEK1))
        for level in ("DEBUG", "INFO", "WARNING", "ERROR"):
            s.add(SystemLog(at=WEEK1, level=level, source="jobs", message=f"a {level} line"))
        # A JSON null context, which the model's type rules out: written past the ORM model.
        s.execute(
            insert(SystemLog).values(at=WEEK1, level="ERROR", source="x", message="m", context=None)
        )
        s.execute(update(Decision).values(cost_usd=0.25, tokens_in=100, tokens_out=10))

    health = operations.job_health(engine).set_index("job")
    resolve = health.loc["resolve"]
    assert (resolve["runs"], resolve["ok"], resolve["failed"]) == (4, 2, 2)
    assert resolve["last_status"] == "failed" and resolve["last_error"] == "boom 3"
    assert resolve["last_success"] == pd.Timestamp(WEEK1 + 2 * hour)
    assert resolve["last_failure"] == pd.Timestamp(WEEK1 + 3 * hour)
    assert health.loc["snapshot", "running"] == 1 and pd.isna(health.loc["snapshot", "last_error"])

    runs = operations.job_runs(engine, job="resolve", status="failed")
    assert runs["error"].tolist() == ["boom 3", "boom 1"]
    assert runs["duration_s"].tolist() == [3.0, 3.0]
    # exactly the text json.dumps wrote, keys in the order written, on both backends
    assert runs["counts"][0] == json.dumps({"checked": 3, "names": ["Zoë"], "a": None})

    log = operations.system_log(engine, levels=operations.levels_at_least("WARNING"))
    assert sorted(log["level"]) == ["ERROR", "ERROR", "WARNING"]
    assert log["context"].tolist() == ["{}"] * 3  # empty, or a JSON null: shown as {}
    assert operations.log_sources(engine) == ["jobs", "x"]

    family = operations.spend_by_family(engine).set_index("family_id")
    assert family.loc["gpt-5.1", ["decisions", "tokens_in"]].tolist() == [2, 200]
    assert family.loc["gpt-5.1", "cost_usd"] == pytest.approx(0.5)
    assert family.loc["gpt-5.1", "cost_per_decision"] == pytest.approx(0.25)
    weekly = operations.spend_by_week(engine)
    assert (
        weekly["week_start"].tolist()
        == [pd.Timestamp(WEEK1)] * 2 + [pd.Timestamp(WEEK1 + timedelta(weeks=1))] * 2
    )
    assert weekly["cost_usd"].tolist() == pytest.approx([0.25] * 4)


def test_log_sources_walk_every_distinct_source(engine: Engine) -> None:
    """The loose index scan finds each source once, in order, and nothing in an empty log."""
    assert operations.log_sources(engine) == []
    sources = ["sync-markets", "jobs", "decide", "jobs", "Zeta", "decide", "resolve", "a b"]
    with session_scope(engine) as s:
        for k, source in enumerate(sources):
            s.add(SystemLog(at=WEEK1 + timedelta(minutes=k), source=source, message="x"))
    found = operations.log_sources(engine)
    assert sorted(found) == found and set(found) == set(sources) and len(found) == 6


# --------------------------------------------------------------------------------------------
# Export bundle


def test_bundle_holds_the_cli_csvs_and_a_readme(engine: Engine) -> None:
    seed_basic(engine)
    filters = ExportFilters(cohort=1, family="gpt-5.1")
    at = datetime(2026, 12, 1, 12, 30, tzinfo=UTC)

    bundle = build_bundle(
        engine, ["trades", "positions", "trades"], filters, cap=10, exported_at=at
    )

    assert bundle.file_name == "forecaster-arena-export-20261201T123000Z-cohort1-gpt-5.1.zip"
    assert bundle_name(filters) == "forecaster-arena-export-cohort1-gpt-5.1.zip"
    with zipfile.ZipFile(io.BytesIO(bundle.data)) as archive:
        names = ["trades.csv", "positions.csv", README_NAME, "DATA_DICTIONARY.csv"]
        assert archive.namelist() == names
        for table in ("trades", "positions"):
            expected = io.StringIO()
            write_csv(engine, table, filters, expected, 10)
            assert archive.read(f"{table}.csv").decode() == expected.getvalue()
        readme = archive.read(README_NAME).decode()
    assert {k: r.rows for k, r in bundle.results.items()} == {"trades": 1, "positions": 1}
    assert "Methodology version: v1" in readme
    assert "Exported at: 2026-12-01T12:30:00+00:00" in readme
    assert "Filters: cohort=1, family=gpt-5.1" in readme
    assert "trades.csv: 1 rows" in readme
    assert '"min_bet": "50"' in readme and "cohort 1 (v1)" in readme

    capped = build_bundle(engine, ["trades"], ExportFilters(), cap=1, exported_at=at)
    assert capped.results["trades"].truncated
    with pytest.raises(InputError):
        build_bundle(engine, [], filters, cap=10, exported_at=at)
    with pytest.raises(InputError):
        build_bundle(engine, ["secrets"], filters, cap=10, exported_at=at)
    assert set(EXPORTS) >= {"trades", "positions"}


def _csv(source: Engine | Connection, table: str) -> str:
    out = io.StringIO()
    write_csv(source, table, ExportFilters(), out, 100)
    return out.getvalue()


def test_a_bundle_reads_every_table_in_one_snapshot(engine: Engine, db_url: str) -> None:
    """The scheduler commits a trade (and its position) just after the bundle's first read,
    on the dashboard's reader engine: every file of the bundle is still as of that read."""
    ids = seed_basic(engine)
    reader = create_db_engine(db_url, role="reader")
    before = {table: _csv(reader, table) for table in ("trades", "positions")}
    committed: list[int] = []

    def commit_a_trade(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not committed and statement.lstrip().upper().startswith("SELECT"):
            agent = ids["agent_1_gpt-5.1"]
            committed.append(trade_into(engine, agent, "900001", "NO", "100", "0.7", AT))

    event.listen(reader, "after_cursor_execute", commit_a_trade)
    try:
        at = datetime(2026, 12, 1, 12, 30, tzinfo=UTC)
        bundle = build_bundle(
            reader, ["trades", "positions"], ExportFilters(), cap=100, exported_at=at
        )
        event.remove(reader, "after_cursor_execute", commit_a_trade)
        after = {table: _csv(reader, table) for table in before}
    finally:
        reader.dispose()
    assert committed
    with zipfile.ZipFile(io.BytesIO(bundle.data)) as archive:
        assert {t: archive.read(f"{t}.csv").decode() for t in before} == before
    assert all(after[t].count("\n") == before[t].count("\n") + 1 for t in before)


def test_the_dashboard_reader_builds_a_bundle(engine: Engine, db_url: str) -> None:
    """The Exports page's engine streams every table (a server-side cursor on PostgreSQL,
    which needs the transaction `consistent_read` opens on the autocommit reader)."""
    seed_basic(engine)
    reader = create_db_engine(db_url, role="reader")
    try:
        at = datetime(2026, 12, 1, 12, 30, tzinfo=UTC)
        bundle = build_bundle(reader, list(EXPORTS), ExportFilters(), cap=10, exported_at=at)
        written = build_bundle(engine, list(EXPORTS), ExportFilters(), cap=10, exported_at=at)
    finally:
        reader.dispose()
    assert bundle.results == written.results
    assert bundle.results["trades"].rows == 4 and bundle.results["positions"].rows == 4


# --------------------------------------------------------------------------------------------
# A whole season through the real jobs: the models agree with each other (SQLite)


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Season, Engine]]:
    """The session's season (SQLite, shared read-only with the dashboard tests). The SQL of
    every model also runs on PostgreSQL in the hand-computed tests above."""
    built = sqlite_season(tmp_path_factory.getbasetemp())
    engine = create_db_engine(built.url, role="reader")
    yield built, engine
    engine.dispose()


def test_season_totals_agree_across_read_models(season: tuple[Season, Engine]) -> None:
    built, engine = season
    board = leaderboard(engine, replicates=50, null_seeds=0).set_index("family_id")
    per_cohort = pd.concat(
        [cohorts.cohort_standings(engine, n) for n in cohorts.cohort_numbers(engine)]
    )
    summed = per_cohort.groupby("family_id")["total_pnl"].sum()
    assert set(summed.index) == set(built.families)
    for family in built.families:
        assert summed[family] == pytest.approx(board.loc[family, "total_pnl"], abs=1e-6)

    curve = curves.portfolio_curves(engine, "ALL")
    last = curve.sort_values("at").groupby("family_id").tail(1).set_index("family_id")
    assert last["total_pnl"].to_dict() == pytest.approx(summed.to_dict(), abs=1e-6)
    assert (last["agents"] == 2).all()

    listing = cohorts.cohorts(engine)
    assert listing["total_pnl"].sum() == pytest.approx(summed.sum(), abs=1e-6)
    assert listing["cohort_number"].tolist() == [2, 1]


def test_season_leg_tallies_match_legs_and_trades_and_the_backfill(
    season: tuple[Season, Engine], tmp_path: Path
) -> None:
    """The engine's tallies agree with the legs and trades, and migration 0005's backfill
    reproduces them exactly on a real season (a copy taken back to 0004 and upgraded)."""
    built, _engine = season
    engine = create_db_engine(writable_copy(built, tmp_path / "season.db"))
    try:
        assert_leg_tallies_match(engine)
        before = decisions.decisions(engine)
        assert before["rejected"].sum() > 0 and before["bets"].sum() > 0
        downgrade(engine, "0004")
        upgrade(engine)
        assert_leg_tallies_match(engine)
        pd.testing.assert_frame_equal(decisions.decisions(engine), before)
    finally:
        engine.dispose()


def test_season_decisions_keep_every_attempt(season: tuple[Season, Engine]) -> None:
    built, engine = season
    listing = decisions.decisions(engine)
    assert len(listing) == 18  # 6 agents × 2 weeks in cohort 1, 6 × 1 in cohort 2
    named = text(
        "SELECT d.id, c.number, a.family_id, coalesce(f.display_name, a.display_name) "
        "FROM decisions d JOIN agents a ON a.id = d.agent_id "
        "JOIN cohorts c ON c.id = a.cohort_id LEFT JOIN families f ON f.id = a.family_id "
        "ORDER BY d.id DESC"
    )
    with engine.connect() as conn:
        expected = [tuple(row) for row in conn.execute(named)]
    shown = ["decision_id", "cohort_number", "family_id", "display_name"]
    assert list(listing[shown].itertuples(index=False, name=None)) == expected
    assert listing["display_name"].nunique() == len(set(built.families))
    holds = decisions.decisions(engine, family=LLM_B, status="fallback_hold")
    assert len(holds) == 3

    first = decisions.decisions(engine, cohort=1, family=LLM_A, week=1).iloc[0]
    detail = decisions.decision_detail(engine, int(first["decision_id"]))
    assert detail is not None
    assert detail.attempt_log["outcome"].tolist() == ["transport_retry", "malformed", "valid"]
    assert detail.attempts == 2  # answers of the final run; the 500 is logged too
    assert detail.legs["reason"].fillna("").tolist() == ["", "below_min", ""]
    assert "<b>second</b>" in (detail.raw_response or "")
    assert detail.market_snapshot_id is not None and detail.snapshot_markets > 0

    fallback = decisions.decision_detail(engine, int(holds.iloc[0]["decision_id"]))
    assert fallback is not None and len(fallback.validation_errors) == 3
    spend = operations.spend_by_family(engine).set_index("family_id")
    assert spend.loc[LLM_A, "cost_usd"] == pytest.approx(
        decisions.decisions(engine, family=LLM_A)["cost_usd"].sum()
    )


def test_season_positions_match_the_export(season: tuple[Season, Engine]) -> None:
    _built, engine = season
    book = agents.positions(engine)
    exported = io.StringIO()
    result = write_csv(engine, "positions", ExportFilters(), exported, 100_000)
    assert len(book) == result.rows
    assert set(book["outcome"]) <= {"pending", "won", "lost", "sold", "cancelled"}
    assert {"won", "lost", "pending"} <= set(book["outcome"])
    resolved = markets.markets(engine, status="resolved", held=True)
    assert not resolved.empty
    scores = markets.market_brier(engine, str(resolved["market_id"].iloc[0]))
    assert not scores.empty
    assert (
        (scores["market_brier"] - (scores["market_price"] - scores["actual_outcome"]) ** 2).abs()
        < 1e-12
    ).all()


def test_season_operations_show_the_outage(season: tuple[Season, Engine]) -> None:
    built, engine = season
    health = operations.job_health(engine).set_index("job")
    sync = health.loc["sync-markets"]
    assert sync["failed"] == 1 and sync["last_status"] == "ok"
    assert "simulated outage" in str(sync["last_error"])
    assert sync["last_failure"] == pd.Timestamp(built.failed_job_at)
    errors = operations.system_log(engine, levels=["ERROR"])
    assert errors["message"].str.contains("simulated outage").any()
