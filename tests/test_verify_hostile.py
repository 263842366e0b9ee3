"""`arena verify` on hostile bundles: it reads a file someone
else made, so it must follow contract §7 whatever that file holds.

- Names and values from the bundle are printed with their control characters as visible
  escapes and Rich markup as text: a member named to clear the screen and draw a fake
  "all matched" line shows as what it is.
- Unreadable input (garbage, a truncated zip, no manifest, a missing path, a compression
  method or encryption `arena bundle` never writes, a member over the size caps) exits 2 with
  one stderr line naming the path and the problem; a bundle that reads fine but does not
  match exits 1.
- Sizes are capped from the zip's central directory before a byte is decompressed: a zip
  bomb is refused with little memory, in a subprocess whose peak RSS is measured.

Each test drives `arena.app.cli.main(["verify", ...])` as a user runs it.
"""

import contextlib
import io
import json
import os
import resource
import shutil
import sqlite3
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from arena.analytics.replay.bundle import build_bundle
from arena.analytics.replay.format import MANIFEST, ZIP_TIME
from arena.app.cli import main
from arena.storage.db import create_db_engine
from tests.analytics.season import sqlite_season
from tests.factories import seed_basic

ROOT = Path(__file__).resolve().parents[1]
# A member name that, printed raw on a terminal, clears the screen, homes the cursor, starts a
# line of its own reading like success and hides whatever the line goes on to say.
ANSI_NAME = "\x1b[2J\x1b[H\nall matched: bundle 0123abcd\x1b[8m"
MARKUP_NAME = "[bold red]x[/bold red]"
# Deflated zeros: about 1,000 to 1 (300 MB of them is about 300 KB on disk). Over the real
# member cap (`test_the_caps_leave_headroom_over_a_years_bundle`), not a lowered one.
BOMB_BYTES = 300 * 10**6
# bench/RESULTS.md, a year-long cohort's bundle (10 agents): its largest file, all its files.
YEAR_LARGEST_FILE, YEAR_ALL_FILES = 20_088_864, 25_908_260

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def real_zip(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real bundle's zip, as `arena bundle` writes it: the shared test season's cohort 2
    (still deciding, so provisional; it verifies in full, exit 0)."""
    season = sqlite_season(tmp_path_factory.getbasetemp())
    engine: Engine = create_db_engine(season.url, role="reader")
    try:
        return build_bundle(engine, 2, provisional=True).bundle.zip_bytes()
    finally:
        engine.dispose()


@pytest.fixture
def verify(capsys: pytest.CaptureFixture[str]) -> Run:
    """`arena verify ARGS` in process: (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as exited:
            main(["verify", *args])
        out, err = capsys.readouterr()
        return int(exited.value.code or 0), out, err

    return run


def members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def write_zip(path: Path, files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = method
            archive.writestr(info, data)
    return path


def patched_headers(data: bytes, name: str, local_at: int, central_at: int, value: int) -> bytes:
    """`data` (a zip) with one 2-byte field of `name`'s local and central headers set."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        local = archive.getinfo(name).header_offset
    assert out[local : local + 4] == b"PK\x03\x04"
    out[local + local_at : local + local_at + 2] = value.to_bytes(2, "little")
    central = central_header(out, local)
    out[central + central_at : central + central_at + 2] = value.to_bytes(2, "little")
    return bytes(out)


def central_header(data: bytearray, local: int) -> int:
    """Where the central directory entry of the member whose local header is at `local` is."""
    central = data.find(b"PK\x01\x02")
    while int.from_bytes(data[central + 42 : central + 46], "little") != local:
        central = data.find(b"PK\x01\x02", central + 4)
        assert central != -1
    return central


def assert_one_error_line(code: int, out: str, err: str, *named: str) -> None:
    """Exit 2, nothing on stdout, one stderr line naming each of `named`, no raw control."""
    assert code == 2, (code, out, err)
    assert out == "", out
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("arena: error: ") and "unexpected" not in err, err
    assert "\x1b" not in err
    for text in named:
        assert text in err, (text, err)


# -- what verify prints is escaped -----------------------------------------------------------


@pytest.mark.parametrize("shape", ["zip", "folder"])
def test_an_ansi_member_name_is_shown_escaped_not_run(
    real_zip: bytes, tmp_path: Path, shape: str, verify: Run
) -> None:
    files = {**members(real_zip), ANSI_NAME: b"x"}
    if shape == "zip":
        target = write_zip(tmp_path / "bundle.zip", files)
    else:
        target = tmp_path / "bundle"
        for name, data in files.items():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(data)

    code, out, err = verify(str(target))

    assert code == 1, (out, err)
    assert "\x1b" not in out + err
    assert not any(line.lstrip().startswith("all matched") for line in out.splitlines()), out
    shown = "\\x1b[2J\\x1b[H\\nall matched: bundle 0123abcd\\x1b[8m"
    assert f"file {shown}: unlisted" in out, out
    table_row = next(line for line in out.splitlines() if "files against MANIFEST.json" in line)
    assert "\\x1b[2J" in table_row, table_row


def test_a_rich_markup_member_name_prints_literally(
    real_zip: bytes, tmp_path: Path, verify: Run
) -> None:
    target = write_zip(tmp_path / "bundle.zip", {**members(real_zip), MARKUP_NAME: b"x"})

    code, out, err = verify(str(target))

    assert code == 1, (out, err)
    table_row = next(line for line in out.splitlines() if "files against MANIFEST.json" in line)
    assert f"{MARKUP_NAME} unlisted" in table_row, table_row
    assert f"file {MARKUP_NAME}: unlisted" in out, out


def test_control_characters_in_a_manifest_value_are_escaped(
    real_zip: bytes, tmp_path: Path, verify: Run
) -> None:
    """A manifest re-written with an escape sequence in its `cohort` and in a listed hash."""
    files = members(real_zip)
    manifest = json.loads(files[MANIFEST])
    manifest["cohort"] = "\x1b[31m2\u2028"
    manifest["files"][0]["sha256"] = "\x1b]0;pwned\x07\u202e" + manifest["files"][0]["sha256"]
    files[MANIFEST] = json.dumps(manifest).encode()
    target = write_zip(tmp_path / "bundle.zip", files)

    code, out, err = verify(str(target))

    assert code == 1, (out, err)
    for raw in ("\x1b", "\x07", "\u202e", "\u2028"):
        assert raw not in out + err, (raw, out)
    assert "\\x1b]0;pwned\\x07\\u202e" in out, out
    assert "\\x1b[31m2\\u2028" in out, out  # the table's title


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("portfolio_snapshots.csv", b"agent_id\n" + b"1" * 200_000 + b"\n"),
        ("cohort.json", b"[" * 100_000 + b"]" * 100_000 + b"\n"),
    ],
    ids=["csv-field-over-the-limit", "json-nested-100000-deep"],
)
def test_a_file_the_replay_cannot_parse_is_a_mismatch_not_a_crash(
    real_zip: bytes, tmp_path: Path, name: str, data: bytes, verify: Run
) -> None:
    """Read fine (a zip, a manifest) but a file is not what it should be: exit 1, the file
    named changed and the replay's failure shown, never "unexpected …"."""
    target = write_zip(tmp_path / "bundle.zip", {**members(real_zip), name: data})

    code, out, err = verify(str(target))

    assert code == 1, (out, err)
    assert err == "" and "unexpected" not in out, (out, err)
    assert f"file {name}: changed" in out and "bundle readable: " in out, out


# -- unreadable input exits 2 with one line --------------------------------------------------


def test_garbage_bytes_exit_2(tmp_path: Path, verify: Run) -> None:
    target = tmp_path / "bundle.zip"
    target.write_bytes(os.urandom(4096))
    assert_one_error_line(*verify(str(target)), str(target), "not a readable zip")


def test_a_truncated_zip_exits_2(real_zip: bytes, tmp_path: Path, verify: Run) -> None:
    target = tmp_path / "bundle.zip"
    target.write_bytes(real_zip[: len(real_zip) // 2])
    assert_one_error_line(*verify(str(target)), str(target), "not a readable zip")


def test_a_zip_without_a_manifest_exits_2(real_zip: bytes, tmp_path: Path, verify: Run) -> None:
    files = members(real_zip)
    del files[MANIFEST]
    target = write_zip(tmp_path / "bundle.zip", files)
    assert_one_error_line(*verify(str(target)), str(target), f"no {MANIFEST}")


def test_a_folder_without_a_manifest_exits_2(tmp_path: Path, verify: Run) -> None:
    (tmp_path / "cohort.json").write_text("{}\n")
    assert_one_error_line(*verify(str(tmp_path)), str(tmp_path), f"no {MANIFEST}")


def test_a_missing_path_exits_2(tmp_path: Path, verify: Run) -> None:
    target = tmp_path / "nowhere.zip"
    assert_one_error_line(*verify(str(target)), f"no bundle at {target}")


@pytest.mark.parametrize(
    "method", [9, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["deflate64", "bzip2", "lzma"]
)
def test_an_unsupported_compression_method_exits_2(
    real_zip: bytes, tmp_path: Path, method: int, verify: Run
) -> None:
    """Deflate64 (9) Python cannot read (unguarded: "unexpected NotImplementedError");
    bzip2 and lzma it can, but `arena bundle` never writes them: not one of its bundles."""
    files = members(real_zip)
    if method == 9:
        data = write_zip(tmp_path / "stored.zip", files, zipfile.ZIP_STORED).read_bytes()
        data = patched_headers(data, "cohort.json", 8, 10, 9)
        target = tmp_path / "bundle.zip"
        target.write_bytes(data)
    else:
        target = write_zip(tmp_path / "bundle.zip", files, method)
    assert_one_error_line(
        *verify(str(target)), str(target), f"compression method {method}", "not stored or deflated"
    )


def test_an_encrypted_member_exits_2(real_zip: bytes, tmp_path: Path, verify: Run) -> None:
    """The encryption bit (0x1) set in a stored member's local and central headers (unguarded:
    "unexpected RuntimeError", password required)."""
    data = write_zip(tmp_path / "stored.zip", members(real_zip), zipfile.ZIP_STORED).read_bytes()
    target = tmp_path / "bundle.zip"
    target.write_bytes(patched_headers(data, MANIFEST, 6, 8, 0x1))
    assert_one_error_line(*verify(str(target)), str(target), f"{MANIFEST} is encrypted")


# -- sizes capped before reading -------------------------------------------------------------

PEAK_PROBE = """
import atexit, resource, sys
atexit.register(lambda: print(
    "peak-rss-kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr))
from arena.app.cli import main
main(sys.argv[1:])
"""


def verify_peak(*args: str) -> tuple[int, str, int]:
    """`arena verify ARGS` in a fresh Python: (exit code, stderr without the probe, peak RSS
    in MB)."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_PROBE, "verify", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    lines = done.stderr.splitlines()
    peak = [line for line in lines if line.startswith("peak-rss-kb ")]
    assert len(peak) == 1, done.stderr
    err = "".join(line + "\n" for line in lines if not line.startswith("peak-rss-kb "))
    assert done.stdout == "", done.stdout
    return done.returncode, err, int(peak[0].split()[1]) // 1024


def write_bomb(path: Path, name: str, size: int, extra: dict[str, bytes]) -> Path:
    """A zip holding `extra` and `size` zeros under `name`, deflated, written in 1 MB chunks
    (the test never holds the zeros)."""
    chunk = bytes(2**20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in extra.items():
            archive.writestr(member, data)
        info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w") as sink:
            left = size
            while left > 0:
                sink.write(chunk[: min(left, len(chunk))])
                left -= len(chunk)
    return path


@pytest.fixture(scope="module")
def baseline_peak(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The peak RSS (MB) of `arena verify` refusing a missing path: its imports, no data."""
    code, err, peak = verify_peak(str(tmp_path_factory.mktemp("none") / "missing.zip"))
    assert code != 0 and "missing.zip" in err, err
    return peak


@pytest.fixture
def bomb(real_zip: bytes, tmp_path: Path) -> Iterator[Path]:
    files = members(real_zip)
    del files["portfolio_snapshots.csv"]
    path = write_bomb(tmp_path / "bomb.zip", "portfolio_snapshots.csv", BOMB_BYTES, files)
    yield path
    path.unlink()


def test_a_zip_bomb_is_refused_from_its_directory_with_little_memory(
    bomb: Path, baseline_peak: int
) -> None:
    assert bomb.stat().st_size < 2 * 10**6  # small on disk: 300 MB of zeros

    code, err, peak = verify_peak(str(bomb))

    assert_one_error_line(code, "", err, str(bomb), "portfolio_snapshots.csv", f"{BOMB_BYTES:,}")
    assert peak < baseline_peak + 32, (peak, baseline_peak)


def test_a_zip_directory_that_understates_a_size_is_stopped_at_it(
    real_zip: bytes, tmp_path: Path, baseline_peak: int
) -> None:
    """The bomb's local header and central directory claim 1,000 bytes: reading stops there,
    the data no longer matches its CRC, and the zip is refused as damaged."""
    files = members(real_zip)
    del files["portfolio_snapshots.csv"]
    path = write_bomb(tmp_path / "liar.zip", "portfolio_snapshots.csv", BOMB_BYTES, files)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("portfolio_snapshots.csv")
    local = info.header_offset
    assert data[local : local + 4] == b"PK\x03\x04"  # uncompressed size: local +22, central +24
    data[local + 22 : local + 26] = (1000).to_bytes(4, "little")
    central = central_header(data, local)
    data[central + 24 : central + 28] = (1000).to_bytes(4, "little")
    path.write_bytes(bytes(data))

    code, err, peak = verify_peak(str(path))

    assert_one_error_line(code, "", err, str(path), "not a readable zip")
    assert peak < baseline_peak + 32, (peak, baseline_peak)


def test_a_folder_over_the_caps_is_refused_from_stat(
    real_zip: bytes, tmp_path: Path, verify: Run
) -> None:
    """A sparse file of 300 MB, over the member cap (no disk used): refused from its size,
    unread."""
    for name, data in members(real_zip).items():
        (tmp_path / name).write_bytes(data)
    with (tmp_path / "portfolio_snapshots.csv").open("r+b") as handle:
        handle.truncate(BOMB_BYTES)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    code, out, err = verify(str(tmp_path))

    assert_one_error_line(code, out, err, str(tmp_path), "portfolio_snapshots.csv")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024


def test_the_caps_leave_headroom_over_a_years_bundle() -> None:
    """The caps: well over a year-long cohort's bundle, well under the bomb."""
    from arena.analytics.replay.format import MAX_BUNDLE_BYTES, MAX_MEMBER_BYTES

    assert 5 * YEAR_LARGEST_FILE < MAX_MEMBER_BYTES < BOMB_BYTES
    assert 5 * YEAR_ALL_FILES < MAX_BUNDLE_BYTES and MAX_BUNDLE_BYTES >= 2 * MAX_MEMBER_BYTES


def test_a_real_bundle_still_verifies(real_zip: bytes, tmp_path: Path, verify: Run) -> None:
    """The caps and checks leave a real bundle alone: exit 0, the success line."""
    target = tmp_path / "bundle.zip"
    target.write_bytes(real_zip)
    code, out, err = verify(str(target))
    assert code == 0, (out, err)
    assert out.splitlines()[-1].startswith("all matched: bundle ")


# -- the other commands that echo file or database text --------------------------------------

HOSTILE_FAMILY = "\x1b[2J\x1b[Hevil\u202e"


def test_leaderboard_family_ids_from_the_database_are_escaped(
    sqlite_template: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Families written to the database by hand (the lineup file's id pattern is bypassed):
    one id with an escape sequence and a bidi override, one with Rich markup."""
    path = tmp_path / "arena.db"
    shutil.copyfile(sqlite_template, path)
    engine = create_db_engine(f"sqlite:///{path}")
    try:
        seed_basic(engine)
    finally:
        engine.dispose()
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        for old, new in (("gpt-5.1", HOSTILE_FAMILY), ("baseline-cash", MARKUP_NAME)):
            conn.execute("UPDATE families SET id = ? WHERE id = ?", (new, old))
            conn.execute("UPDATE agents SET family_id = ? WHERE family_id = ?", (new, old))
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{path}")

    with pytest.raises(SystemExit) as exited:
        main(["leaderboard"])
    out, err = capsys.readouterr()

    assert exited.value.code == 0, (out, err)
    assert "\x1b" not in out and "\u202e" not in out, out
    assert "\\x1b[2J\\x1b[Hevil\\u202e" in out, out
    assert MARKUP_NAME in out, out


def test_the_bundle_line_escapes_the_path_it_echoes(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    season = sqlite_season(tmp_path_factory.getbasetemp())
    monkeypatch.setenv("ARENA_DATABASE_URL", season.url)
    out_path = tmp_path_factory.mktemp("out") / "\x1b[2Jcohort\u2028two.zip"

    with pytest.raises(SystemExit) as exited:
        main(["bundle", "2", "--provisional", "--out", str(out_path)])
    out, err = capsys.readouterr()

    assert exited.value.code == 0, (out, err)
    assert out_path.is_file()
    assert "\x1b" not in out and "\u2028" not in out, out
    assert "\\x1b[2Jcohort\\u2028two.zip (13 files" in out, out


# -- the central directory's count, before zipfile reads it -----------------------------------

MANY = 1_000_000


def write_many_entries(path: Path, count: int) -> Path:
    """A zip whose central directory genuinely lists `count` empty stored members (names
    0000000, 0000001, …), all pointing at one local header, with zip64's end records (over
    65,535 entries): about 53 MB, written in well under a second."""
    name = b"%07d" % 0
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0x21, 0, 0, 0, len(name), 0)
    entry = struct.pack(
        "<4s4B4HL2L5HLL", b"PK\x01\x02", 20, 3, 20, 0, 0, 0, 0, 0x21, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0
    )
    at, size = len(local) + len(name), count * (len(entry) + len(name))
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, size, at)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, at + size, 1)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, size, at, 0)
    with path.open("wb") as out:  # in slices: the test's own memory is in the child's peak
        out.write(local + name)
        for first in range(0, count, 2**16):
            names = range(first, min(count, first + 2**16))
            out.write(b"".join(entry + b"%07d" % i for i in names))
        out.write(record + locator + end)
    return path


def test_a_million_entry_zip_is_refused_from_its_end_record_with_little_memory(
    tmp_path: Path, baseline_peak: int
) -> None:
    """`zipfile` made a `ZipInfo` of each of a million members (678 MB) before the member
    cap refused the zip: the count in the End Of Central Directory (zip64's) refuses it
    before the directory is read."""
    path = write_many_entries(tmp_path / "many.zip", MANY)
    code, err, peak = verify_peak(str(path))

    assert_one_error_line(code, "", err, str(path), "central directory", f"{MANY:,} entries")
    assert peak < baseline_peak + 32, (peak, baseline_peak)


def test_the_end_record_is_read_where_zipfile_reads_it(real_zip: bytes, tmp_path: Path) -> None:
    """A real bundle's count and directory size, with and without an archive comment (the
    record is then found by its signature); a small zip of many entries through zip64's
    records; no record at all is left to `zipfile` to name."""
    from arena.analytics.replay.format import declared_directory

    size = real_zip.rfind(b"PK\x05\x06") - real_zip.find(b"PK\x01\x02")
    assert declared_directory(real_zip, 0) == (13, size)
    commented = io.BytesIO()
    with zipfile.ZipFile(commented, "w") as archive:
        archive.comment = b"a comment" * 10
        archive.writestr("a.txt", b"a")
    assert declared_directory(commented.getvalue(), 0) == (1, 46 + len("a.txt"))
    many = write_many_entries(tmp_path / "many.zip", 70_000).read_bytes()
    with zipfile.ZipFile(io.BytesIO(many)) as archive:
        assert len(archive.infolist()) == 70_000  # a zip zipfile reads as such
    tail_at = len(many) - 70_000
    assert declared_directory(many[tail_at:], tail_at) == (70_000, 70_000 * 53)
    assert declared_directory(os.urandom(64).replace(b"PK", b"pk"), 0) is None


# -- a file that reads but is not the bundle's format is named --------------------------------


def forged_rows(files: dict[str, bytes], name: str, change: Callable[[dict], None]) -> bytes:
    rows = [json.loads(line) for line in files[name].decode().splitlines()]
    change(rows[0])
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def forged_csv(files: dict[str, bytes], change: Callable[[list[str]], list[str]]) -> bytes:
    lines = files["portfolio_snapshots.csv"].decode().splitlines()
    return ("\n".join(change(lines)) + "\n").encode()


def forged_cohort(files: dict[str, bytes], **constants: str) -> bytes:
    cohort = json.loads(files["cohort.json"])
    cohort["constants"].update(constants)
    return json.dumps(cohort).encode()


def without_column(lines: list[str], index: int) -> list[str]:
    rows = (line.split(",") for line in lines)
    return [",".join(cells[:index] + cells[index + 1 :]) for cells in rows]


FORGERIES: dict[str, tuple[str, Callable[[dict[str, bytes]], bytes | None], str]] = {
    # id: (file, the forged file's bytes (None: the file removed), what the line says)
    "csv-missing-column": (
        "portfolio_snapshots.csv",
        lambda f: forged_csv(f, lambda lines: without_column(lines, 6)),
        "no column 'total_pnl'",
    ),
    "csv-short-row": (
        "portfolio_snapshots.csv",
        lambda f: forged_csv(f, lambda ls: [ls[0], ",".join(ls[1].split(",")[:3]), *ls[2:]]),
        "row 2: 3 cells, its header 9",
    ),
    "csv-nan-money": (
        "portfolio_snapshots.csv",
        lambda f: forged_csv(f, lambda ls: [ls[0], ls[1].replace(ls[1].split(",")[3], "NaN", 1)]),
        "row 2: cash_balance 'NaN'",
    ),
    "trade-missing-key": (
        "trades.jsonl",
        lambda f: forged_rows(f, "trades.jsonl", lambda row: row.pop("side")),
        "line 1: no 'side'",
    ),
    "lineup-nan-money": (
        "lineup.jsonl",
        lambda f: forged_rows(f, "lineup.jsonl", lambda row: row.update(starting_balance="NaN")),
        "line 1: starting_balance 'NaN' is not a finite decimal number",
    ),
    "lineup-huge-money": (
        "lineup.jsonl",
        lambda f: forged_rows(f, "lineup.jsonl", lambda row: row.update(cash_balance="1E+999999")),
        "line 1: cash_balance '1E+999999'",
    ),
    "cohort-huge-constant": (
        "cohort.json",
        lambda f: forged_cohort(f, max_bet_fraction="1E+999999"),
        "constants.max_bet_fraction '1E+999999'",
    ),
    "file-missing": ("trades.jsonl", lambda f: None, "not in the bundle"),
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forged_file_is_named_with_its_row_and_key(
    real_zip: bytes, tmp_path: Path, forgery: str, verify: Run
) -> None:
    """A CSV missing a column or cut short, a JSON row missing a key, NaN or 1E+999999 where
    money is: each was a bare `KeyError: 'side'`, `InvalidOperation`, `Overflow` or
    `ValueError` naming no file. Exit 1, one "bundle readable" line naming the file and
    where in it."""
    name, forge, says = FORGERIES[forgery]
    files = members(real_zip)
    forged = forge(files)
    if forged is None:
        del files[name]
    else:
        files[name] = forged
    code, out, err = verify(str(write_zip(tmp_path / "bundle.zip", files)))

    assert (code, err) == (1, ""), (out, err)
    readable = [line for line in out.splitlines() if line.startswith("bundle readable: ")]
    assert len(readable) == 1, out
    assert readable[0].startswith(f"bundle readable: {name}") and says in readable[0], out
    for bare in ("KeyError", "InvalidOperation", "Overflow", "ValueError", "TypeError"):
        assert bare not in out, out
