"""Bounded reads: an outside service costs seconds and megabytes, never hours or gigabytes.

httpx bounds each socket read (its timeout) but not a whole request, and it reads and
decompresses whole bodies into memory. Every client of ours (Gamma, the CLOB, the chat
endpoint) goes through `read_bounded` instead, which holds each request to a `ReadLimits`:

- **An overall deadline.** The transport `bounded_transport` builds hands httpcore a network
  backend whose every connect, read and write waits at most what is left of the request's
  deadline (a context variable set around the request). A server that sends one byte every
  few seconds, in the headers or in the body, is cut off at the deadline, not after hours.
  httpx has no public hook for a network backend, so the transport sets httpcore's pool's
  backend itself; `tests/markets/test_bounded_http.py` pins that against a slowloris.
- **A byte cap, after decompression.** Bodies are streamed raw and decoded here, with zlib's
  `max_length`, so a gzip bomb stops at the cap instead of inflating in one call. We ask
  only for `gzip` and `deflate`; another `Content-Encoding` is refused, as is a
  `Content-Length` over the cap before a byte of the body is read.

A refusal is `BodyRefused` (the body was too large or undecodable); a deadline is httpx's own
`ReadTimeout`/`ConnectTimeout`, so the callers' retry rules stay as they were.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

ACCEPT_ENCODING = "gzip, deflate"
MIB = 1024 * 1024

# The request deadline (a `time.monotonic` instant) the network streams read, or None.
_deadline: ContextVar[float | None] = ContextVar("arena_http_deadline", default=None)


@dataclass(frozen=True)
class ReadLimits:
    """What one request may cost: `max_bytes` of decoded body, `deadline` seconds in all."""

    max_bytes: int
    deadline: float

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.deadline <= 0:
            raise ValueError("read limits must be positive")


class BodyRefused(Exception):
    """A body we will not read: over the byte cap, or in an encoding we did not ask for."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


@dataclass(frozen=True)
class Body:
    """A response read within its limits: status, headers and the decoded bytes."""

    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The decoded JSON (UTF-8/16/32 detected as httpx does); ValueError if it is not."""
        return json.loads(self.content)


def _remaining(timeout: float | None) -> float | None:
    """`timeout`, shortened to what is left of the current deadline; ReadTimeout at zero."""
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the request's overall deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every wait ends by the request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _remaining(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _remaining(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, _remaining(timeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync backend with every connect, read and write held to the deadline."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(
            host, port, _remaining(timeout), local_address, socket_options
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._inner.connect_unix_socket(path, _remaining(timeout), socket_options)
        )

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bounded_transport() -> httpx.HTTPTransport:
    """httpx's transport, its connection pool speaking through the deadline backend."""
    transport = httpx.HTTPTransport()
    pool = transport._pool
    pool._network_backend = _DeadlineBackend(pool._network_backend)
    return transport


@contextmanager
def request_deadline(seconds: float) -> Iterator[None]:
    """Hold every network wait inside the block to `seconds` from now (the sooner of this
    and an enclosing deadline)."""
    ends = time.monotonic() + seconds
    outer = _deadline.get()
    token = _deadline.set(ends if outer is None else min(outer, ends))
    try:
        yield
    finally:
        _deadline.reset(token)


def read_bounded(
    client: httpx.Client,
    method: str,
    url: str,
    limits: ReadLimits,
    *,
    params: Mapping[str, str] | None = None,
    json_body: Any = None,
) -> Body:
    """Send one request and read its body within `limits`.

    Raises httpx's timeouts and transport errors as httpx would, and `BodyRefused` for a body
    over the cap or in an encoding we did not ask for.
    """
    with request_deadline(limits.deadline):
        request = client.build_request(
            method, url, params=dict(params or {}), json=json_body if method != "GET" else None
        )
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        response = client.send(request, stream=True)
        try:
            content = _read_body(response, limits)
        finally:
            response.close()
    return Body(response.status_code, response.headers, content)


def _read_body(response: httpx.Response, limits: ReadLimits) -> bytes:
    """The decoded body, read chunk by chunk and stopped at the cap or the deadline."""
    cap = limits.max_bytes
    declared = response.headers.get("Content-Length", "")
    if declared.strip().isdigit() and int(declared) > cap:
        raise BodyRefused(f"a body of {int(declared):,} bytes, over the {_size(cap)} cap")
    decoder = _Decoder(response.headers.get("Content-Encoding", ""), cap)
    parts: list[bytes] = []
    for chunk in response.iter_raw():
        _remaining(None)  # a transport without our backend still stops at the deadline
        parts.append(decoder.feed(chunk))
    parts.append(decoder.flush())
    return b"".join(parts)


class _Decoder:
    """Content-Encoding `identity`, `gzip` or `deflate`, decoded within `cap` bytes in all."""

    def __init__(self, encoding: str, cap: int) -> None:
        name = encoding.strip().lower()
        if name not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise BodyRefused(f"Content-Encoding {encoding!r}, which we did not ask for")
        self._name = name
        self._cap = cap
        self._total = 0
        self._zlib: Any = None
        if name in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif name == "deflate":
            self._zlib = zlib.decompressobj()
        self._raw_deflate_tried = False

    def feed(self, chunk: bytes) -> bytes:
        if self._zlib is None:
            return self._count(chunk)
        out: list[bytes] = []
        data = chunk
        while data:
            try:
                piece = self._zlib.decompress(data, self._cap - self._total + 1)
            except zlib.error as exc:
                if self._name == "deflate" and not self._raw_deflate_tried and not self._total:
                    # Some servers send raw deflate (no zlib header), as httpx also allows.
                    self._raw_deflate_tried = True
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise BodyRefused(f"a {self._name} body that does not decode ({exc})") from None
            out.append(self._count(piece))
            data = self._zlib.unconsumed_tail
        return b"".join(out)

    def flush(self) -> bytes:
        return b"" if self._zlib is None else self._count(self._zlib.flush())

    def _count(self, piece: bytes) -> bytes:
        self._total += len(piece)
        if self._total > self._cap:
            what = "decompressed " if self._zlib is not None else ""
            raise BodyRefused(f"a body over the {_size(self._cap)} cap ({what}size)")
        return piece


def _size(count: int) -> str:
    return f"{count / MIB:g} MiB" if count >= MIB else f"{count:,} bytes"
