"""A throw-away PostgreSQL cluster for the suite: Debian's binaries, a free loopback port.

PostgreSQL refuses to run as root, so when the suite runs as root the cluster belongs to
the `postgres` system user (created by Debian's package) or `nobody`.
"""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def postgres_bin_dir() -> Path:
    """The newest Debian PostgreSQL bin dir; a clear error when the package is missing."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
    )
    for candidate in reversed(candidates):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    raise RuntimeError(
        "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: "
        "install Debian's `postgresql` package (`make test` does, via scripts/system-deps)"
    )


@dataclass
class PostgresCluster:
    """A running cluster; `new_database()` hands each test a fresh, empty database."""

    base: Path
    port: int
    user: str | None
    bin_dir: Path

    @property
    def admin_dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=arena dbname=postgres"

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://arena@127.0.0.1:{self.port}/{database}"

    def new_database(self, template: str = "template0") -> str:
        """A fresh database, copied from `template` (a migrated one makes tests fast)."""
        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        _run(
            self.user,
            [
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(self.base / "data"),
                "-m",
                "immediate",
                "stop",
            ],
            check=False,
        )
        shutil.rmtree(self.base, ignore_errors=True)


def _run(user: str | None, args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    command = ["runuser", "-u", user, "--", *args] if user else args
    return subprocess.run(command, check=check, capture_output=True, text=True, timeout=120)


def _unprivileged_user() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and no unprivileged user to own PostgreSQL")


NO_POSTGRES_ENV = "ARENA_TEST_NO_POSTGRES"


def start_cluster() -> PostgresCluster:
    """initdb + pg_ctl start on a free port; fsync off because the data is throw-away.

    Under ARENA_TEST_NO_POSTGRES=1 it refuses loudly: how `make check` proves its tier never
    reaches PostgreSQL (a test that does lacks the `postgres` tier: tests/tiers.py)."""
    if os.environ.get(NO_POSTGRES_ENV) == "1":
        raise RuntimeError(
            f"{NO_POSTGRES_ENV}=1 but a test started PostgreSQL: tests/tiers.py missed its use"
        )
    bin_dir = postgres_bin_dir()
    user = _unprivileged_user()
    base = Path(tempfile.mkdtemp(prefix="arena-pg-"))
    (base / "sock").mkdir()
    if user:
        entry = pwd.getpwnam(user)
        for path in (base, base / "sock"):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    data = base / "data"
    result = _run(
        user,
        [
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "arena",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-locale",
        ],
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"initdb failed: {result.stderr.strip()}")
    for _ in range(5):
        port = free_port()
        options = (
            f"-p {port} -k {base / 'sock'} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        result = _run(
            user,
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "-l",
                str(base / "log"),
                "start",
            ],
            check=False,
        )
        if result.returncode == 0:
            cluster = PostgresCluster(base, port, user, bin_dir)
            _wait_ready(cluster)
            return cluster
    log = (base / "log").read_text() if (base / "log").exists() else ""
    raise RuntimeError(f"pg_ctl start failed: {result.stderr.strip()} {log[-500:]}")


def _wait_ready(cluster: PostgresCluster) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            with psycopg.connect(cluster.admin_dsn, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
