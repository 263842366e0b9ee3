"""The suite's offline guard (tests/offline_guard.py) refuses and records a connection or a
DNS lookup outside loopback, in the pytest process and in a child it starts, and lets
loopback and unix sockets through."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests import offline_guard
from tests.offline import netguard

# The guard's error is a RuntimeError. Its class is the one of the netguard module that patched
# this process: under pytest-xdist the worker's `sitecustomize` imported it as `netguard`.
REFUSED = RuntimeError
OUTSIDE = ("192.0.2.1", 9)  # TEST-NET-1 (RFC 5737): routed nowhere, reserved for examples
CHILD = """
import socket
try:
    socket.create_connection(("192.0.2.1", 9), timeout=0.2)
except RuntimeError as exc:
    print(type(exc).__name__)
try:
    socket.getaddrinfo("example.com", 443)
except RuntimeError as exc:
    print(type(exc).__name__)
"""


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("db.localhost", True),
        (None, True),
        ("", True),
        (b"127.0.0.1", True),
        ("192.0.2.1", False),
        ("10.0.0.1", False),
        ("0.0.0.0", True),
        ("2001:db8::1", False),
        ("example.com", False),
        ("clob.polymarket.com", False),
    ],
)
def test_what_counts_as_loopback(host: object, local: bool) -> None:
    assert netguard.is_loopback_host(host) is local


def test_the_pytest_process_is_refused_an_outside_connection_and_a_lookup() -> None:
    assert netguard.installed()
    with pytest.raises(REFUSED, match=r"^offline guard: connect 192\.0\.2\.1:9 refused"):
        socket.create_connection(OUTSIDE, timeout=0.2)
    with pytest.raises(REFUSED, match=r"example\.com"):
        socket.getaddrinfo("example.com", 443)
    with pytest.raises(REFUSED):
        socket.gethostbyname("example.com")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        with pytest.raises(REFUSED):
            udp.sendto(b"x", OUTSIDE)
        assert udp.connect_ex(("127.0.0.1", 9)) == 0  # UDP: no packet, loopback allowed
    refused = offline_guard.take()  # taken, so the suite's check does not fail this test
    assert [(item["call"], item["target"]) for item in refused] == [
        ("connect", "192.0.2.1:9"),
        ("getaddrinfo", "example.com"),
        ("gethostbyname", "example.com"),
        ("sendto", "192.0.2.1:9"),
    ]
    assert {item["pid"] for item in refused} == {os.getpid()}


def test_loopback_and_unix_sockets_pass(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("localhost", port), timeout=2):
            pass
    if hasattr(socket, "AF_UNIX"):
        path = str(tmp_path / "s")
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(path)
            listener.listen()
            with socket.socket(socket.AF_UNIX) as client:
                client.connect(path)
    assert offline_guard.take() == []


def test_a_child_process_is_guarded() -> None:
    """The child inherits the guard (PYTHONPATH's sitecustomize, OFFLINE_GUARD_LOG): refused
    at once, and both attempts are in the file the suite's check reads."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["OfflineConnectionError"] * 2
    refused = offline_guard.take()
    assert [(item["call"], item["target"]) for item in refused] == [
        ("connect", "192.0.2.1:9"),
        ("getaddrinfo", "example.com"),
    ]
    assert {item["pid"] for item in refused} != {os.getpid()}


def test_an_attempt_fails_the_test_that_made_it(request: pytest.FixtureRequest) -> None:
    """The autouse fixture's body (`offline_guard.check`) around a deliberate attempt."""
    around = offline_guard.check(request)
    next(around)
    with pytest.raises(REFUSED):
        socket.getaddrinfo("example.com", 80)
    with pytest.raises(pytest.fail.Exception, match=r"getaddrinfo example\.com"):
        next(around)


def test_without_the_variable_nothing_is_guarded(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the `live` tier gets: the variable unset, the patched calls pass everything."""
    monkeypatch.delenv(netguard.ENV_LOG)
    assert netguard.log_path() is None
    netguard._check_name("example.com", "getaddrinfo")  # no raise: the guard is off
