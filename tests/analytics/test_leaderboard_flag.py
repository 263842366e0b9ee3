"""`arena leaderboard` gains `execution_not_robust` as its last CSV column: the same
read model as the Leaderboard page (`stored.execution_flags`, `views.execution.with_flags`), every
earlier column byte for byte what it was. Both backends: the CLI reads the real database."""

import csv
import io

import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats import leaderboard as lb
from arena.analytics.stats.execution_inputs import execution_sensitivity
from arena.analytics.stored import execution_flags
from arena.analytics.views.execution import FLAG_COLUMN, with_flags
from arena.app.cli import main
from tests.analytics.execution_cohort import scripted_cohort


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    out, err = capsys.readouterr()
    assert err == ""
    return int(exited.value.code or 0), out


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_the_csv_ends_with_the_flag_and_keeps_every_earlier_byte(
    engine: Engine, db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # display: A 1st, B 2nd; the book walk: B 1st (its NO leg stays cash), A 2nd: both flagged
    scripted_cohort(engine)
    monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
    code, out = run(["leaderboard", "--cohort", "1", "--format", "csv"], capsys)
    assert code == 0
    table = rows(out)
    assert table[0][-1] == FLAG_COLUMN
    assert [row[-1] for row in table[1:]] == ["true", "true"]
    # the flag is the execution sensitivity's own, as the page reads it
    frame = execution_sensitivity(engine, cohort=1)
    assert dict(zip(frame["family_id"], frame["not_robust"], strict=True)) == {
        "fam-a": True,
        "fam-b": True,
    }
    assert execution_flags(engine, 1) == {"fam-a": True, "fam-b": True}
    # every earlier column: the CSV of the leaderboard without the flag, byte for byte
    before = io.StringIO()
    lb.write_leaderboard_csv(lb.leaderboard(engine, cohort=1), before)
    assert [row[:-1] for row in table] == rows(before.getvalue())
    code, out = run(["leaderboard", "--cohort", "1"], capsys)
    assert code == 0 and out.count("rank not robust to execution") == 2


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_cohort_without_books_has_an_empty_flag(
    engine: Engine, db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Decided before books were stored: neither the book walk nor v1's mid (read from the
    stored book) has figures, so no other rule can give another rank: never flagged."""
    scripted_cohort(engine, books=False)
    monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
    code, out = run(["leaderboard", "--cohort", "1", "--format", "csv"], capsys)
    assert code == 0
    assert [row[-1] for row in rows(out)] == [FLAG_COLUMN, "false", "false"]
    code, out = run(["leaderboard", "--cohort", "1"], capsys)
    assert code == 0 and "rank not robust" not in out


def test_with_flags_leaves_a_family_without_figures_empty() -> None:
    frame = pd.DataFrame({"family_id": ["a", "b"], "x": [1, 2]})
    flagged = with_flags(frame, {"a": True})
    assert list(flagged.columns) == ["family_id", "x", FLAG_COLUMN]
    assert flagged[FLAG_COLUMN].tolist() == [True, None]
