"""`arena late-entry` at the command line: a played entry's summary and a second run
that does nothing, on the finished test season (SQLite; the player's own tests cover both
backends), and bad arguments as one clear line that writes nothing."""

import sqlite3
from pathlib import Path

import pytest

from arena.app.cli import main
from arena.config import get_settings
from arena.storage.db import create_db_engine, dispose_engines
from arena.storage.migrate import init_db
from tests.analytics.finished_season import FINISHED_AT, finished_season
from tests.analytics.season import Season, writable_copy
from tests.factories import seed_basic

NOW = (FINISHED_AT.replace(microsecond=0)).isoformat()
NEWCOMER = """
[[family]]
id = "newcomer"
display_name = "Newcomer"
provider = "Test"
model = "baseline/favorite"
kind = "baseline"
strategy = "favorite"
knowledge_cutoff = 2025-06-30
"""


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def one_line_error(code: int, err: str, *needles: str) -> None:
    assert code != 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), err
    assert "Traceback" not in err and "unexpected" not in err, err
    for needle in needles:
        assert needle in lines[0], err


def _environment(monkeypatch: pytest.MonkeyPatch, url: str, tmp_path: Path) -> None:
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(NEWCOMER)
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    monkeypatch.setenv("ARENA_LINEUP", str(lineup))
    # Nothing may be asked of a live API: the season's markets are simulated (left alone), and
    # a CLOB that refuses every connection leaves marks to the runs or carried.
    monkeypatch.setenv("ARENA_GAMMA_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ARENA_CLOB_URL", "http://127.0.0.1:9")
    get_settings.cache_clear()
    dispose_engines()


@pytest.fixture
def season_url(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    finished: Season = finished_season(tmp_path_factory.getbasetemp())
    url = writable_copy(finished, tmp_path / "copy.db")
    _environment(monkeypatch, url, tmp_path)
    return url


def _shadows(url: str) -> list[tuple[int, str, str]]:
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        return conn.execute(
            "SELECT number, late_entry_family, status FROM cohorts "
            "WHERE late_entry_of IS NOT NULL ORDER BY number"
        ).fetchall()


def test_a_late_entry_prints_its_summary_and_a_second_run_does_nothing(
    season_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["late-entry", "newcomer", "--cohorts", "1-2", "--at", NOW], capsys)
    assert code == 0, err
    assert "late entry of newcomer over cohort(s) 1, 2: 2 shadow cohort(s) created" in out
    assert "markets asked of the source: 0" in out and "marks by source: " in out
    assert "contaminated: none" in out
    assert [(n, f) for n, f, _ in _shadows(season_url)] == [(1, "newcomer"), (2, "newcomer")]
    with sqlite3.connect(season_url.removeprefix("sqlite:///")) as conn:
        decided = conn.execute(
            "SELECT count(*) FROM decisions d JOIN agents a ON a.id = d.agent_id "
            "WHERE a.family_id = 'newcomer'"
        ).fetchone()[0]
    assert decided > 0
    assert "decisions: " in out and "0 already done" in out

    code, again, err = run(["late-entry", "newcomer", "--cohorts", "1,2", "--at", NOW], capsys)
    assert code == 0, err
    assert "0 shadow cohort(s) created" in again
    assert "decisions: none" in again and f"{decided} already done" in again
    assert "trades: 0;" in again
    assert len(_shadows(season_url)) == 2

    # Its bundle at the command line: a shadow is named by its cohort and family.
    zipped = Path(season_url.removeprefix("sqlite:///")).with_name("late-1.zip")
    args = ["bundle", "1", "--late-entry", "newcomer", "--provisional", "--out", str(zipped)]
    code, out, err = run(args, capsys)
    assert code == 0 and out.startswith("cohort 1 late:newcomer: bundle "), err
    code, out, err = run(["verify", str(zipped)], capsys)
    assert code == 0 and "late entrant newcomer" in out, out + err
    code, _, err = run(["bundle", "1", "--late-entry", "nobody", "--out", str(zipped)], capsys)
    one_line_error(code, err, "nobody")


@pytest.fixture
def basic_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A migrated SQLite file with one cohort (number 1, still deciding at its week)."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    engine = create_db_engine(url)
    init_db(engine)
    seed_basic(engine)
    engine.dispose()
    _environment(monkeypatch, url, tmp_path)
    return url


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--cohorts", "3-1"], ("--cohorts", "'3-1'")),
        (["--cohorts", "x"], ("--cohorts",)),
        (["--cohorts", "0"], ("--cohorts",)),
        (["--cohorts", "99"], ("99 do", "cohorts are numbered 1 to")),
        (["--cohorts", "1", "--at", "yesterday"], ("--at",)),
        (["--cohorts", "1", "--at", "2026-01-01T00:00:00Z"], ("still deciding",)),
    ],
)
def test_bad_arguments_are_one_line_and_write_nothing(
    basic_url: str,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    needles: tuple[str, ...],
) -> None:
    code, _, err = run(["late-entry", "newcomer", *args], capsys)
    one_line_error(code, err, *needles)
    assert _shadows(basic_url) == []


def test_an_unknown_family_names_the_known_ones(
    basic_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["late-entry", "nobody", "--cohorts", "1"], capsys)
    one_line_error(code, err, "'nobody' is not in the lineup", "known: newcomer")


def test_missing_cohorts_option_is_a_usage_error(
    basic_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["late-entry", "newcomer"], capsys)
    one_line_error(code, err, "--cohorts")


def test_a_locked_database_is_one_clear_line_and_loses_nothing(
    basic_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another process holds the write lock as the command adds the newcomer's family row."""
    monkeypatch.setenv("ARENA_SQLITE_BUSY_TIMEOUT_MS", "300")
    get_settings.cache_clear()
    dispose_engines()
    path = basic_url.removeprefix("sqlite:///")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute(
        "INSERT INTO system_logs (at, level, source, message, context) "
        "VALUES ('2026-11-01 00:00:00', 'INFO', 'test', 'held', '{}')"
    )
    try:
        code, _, err = run(["late-entry", "newcomer", "--cohorts", "1"], capsys)
        one_line_error(code, err, "locked by another process")
    finally:
        holder.execute("COMMIT")
        holder.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute(
            "SELECT count(*) FROM system_logs WHERE source = 'test'"
        ).fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM families WHERE id = 'newcomer'").fetchone() == (
            0,
        )
    assert _shadows(basic_url) == []
