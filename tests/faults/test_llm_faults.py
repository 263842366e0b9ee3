"""The LLM endpoint misbehaving: storms, no credits, empty or truncated answers, timeouts."""

from datetime import timedelta

from sqlmodel import select

from arena.storage.db import session_scope
from arena.storage.models import SystemLog
from tests.agents.llm_server import Reply
from tests.engine.chat_server import answer
from tests.engine.test_decisions import HOLD, WEEK1_RUN, Arena, arena  # noqa: F401 (fixture)


def test_402_is_one_clear_logged_error_and_the_run_continues(arena: Arena) -> None:  # noqa: F811
    arena.server.script_model(
        "test/a",
        Reply(
            402,
            {
                "error": {
                    "message": "Insufficient credits. Add more using https://openrouter.ai/credits",
                    "code": 402,
                }
            },
        ),
    )
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    result = arena.decide(WEEK1_RUN)
    assert result.statuses == {"error": 1, "ok": 2}
    assert len(arena.server.requests_for("test/a")) == 1  # 402 is not retried
    failed = arena.decisions()[("m-a", 1)]
    assert failed.status == "error" and "402" in (failed.error or "")
    assert "\n" not in (failed.error or "")
    with session_scope(arena.engine) as s:
        errors = [
            log.message for log in s.exec(select(SystemLog).where(SystemLog.level == "ERROR"))
        ]
    assert len(errors) == 1 and "Insufficient credits" in errors[0]


def test_a_429_and_5xx_storm_ends_as_error_then_recovers(arena: Arena) -> None:  # noqa: F811
    storm = [
        Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "2"}),
        Reply(503, "upstream down"),
        Reply(502, "<html>bad gateway</html>"),
    ]
    arena.server.script_model("test/a", *storm)
    arena.server.script_model("test/b", *storm)
    result = arena.decide(WEEK1_RUN)
    assert result.statuses == {"error": 2, "ok": 1}
    arena.server.script_model("test/a", answer(HOLD, "test/a"))
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    again = arena.decide(WEEK1_RUN + timedelta(minutes=30))
    assert again.statuses == {"ok": 2} and again.claimed == 2


def test_empty_and_truncated_answers_are_malformed_then_fallback(arena: Arena) -> None:  # noqa: F811
    arena.server.script_model(
        "test/a",
        answer("", "test/a"),
        answer('{"action": "BET", "bets": [{"market_id": "100", "si', "test/a"),
        answer('{"action": "BET", "bets": [', "test/a"),
    )
    arena.server.script_model("test/b", answer(None, "test/b"), answer(HOLD, "test/b"))
    arena.decide(WEEK1_RUN)
    a = arena.decisions()[("m-a", 1)]
    assert (a.status, a.attempts, len(a.validation_errors)) == ("fallback_hold", 3, 3)
    b = arena.decisions()[("m-b", 1)]
    assert (b.status, b.attempts) == ("ok", 2)


def test_timeouts_are_retried_then_an_error(arena: Arena) -> None:  # noqa: F811
    from arena.agents.responders import default_responders
    from arena.engine.decisions import run_decisions

    arena.server.script_model("test/a", Reply(200, {"choices": []}, delay=1.0))
    arena.server.script_model("test/b", answer(HOLD, "test/b"))
    responders, close = default_responders(arena.settings, sleep=lambda _s: None, timeout=0.2)
    try:
        result = run_decisions(
            arena.engine, WEEK1_RUN, arena.lineup, arena.settings.methodology, responders
        )
    finally:
        close()
    assert result.statuses == {"error": 1, "ok": 2}
    failed = arena.decisions()[("m-a", 1)]
    assert "tim" in (failed.error or "").lower()
