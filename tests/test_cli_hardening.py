"""The CLI's edges: where `--out` writes, integer ranges, and errors that name the
thing and the fix. Each test is one probe, driven through `arena.app.cli.main`."""

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.app.cli import main
from arena.storage.db import create_db_engine, dispose_engines
from tests.backends import BACKENDS
from tests.factories import seed_basic
from tests.pg import PostgresCluster

TRADES_HEADER = "trade_id,decision_id,cohort_number,family_id,market_id,position_id,"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def one_line_error(code: int, err: str, *needles: str) -> str:
    assert code != 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("arena: error: "), err
    assert "Traceback" not in err and "unexpected" not in err, err
    for needle in needles:
        assert needle in lines[0], err
    return lines[0]


@pytest.fixture
def seeded(db_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A migrated database on each backend with one cohort's trades, as ARENA_DATABASE_URL."""
    engine = create_db_engine(db_url)
    seed_basic(engine)
    engine.dispose()
    monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
    return db_url


@pytest.fixture
def sqlite_seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A seeded SQLite file: the `--out` probes are about the target, not the backend."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    from arena.storage.migrate import init_db

    engine = create_db_engine(url)
    init_db(engine)
    seed_basic(engine)
    engine.dispose()
    return url


def expected_trades(capsys: pytest.CaptureFixture[str]) -> str:
    code, out, _ = run(["export", "trades"], capsys)
    assert code == 0 and out.startswith(TRADES_HEADER)
    return out


# --- --out: only a regular file is replaced; devices, FIFOs and - are written through ----------


@pytest.fixture
def null_device(tmp_path: Path) -> Path:
    """A null character device to export into. As root, a private node of /dev/null's device
    (1, 3) in tmp_path: if the export replaced it, only the test's copy would be lost, not the
    machine's. Otherwise /dev/null itself, which a non-root run cannot replace."""
    if os.geteuid() != 0:
        return Path("/dev/null")
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return node


def test_export_out_dev_null_keeps_the_character_device(
    sqlite_seeded: str, null_device: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["export", "trades", "--out", str(null_device)], capsys)
    assert (code, out, err) == (0, "", "")
    assert stat.S_ISCHR(os.stat(null_device).st_mode), "the device was replaced by a file"
    assert null_device.read_bytes() == b""  # still the null device: what went in is gone
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not list(null_device.parent.glob("*.partial")), "a temporary file was left"


def test_export_out_fifo_is_read_by_its_reader(
    sqlite_seeded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = expected_trades(capsys)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()  # blocks in open() until the export opens the FIFO for writing
    code, out, err = run(["export", "trades", "--out", str(fifo)], capsys)
    reader.join(timeout=30)
    assert (code, out, err) == (0, "", "")
    assert not reader.is_alive(), "the FIFO's reader never got a writer: the FIFO was replaced"
    assert received == [expected.encode()]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_export_out_leaves_an_unrelated_partial_file_alone(
    sqlite_seeded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = expected_trades(capsys)
    target = tmp_path / "out" / "out.csv"
    target.parent.mkdir()
    partial = target.with_name("out.csv.partial")
    partial.write_text("someone else's half-written file\n")
    code, out, err = run(["export", "trades", "--out", str(target)], capsys)
    assert (code, out, err) == (0, "", "")
    assert target.read_text() == expected
    assert partial.read_text() == "someone else's half-written file\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.csv", "out.csv.partial"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o666 & ~umask  # as `open()` would make it


def test_export_out_failing_leaves_the_file_and_an_unrelated_partial_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The export fails half way (a database with no tables): the old file, its permission
    bits and someone else's `PATH.partial` are all as they were, and no temporary file is left."""
    empty = tmp_path / "empty.db"
    empty.touch()
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{empty}")
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "out.csv"
    target.write_text("yesterday's export\n")
    target.chmod(0o640)
    partial = folder / "out.csv.partial"
    partial.write_text("not ours\n")
    code, _, err = run(["export", "trades", "--out", str(target)], capsys)
    one_line_error(code, err)
    assert target.read_text() == "yesterday's export\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert partial.read_text() == "not ours\n"
    assert sorted(p.name for p in folder.iterdir()) == ["out.csv", "out.csv.partial"]


def test_export_out_replacing_a_file_keeps_its_permissions(
    sqlite_seeded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "shared.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    code, _, err = run(["export", "trades", "--out", str(target)], capsys)
    assert (code, err) == (0, "")
    assert target.read_text().startswith(TRADES_HEADER)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_export_out_dash_writes_stdout(
    sqlite_seeded: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected = expected_trades(capsys)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["export", "trades", "--out", "-"], capsys)
    assert (code, out, err) == (0, expected, "")
    assert not (tmp_path / "-").exists()


def test_export_out_empty_is_one_clear_line(
    sqlite_seeded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out ''` said "unexpected ValueError"; an unwritable path is one line naming it too."""
    code, out, err = run(["export", "trades", "--out", ""], capsys)
    one_line_error(code, err, "--out is empty", "stdout")
    assert out == ""
    target = tmp_path / "no-such-folder" / "out.csv"
    code, _, err = run(["export", "trades", "--out", str(target)], capsys)
    one_line_error(code, err, f"cannot write {target}", "--out")
    assert not target.parent.exists()


# --- integers: 1 … 2**63-1, checked before anything runs ----------------------------------------

TOO_BIG = "99999999999999999999"
MAX_ID = 2**63 - 1  # the top of every integer option (contract §4)
MAX_COHORT = 2**31 - 1  # cohort numbers: PostgreSQL's INTEGER


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["export", "cohorts", "--limit", TOO_BIG], "--limit"),
        (["export", "cohorts", "--limit", str(MAX_ID)], "--limit"),
        (["export", "trades", "--cohort", TOO_BIG], "--cohort"),
        (["export", "trades", "--cohort", str(MAX_COHORT + 1)], "--cohort"),
        (["leaderboard", "--cohort", TOO_BIG, "--format", "csv"], "--cohort"),
        (["bundle", TOO_BIG, "--out", "b.zip"], "'cohort'"),
        (["bundle", str(MAX_COHORT + 1), "--out", "b.zip"], "'cohort'"),
        (["backup", "--keep", TOO_BIG], "--keep"),
        (["demo", "--seed", TOO_BIG], "--seed"),
        (["model-server", "--seed", TOO_BIG], "--seed"),
    ],
)
def test_out_of_range_integer_is_a_usage_error(
    sqlite_seeded: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    option: str,
) -> None:
    """`arena export cohorts --limit 99999999999999999999` printed the CSV header, then
    "unexpected OverflowError": now nothing runs, exit 2, one line naming the option."""
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(args, capsys)
    assert code == 2, err
    one_line_error(code, err, option, "--help")
    assert out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no backup, no bundle


def test_largest_ids_are_accepted_on_both_backends(
    seeded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The top of each range runs its query on either backend (PostgreSQL's INTEGER cohort
    number included: no DataError binding it), and one past it is the usage error."""
    everything = expected_trades(capsys)
    code, _, err = run(["export", "trades", "--cohort", str(MAX_COHORT + 1)], capsys)
    assert code == 2 and "--cohort" in err
    code, out, err = run(["export", "trades", "--cohort", str(MAX_COHORT)], capsys)
    assert (code, err) == (0, ""), err
    assert out.splitlines() == [everything.splitlines()[0]]
    code, out, err = run(["export", "trades", "--limit", str(MAX_ID - 1)], capsys)
    assert (code, out, err) == (0, everything, "")
    code, _, err = run(["leaderboard", "--cohort", str(MAX_COHORT), "--format", "csv"], capsys)
    one_line_error(code, err, f"cohort {MAX_COHORT} does not exist")
    code, _, err = run(["bundle", str(MAX_COHORT), "--out", str(tmp_path / "b.zip")], capsys)
    one_line_error(code, err, str(MAX_COHORT))


# --- errors that name the thing and the fix ------------------------------------------------------


def test_binary_lineup_file_names_the_file(
    sqlite_seeded: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lineup = tmp_path / "lineup.toml"
    lineup.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    monkeypatch.setenv("ARENA_LINEUP", str(lineup))
    code, _, err = run(["init-db"], capsys)
    one_line_error(code, err, str(lineup), "UTF-8", "ARENA_LINEUP")


@pytest.mark.parametrize("key", ["price_in", "price_out"])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "+inf"])
def test_non_finite_lineup_price_names_file_family_and_key(
    sqlite_seeded: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    key: str,
    value: str,
) -> None:
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(
        '[[family]]\nid = "cheap"\ndisplay_name = "Cheap"\nprovider = "Local"\n'
        f'model = "local/cheap"\n{key} = {value}\n'
    )
    monkeypatch.setenv("ARENA_LINEUP", str(lineup))
    code, _, err = run(["init-db"], capsys)
    one_line_error(code, err, str(lineup), "'cheap'", key, "finite")


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("0", "int 0"),
        ("1767225600", "int 1767225600"),
        ('"2025-06-30"', "str '2025-06-30'"),
        ("2025-06-30T00:00:00Z", "date-time"),
        ("2025-06-30T00:00:00", "date-time"),
        ("1.5", "float"),
    ],
    ids=["zero", "unix-seconds", "string", "offset-date-time", "local-date-time", "float"],
)
def test_a_lineup_cutoff_that_is_not_a_toml_date_names_file_family_and_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str,
    named: str,
) -> None:
    """`knowledge_cutoff = 0` was read as Unix seconds (1970-01-01): a guard that admitted
    every cohort. Only a TOML date is a cutoff."""
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(
        '[[family]]\nid = "late"\ndisplay_name = "Late"\nprovider = "Local"\n'
        f'model = "local/late"\nknowledge_cutoff = {value}\n'
    )
    monkeypatch.setenv("ARENA_LINEUP", str(lineup))
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{tmp_path / 'arena.db'}")
    code, _, err = run(["init-db"], capsys)
    one_line_error(code, err, str(lineup), "'late'", "knowledge_cutoff", "TOML date", named)


def test_a_lineup_cutoff_as_a_toml_date_is_read() -> None:
    from datetime import date

    from arena.lineup import parse_lineup

    text = (
        '[[family]]\nid = "late"\ndisplay_name = "Late"\nprovider = "Local"\n'
        'model = "local/late"\nknowledge_cutoff = 2025-06-30\n'
    )
    assert parse_lineup(text).families[0].knowledge_cutoff == date(2025, 6, 30)


@pytest.mark.parametrize(
    "args", [["leaderboard"], ["export", "trades"], ["snapshot"], ["bundle", "1", "--out", "b"]]
)
def test_database_in_a_missing_folder_says_so_and_creates_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
) -> None:
    """ARENA_DATABASE_URL=sqlite:////tmp/nope/x.db said "no such table: agents" (after creating
    the folder and an empty file): now it names the missing folder and `arena init-db`."""
    folder = tmp_path / "nope"
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{folder / 'x.db'}")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(args, capsys)
    one_line_error(code, err, f"database folder {folder} does not exist", "arena init-db")
    assert out == ""
    assert not folder.exists()
    code, out, _ = run(["init-db"], capsys)
    assert code == 0 and (folder / "x.db").is_file()


@pytest.fixture(params=BACKENDS)
def schemaless_url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """A database with no tables on each backend: an empty SQLite file, a new PostgreSQL
    database, as ARENA_DATABASE_URL."""
    if request.param == "sqlite":
        path = tmp_path / "empty.db"
        path.touch()
        url = f"sqlite:///{path}"
        monkeypatch.setenv("ARENA_DATABASE_URL", url)
        yield url
        return
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    url = cluster.new_database()
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    try:
        yield url
    finally:
        dispose_engines()
        cluster.drop_database(url)


@pytest.mark.parametrize(
    "args",
    [["snapshot"], ["resolve"], ["leaderboard"], ["export", "cohorts"], ["bundle", "1"]],
)
def test_schemaless_database_says_run_init_db(
    schemaless_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
) -> None:
    if args[0] == "bundle":
        args = [*args, "--out", str(tmp_path / "b.zip")]
    code, _, err = run(args, capsys)
    line = one_line_error(code, err, "no schema", "run `arena init-db`")
    assert "check ARENA_DATABASE_URL and that the database is reachable" not in line


@pytest.fixture
def behind_url(db_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database on each backend migrated only to revision 0012 (before late entry added
    `cohorts.late_entry_of`), as ARENA_DATABASE_URL."""
    from arena.storage.migrate import downgrade

    engine = create_db_engine(db_url)
    try:
        downgrade(engine, "0012")
    finally:
        engine.dispose()
    monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
    return db_url


def test_a_database_behind_the_code_says_run_init_db_and_its_revision(
    behind_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A query meeting a column a later migration adds said "check ARENA_DATABASE_URL and
    that the database is reachable" on SQLite ("no such column") and "ProgrammingError" on
    PostgreSQL (undefined_column): the line names the revision and `arena init-db`."""
    from arena.storage.migrate import head_revision

    for args in (["leaderboard"], ["export", "trades"], ["snapshot"]):
        code, out, err = run(args, capsys)
        line = one_line_error(code, err, "revision 0012", head_revision(), "run `arena init-db`")
        assert "check ARENA_DATABASE_URL" not in line and "late_entry_of" in line
        assert out == "" or out.count("\n") == 1  # at most the CSV header
    code, _, err = run(["init-db"], capsys)
    assert code == 0, err
    code, _, err = run(["leaderboard"], capsys)
    assert (code, err) == (0, "")


def test_a_database_at_a_revision_the_code_does_not_know_says_so(
    behind_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = create_db_engine(behind_url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    finally:
        engine.dispose()
    code, _, err = run(["leaderboard"], capsys)
    one_line_error(code, err, "revision 9999", "does not know", "ARENA_DATABASE_URL")


def test_an_unreachable_server_still_says_check_the_url(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing listens on port 1: the URL is what is wrong, not the schema."""
    monkeypatch.setenv("ARENA_DATABASE_URL", "postgresql+psycopg://arena@127.0.0.1:1/arena")
    code, _, err = run(["leaderboard"], capsys)
    line = one_line_error(code, err, "check ARENA_DATABASE_URL")
    assert "init-db" not in line
