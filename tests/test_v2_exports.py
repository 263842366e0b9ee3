"""CSV exports and price provenance: a v2 scope's exports carry the provenance as
raw values; a v1 scope's exports gain empty columns at the end and nothing else.

The v2 scope is a short `arena demo --methodology v2` season; the v1 scope the v1 test season
(tests.analytics.finished_season), whose exports are pinned as the code before this change
wrote them (docs/contract.md §6, "Price provenance").
"""

import csv
import hashlib
import io
import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.export.bundle import build_bundle
from arena.analytics.export.readable import NAME_COLUMNS, TRADE_COLUMNS
from arena.analytics.export.tables import (
    EXPORTS,
    PROVENANCE_COLUMNS,
    ExportFilters,
    write_csv,
)
from arena.core.accounting import mark_value
from arena.storage.db import create_db_engine
from arena.storage.tables import AGENTS, COHORTS, MARKETS, PORTFOLIO_SNAPSHOTS, TRADES
from tests.analytics.finished_season import finished_season
from tests.engine.test_v2_engine import (
    FOUR_LEGS,
    V2Arena,
    answer,
    stamped_before_rule_sets,
    v2,  # noqa: F401  (the fixture: a v2 cohort on each backend, real loopback servers)
)
from tests.factories import WEEK1
from tests.stated_season import DemoSeasons

# The columns this change added, at the end of their tables.
NEW_COLUMNS = {
    "trades": list(PROVENANCE_COLUMNS),
    "snapshots": ["price_provenance"],
    "markets": ["clob_token_ids"],
}
# The columns that name families and say what a row is, after those (`export.readable`).
READABLE_COLUMNS = {
    "trades": list(TRADE_COLUMNS),
    **{t: list(NAME_COLUMNS) for t in ("decisions", "positions", "snapshots", "brier_scores")},
    "legs": list(NAME_COLUMNS),
}


def rows_of(engine: Engine, table: str, **filters: Any) -> tuple[list[str], list[dict[str, str]]]:
    out = io.StringIO()
    write_csv(engine, table, ExportFilters(**filters), out, 1_000_000)
    reader = csv.DictReader(io.StringIO(out.getvalue()))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


# --------------------------------------------------------------------------------------------
# A v2 scope


@pytest.fixture(scope="module")
def v2_season(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    url = demo_seasons.v2(tmp_path_factory.mktemp("v2_exports"))
    engine = create_db_engine(url, role="reader")
    yield engine
    engine.dispose()


def test_a_v2_trades_export_carries_each_quote_as_stored(v2_season: Engine) -> None:
    header, rows = rows_of(v2_season, "trades")
    assert header[-len(PROVENANCE_COLUMNS) - len(TRADE_COLUMNS) :] == [
        *PROVENANCE_COLUMNS,
        *TRADE_COLUMNS,
    ]
    with v2_season.connect() as conn:
        stored = {
            int(i): (source, quote)
            for i, source, quote in conn.execute(
                select(TRADES.c.id, TRADES.c.price_source, TRADES.c.price_quote)
            )
        }
    traded = [row for row in rows if row["trade_type"] in ("BUY", "SELL")]
    assert traded and len(traded) < len(rows)  # settlements too
    for row in rows:
        source, quote = stored[int(row["trade_id"])]
        if row["trade_type"] not in ("BUY", "SELL"):
            assert all(row[c] == "" for c in PROVENANCE_COLUMNS), row
            continue
        assert row["price_source"] == source == quote["source"]
        assert row["price_status"] == quote["status"]
        for column in ("gamma_price", "clob_price", "disagreement", "fallback_reason"):
            assert row[column] == (quote[column] or ""), (column, row)  # the stored text
        assert Decimal(row["price"]) == Decimal(quote["price"])
    assert {row["price_status"] for row in traded} >= {
        "accepted",
        "accepted_with_gamma_disagreement",
    }


def test_a_v2_snapshots_and_markets_export_carry_marks_and_tokens(v2_season: Engine) -> None:
    header, rows = rows_of(v2_season, "snapshots", cohort=1)
    assert header[-3:] == ["price_provenance", *NAME_COLUMNS]
    with v2_season.connect() as conn:
        stored = {
            (int(agent), slot.replace(tzinfo=UTC).isoformat()): record
            for agent, slot, record in conn.execute(
                select(
                    PORTFOLIO_SNAPSHOTS.c.agent_id,
                    PORTFOLIO_SNAPSHOTS.c.slot,
                    PORTFOLIO_SNAPSHOTS.c.price_provenance,
                )
            )
        }
        agents = {
            (str(family), int(replicate)): int(agent)
            for agent, family, replicate in conn.execute(
                select(AGENTS.c.id, AGENTS.c.family_id, AGENTS.c.replicate)
                .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
                .where(COHORTS.c.number == 1)
            )
        }
        tokens = dict(conn.execute(select(MARKETS.c.id, MARKETS.c.clob_token_ids)).all())
    assert rows
    marked = 0
    for row in rows:
        agent = agents[(row["family_id"], int(row["replicate"]))]
        record = json.loads(row["price_provenance"])
        assert record == stored[(agent, datetime.fromisoformat(row["slot"]).isoformat())]
        marked += len(record)
    assert marked > 0
    _, markets = rows_of(v2_season, "markets", cohort=1)
    assert markets and all(
        json.loads(m["clob_token_ids"]) == tokens[m["market_id"]] for m in markets
    )


def test_a_v2_position_is_valued_as_v2_values_it(v2_season: Engine) -> None:
    """Open v2 positions are worth, together, the last valuation's positions value: at their
    order-book marks, never at Gamma's price (which the v1 rule of the export would use)."""
    _, positions = rows_of(v2_season, "positions")
    _, snapshots = rows_of(v2_season, "snapshots")
    _, trades = rows_of(v2_season, "trades")
    last = {}
    for row in snapshots:
        last[(row["cohort_number"], row["family_id"])] = row
    newest_trade = max(datetime.fromisoformat(t["created_at"]) for t in trades)
    held: dict[tuple[str, str], Decimal] = {}
    for row in positions:
        if row["status"] == "open":
            key = (row["cohort_number"], row["family_id"])
            held[key] = held.get(key, Decimal(0)) + Decimal(row["current_value"])
            mark = Decimal(row["mark_price"])
            assert Decimal(row["current_value"]) == mark_value(Decimal(row["shares"]), mark)
    assert held
    for key, value in held.items():
        snapshot = last[key]
        assert datetime.fromisoformat(snapshot["snapshot_timestamp"]) >= newest_trade
        assert value == Decimal(snapshot["positions_value"]), key


def test_fallbacks_are_exported_with_their_reasons_on_each_backend(v2: V2Arena) -> None:  # noqa: F811
    """The scripted v2 cohort (tests/engine/test_v2_engine.py) on SQLite and PostgreSQL, of the
    `frozen-quotes` rule set (Gamma's fallbacks execute there): each leg's source, status,
    prices and fallback reason, as the engine stored them."""
    stamped_before_rule_sets(v2.engine)
    v2.models.script_model("test/a", answer(FOUR_LEGS, "test/a"))
    v2.decide()
    v2.snapshot(WEEK1 + timedelta(hours=1))
    _, rows = rows_of(v2.engine, "trades")
    exported = {(r["market_id"], r["side"]): [r[c] for c in PROVENANCE_COLUMNS] for r in rows}
    assert exported == {
        ("100", "YES"): ["clob_mid", "accepted", "0.4", "0.43", "0.03", "", ""],
        ("200", "NO"): ["gamma", "fallback_gamma", "0.75", "", "", "crossed_book", ""],
        ("300", "Alice"): [
            "clob_mid",
            "accepted_with_gamma_disagreement",
            "0.5",
            "0.62",
            "0.12",
            "",
            "",
        ],
        ("300", "Bob"): ["gamma", "fallback_gamma", "0.3", "", "", "unknown_token", ""],
    }
    _, (snapshot,) = rows_of(v2.engine, "snapshots")
    marks = json.loads(snapshot["price_provenance"])
    assert sorted(r["status"] for r in marks.values()) == [
        "accepted",
        "accepted_with_gamma_disagreement",
        "prior_value",
        "prior_value",
    ]


def test_a_v2_export_zip_says_where_provenance_is(v2_season: Engine) -> None:
    bundle = build_bundle(
        v2_season,
        ["trades", "snapshots"],
        ExportFilters(cohort=1),
        cap=100_000,
        exported_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    with zipfile.ZipFile(io.BytesIO(bundle.data)) as archive:
        readme = archive.read("README.txt").decode()
        trades = archive.read("trades.csv").decode()
    assert "Price provenance (methodology v2" in readme
    assert trades.splitlines()[0].endswith(",".join([*PROVENANCE_COLUMNS, *TRADE_COLUMNS]))


# --------------------------------------------------------------------------------------------
# A v1 scope: the same bytes, and empty columns at the end

# The v1 test season's exports (every cohort, every family) as the code before this change
# wrote them (commit 55d225c): the first 16 hex digits of the SHA-256 of the CSV of its
# columns then, the wall-clock `latency_ms` of decisions set to 0.
V1_COLUMNS_BEFORE = {
    table: [
        c
        for c in spec.columns
        if c not in NEW_COLUMNS.get(table, []) + READABLE_COLUMNS.get(table, [])
    ]
    for table, spec in EXPORTS.items()
}
V1_PINS = {
    "cohorts": "778f677730a0f73c",
    "decisions": "8a4e562d9db7cd5e",
    "trades": "a3f4ab5393b68484",
    "positions": "9c8c0232fa379279",
    "snapshots": "f5765010ea16dd19",
    "brier_scores": "87aaf8711fe0a232",
    "markets": "6d48cb286f6c7773",
}


def digest_of(header: list[str], rows: list[dict[str, str]], columns: list[str]) -> str:
    """The CSV of `columns` of the rows, as the export writes one, hashed as pinned."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["0" if c == "latency_ms" else row[c] for c in columns])
    return hashlib.sha256(out.getvalue().encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def v1_season(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = create_db_engine(finished_season(tmp_path_factory.getbasetemp()).url, role="reader")
    yield engine
    engine.dispose()


@pytest.mark.parametrize("table", sorted(V1_PINS))
def test_a_v1_export_keeps_its_columns_and_bytes(v1_season: Engine, table: str) -> None:
    header, rows = rows_of(v1_season, table)
    before = V1_COLUMNS_BEFORE[table]
    assert header == before + NEW_COLUMNS.get(table, []) + READABLE_COLUMNS.get(table, [])
    assert rows
    assert digest_of(header, rows, before) == V1_PINS[table]
    for column in NEW_COLUMNS.get(table, []):
        if column != "clob_token_ids":  # a market's tokens are stored whichever version runs
            assert all(row[column] == "" for row in rows), column


def test_a_v1_export_zip_readme_says_nothing_of_v2(v1_season: Engine) -> None:
    bundle = build_bundle(
        v1_season,
        list(EXPORTS),
        ExportFilters(),
        cap=100_000,
        exported_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    with zipfile.ZipFile(io.BytesIO(bundle.data)) as archive:
        readme = archive.read("README.txt").decode()
    assert "provenance" not in readme.lower() and "Methodology version: v1" in readme


def test_a_trades_export_names_its_market_family_model_and_settlements(
    v1_season: Engine,
) -> None:
    header, rows = rows_of(v1_season, "trades")
    assert header[-len(TRADE_COLUMNS) :] == list(TRADE_COLUMNS)
    with v1_season.connect() as conn:
        questions = dict(conn.execute(select(MARKETS.c.id, MARKETS.c.question)).all())
        models = {
            (int(n), f, int(r)): m
            for n, f, r, m in conn.execute(
                select(
                    COHORTS.c.number, AGENTS.c.family_id, AGENTS.c.replicate, AGENTS.c.model_id
                ).join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
            )
        }
    notes: dict[str, set[str]] = {}
    for row in rows:
        assert row["question"] == questions[row["market_id"]]
        assert row["display_name"]
        key = (int(row["cohort_number"]), row["family_id"], int(row["replicate"]))
        assert row["model"] == models[key]
        notes.setdefault(row["trade_type"], set()).add(row["note"])
        if row["trade_type"] == "SETTLE" and Decimal(row["price"]) == 0:
            assert Decimal(row["amount"]) == 0 and row["note"].startswith("settled at 0")
    assert notes["BUY"] == {""} and len(notes["SETTLE"]) == 2  # won and lost
