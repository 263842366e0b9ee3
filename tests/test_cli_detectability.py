"""`arena detectability`: the read model's CSV and table at the command line, and bad
arguments as one clear line (the `arena` conventions of tests/test_cli.py)."""

import csv
import io

import pytest

from arena.analytics.views.detectability import DETECTABILITY_COLUMNS
from arena.storage.db import create_db_engine
from tests.factories import seed_basic
from tests.test_cli import assert_one_line_error, run, sqlite_url

__all__ = ["sqlite_url"]  # the fixture, shared with tests/test_cli.py


def test_csv_and_table(sqlite_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    run(["init-db"], capsys)
    seed_basic(create_db_engine(sqlite_url))
    code, out, err = run(["detectability", "--format", "csv"], capsys)
    assert code == 0 and err == ""
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == list(DETECTABILITY_COLUMNS)
    assert [(r["comparison"], r["metric"]) for r in rows[:2]] == [
        ("pair", "return"),
        ("pair", "brier"),
    ]
    assert {r["detectable"] for r in rows} == {"false"} and rows[0]["cohorts"] == "2"
    code, out, _ = run(["detectability", "--cohort", "1"], capsys)
    assert code == 0 and "When will we know? (cohort 1)" in out and " vs " in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["detectability", "--format", "pdf"], "--format"),
        (["detectability", "--cohort", "1", "--protocol", "v1"], "--cohort and --protocol"),
        (["detectability", "--protocol", "v1+horizon-14d"], "no cohort ran protocol"),
        (["detectability", "--cohort", "0"], "--cohort"),
    ],
)
def test_bad_arguments_are_one_clear_line(
    sqlite_url: str, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    run(["init-db"], capsys)
    code, _, err = run(args, capsys)
    assert_one_line_error(code, err, needle)
