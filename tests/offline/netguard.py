"""The offline guard's core: refuse and record every connection outside loopback.

Why: the suite, `arena demo` and the benches promise to need no network; a client left at a
public default (the Polymarket CLOB, Gamma, OpenRouter) fails quietly offline, because a
failed source never blocks a run, and on a machine with a network it sends real requests.
So every Python process of a test run, the pytest process and each child it starts, patches
the `socket` module at its entry points:

- `socket.connect` / `connect_ex` / `sendto` on an AF_INET or AF_INET6 socket: allowed to a
  loopback address (127.0.0.0/8, ::1, ::ffff:127.x; 0.0.0.0 and ::, which Linux connects to
  this host) or `localhost`, refused otherwise;
- `getaddrinfo` / `gethostbyname` / `gethostbyname_ex`: a name other than `localhost` is a DNS
  lookup, refused (an address literal resolves without one, and its connect is checked).

A refusal raises `OfflineConnectionError`, a RuntimeError and not an OSError, so no retry loop
mistakes it for a flaky network and waits it out, and appends one JSON line (pid, argv, call,
target) to the file named by `OFFLINE_GUARD_LOG`: a client that swallows the error is still
caught when the test reads the file. Each process the guard arms writes an `armed` line too,
so a test can show that a child it started was guarded. Unix sockets (PostgreSQL's), netlink
and the like pass; so do the C libraries that open their own sockets (libpq), which is why the
suite's PostgreSQL is only ever a loopback or unix-socket address (`tests/pg.py`).

The guard reads `OFFLINE_GUARD_LOG` at every call: unset or empty, it lets everything through
(the `live` tier unsets it for its tests). Child processes arm it through `sitecustomize.py`
beside this file, whose folder the suite puts first on PYTHONPATH.

Standard library only: a child imports it before anything else.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENV_LOG = "OFFLINE_GUARD_LOG"  # not ARENA_*: tests strip those from a child's environment
ARMED = "armed"
_MARK = "__offline_guard__"  # set on each patched function: install once per process
_INET = (socket.AF_INET, socket.AF_INET6)
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class OfflineConnectionError(RuntimeError):
    """A connection or DNS lookup outside loopback, refused by the suite's offline guard."""


def log_path() -> Path | None:
    """The file the guard records to; None: the guard is off in this process right now."""
    value = os.environ.get(ENV_LOG, "")
    return Path(value) if value else None


def is_loopback_host(host: Any) -> bool:
    """Whether `host` (an address literal or a name) stays on this machine without a lookup."""
    if host is None or host == "":
        return True  # a passive (bind) lookup
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    text = str(host).strip().rstrip(".").lower()
    if text in _LOCAL_NAMES or text.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0].strip("[]"))
    except ValueError:
        return False  # a name: resolving it asks DNS
    mapped = getattr(address, "ipv4_mapped", None)
    local = address.is_loopback or address.is_unspecified  # connect(0.0.0.0) is this host
    return bool(local or (mapped is not None and mapped.is_loopback))


def is_address_literal(host: Any) -> bool:
    """Whether `host` is an IP address (resolving it asks no DNS server)."""
    text = host.decode(errors="replace") if isinstance(host, bytes) else str(host)
    try:
        ipaddress.ip_address(text.split("%", 1)[0].strip("[]"))
    except ValueError:
        return False
    return True


def record(call: str, target: str) -> None:
    """Append one line for `call` to the guard's file (when the guard is on)."""
    path = log_path()
    if path is None:
        return
    line = json.dumps({"pid": os.getpid(), "argv": _command(), "call": call, "target": target})
    try:
        with path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
    except OSError:
        pass  # a test's temporary folder already gone: the raise still reports it


def _command() -> list[str]:
    """This process's command line, first words (at `sitecustomize` time `sys.argv` does not
    yet name a `-m` module)."""
    try:
        raw = Path("/proc/self/cmdline").read_bytes()
        words = [word.decode(errors="replace") for word in raw.split(b"\0") if word]
    except OSError:
        words = list(sys.argv)
    return words[:8]


def _refuse(call: str, target: str) -> None:
    record(call, target)
    raise OfflineConnectionError(
        f"offline guard: {call} {target} refused: a test may reach loopback only "
        "(point the client at a simulated server, tests/offline/netguard.py)"
    )


def _check_address(sock: socket.socket, address: Any, call: str) -> None:
    if log_path() is None or sock.family not in _INET:
        return
    if isinstance(address, tuple) and address and not is_loopback_host(address[0]):
        _refuse(call, f"{address[0]}:{address[1] if len(address) > 1 else ''}")


def _check_name(host: Any, call: str) -> None:
    if log_path() is None or is_loopback_host(host) or is_address_literal(host):
        return
    _refuse(call, str(host))


def _marked(function: Callable[..., Any]) -> Callable[..., Any]:
    setattr(function, _MARK, True)
    return function


def installed() -> bool:
    """Whether this process's `socket` is patched (the guard acts while `log_path()` is set)."""
    return bool(getattr(socket.socket.connect, _MARK, False))


def install() -> None:
    """Patch `socket` in this process (once: a second call, or a second copy of this module
    imported under another name, changes nothing)."""
    if installed():
        return
    cls = socket.socket
    connect, connect_ex, sendto = cls.connect, cls.connect_ex, cls.sendto
    getaddrinfo, byname, byname_ex = (
        socket.getaddrinfo,
        socket.gethostbyname,
        socket.gethostbyname_ex,
    )

    def guarded_connect(self: Any, address: Any) -> None:
        _check_address(self, address, "connect")
        connect(self, address)

    def guarded_connect_ex(self: Any, address: Any) -> int:
        _check_address(self, address, "connect")
        return connect_ex(self, address)

    def guarded_sendto(self: Any, data: Any, *args: Any) -> int:
        if args:
            _check_address(self, args[-1], "sendto")
        return sendto(self, data, *args)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        _check_name(host, "getaddrinfo")
        return getaddrinfo(host, *args, **kwargs)

    def guarded_byname(host: str) -> str:
        _check_name(host, "gethostbyname")
        return byname(host)

    def guarded_byname_ex(host: str) -> Any:
        _check_name(host, "gethostbyname")
        return byname_ex(host)

    cls.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
    cls.sendto = guarded_sendto  # type: ignore[method-assign]
    socket.getaddrinfo = guarded_getaddrinfo
    socket.gethostbyname = guarded_byname
    socket.gethostbyname_ex = guarded_byname_ex
    cls.connect = _marked(guarded_connect)  # type: ignore[method-assign]  # last: the mark


def install_from_env() -> None:
    """What a child's `sitecustomize` runs: arm the guard when the suite asked for it."""
    if log_path() is None:
        return
    install()
    record(ARMED, "")


def read_records(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The guard's lines in `path` from byte `offset` on, and the offset after them."""
    try:
        with path.open("rb") as source:
            source.seek(offset)
            data = source.read()
    except FileNotFoundError:
        return [], offset
    whole = data[: data.rfind(b"\n") + 1]  # a line still being written is read next time
    lines = [_parsed(line) for line in whole.decode("utf-8", "replace").splitlines()]
    return [line for line in lines if line], offset + len(whole)


def _parsed(line: str) -> dict[str, Any]:
    """One line of the file; a line that is not the guard's JSON counts as an attempt."""
    if not line.strip():
        return {}
    try:
        item = json.loads(line)
    except ValueError:
        item = None
    return item if isinstance(item, dict) else {"call": "unreadable", "target": line[:200]}


def attempts(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The refused connections and lookups among `records` (not the `armed` lines)."""
    return [item for item in records if item.get("call") != ARMED]


def describe(item: dict[str, Any]) -> str:
    """One refused attempt as a line: what, where, from which process."""
    command = " ".join(str(arg) for arg in item.get("argv", []))
    return f"{item.get('call')} {item.get('target')} (pid {item.get('pid')}: {command})"
