"""Exports a researcher can read alone: the data dictionary covers every exported column, the
zip carries it, `arena export dictionary` prints it, and a trade row says what it is."""

import csv
import io
import zipfile
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from arena.analytics.export.bundle import build_bundle, table_csv, table_file_name
from arena.analytics.export.dictionary import (
    COLUMNS,
    DICTIONARY_COLUMNS,
    DICTIONARY_NAME,
    EXPORT_DESCRIPTIONS,
    PER_TABLE,
    dictionary_rows,
)
from arena.analytics.export.readable import trade_note
from arena.analytics.export.tables import EXPORTS, ExportFilters, write_csv
from arena.app.cli import main
from arena.core.accounting import Holding, refund, settle
from tests.factories import seed_basic


def test_every_exported_column_has_a_dictionary_entry_and_every_entry_is_exported() -> None:
    exported = {(table, c) for table, spec in EXPORTS.items() for c in spec.columns}
    rows = dictionary_rows()
    assert {(table, column) for table, column, _, _ in rows} == exported
    assert all(meaning and unit for _, _, meaning, unit in rows)
    assert set(PER_TABLE) <= exported
    assert set(COLUMNS) == {c for t, c in exported if (t, c) not in PER_TABLE}  # none stale
    assert set(EXPORT_DESCRIPTIONS) == set(EXPORTS)


def test_the_zip_carries_the_dictionary_of_its_tables(engine: Engine) -> None:
    bundle = build_bundle(
        engine, ["trades", "markets"], ExportFilters(), cap=10, exported_at=datetime.now(UTC)
    )
    with zipfile.ZipFile(io.BytesIO(bundle.data)) as archive:
        names = archive.namelist()
        text = archive.read(DICTIONARY_NAME).decode()
        readme = archive.read("README.txt").decode()
    assert names == ["trades.csv", "markets.csv", "README.txt", DICTIONARY_NAME]
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == DICTIONARY_COLUMNS
    assert [(r[0], r[1]) for r in rows[1:]] == [
        (t, c) for t in ("trades", "markets") for c in EXPORTS[t].columns
    ]
    assert DICTIONARY_NAME in readme


def test_the_cli_prints_the_whole_dictionary(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["export", "dictionary"])
    out = capsys.readouterr().out
    assert exited.value.code in (0, None)
    rows = list(csv.reader(io.StringIO(out)))
    assert tuple(rows[0]) == DICTIONARY_COLUMNS and len(rows) - 1 == len(dictionary_rows())
    with pytest.raises(SystemExit) as exited:
        main(["export", "dictionary", "--cohort", "1"])
    assert exited.value.code != 0
    assert "takes no filter" in capsys.readouterr().err


def _trade(kind: str, price: Decimal | None) -> dict[str, Any]:
    return {"trade_type": kind, "price": price}


def test_a_trade_note_says_what_a_settlement_or_refund_is() -> None:
    held = Holding(Decimal("40"), Decimal("20.00"), Decimal(0))
    lost = settle(Decimal(100), held, won=False)
    won = settle(Decimal(100), held, won=True)
    back = refund(Decimal(100), held)
    assert (lost.amount, lost.price) == (0, 0)
    assert trade_note(_trade("SETTLE", lost.price)) == (
        "settled at 0: the outcome lost; the shares paid nothing (amount 0)"
    )
    assert "settled at 1: the outcome won" in str(trade_note(_trade("SETTLE", won.price)))
    assert "market was cancelled" in str(trade_note(_trade("REFUND", back.price)))
    assert trade_note(_trade("BUY", Decimal("0.5"))) is None
    assert trade_note(_trade("SELL", Decimal("0.5"))) is None


def test_one_table_downloads_as_the_cli_prints_it(engine: Engine) -> None:
    seed_basic(engine)
    filters = ExportFilters(cohort=1, family="gpt-5.1")
    out = io.StringIO()
    write_csv(engine, "trades", filters, out, 100)
    assert table_csv(engine, "trades", filters, 100) == out.getvalue().encode()
    assert table_file_name("trades", filters) == "forecaster-arena-trades-cohort1-gpt-5.1.csv"
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [(r["display_name"], r["model"]) for r in rows] == [("GPT-5.1", "test/gpt-5.1")]
