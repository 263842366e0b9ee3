"""A hostile HTTP server on loopback: it answers every request with one misbehaviour.

A raw TCP server (not `http.server`), because the misbehaviours live below what a well-formed
server can send: headers trickled one byte at a time, a connection accepted and never
answered, a gzip body that inflates a thousandfold, a chunked body with no end in sight.
Each connection reads one request and then runs the server's `behaviour`, until it ends or
the client hangs up. Used by `tests/faults/test_hostile_services.py` against every client.
"""

from __future__ import annotations

import functools
import json
import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Behaviour = Callable[[socket.socket, threading.Event], None]
MIB = 1024 * 1024


def _read_request(conn: socket.socket) -> None:
    """Read one request's head and its Content-Length body (the clients send no chunks)."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return
        data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        piece = conn.recv(65536)
        if not piece:
            return
        rest += piece


class HostileServer:
    """Accepts on 127.0.0.1 and answers each request with `behaviour`; counts requests."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.requests = 0
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                _read_request(conn)
                self.requests += 1
                self.behaviour(conn, self._stop)
            except OSError:
                pass  # the client hung up: what a bounded client does

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._sock.close()


@contextmanager
def hostile(behaviour: Behaviour) -> Iterator[HostileServer]:
    with HostileServer(behaviour) as server:
        yield server


def _head(status: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def hang(conn: socket.socket, stop: threading.Event) -> None:
    """Accept the request and never answer."""
    stop.wait(60)


def slowloris(interval: float) -> Behaviour:
    """A status line, then one header byte every `interval` seconds, for ever."""

    def behaviour(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        while not stop.wait(interval):
            conn.sendall(b"X")

    return behaviour


def slow_body(interval: float) -> Behaviour:
    """Whole headers, then one body byte every `interval` seconds, for ever."""

    def behaviour(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(
            _head("200 OK", {"Content-Type": "application/json", "Content-Length": "9999"})
        )
        while not stop.wait(interval):
            conn.sendall(b" ")

    return behaviour


def endless_chunks(total: int = 50 * MIB) -> Behaviour:
    """A chunked JSON-ish body of `total` bytes (no Content-Length to refuse up front)."""

    def behaviour(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(
            _head("200 OK", {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        )
        block = b" " * MIB
        frame = f"{len(block):x}\r\n".encode() + block + b"\r\n"
        for _ in range(total // MIB):
            if stop.is_set():
                return
            conn.sendall(frame)
        conn.sendall(b"0\r\n\r\n")

    return behaviour


@functools.cache
def gzip_bomb(decoded: int = 1024 * MIB) -> bytes:
    """A valid gzip member of `decoded` zero bytes, about a thousandth of that on the wire.

    Deflate compresses every MiB of zeros after the first to the same bytes, so the body is
    built from three compressed MiBs, not by compressing a GiB."""
    block = bytes(MIB)
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = packer.compress(block) + packer.flush(zlib.Z_SYNC_FLUSH)
    repeat = packer.compress(block) + packer.flush(zlib.Z_SYNC_FLUSH)
    crc = 0
    for _ in range(decoded // MIB):
        crc = zlib.crc32(block, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    end = b"\x03\x00"  # an empty final fixed-Huffman block
    trailer = struct.pack("<II", crc, decoded & 0xFFFFFFFF)
    return header + first + repeat * (decoded // MIB - 1) + end + trailer


def gzip_bomb_reply(conn: socket.socket, stop: threading.Event) -> None:
    body = gzip_bomb()
    conn.sendall(
        _head(
            "200 OK",
            {
                "Content-Type": "application/json",
                "Content-Encoding": "gzip",
                "Content-Length": str(len(body)),
            },
        )
    )
    conn.sendall(body)


def status(code: int, headers: dict[str, str], body: object) -> Behaviour:
    """A plain answer: `code`, `headers` and `body` as JSON."""
    payload = json.dumps(body).encode()
    head = {"Content-Type": "application/json", "Content-Length": str(len(payload)), **headers}

    def behaviour(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(_head(f"{code} Hostile", head) + payload)

    return behaviour


def timed(action: Callable[[], object]) -> tuple[object, float]:
    """`action`'s result (or the exception it raised) and its wall time in seconds."""
    started = time.monotonic()
    try:
        result: object = action()
    except Exception as exc:  # the failure is the result under test
        result = exc
    return result, time.monotonic() - started
