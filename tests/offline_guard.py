"""The suite runs offline: any connection outside loopback fails the test that made it.

`arm()` (called by tests/conftest.py as it is imported, in the pytest process and in each
xdist worker) patches this process's `socket` (tests/offline/netguard.py), names a file of
this process in OFFLINE_GUARD_LOG and puts tests/offline first on PYTHONPATH, so every child
the tests start (an `arena` command, `arena demo`, a Streamlit server, a bench script) arms the
same guard through its `sitecustomize` and records into the same file. `check()`, the
autouse fixture's body, fails a test whose run added a refused attempt to the file, whichever
process made it. Tests marked `live` (the opt-in tier that reaches real hosts) run unguarded,
in process and in their children.

Why not a plugin: pytest-socket and pytest-recording's block_network patch the pytest process
only (not the `arena` processes and servers the suite starts), and pytest-socket checks
`connect` alone (a DNS lookup runs in C and is not seen); the guard here is one small module
for both. What no Python guard sees: libpq's own sockets (the suite's PostgreSQL is loopback
or a unix socket, tests/pg.py) and Chromium, which runs with its background networking off
and resolves no host name (`--host-resolver-rules`, tests/e2e/conftest.py), so it reaches only
the dashboard at 127.0.0.1.
"""

import atexit
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from tempfile import gettempdir
from typing import Any

import pytest

from tests.offline import netguard

FOLDER = Path(__file__).resolve().parent / "offline"
LIVE = "live"

_file: Path | None = None  # this process's file (a test may point its children elsewhere)
_checked = 0  # bytes of it already checked by a test


def arm() -> Path:
    """Guard this process and every child it starts; the file the guard records to."""
    path = Path(gettempdir()) / f"arena-offline-guard-{os.getpid()}.jsonl"
    path.touch()
    atexit.register(_remove, path)
    os.environ[netguard.ENV_LOG] = str(path)
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(FOLDER) not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(FOLDER), *parts])
    netguard.install()
    global _file, _checked
    _file, _checked = path, path.stat().st_size
    return path


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def take() -> list[dict[str, Any]]:
    """The refused attempts recorded since the last check, marked as checked (a test of the
    guard takes its own deliberate ones so the fixture does not fail it)."""
    global _checked
    if _file is None:
        return []
    records, _checked = netguard.read_records(_file, _checked)
    return netguard.attempts(records)


def check(request: pytest.FixtureRequest) -> Iterator[None]:
    """The autouse fixture's body: no outside connection during the test (live: unguarded)."""
    if request.node.get_closest_marker(LIVE) is not None:
        monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
        monkeypatch.delenv(netguard.ENV_LOG, raising=False)
        yield
        return
    yield  # what a session fixture's setup did for this test counts as this test's
    refused = take()
    if refused:
        lines = "\n".join(f"  {netguard.describe(item)}" for item in refused)
        pytest.fail(
            f"the test reached outside loopback ({len(refused)} refused connection(s) or "
            f"lookup(s)); point the client at a simulated server:\n{lines}",
            pytrace=False,
        )


def child_env(path: Path) -> dict[str, str]:
    """The environment entry that makes a child record into `path` (its own file, so a test
    can show what that child did)."""
    return {netguard.ENV_LOG: str(path)}


def guarded_and_offline(path: Path, word: str) -> list[dict[str, Any]]:
    """The `armed` lines in `path` of processes whose command line holds `word`; an
    AssertionError when none is there or the file records any refused attempt."""
    records, _ = netguard.read_records(path)
    refused = [netguard.describe(item) for item in netguard.attempts(records)]
    assert refused == [], f"outside connections: {refused}"
    armed = [
        item
        for item in records
        if item["call"] == netguard.ARMED and any(word in str(arg) for arg in item["argv"])
    ]
    assert armed, f"no process with {word!r} in its command line was guarded: {records}"
    return armed
