"""`arena late-entry` against an endpoint that is down or goes down, and a rerun that meets a
run another process holds, at the command line on both backends.

The late entrant is an LLM family answered by the simulated model server over HTTP (the real
client), scripted to go down: every chat request is reset at the connection once the N-th
week's prompt arrives, until the test brings it back. What is checked is what the database
keeps: a week the model was never asked is not played, no later week is played over it, and
the rerun after recovery plays it and every week after.
"""

import json
import socket
import struct
from collections.abc import Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.config import get_settings
from arena.engine.late_entry import play_late_entry
from arena.sim.loopback import Reply
from arena.sim.model_server import ModelServer
from arena.sim.wire import messages_sha256
from arena.storage.db import create_db_engine, dispose_engines
from arena.storage.tables import COHORTS, DECISIONS, FAMILIES
from tests.analytics.finished_season import FINISHED_AT, finished_copy
from tests.backends import BACKENDS
from tests.engine.test_late_entry import _Killed, _KillOnWeek
from tests.late_entry_rows import newcomer, season_lineup_with
from tests.test_cli_late_entry import NEWCOMER, one_line_error, run

AT = FINISHED_AT.replace(microsecond=0)
MODEL = "anthropic/claude-opus-4.5"  # the simulated `careful` persona
SEED = 5


def _latecomer(base_url: str) -> str:
    return f"""
[[family]]
id = "latecomer"
display_name = "Latecomer"
provider = "Test"
model = "{MODEL}"
base_url = "{base_url}"
knowledge_cutoff = 2025-06-30
"""


class FlakyModelServer(ModelServer):
    """The simulated model server, down from the `down_from`-th distinct first prompt (a
    week's question, not a retry of a malformed answer) until `down` is set back: each chat
    request is then reset at the connection. `GET /v1/models` always answers."""

    def __init__(self, down_from: int) -> None:
        super().__init__(seed=SEED, slow_seconds=0.0, retry_after=0, latency_scale=0.0)
        self.down_from = down_from
        self.down = False
        self.resets = 0
        self._prompts: set[str] = set()
        self._httpd.handle_error = _reset  # type: ignore[method-assign]

    def reply(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Reply:
        if method == "POST":
            messages = json.loads(body)["messages"]
            with self._lock:
                digest = messages_sha256(messages)
                first = all(m["role"] != "assistant" for m in messages)
                if first and digest not in self._prompts:  # goes down once, at a new week
                    self._prompts.add(digest)
                    self.down = self.down or len(self._prompts) == self.down_from
                if self.down:
                    self.resets += 1
                    raise ConnectionResetError("scripted outage")
        return super().reply(method, target, headers, body)


def _reset(request: Any, client_address: Any) -> None:
    """Quiet, and the connection dropped hard (RST), as a crashed server's."""
    request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


@pytest.fixture(params=BACKENDS)
def season(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Engine]:
    """The finished season on the backend, the command's environment set (one transport
    attempt per request: an outage is met at once, no backoff sleeps)."""
    # A loopback server without the CLOB's routes answers every price-history read 404 at
    # once (marks then carried) instead of a refused port's retries.
    with finished_copy(request, tmp_path) as url, ModelServer(seed=SEED) as no_clob:
        monkeypatch.setenv("ARENA_DATABASE_URL", url)
        monkeypatch.setenv("ARENA_GAMMA_URL", "http://127.0.0.1:9")
        monkeypatch.setenv("ARENA_CLOB_URL", no_clob.origin)
        monkeypatch.setenv("ARENA_METHODOLOGY__TRANSPORT_ATTEMPTS", "1")
        get_settings.cache_clear()
        dispose_engines()
        engine = create_db_engine(url)
        yield engine
        engine.dispose()
        get_settings.cache_clear()


def _lineup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    path = tmp_path / "lineup.toml"
    path.write_text(text)
    monkeypatch.setenv("ARENA_LINEUP", str(path))
    get_settings.cache_clear()


def _weeks(engine: Engine, family: str) -> dict[tuple[int, int], tuple[int, str, Any]]:
    """(original cohort, week) → (decision id, status, decided_at) of the family's shadows."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                COHORTS.c.number,
                DECISIONS.c.decision_week,
                DECISIONS.c.id,
                DECISIONS.c.status,
                DECISIONS.c.decided_at,
            )
            .join(COHORTS, COHORTS.c.id == DECISIONS.c.cohort_id)
            .where(COHORTS.c.late_entry_family == family)
        ).all()
    return {(r.number, r.decision_week): (r.id, r.status, r.decided_at) for r in rows}


def _shadow_statuses(engine: Engine, family: str) -> dict[int, str]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(COHORTS.c.number, COHORTS.c.status).where(COHORTS.c.late_entry_family == family)
        ).all()
    return {r.number: r.status for r in rows}


ALL_WEEKS = {(1, 1), (1, 2), (1, 4), (2, 1), (2, 3)}  # the season's runs, in replay order


@pytest.mark.parametrize("season", ["sqlite"], indirect=True)  # it writes nothing anywhere
def test_an_unreachable_endpoint_stops_before_anything_is_written(
    season: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gone = ModelServer(seed=SEED).start()
    gone.stop()  # its port refuses connections now: the endpoint is down
    _lineup(tmp_path, monkeypatch, _latecomer(gone.base_url))
    args = ["late-entry", "latecomer", "--cohorts", "1-2", "--at", AT.isoformat()]
    code, out, err = run(args, capsys)
    one_line_error(code, err, gone.base_url, "unreachable", "nothing was played", "run the same")
    assert out == ""
    assert _weeks(season, "latecomer") == {} and _shadow_statuses(season, "latecomer") == {}
    with season.connect() as conn:
        family = conn.execute(select(FAMILIES.c.id).where(FAMILIES.c.id == "latecomer"))
        assert family.first() is None


def test_an_endpoint_down_from_week_3_stops_there_and_the_rerun_plays_every_week(
    season: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["late-entry", "latecomer", "--cohorts", "1-2", "--at", AT.isoformat()]
    with FlakyModelServer(down_from=3) as server:
        _lineup(tmp_path, monkeypatch, _latecomer(server.base_url))
        code, out, err = run(args, capsys)
        one_line_error(code, err, server.base_url, "stopped at cohort 1 week 4", "run the same")
        assert "resumes at cohort 1 week 4" in err and "late entry of latecomer" in out
        assert server.resets >= 1  # asked up to three times (the client's breaker may refuse)
        kept = _weeks(season, "latecomer")
        assert set(kept) == {(1, 1), (1, 2), (1, 4)}  # nothing past the lost week
        assert {kept[w][1] for w in ((1, 1), (1, 2))} <= {"ok", "fallback_hold", "zero_trade"}
        assert kept[(1, 4)][1] == "error"  # not played: re-claimable, never valued
        assert _shadow_statuses(season, "latecomer") == {1: "deciding"}

        server.down = False  # the endpoint is back
        code, out, err = run(args, capsys)
        assert code == 0, err
        assert "decisions: " in out and "2 already done" in out
        weeks = _weeks(season, "latecomer")
        assert set(weeks) == ALL_WEEKS
        assert all(status != "error" for _, status, _ in weeks.values()), weeks
        for played in ((1, 1), (1, 2)):  # kept as they were played before the outage
            assert weeks[played] == kept[played]
        assert weeks[(1, 4)][0] == kept[(1, 4)][0]  # the lost week's row, played in place
        assert set(_shadow_statuses(season, "latecomer").values()) <= {"completed", "tracking"}
        assert all(entry.fault is None for entry in server.log)  # every failure was scripted


def test_a_rerun_names_the_run_another_process_holds_and_how_to_go_on(
    season: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    killer = _KillOnWeek(2)  # a process that dies holding cohort 1's week 2
    with pytest.raises(_Killed):
        lineup = season_lineup_with(newcomer())
        play_late_entry(season, AT, lineup, "newcomer", [1], lambda family: killer)
    _lineup(tmp_path, monkeypatch, NEWCOMER)
    held = _weeks(season, "newcomer")[(1, 2)]
    assert held[1] == "in_progress"
    soon = (AT + timedelta(minutes=5)).isoformat()
    code, out, err = run(["late-entry", "newcomer", "--cohorts", "1", "--at", soon], capsys)
    assert code == 0, err  # nothing failed: another process is playing it (as a taken job slot)
    said = [line for line in out.splitlines() if line.startswith("not finished: ")]
    assert len(said) == 1, out
    for needle in (
        f"decision {held[0]} (baseline/favorite, cohort 1 week 2)",
        f"since {AT:%Y-%m-%d %H:%M} UTC",
        "held in_progress by another run",
        f"run the same command again after {AT + timedelta(hours=1):%Y-%m-%d %H:%M} UTC",
    ):
        assert needle in said[0], said[0]
    assert "late entry of newcomer over cohort(s) 1" in out and err == ""
    later = (AT + timedelta(hours=2)).isoformat()
    code, out, err = run(["late-entry", "newcomer", "--cohorts", "1", "--at", later], capsys)
    assert code == 0, err
    assert {w: s for w, (_, s, _) in _weeks(season, "newcomer").items()} == {
        (1, 1): "ok",
        (1, 2): "ok",
        (1, 4): "ok",
    }
