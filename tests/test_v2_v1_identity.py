"""A v1 season is byte-identical with methodology v2 in the code: the rows a short v1 demo
stores hash to what the code before v2 stored (pinned below), and no v2 column is filled.

The pins were taken by running this module's season on the commit before v2 (4339c82) and on
v2's, with the same digests. If a change meant to move v1 numbers breaks them, re-pin from a
run of the season and say so in the methodology's version history.
"""

import hashlib
import sqlite3
from contextlib import closing
from datetime import timedelta
from pathlib import Path

from arena.app.demo import DEMO_START, run_demo
from arena.config import load_settings
from arena.lineup import Lineup, load_lineup
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db

# The stored columns of v1 (no audit columns: claim owners, wall-clock latencies, created_at).
COLUMNS = {
    "cohorts": "number, week_start, methodology_version, constants, status",
    "decisions": "agent_id, decision_week, market_snapshot_id, status, action, attempts, "
    "prompt_system, prompt_user, raw_response, parsed_response, validation_errors, legs, "
    "amount_bet, tokens_in, tokens_out, cost_usd",
    "trades": "agent_id, decision_id, leg_index, position_id, market_id, trade_type, side, "
    "amount, price, shares, cash_before, implied_confidence, realized_pnl, created_at, "
    "probability",
    "positions": "agent_id, market_id, side, status, shares, cost_basis, avg_entry_price, "
    "realized_pnl, mark_price, marked_at, opened_at, closed_at",
    "portfolio_snapshots": "agent_id, slot, snapshot_timestamp, cash_balance, positions_value, "
    "total_value, total_pnl, total_pnl_percent, brier_score, num_resolved_bets",
    "market_snapshot_items": "snapshot_id, market_id, rank, question, market_type, outcomes, "
    "prices, volume, end_date",
    "brier_scores": "trade_id, agent_id, market_id, side, forecast_probability, "
    "actual_outcome, brier_score, market_price",
}
PINNED = {
    "cohorts": "591991dcc4b968e3836c",
    "decisions": "735c78b222ef421e5ed0",
    "trades": "2a76d0aa9fef63542db8",
    "positions": "e87aaa80e7e8a70f50e8",
    "portfolio_snapshots": "049971c999855a80c48e",
    "market_snapshot_items": "82b29a7e859d902db6d7",
    "brier_scores": "2d4d0b3d976475051a8f",
}
V2_COLUMNS = {
    "trades": ("price_source", "price_quote"),
    "market_snapshot_items": ("quotes",),
    "portfolio_snapshots": ("price_provenance",),
}


def digests(path: Path) -> dict[str, str]:
    """A short hash of each table's v1 columns, rows in id (or rank) order."""
    out: dict[str, str] = {}
    with closing(sqlite3.connect(path)) as conn:
        for table, columns in COLUMNS.items():
            order = "snapshot_id, rank" if table == "market_snapshot_items" else "id"
            rows = conn.execute(f"SELECT {columns} FROM {table} ORDER BY {order}").fetchall()
            out[table] = hashlib.sha256(repr(rows).encode()).hexdigest()[:20]
    return out


def test_a_v1_season_stores_the_rows_it_stored_before_v2(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    url = f"sqlite:///{path}"
    engine = create_db_engine(url)
    init_db(engine)
    lineup = load_lineup(None)
    small = Lineup(
        families=[
            f
            for f in lineup.families
            if f.kind == "baseline" or f.id in ("deepseek-v3.1", "kimi-k2")
        ]
    )
    settings = load_settings(database_url=url, llm_api_key=None)
    assert settings.methodology.version == "v1"
    run_demo(engine, settings, small, weeks=2, seed=5, stop_at=DEMO_START + timedelta(days=9))
    engine.dispose()
    assert digests(path) == PINNED
    with closing(sqlite3.connect(path)) as conn:
        for table, columns in V2_COLUMNS.items():
            for column in columns:
                filled = conn.execute(
                    f"SELECT count(*) FROM {table} WHERE {column} IS NOT NULL"
                ).fetchone()[0]
                assert filled == 0, f"{table}.{column}"
