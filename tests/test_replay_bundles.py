"""Replay bundles: `arena bundle` then `arena verify` recomputes every number.

On the finished test season (both cohorts completed through the real jobs, their bundles kept
by the real `bundle` job): every cohort verifies 100%, a rebuild is byte-identical to the kept
zip, one changed byte in each kind of file is caught and named, a consistent forgery (files
re-hashed) is still caught by the recomputation, a change to an engine rule that would change
a published number is caught, and the same season on PostgreSQL gives the same bytes.
"""

import json
import os
import re
import stat
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import Engine

import arena.core.execution
from arena.analytics.replay.bundle import build_bundle, curve_csv
from arena.analytics.replay.format import (
    FILES,
    MANIFEST,
    PORTFOLIO_COLUMNS,
    BundleFiles,
    build_files,
    csv_bytes,
    read_bundle,
)
from arena.analytics.replay.kept import kept_bundle_zip, kept_bundles
from arena.analytics.replay.verify import verify_bundle
from arena.app.cli import main
from arena.app.output import open_binary_output
from arena.core.errors import InputError
from arena.engine import bundles
from arena.engine.bundles import build_bundles
from arena.storage.db import create_db_engine
from arena.storage.tables import (
    AGENTS,
    COHORTS,
    MARKETS,
    PORTFOLIO_SNAPSHOTS,
    REPLAY_BUNDLES,
    TRADES,
)
from tests.analytics.finished_season import FINISHED_AT, copy_database, finished_season
from tests.analytics.season import Season, sqlite_season, writable_copy
from tests.pg import PostgresCluster


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Season:
    return finished_season(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def reader(finished: Season) -> Iterator[Engine]:
    engine = create_db_engine(finished.url, role="reader")
    yield engine
    engine.dispose()


def kept(reader: Engine, cohort: int) -> BundleFiles:
    data = kept_bundle_zip(reader, cohort)
    assert data is not None
    with zipfile.ZipFile(__import__("io").BytesIO(data)) as archive:
        return BundleFiles({info.filename: archive.read(info) for info in archive.infolist()})


Cli = Callable[..., tuple[int, str]]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`arena ARGS` in process, as a user runs it: (exit code, stdout + stderr)."""

    def run(*args: str, url: str | None = None) -> tuple[int, str]:
        if url:
            monkeypatch.setenv("ARENA_DATABASE_URL", url)
        with pytest.raises(SystemExit) as exited:
            main(list(args))
        out, err = capsys.readouterr()
        return int(exited.value.code or 0), out + err

    return run


def one_byte_changed(data: bytes) -> bytes:
    """`data` with one digit past its middle changed (still valid JSON, CSV or text)."""
    for index in range(len(data) // 2, len(data)):
        if chr(data[index]).isdigit():
            digit = (data[index] - ord("0") + 1) % 10
            return data[:index] + bytes([ord("0") + digit]) + data[index + 1 :]
    index = len(data) // 2
    return data[:index] + bytes([data[index] ^ 0x20]) + data[index + 1 :]


def test_every_finished_cohort_is_kept_and_verifies_in_full(reader: Engine) -> None:
    frame = kept_bundles(reader)
    assert frame["cohort_number"].tolist() == [1, 2]
    for number, bundle_hash in zip(frame["cohort_number"], frame["bundle_hash"], strict=True):
        bundle = kept(reader, int(number))
        assert bundle.hash == bundle_hash and sorted(bundle.files) == sorted([*FILES, MANIFEST])
        cohort = json.loads(bundle.files["cohort.json"])
        assert (cohort["status"], cohort["final"]) == ("completed", True)

        report = verify_bundle(bundle, published_hash=bundle_hash)

        assert report.ok and not report.tampered
        assert all(check.compared > 0 and not check.notes for check in report.checks), [
            (c.name, c.compared, c.notes) for c in report.checks
        ]
    # the season's mix is in the bundles: a refund, a fallback HOLD, a rejected leg, a sale
    one = kept(reader, 1).files
    trades = [json.loads(line) for line in one["trades.jsonl"].splitlines()]
    decisions = [json.loads(line) for line in one["decisions.jsonl"].splitlines()]
    assert {t["trade_type"] for t in trades} == {"BUY", "SELL", "SETTLE", "REFUND"}
    assert "fallback_hold" in {d["status"] for d in decisions}
    assert any(not leg["executed"] for d in decisions for leg in d["legs"])


def test_a_rebuild_is_byte_identical_as_zip_or_folder(
    finished: Season, reader: Engine, tmp_path: Path, cli: Cli
) -> None:
    code, out = cli("bundle", "1", "--out", str(tmp_path / "one.zip"), url=finished.url)
    assert code == 0, out
    assert (tmp_path / "one.zip").read_bytes() == kept_bundle_zip(reader, 1)
    code, out = cli("bundle", "1", "--out", str(tmp_path / "folder"), url=finished.url)
    assert code == 0, out
    assert read_bundle(tmp_path / "folder").files == read_bundle(tmp_path / "one.zip").files
    assert build_bundle(reader, 1).hash == build_bundle(reader, 1).hash == kept(reader, 1).hash
    assert re.search(r"cohort 1: bundle [0-9a-f]{64} -> .*one\.zip \(13 files", out) is None
    assert "13 files" in out

    code, out = cli("verify", str(tmp_path / "folder"), "--hash", kept(reader, 1).hash)
    assert code == 0, out
    assert f"all matched: bundle {kept(reader, 1).hash}" in out

    # A FIFO named *.zip is written through, as an export's --out is: never replaced.
    fifo = tmp_path / "pipe.zip"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader_thread = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader_thread.start()  # blocks in open() until the bundle opens the FIFO for writing
    code, out = cli("bundle", "1", "--out", str(fifo), url=finished.url)
    reader_thread.join(timeout=60)
    assert code == 0, out
    assert received == [kept_bundle_zip(reader, 1)] and stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("path", [*FILES, MANIFEST])
def test_one_changed_byte_in_any_file_is_caught_and_named(
    reader: Engine, tmp_path: Path, path: str, cli: Cli
) -> None:
    bundle = kept(reader, 1)
    files = dict(bundle.files)
    files[path] = one_byte_changed(files[path])
    assert files[path] != bundle.files[path]
    BundleFiles(files).write(tmp_path / "b")

    code, out = cli("verify", str(tmp_path / "b"), "--hash", bundle.hash)

    assert code == 1, out
    assert f"file {path}: changed" in out
    report = verify_bundle(read_bundle(tmp_path / "b"), published_hash=bundle.hash)
    named = [f.path for f in report.tampered]
    # a payload file: named alone; the manifest: named first (its hash is not the published
    # one), with whatever its damaged listing no longer covers
    assert named == [path] if path != MANIFEST else named[0] == MANIFEST, named


def test_a_consistent_forgery_is_caught_by_the_recomputation(reader: Engine) -> None:
    """Files edited and the manifest re-hashed to match: the numbers no longer agree."""
    bundle = kept(reader, 1)
    payload = {p: d for p, d in bundle.files.items() if p != MANIFEST}
    trades = [json.loads(line) for line in payload["trades.jsonl"].splitlines()]
    buy = next(t for t in trades if t["trade_type"] == "BUY")
    buy["shares"] = str(float(buy["shares"]) + 1)
    payload["trades.jsonl"] = b"".join(
        json.dumps(t, sort_keys=True, separators=(",", ":")).encode() + b"\n" for t in trades
    )
    attempts = [json.loads(line) for line in payload["attempts.jsonl"].splitlines()]
    valid = next(
        a
        for a in attempts
        if a["outcome"] == "valid"
        and '"BET"' in a["raw_response"]
        and a["decision_id"] != buy["decision_id"]
    )
    valid["raw_response"] = '{"action": "HOLD", "reasoning": "forged"}'
    payload["attempts.jsonl"] = b"".join(
        json.dumps(a, sort_keys=True, separators=(",", ":")).encode() + b"\n" for a in attempts
    )
    forged = build_files(payload, {k: v for k, v in bundle.manifest.items() if k != "files"})

    report = verify_bundle(forged)

    assert not report.tampered and not report.ok
    failed = {c.name: c.mismatches for c in report.checks if not c.ok}
    assert any(f"trade {buy['id']}) shares" in m for m in failed["BUY / SELL trades recomputed"])
    assert any(
        f"decision {valid['decision_id']} parsed" in m
        for m in failed["answers parsed, decisions re-derived"]
    )
    assert verify_bundle(forged, published_hash=bundle.hash).tampered[0].path == MANIFEST


def test_a_changed_engine_rule_would_be_caught(
    reader: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify runs the engine's own pure functions: one that would publish other numbers fails
    the bundles already published."""
    original = arena.core.execution.implied_confidence
    monkeypatch.setattr(
        arena.core.execution,
        "implied_confidence",
        lambda amount, cash, fraction: original(amount, cash, fraction) / 2,
    )
    report = verify_bundle(kept(reader, 1))
    failed = {c.name for c in report.checks if not c.ok}
    assert {"decision legs planned", "BUY / SELL trades recomputed"} <= failed


def test_unfinished_unknown_and_unreadable(
    tmp_path_factory: pytest.TempPathFactory, cli: Cli
) -> None:
    season = sqlite_season(tmp_path_factory.getbasetemp())  # both cohorts still deciding
    code, out = cli(
        "bundle", "1", "--out", str(tmp_path_factory.mktemp("b") / "x.zip"), url=season.url
    )
    assert code != 0 and "cohort 1 is not finished: its status is deciding" in out
    assert "--provisional" in out
    code, out = cli("bundle", "9", "--out", "x.zip", url=season.url)
    assert code != 0 and "no cohort 9" in out and "1, 2" in out

    folder = tmp_path_factory.mktemp("provisional")
    code, out = cli("bundle", "2", "--out", str(folder), "--provisional", url=season.url)
    assert code == 0, out
    assert json.loads((folder / "cohort.json").read_text())["final"] is False
    code, out = cli("verify", str(folder))
    assert code == 0, out

    (folder / MANIFEST).unlink()
    code, out = cli("verify", str(folder))
    assert code != 0 and "no MANIFEST.json in the bundle" in out
    (folder / "x.zip").write_bytes(b"not a zip")
    code, out = cli("verify", str(folder / "x.zip"))
    assert code == 2 and "is not a readable zip" in out
    with pytest.raises(InputError, match="no bundle at"):
        read_bundle(folder / "missing.zip")


def test_the_same_season_on_postgresql_gives_the_same_bundle(
    finished: Season,
    reader: Engine,
    pg_cluster: PostgresCluster,
    pg_template: str,
) -> None:
    url = pg_cluster.new_database(template=pg_template)
    try:
        copy_database(finished.url, url)
        engine = create_db_engine(url, role="reader")
        try:
            for cohort in (1, 2):
                rebuilt = build_bundle(engine, cohort).bundle
                assert rebuilt.files == kept(reader, cohort).files
                assert rebuilt.zip_bytes() == kept_bundle_zip(reader, cohort)
        finally:
            engine.dispose()
    finally:
        pg_cluster.drop_database(url)


@pytest.fixture(params=["sqlite", "postgres"])
def finished_copy(
    request: pytest.FixtureRequest, finished: Season, tmp_path: Path
) -> Iterator[str]:
    """A writable copy of the finished season on each backend."""
    if request.param == "sqlite":
        yield writable_copy(finished, tmp_path / "copy.db")
        return
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    url = cluster.new_database(template=request.getfixturevalue("pg_template"))
    try:
        copy_database(finished.url, url)
        yield url
    finally:
        cluster.drop_database(url)


def test_the_bundle_job_keeps_once_waits_and_loses_a_race(
    finished_copy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = create_db_engine(finished_copy)
    later = FINISHED_AT.replace(hour=5)
    try:
        assert build_bundles(engine, later).counts()["built"] == 0  # kept once, never again
        with engine.begin() as conn:
            hashes = {
                cohort: bundle_hash
                for cohort, bundle_hash in conn.execute(
                    select(REPLAY_BUNDLES.c.cohort_id, REPLAY_BUNDLES.c.bundle_hash)
                )
            }
            conn.execute(REPLAY_BUNDLES.delete())
            # a BUY of cohort 2 whose market is open again: its Brier row may still change
            bought = {
                number: set(
                    conn.execute(
                        select(TRADES.c.market_id)
                        .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
                        .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
                        .where(COHORTS.c.number == number, TRADES.c.trade_type == "BUY")
                    ).scalars()
                )
                for number in (1, 2)
            }
            market = min(bought[2] - bought[1])
            conn.execute(update(MARKETS).where(MARKETS.c.id == market).values(status="open"))

        result = build_bundles(engine, later)

        assert (list(result.built), result.waiting) == ([1], [2])
        with engine.connect() as conn:
            kept_now = {
                cohort: bundle_hash
                for cohort, bundle_hash in conn.execute(
                    select(REPLAY_BUNDLES.c.cohort_id, REPLAY_BUNDLES.c.bundle_hash)
                )
            }
            cohort_one = conn.execute(
                select(COHORTS.c.id).where(COHORTS.c.number == 1)
            ).scalar_one()
        assert kept_now == {cohort_one: hashes[cohort_one]}  # the same bytes as before

        # Another builder kept it between this one's look and its INSERT: skipped, not doubled.
        monkeypatch.setattr(bundles, "cohorts_due", lambda _engine: [(cohort_one, 1)])
        result = build_bundles(engine, later)
        assert (result.built, result.already_kept) == ({}, [1])
    finally:
        engine.dispose()


def test_keep_bundles_is_the_hourly_job_by_hand(finished: Season, tmp_path: Path, cli: Cli) -> None:
    url = writable_copy(finished, tmp_path / "copy.db")
    engine = create_db_engine(url)
    with engine.begin() as conn:
        conn.execute(REPLAY_BUNDLES.delete())
    engine.dispose()

    code, out = cli("keep-bundles", "--at", "2026-08-01T00:50:00Z", url=url)
    assert code == 0 and "kept 2 bundle(s): cohort 1 " in out and "slot 2026-08-01 00:45" in out
    code, out = cli("keep-bundles", "--at", "2026-08-01T00:59:00Z", url=url)
    assert code == 0 and "kept" not in out  # the slot is done: said so, nothing written
    code, out = cli("keep-bundles", "--at", "2026-08-01T01:45:00Z", url=url)
    assert code == 0 and "kept 0 bundle(s): none new" in out


def test_the_curve_file_is_the_typed_rows_spelled_on_both_backends(finished_copy: str) -> None:
    """`curve_csv` reads the driver's raw values for speed: its bytes are those of `csv_bytes`
    over the typed rows, on SQLite (instants stored as text) and PostgreSQL (as timestamptz)."""
    engine = create_db_engine(finished_copy)
    try:
        with engine.connect() as conn:
            agents = list(conn.execute(select(AGENTS.c.id).order_by(AGENTS.c.id)).scalars())
            typed = conn.execute(
                select(*(PORTFOLIO_SNAPSHOTS.c[c] for c in PORTFOLIO_COLUMNS))
                .where(PORTFOLIO_SNAPSHOTS.c.agent_id.in_(agents))
                .order_by(PORTFOLIO_SNAPSHOTS.c.agent_id, PORTFOLIO_SNAPSHOTS.c.slot)
            ).all()
            fast = curve_csv(conn, agents)
        assert len(typed) > 1000
        assert fast == csv_bytes(PORTFOLIO_COLUMNS, typed)
    finally:
        engine.dispose()


_WRITE_UNDER_A_FILE_SIZE_LIMIT = """
import os, resource, signal, sys
from pathlib import Path
from arena.analytics.replay.format import build_files
from arena.app.output import open_binary_output
from arena.core.errors import InputError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))
files = build_files({"big.bin": os.urandom(200_000)}, {"cohort": 1})
try:
    with open_binary_output(sys.argv[1]) as handle:  # as `arena bundle --out x.zip` writes
        handle.write(files.zip_bytes())
except InputError as exc:
    print(str(exc).split(":")[0])
"""


def test_a_zip_bundle_written_over_an_old_one_fails_whole_or_not_at_all(tmp_path: Path) -> None:
    """`arena bundle --out x.zip` on a full disk (here: a file size limit) keeps the old zip
    and leaves no temporary file, never a truncated old zip or half a new one."""
    out = tmp_path / "x.zip"
    out.write_bytes(b"old")
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_UNDER_A_FILE_SIZE_LIMIT, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.strip() == f"cannot write {out}", done.stderr
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.zip"]

    files = build_files({"a.jsonl": b'{"a": 1}\n'}, {"cohort": 1})
    out.unlink()
    with open_binary_output(str(out)) as handle:
        handle.write(files.zip_bytes())
    assert out.read_bytes() == files.zip_bytes()
    assert out.stat().st_mode & 0o777 == 0o644  # readable by others, as a published file is
