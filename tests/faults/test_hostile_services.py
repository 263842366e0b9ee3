"""Every HTTP client against a hostile server: a bad service costs seconds, never gigabytes.

Each of the engine's clients (the CLOB, Gamma, the chat endpoint), through its real httpx
stack over loopback TCP, meets each misbehaviour of `tests.hostile_http`: a gzip bomb (1 GiB
of zeros in 1 MB), a 50 MB chunked body, a slowloris in the headers and in the body, a server
that never answers, and `429` with `Retry-After: 99999`. Each must fail within its deadline,
with a peak of Python memory far under 300 MB, and say why in one line. The limits are each
client's own caps, with the deadline shortened so the suite does not wait out production's.
Then a whole decision run against a hostile model endpoint: it ends within the deadline and
the decision's one-line error says why.
"""

from __future__ import annotations

import re
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.agents.llm import CHAT_LIMITS, ChatClient, ChatRequest
from arena.agents.responders import default_responders
from arena.config import Methodology, load_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.market_sync import upsert_markets
from arena.lineup import parse_lineup
from arena.markets.bounded_http import ReadLimits
from arena.markets.clob import CLOB_LIMITS, ClobClient
from arena.markets.gamma import GAMMA_LIMITS, GammaClient, GammaUnavailable
from arena.storage.db import session_scope
from arena.storage.models import Decision
from tests.engine.test_v2_engine import LINEUP, MARKETS, RUN
from tests.factories import WEEK1
from tests.hostile_http import (
    Behaviour,
    endless_chunks,
    gzip_bomb,
    gzip_bomb_reply,
    hang,
    hostile,
    slow_body,
    slowloris,
    status,
    timed,
)

DEADLINE = 0.6  # seconds a request may take in all, here
READ_TIMEOUT = 0.3  # httpx's per-read timeout, here
PEAK_LIMIT = 300 * 1024 * 1024


def _no_sleep(_seconds: float) -> None:
    return None


def clob_failure(url: str, limits: ReadLimits) -> str:
    client = ClobClient(
        url, timeout=READ_TIMEOUT, max_attempts=1, min_interval=0, sleep=_no_sleep, limits=limits
    )
    with client:
        quote = client.book("t1", "m1")
    assert quote.mid is None and quote.reason == "clob_unavailable"
    return quote.detail or ""


def gamma_failure(url: str, limits: ReadLimits) -> str:
    client = GammaClient(
        url, timeout=READ_TIMEOUT, max_attempts=1, min_interval=0, sleep=_no_sleep, limits=limits
    )
    with client, pytest.raises(GammaUnavailable) as failed:
        client.get_market("1")
    return failed.value.message


def chat_failure(url: str, limits: ReadLimits) -> str:
    client = ChatClient(
        url, "sk-test-key", timeout=READ_TIMEOUT, max_attempts=1, sleep=_no_sleep, limits=limits
    )
    request = ChatRequest(model="test/a", messages=[{"role": "user", "content": "hi"}])
    with client:
        try:
            client.complete(request)
        except Exception as exc:  # LLMError: the failure under test
            return str(exc)
    raise AssertionError("the hostile endpoint gave an answer")


@dataclass(frozen=True)
class Client:
    name: str
    failure: Callable[[str, ReadLimits], str]
    cap: int


CLIENTS = [
    Client("clob", clob_failure, CLOB_LIMITS.max_bytes),
    Client("gamma", gamma_failure, GAMMA_LIMITS.max_bytes),
    Client("chat", chat_failure, CHAT_LIMITS.max_bytes),
]
BEHAVIOURS: list[tuple[str, Behaviour, str]] = [
    ("gzip-bomb", gzip_bomb_reply, "refused a body over the .* cap"),
    ("50MB-chunked", endless_chunks(), "refused a body over the .* cap"),
    ("slowloris-headers", slowloris(0.1), "timed out"),
    ("slowloris-body", slow_body(0.1), "timed out"),
    ("hang", hang, "timed out"),
    ("retry-after-99999", status(429, {"Retry-After": "99999"}, {}), "retry after 99999 s"),
]


@pytest.mark.parametrize("client", CLIENTS, ids=[c.name for c in CLIENTS])
@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [(b, e) for _, b, e in BEHAVIOURS],
    ids=[name for name, _, _ in BEHAVIOURS],
)
def test_a_hostile_server_costs_each_client_seconds_not_gigabytes(
    client: Client, behaviour: Behaviour, expected: str
) -> None:
    limits = ReadLimits(max_bytes=client.cap, deadline=DEADLINE)
    gzip_bomb()  # built once, before the clock starts
    with hostile(behaviour) as server:
        tracemalloc.start()
        try:
            message, seconds = timed(lambda: client.failure(server.url, limits))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert isinstance(message, str), message
    assert seconds < DEADLINE + 2.0, f"{seconds:.1f} s"
    assert peak < PEAK_LIMIT and peak < 3 * client.cap, f"peak {peak / 2**20:.0f} MiB"
    assert "\n" not in message
    assert re.search(expected, message), message


@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [(gzip_bomb_reply, "refused a body over the 16 MiB cap"), (slow_body(0.1), "timed out")],
    ids=["gzip-bomb", "slowloris-body"],
)
def test_a_decision_run_against_a_hostile_model_endpoint_ends_within_its_deadline(
    engine: Engine, behaviour: Behaviour, expected: str
) -> None:
    """The agent's decision is an `error` (re-claimed by the next run) whose one line says
    why, within the client's deadline and its attempts; the run goes on to its end."""
    gzip_bomb()
    with hostile(behaviour) as server:
        settings = load_settings(llm_api_key="sk-test-key", llm_base_url=server.url)
        lineup = parse_lineup(LINEUP)
        with session_scope(engine) as s:
            upsert_markets(s, MARKETS, WEEK1)
        start_cohort(engine, WEEK1, lineup, Methodology())
        limits = ReadLimits(max_bytes=CHAT_LIMITS.max_bytes, deadline=DEADLINE)
        responders, close = default_responders(
            settings, sleep=_no_sleep, timeout=READ_TIMEOUT, limits=limits
        )
        started = time.monotonic()
        try:
            result = run_decisions(engine, RUN, lineup, Methodology(), responders)
        finally:
            close()
        seconds = time.monotonic() - started
    attempts = settings.methodology.transport_attempts
    assert seconds < attempts * DEADLINE + 3.0, f"{seconds:.1f} s"
    assert result.statuses == {"error": 1}
    with session_scope(engine) as s:
        decision = s.exec(select(Decision)).one()
    assert decision.error and expected in decision.error and "\n" not in decision.error
