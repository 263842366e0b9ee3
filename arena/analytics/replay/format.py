"""The replay bundle's files on disk: canonical encoding, the manifest, its hash, zip or folder.

Why a format of its own: a bundle is only checkable if the same cohort always gives the same
bytes, whichever backend it was read from and whenever it was built. So every value has one
spelling (Decimals as their stored fixed-point text, instants as UTC ISO 8601 with `Z`, JSON
with sorted keys and no spaces), rows are ordered by their ids, the zip carries no build time,
and the manifest lists every file's SHA-256: the bundle's own hash is the hash of the manifest.
Editing any byte of any file changes its SHA-256, which no longer matches the manifest; editing
the manifest changes the bundle's hash, which no longer matches the one published.
"""

import csv
import hashlib
import io
import json
import struct
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

from arena.core.errors import InputError, UnreadableInput
from arena.core.text import printable

FORMAT = "forecaster-arena-replay/1"
MANIFEST = "MANIFEST.json"
# The files every bundle holds (besides its manifest), in the order they are written.
README = "README.txt"
FILES = (
    README,
    "cohort.json",
    "lineup.jsonl",
    "market_snapshots.jsonl",
    "decisions.jsonl",
    "attempts.jsonl",
    "trades.jsonl",
    "positions.jsonl",
    "markets.jsonl",
    "brier_scores.jsonl",
    "portfolio_snapshots.csv",
    "leaderboard.jsonl",
)
# A zip entry's time: fixed, so a rebuild is byte-identical (the zip format starts at 1980).
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
# `portfolio_snapshots.csv`'s header: written by the builder, read by the verifier.
PORTFOLIO_COLUMNS = (
    "agent_id",
    "slot",
    "snapshot_timestamp",
    "cash_balance",
    "positions_value",
    "total_value",
    "total_pnl",
    "brier_score",
    "num_resolved_bets",
)


_AS_IS = (str, int, float, bool)


def plain(value: Any) -> Any:
    """A value in the bundle's one spelling: Decimal → fixed-point text (`0.000000`, never
    `0E-6`), datetime → UTC ISO 8601 with `Z`."""
    if value is None or type(value) in _AS_IS:  # most cells: no ABC check (seconds at a year)
        return value
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        instant = value if value.tzinfo else value.replace(tzinfo=UTC)
        return instant.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def json_bytes(value: Any) -> bytes:
    """One JSON document, canonical: sorted keys, no spaces, UTF-8, a final newline."""
    text = json.dumps(
        plain(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return (text + "\n").encode("utf-8")


def jsonl_bytes(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """JSON Lines: one canonical object per line."""
    return b"".join(json_bytes(row) for row in rows)


def csv_bytes(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    """A CSV with a header; empty cell for None, values in the bundle's spelling."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if v is None else plain(v) for v in row])
    return out.getvalue().encode("utf-8")


def read_jsonl(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def read_csv(data: bytes) -> tuple[list[str], list[list[str]]]:
    """A CSV's header and its rows as lists (no dict per row: a year's cohort has ~190,000)."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    return (rows[0], rows[1:]) if rows else ([], [])


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_bytes(files: Mapping[str, bytes], meta: Mapping[str, Any]) -> bytes:
    """The manifest: `meta` (format, cohort, project version) and every file's hash and size."""
    listed = [
        {"path": path, "sha256": sha256(data), "bytes": len(data)}
        for path, data in sorted(files.items())
    ]
    return json_bytes({**meta, "format": FORMAT, "files": listed})


@dataclass(frozen=True)
class BundleFiles:
    """A bundle in memory: its files (the manifest among them) by relative path."""

    files: dict[str, bytes]

    @property
    def manifest(self) -> dict[str, Any]:
        if MANIFEST not in self.files:
            raise InputError(
                f"no {MANIFEST} in the bundle", "a replay bundle is what `arena bundle` writes"
            )
        try:
            data = json.loads(self.files[MANIFEST])
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("files"), list):
            raise InputError(
                f"{MANIFEST} is not a manifest (not a JSON object listing files)",
                "the bundle was damaged: fetch it again from where it was published",
            )
        return data

    @property
    def hash(self) -> str:
        """The bundle's hash: SHA-256 of its manifest's bytes."""
        return sha256(self.files[MANIFEST])

    def zip_bytes(self) -> bytes:
        """A deterministic zip: sorted entries, fixed times and modes, deflate level 9."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for path in sorted(self.files):
                info = zipfile.ZipInfo(path, date_time=ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                info.create_system = 3  # Unix, whatever the building machine
                archive.writestr(info, self.files[path], compresslevel=9)
        return out.getvalue()

    def write(self, out: Path) -> Path:
        """Write the files into the folder `out` (created; existing files replaced). A zip is
        `zip_bytes()`, written by the CLI through `arena.app.output` like every --out."""
        out.mkdir(parents=True, exist_ok=True)
        for path, data in sorted(self.files.items()):
            target = out / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return out


def build_files(payload: Mapping[str, bytes], meta: Mapping[str, Any]) -> BundleFiles:
    """The payload files plus the manifest that lists them."""
    if MANIFEST in payload:
        raise ValueError(f"{MANIFEST} is written by build_files")
    return BundleFiles({**payload, MANIFEST: manifest_bytes(payload, meta)})


def read_bundle(path: Path) -> BundleFiles:
    """A bundle from a `.zip` or a folder; UnreadableInput (exit 2) when it is neither, is
    damaged, is over a size cap, or has no manifest."""
    bundle = _read_files(path)
    if MANIFEST not in bundle.files:
        raise UnreadableInput(
            f"no {MANIFEST} in the bundle at {printable(str(path))}",
            "a replay bundle is the folder or .zip `arena bundle` wrote, manifest included",
        )
    return bundle


def _read_files(path: Path) -> BundleFiles:
    shown = printable(str(path))
    try:
        if path.is_dir():
            return BundleFiles(_read_folder(path, shown))
        if path.is_file():
            return BundleFiles(_read_zip(path, shown))
    except OSError as exc:
        raise UnreadableInput(
            f"cannot read {shown}: {exc.strerror or type(exc).__name__}",
            "pass a bundle folder or .zip you can read",
        ) from None
    raise UnreadableInput(f"no bundle at {shown}", "pass the folder or .zip `arena bundle` wrote")


# Size caps, checked from the zip's central directory (or the folder's stat) before a byte is
# read, and again on the bytes as they are read (a directory can lie). A year-long cohort of
# ten agents (bench/RESULTS.md) has 25.9 MB of files, the largest portfolio_snapshots.csv at
# 20.1 MB, in 13 files: the caps leave about 6x (one file) and 10x (all files) of headroom.
MAX_MEMBER_BYTES = 128 * 2**20
MAX_BUNDLE_BYTES = 256 * 2**20
MAX_MEMBERS = 64
# The central directory, read from its End Of Central Directory record before `zipfile` reads
# the directory itself (which holds a `ZipInfo` per entry: a million empty members took 678
# MB). Folder entries are listed there but are not files, hence twice the files; a bundle's
# directory is about 1 KB, 90 bytes an entry.
MAX_ENTRIES = 2 * MAX_MEMBERS
MAX_DIRECTORY_BYTES = 2**20
READ_CHUNK = 2**20
# What `arena bundle` writes; anything else (bzip2, lzma, …) is not one of its bundles.
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
CAP_HINT = (
    f"a replay bundle has at most {MAX_MEMBERS} files of at most {MAX_MEMBER_BYTES // 2**20} MiB "
    f"each, {MAX_BUNDLE_BYTES // 2**20} MiB in all (contract §7)"
)
ZIP_HINT = "pass the folder or .zip `arena bundle` wrote; if it was downloaded, fetch it again"


def _read_zip(path: Path, shown: str) -> dict[str, bytes]:
    """Every member of the zip at `path`, once its End Of Central Directory record passed
    `_check_directory` and its directory `_check_listing`."""
    on_disk = path.stat().st_size
    if on_disk > MAX_BUNDLE_BYTES:
        raise UnreadableInput(f"{shown} is {on_disk:,} bytes", CAP_HINT)
    _check_directory(path, on_disk, shown)
    try:
        with zipfile.ZipFile(path) as archive:
            members = [info for info in archive.infolist() if not info.is_dir()]
            _check_listing(shown, [(info.filename, info.file_size) for info in members])
            for info in members:
                _check_member(shown, info)
            files: dict[str, bytes] = {}
            for info in members:
                with archive.open(info) as member:
                    files[info.filename] = _read_capped(shown, info.filename, member, files)
            return files
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        raise UnreadableInput(
            f"{shown} is not a readable zip ({printable(str(exc))})", ZIP_HINT
        ) from None


EOCD, EOCD_SIZE = b"PK\x05\x06", 22
ZIP64_LOCATOR, ZIP64_LOCATOR_SIZE = b"PK\x06\x07", 20
ZIP64_EOCD, ZIP64_EOCD_SIZE = b"PK\x06\x06", 56
# Where the records can be: the record, a comment of up to 65,535 bytes, zip64's two before.
TAIL_BYTES = EOCD_SIZE + 0xFFFF + ZIP64_LOCATOR_SIZE + ZIP64_EOCD_SIZE


def declared_directory(tail: bytes, tail_at: int) -> tuple[int, int] | None:
    """(entries, bytes) of the central directory as the zip's last bytes `tail` (starting at
    offset `tail_at` of the file) declare it, found where `zipfile` looks: the End Of Central
    Directory record (last 22 bytes, else its last signature), and when a zip64 locator
    precedes it, the zip64 record before the locator or at the locator's offset (the larger
    count of the two: Python versions differ in which they read). None without a record:
    `zipfile` then says the file is not a zip."""
    at = len(tail) - EOCD_SIZE
    if not (at >= 0 and tail[at : at + 4] == EOCD and tail[-2:] == b"\x00\x00"):
        at = tail.rfind(EOCD)
    if at < 0 or len(tail) - at < EOCD_SIZE:
        return None
    entries, size = struct.unpack_from("<HL", tail, at + 10)
    locator = at - ZIP64_LOCATOR_SIZE
    if locator < 0 or tail[locator : locator + 4] != ZIP64_LOCATOR:
        return entries, size
    (offset,) = struct.unpack_from("<Q", tail, locator + 8)
    found = [
        struct.unpack_from("<QQ", tail, record + 32)
        for record in (locator - ZIP64_EOCD_SIZE, offset - tail_at)
        if 0 <= record <= len(tail) - ZIP64_EOCD_SIZE and tail[record : record + 4] == ZIP64_EOCD
    ]
    return (max(e for e, _ in found), max(b for _, b in found)) if found else (entries, size)


def _check_directory(path: Path, on_disk: int, shown: str) -> None:
    """The entry count and size the zip's directory declares, from its last 64 KB, before
    `zipfile` reads a directory entry: it makes a `ZipInfo` of every entry in as many bytes
    as the record declares, whatever the count says, so both are capped."""
    with path.open("rb") as handle:
        start = max(0, on_disk - TAIL_BYTES)
        handle.seek(start)
        declared = declared_directory(handle.read(), start)
    if declared is None:
        return
    entries, size = declared
    if entries > MAX_ENTRIES:
        raise UnreadableInput(
            f"{shown}: its central directory lists {entries:,} entries, over {MAX_ENTRIES}",
            CAP_HINT,
        )
    if size > MAX_DIRECTORY_BYTES:
        raise UnreadableInput(
            f"{shown}: its central directory is {size:,} bytes, over {MAX_DIRECTORY_BYTES:,}",
            CAP_HINT,
        )


def _read_folder(path: Path, shown: str) -> dict[str, bytes]:
    """Every file under `path`, under the same caps as a zip's members (sizes from stat)."""
    found: list[Path] = []
    for item in sorted(path.rglob("*")):
        if item.is_file():
            found.append(item)
            if len(found) > MAX_MEMBERS:
                break
    named = [(p.relative_to(path).as_posix(), p) for p in found]
    _check_listing(shown, [(name, p.stat().st_size) for name, p in named])
    files: dict[str, bytes] = {}
    for name, item in named:
        with item.open("rb") as handle:
            files[name] = _read_capped(shown, name, handle, files)
    return files


def _check_listing(shown: str, listing: Sequence[tuple[str, int]]) -> None:
    """The members' count, names and declared sizes, before any is read."""
    if len(listing) > MAX_MEMBERS:
        raise UnreadableInput(f"{shown} has more than {MAX_MEMBERS} files", CAP_HINT)
    names: set[str] = set()
    total = 0
    for name, size in listing:
        if name in names:
            raise UnreadableInput(f"{shown}: {printable(name)} appears twice", ZIP_HINT)
        names.add(name)
        if size > MAX_MEMBER_BYTES:
            raise UnreadableInput(f"{shown}: {printable(name)} is {size:,} bytes", CAP_HINT)
        total += size
        if total > MAX_BUNDLE_BYTES:
            raise UnreadableInput(f"{shown}: its files are over {total:,} bytes", CAP_HINT)


def _check_member(shown: str, info: zipfile.ZipInfo) -> None:
    """A member `arena bundle` could have written: not encrypted, stored or deflated."""
    name = printable(info.filename)
    if info.flag_bits & 0x1:
        raise UnreadableInput(
            f"{shown}: {name} is encrypted", "replay bundles are never encrypted: " + ZIP_HINT
        )
    if info.compress_type not in ZIP_METHODS:
        raise UnreadableInput(
            f"{shown}: {name} uses compression method {info.compress_type}, not stored or deflated",
            ZIP_HINT,
        )


def _read_capped(shown: str, name: str, source: IO[bytes], read: Mapping[str, bytes]) -> bytes:
    """One file's bytes in chunks, stopped at the caps whatever its declared size said."""
    room = min(MAX_MEMBER_BYTES, MAX_BUNDLE_BYTES - sum(len(data) for data in read.values()))
    chunks: list[bytes] = []
    size = 0
    while chunk := source.read(READ_CHUNK):
        size += len(chunk)
        if size > room:
            raise UnreadableInput(
                f"{shown}: {printable(name)} holds more than {room:,} bytes", CAP_HINT
            )
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass(frozen=True)
class FileCheck:
    """One file against the manifest: ok, changed (hash differs), missing or unlisted."""

    path: str
    status: str
    expected: str | None
    actual: str | None


ENTRY_KEYS = ("path", "sha256", "bytes")


def check_files(bundle: BundleFiles) -> list[FileCheck]:
    """Every listed file's SHA-256 and size against the manifest, and any file it omits; a
    manifest that cannot be read, or with an entry that is not one, is itself reported."""
    try:
        entries = bundle.manifest["files"]
    except InputError:
        return [FileCheck(MANIFEST, "unreadable", None, sha256(bundle.files[MANIFEST]))]
    checks: list[FileCheck] = []
    listed: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if isinstance(entry, dict) and all(key in entry for key in ENTRY_KEYS):
            listed[str(entry["path"])] = entry
        elif not checks:
            checks.append(FileCheck(MANIFEST, "malformed", None, bundle.hash))
    for path, entry in sorted(listed.items()):
        data = bundle.files.get(path)
        if data is None:
            checks.append(FileCheck(path, "missing", entry["sha256"], None))
            continue
        actual = sha256(data)
        ok = actual == entry["sha256"] and len(data) == entry["bytes"]
        checks.append(FileCheck(path, "ok" if ok else "changed", entry["sha256"], actual))
    for path in sorted(set(bundle.files) - set(listed) - {MANIFEST}):
        checks.append(FileCheck(path, "unlisted", None, sha256(bundle.files[path])))
    return checks
