"""`arena serve` under a process manager: SIGTERM to the PID it was started as stops the
dashboard and frees the port (it execs Streamlit, so no orphaned child keeps serving)."""

import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.app.cli import main
from tests.e2e.conftest import free_port

ROOT = Path(__file__).resolve().parents[1]
ARENA = Path(sys.executable).with_name("arena")


def healthy(port: int) -> bool:
    try:
        url = f"http://127.0.0.1:{port}/_stcore/health"
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def port_is_free(port: int) -> bool:
    """Whether a new server could listen on the port. SO_REUSEADDR as servers set it (Tornado
    does): the health checks' closed connections may sit in TIME_WAIT, which holds no port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextmanager
def serving(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """`arena serve` on a free port, started from outside the checkout (serve finds
    dashboard.py itself) and answering its health check; killed whole on the way out."""
    port = free_port()
    env = {
        **os.environ,
        "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}",
        "HOME": str(tmp_path),
    }
    env.pop("ARENA_ADMIN_PASSWORD", None)
    server = subprocess.Popen(
        [str(ARENA), "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not healthy(port):
            assert server.poll() is None, "arena serve exited before answering"
            assert time.monotonic() < deadline, "arena serve did not answer within 120 s"
            time.sleep(0.3)
        yield server, port
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)


def test_sigterm_to_arena_serve_frees_the_port(tmp_path: Path) -> None:
    with serving(tmp_path) as (server, port):
        server.send_signal(signal.SIGTERM)  # what `kill PID` or a process manager sends
        server.wait(timeout=30)
        deadline = time.monotonic() + 30
        while not port_is_free(port):
            assert time.monotonic() < deadline, f"port {port} still held after SIGTERM"
            time.sleep(0.2)
        left = subprocess.run(
            ["pgrep", "-s", str(server.pid)], capture_output=True, text=True, check=False
        )
        assert left.stdout.strip() == "", f"processes left in the session: {left.stdout}"


def listening_addresses(port: int) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The local addresses with a TCP socket listening on `port` (/proc/net/tcp and tcp6:
    hex address:port, state 0A is LISTEN; each 32-bit word is in host, little-endian, order)."""
    found: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            words = [bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, len(address), 8)]
            packed = b"".join(words)
            found.add(ipaddress.ip_address(packed))
    return found


def test_arena_serve_listens_on_loopback_only(tmp_path: Path) -> None:
    """`arena serve` listened on every interface (Streamlit's default), serving a laptop's
    dashboard to its whole network: now only loopback unless --address widens it."""
    with serving(tmp_path) as (_server, port):
        addresses = listening_addresses(port)
        assert addresses, f"nothing listens on {port} in /proc/net/tcp*"
        assert all(address.is_loopback for address in addresses), addresses


class Execd(BaseException):
    """Raised in place of `os.execv`: the command `arena serve` would have become (a
    BaseException, so `main`'s one-line error handler lets it through)."""


def serve_command(args: list[str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    def execv(_path: str, argv: list[str]) -> None:
        raise Execd(argv)

    monkeypatch.setattr(os, "execv", execv)
    monkeypatch.chdir(os.getcwd())  # serve changes into the checkout; put it back after
    with pytest.raises(Execd) as execd:
        main(["serve", *args])
    return list(execd.value.args[0])


@pytest.mark.parametrize(
    ("args", "address"),
    [([], "127.0.0.1"), (["--address", "0.0.0.0"], "0.0.0.0"), (["--address", "::1"], "::1")],
)
def test_serve_address_option_sets_streamlits_address(
    monkeypatch: pytest.MonkeyPatch, args: list[str], address: str
) -> None:
    command = serve_command(["--port", "8599", *args], monkeypatch)
    assert command[command.index("--server.address") + 1] == address
    assert command[command.index("--server.port") + 1] == "8599"


def test_serve_help_names_the_address(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--address" in text and "127.0.0.1" in text and "0.0.0.0" in text


def test_serve_bad_address_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(os, "execv", lambda *_: pytest.fail("serve ran with a bad address"))
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--address", "my host; rm -rf"])
    err = capsys.readouterr().err
    assert exited.value.code == 1 and err.count("\n") == 1
    assert err.startswith("arena: error: --address 'my host; rm -rf'") and "0.0.0.0" in err
