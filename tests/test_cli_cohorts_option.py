"""`arena late-entry --cohorts`: a list of cohort numbers is a usage error (exit 2, one line
naming the option, nothing printed or written) when a number is past the cohorts table's
INTEGER or is written in digits other than ASCII, as every integer option of the CLI is."""

from pathlib import Path

import pytest

from arena.app.cli.options import MAX_COHORT
from tests.test_cli_hardening import one_line_error, run, seeded, sqlite_seeded

__all__ = ["seeded", "sqlite_seeded"]  # fixtures, used by name

LATE = ["late-entry", "baseline-cash", "--cohorts"]


@pytest.mark.parametrize(
    "cohorts",
    [
        str(2**63),  # was "unexpected OverflowError" from SQLite, exit 1
        f"1-{MAX_COHORT + 1}",
        "9" * 5000,  # past int()'s 4,300 digits
        "\uff11\uff12",  # fullwidth 12: was read as cohort 12
        "1-\u0661\u0662",  # Arabic-Indic 12
        "\u0967",  # Devanagari 1
    ],
    ids=["2**63", "range-past-int32", "5000-digits", "fullwidth", "arabic-indic", "devanagari"],
)
def test_a_cohorts_list_out_of_range_or_not_ascii_is_a_usage_error(
    sqlite_seeded: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    cohorts: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    database = Path(sqlite_seeded.removeprefix("sqlite:///"))
    before = database.read_bytes()
    code, out, err = run([*LATE, cohorts], capsys)
    assert (code, out) == (2, ""), err
    one_line_error(code, err, "--cohorts", "--help")
    assert database.read_bytes() == before


def test_the_largest_cohort_number_runs_on_both_backends(
    seeded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """2^31 − 1 reaches the query on SQLite and PostgreSQL (no DataError binding it); one
    past it is the usage error."""
    code, _, err = run([*LATE, str(MAX_COHORT)], capsys)
    one_line_error(code, err, f"cohort {MAX_COHORT} does not exist")
    code, out, err = run([*LATE, str(MAX_COHORT + 1)], capsys)
    assert (code, out) == (2, ""), err
    one_line_error(code, err, "--cohorts", "--help")


def test_parse_cohorts_reads_ascii_lists_and_ranges() -> None:
    from arena.core.errors import UsageError
    from arena.core.late_entry import MAX_COHORT_NUMBER, parse_cohorts

    assert MAX_COHORT_NUMBER == MAX_COHORT
    assert parse_cohorts("1-3,8, 2") == [1, 2, 3, 8]
    assert parse_cohorts(f" {MAX_COHORT_NUMBER} ") == [MAX_COHORT_NUMBER]
    for bad in ("", "1,,2", "3-1", "0", "x", "1.0", "+1", "1_0", "\uff11"):
        with pytest.raises(UsageError, match="--cohorts"):
            parse_cohorts(bad)
