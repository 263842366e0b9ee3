"""`arena export`: contract columns for every table, filters, row cap, formula neutralising."""

import csv
import io
from datetime import timedelta
from decimal import Decimal as D

import pytest
from sqlalchemy.engine import Engine

from arena.analytics.export.tables import EXPORTS, ExportFilters, write_csv
from arena.core.errors import InputError
from tests.factories import WEEK1, seed_basic

CONTRACT_COLUMNS = {
    "cohorts": "cohort_number,week_start,status,methodology_version",
    "decisions": "decision_id,cohort_number,family_id,decision_week,action,status,attempts,"
    "prompt_system,prompt_user,raw_response,parsed_response,error,tokens_in,tokens_out,cost_usd,"
    "created_at",
    "trades": "trade_id,decision_id,cohort_number,family_id,market_id,position_id,trade_type,side,"
    "amount,price,shares,implied_confidence,realized_pnl,created_at",
    "positions": "position_id,cohort_number,family_id,market_id,side,status,shares,"
    "avg_entry_price,cost_basis,current_value,unrealized_pnl",
    "snapshots": "cohort_number,family_id,snapshot_timestamp,cash_balance,positions_value,"
    "total_value,total_pnl,total_pnl_percent,brier_score,num_resolved_bets",
    "brier_scores": "cohort_number,family_id,trade_id,market_id,side,forecast_probability,"
    "actual_outcome,brier_score",
    "markets": "market_id,question,market_type,outcomes,prices,volume,close_date,status,"
    "resolution_outcome",
    "legs": "decision_id,cohort_number,family_id,decision_week,leg_index,kind,executed,reason,"
    "message,market_id,side,amount",
}


def export(
    engine: Engine, table: str, cap: int = 1000, **filters: object
) -> tuple[list[dict[str, str]], bool]:
    out = io.StringIO()
    result = write_csv(engine, table, ExportFilters(**filters), out, cap)  # type: ignore[arg-type]
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == result.rows
    return rows, result.truncated


def header(engine: Engine, table: str) -> list[str]:
    out = io.StringIO()
    write_csv(engine, table, ExportFilters(), out, 10)
    return out.getvalue().splitlines()[0].split(",")


def test_every_contract_table_is_exportable() -> None:
    assert set(CONTRACT_COLUMNS) == set(EXPORTS)


@pytest.mark.parametrize("table", sorted(CONTRACT_COLUMNS))
def test_headers_start_with_the_contract_columns(engine: Engine, table: str) -> None:
    required = CONTRACT_COLUMNS[table].split(",")
    assert header(engine, table)[: len(required)] == required


def test_rows_and_values(engine: Engine) -> None:
    seed_basic(engine)
    trades, _ = export(engine, "trades")
    assert len(trades) == 4
    first = trades[0]
    assert first["trade_type"] == "BUY"
    assert D(first["amount"]) == D("500")
    assert D(first["shares"]) == D("1250")
    assert first["created_at"] == "2026-11-01T00:05:00+00:00"
    cohorts, _ = export(engine, "cohorts")
    assert [c["cohort_number"] for c in cohorts] == ["1", "2"]
    assert cohorts[0]["methodology_version"] == "v1"


def test_positions_are_marked_side_correctly(engine: Engine) -> None:
    seed_basic(engine)
    rows, _ = export(engine, "positions", cohort=1)
    by_family = {row["family_id"]: row for row in rows}
    yes = by_family["gpt-5.1"]  # YES on 842093, Yes priced 0.4
    assert D(yes["current_value"]) == D("500")
    assert D(yes["unrealized_pnl"]) == D("0")
    no = by_family["baseline-cash"]  # NO on a No-first market, YES priced 0.3 → NO 0.7
    assert D(no["current_value"]) == D("875")
    assert D(no["unrealized_pnl"]) == D("375")


def test_filters(engine: Engine) -> None:
    seed_basic(engine)
    assert len(export(engine, "decisions", cohort=2)[0]) == 2
    assert {r["family_id"] for r in export(engine, "trades", family="gpt-5.1")[0]} == {"gpt-5.1"}
    snaps, _ = export(
        engine,
        "snapshots",
        cohort=1,
        family="gpt-5.1",
        since=WEEK1 + timedelta(minutes=10),
        until=WEEK1 + timedelta(minutes=25),
    )
    assert [s["snapshot_timestamp"] for s in snaps] == ["2026-11-01T00:15:00+00:00"]
    held, _ = export(engine, "markets", family="baseline-cash")
    assert [m["market_id"] for m in held] == ["900001"]
    assert export(engine, "cohorts", family="nobody")[0] == []


def test_row_cap_is_reported(engine: Engine) -> None:
    seed_basic(engine)
    rows, truncated = export(engine, "snapshots", cap=5)
    assert len(rows) == 5 and truncated
    rows, truncated = export(engine, "snapshots", cap=12)
    assert len(rows) == 12 and not truncated


def test_formula_cells_are_neutralised_but_numbers_are_not(engine: Engine) -> None:
    seed_basic(engine)
    markets, _ = export(engine, "markets")
    evil = next(m for m in markets if m["market_id"] == "900001")
    assert evil["question"] == '\'=HYPERLINK("http://evil")'
    snaps, _ = export(engine, "snapshots", cap=1)
    assert snaps[0]["total_pnl"] == "-62.500000"
    assert snaps[0]["total_pnl_percent"] == "-0.625"


def test_unknown_table_is_a_clear_error(engine: Engine) -> None:
    with pytest.raises(InputError, match="unknown export table"):
        write_csv(engine, "secrets", ExportFilters(), io.StringIO(), 10)
