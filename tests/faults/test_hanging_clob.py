"""A CLOB that hangs on every token: the decision run still ends soon, every decision made.

A v2 cohort prices its universe through the CLOB and every run records its books. Against a
server that accepts each request and never answers, the first batch read uses its attempts
and the CLOB's breaker opens (no answer at all blames the service, not one endpoint): every
other token is answered at once as `clob_unavailable`, which each quote of the frozen
universe records, and the decision is made at Gamma's prices (no books are stored: the CLOB
answered none). The number of requests the server sees does not grow with the number of
tokens. And while a read hangs, the scheduler's other jobs run.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.agents.responders import default_responders
from arena.app import scheduler
from arena.config import load_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.jobs import JobContext
from arena.engine.market_sync import upsert_markets
from arena.lineup import parse_lineup
from arena.markets.bounded_http import ReadLimits
from arena.markets.clob import ClobClient
from arena.storage.book_models import DecisionBook
from arena.storage.db import session_scope
from arena.storage.models import Decision, MarketSnapshotItem
from tests.engine.chat_server import answer, serve_models
from tests.engine.test_v2_engine import LINEUP, MARKETS, RUN, V2
from tests.factories import WEEK1
from tests.hostile_http import hang, hostile

ATTEMPTS = 2
READ_TIMEOUT = 0.2


def hanging_reader(url: str) -> ClobClient:
    return ClobClient(
        url,
        timeout=READ_TIMEOUT,
        max_attempts=ATTEMPTS,
        min_interval=0,
        sleep=lambda _s: None,
        batch_size=2,  # eight tokens, four batches: the breaker, not the token count, decides
        limits=ReadLimits(max_bytes=1 << 20, deadline=1.0),
    )


def test_a_decision_run_against_a_hanging_clob_ends_soon_with_every_decision_made(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    with serve_models() as models, hostile(hang) as clob:
        models.script_model("test/a", answer({"action": "HOLD", "reasoning": "w"}, "test/a"))
        settings = load_settings(llm_api_key="sk-test-key", llm_base_url=models.url)
        lineup = parse_lineup(LINEUP)
        with session_scope(engine) as s:
            upsert_markets(s, MARKETS, WEEK1)
        start_cohort(engine, WEEK1, lineup, V2)
        responders, close = default_responders(settings, sleep=lambda _s: None)
        reader = hanging_reader(clob.url)
        started = time.monotonic()
        try:
            result = run_decisions(
                engine,
                RUN,
                lineup,
                V2,
                responders,
                prices=lambda: reader,
                books=lambda: reader,
            )
        finally:
            close()
            reader.close()
        seconds = time.monotonic() - started
        asked = clob.requests
    assert seconds < 10, f"{seconds:.1f} s"
    # the first batch's attempts: the service then counts as down, no token is sent alone
    assert asked == ATTEMPTS
    assert result.statuses == {"ok": 1}
    with session_scope(engine) as s:
        books = s.exec(select(DecisionBook)).all()
        decision = s.exec(select(Decision)).one()
        items = s.exec(select(MarketSnapshotItem)).all()
    assert decision.status == "ok"
    reasons = {q["fallback_reason"] for item in items for q in item.quotes or []}
    assert reasons == {"clob_unavailable", "no_token"}  # every token's failure, on record
    assert books == []  # a CLOB that answered nothing leaves the run without books
    said = [r.getMessage() for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    opened = [line for line in said if "in a row" in line]
    assert len(opened) == 1 and all("timed out" in line for line in opened), opened
    # a constant handful (the retries, the two breakers, the first batch and token, the
    # unrecorded books), not a line per token: unsent reads are logged at DEBUG
    assert len(said) <= 7, said


def test_a_hung_read_never_holds_up_the_schedulers_other_jobs(engine: Engine) -> None:
    """The scheduler's wiring runs each job on its own worker: while `decide` waits on a CLOB
    that never answers, `snapshot` runs at its time."""
    ran = threading.Event()
    hung = threading.Event()
    reader_done = threading.Event()
    ctx = JobContext(
        engine=engine,
        settings=load_settings(),
        lineup=parse_lineup(LINEUP),
        source=None,  # type: ignore[arg-type]  # neither job below reads markets
        responders=lambda _family: None,
    )
    with hostile(hang) as clob:
        reader = ClobClient(clob.url, timeout=5.0, max_attempts=1, min_interval=0)

        def decide() -> None:
            hung.set()
            reader.book("t1")  # hangs for its read timeout
            reader_done.set()

        sched = scheduler.build_scheduler(ctx)
        sched.modify_job("decide", func=decide, args=[])
        sched.modify_job("snapshot", func=ran.set, args=[])
        thread = threading.Thread(target=sched.start, daemon=True)
        thread.start()
        try:
            now = datetime.now(UTC)
            sched.modify_job("decide", next_run_time=now)
            assert hung.wait(5), "decide never started"
            sched.modify_job("snapshot", next_run_time=datetime.now(UTC))
            assert ran.wait(3), "snapshot waited for the hung decide"
            assert thread.is_alive() and not reader_done.is_set()  # decide is still reading
        finally:
            sched.shutdown(wait=False)
            reader.close()
