"""Which failed model call is the endpoint's (the week not played) and what the probe counts
as up: the pure rule, and the probe against loopback servers that answer what a real one may.
The end-to-end behaviour is tests/test_late_entry_outage.py."""

import time
from datetime import UTC, datetime, timedelta

import pytest

from arena.core.late_entry import HeldRun, held_line, is_outage
from arena.engine.late_entry_outage import probe_endpoint
from tests.hostile_http import hostile, slowloris
from tests.loopback import LoopbackServer, Reply


@pytest.mark.parametrize(
    ("kind", "status", "outage"),
    [
        ("transport", None, True),  # refused, reset, timed out
        ("http", 500, True),
        ("http", 503, True),
        ("http", 429, True),
        ("http", 408, True),
        ("http", 401, True),  # the key, the credits, the model's permission: the account's
        ("http", 402, True),
        ("http", 403, True),
        ("http", 400, False),  # the model's side refused this prompt: played, as live
        ("http", 404, False),
        ("http", 422, False),
        ("provider", 200, False),  # an error inside a 200 after retries
    ],
)
def test_only_the_endpoints_failures_are_outages(kind: str, status: int, outage: bool) -> None:
    assert is_outage(kind, status) is outage


class _Status(LoopbackServer):
    def __init__(self, status: int) -> None:
        super().__init__()
        self.status = status

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        return Reply(self.status, {"error": "scripted"})


@pytest.mark.parametrize(
    ("status", "down"), [(200, False), (401, False), (404, False), (502, True)]
)
def test_the_probe_counts_any_answer_below_500_as_up(status: int, down: bool) -> None:
    with _Status(status) as server:
        reason = probe_endpoint(server.origin + "/v1", timeout=2.0)
    assert (reason is not None) is down
    if down:
        assert reason == f"GET /models answered HTTP {status}"


def test_a_refused_connection_is_down() -> None:
    server = _Status(200).start()
    server.stop()
    assert probe_endpoint(server.origin + "/v1", timeout=2.0) == "connection failed (ConnectError)"


def test_a_server_trickling_its_headers_is_down_at_the_probes_deadline() -> None:
    with hostile(slowloris(0.05)) as server:
        started = time.monotonic()
        reason = probe_endpoint(server.url + "/v1", timeout=0.5)
    assert time.monotonic() - started < 2.0
    assert reason == "no answer to GET /models within 0.5 s"


def test_the_held_line_names_each_run_and_the_latest_stale_time() -> None:
    since = datetime(2026, 8, 2, 0, 5, tzinfo=UTC)
    held = [
        HeldRun(7, "m/a", 1, 2, since, since + timedelta(hours=1)),
        HeldRun(9, "m/a", 2, 1, since, since + timedelta(hours=2)),
    ]
    line = held_line(held)
    assert "decision 7 (m/a, cohort 1 week 2) since 2026-08-02 00:05 UTC; decision 9" in line
    assert "are held in_progress" in line and "after 2026-08-02 02:05 UTC" in line
