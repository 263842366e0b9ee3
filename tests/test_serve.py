"""`arena serve` under a process manager: SIGTERM to the PID it was started as stops the
dashboard and frees the port (it execs Streamlit, so no orphaned child keeps serving)."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

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


def test_sigterm_to_arena_serve_frees_the_port(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}",
        "HOME": str(tmp_path),
    }
    env.pop("ARENA_ADMIN_PASSWORD", None)
    server = subprocess.Popen(
        [str(ARENA), "serve", "--port", str(port)],
        cwd=tmp_path,  # not the checkout: serve finds dashboard.py itself
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
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
