"""The Decisions drill-down shows a reasoning model's thinking apart from its answer.

Streamlit AppTest on a real SQLite file: a decision whose answers carry `<think>` blocks shows
each block's text in a collapsed expander and the answer on its own; an answer without a
thinking block is shown verbatim, as before.
"""

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from arena.agents.parsing import split_thinking
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import init_db
from arena.storage.models import Agent, Decision, DecisionAttempt
from tests.dashboard_caches import clear_dashboard_caches
from tests.factories import WEEK1, new_cohort_agents

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboard.py"
PLAIN = "I would rather not say."
THINKING = 'Market 501 at 40c looks cheap. Draft: {"action": "HOLD"} ... no, it is mispriced.'
ANSWER = '{"action": "BET", "bets": [{"market_id": "501", "side": "YES", "amount": 500}]}'
WITH_THINKING = f"<think>\n{THINKING}\n</think>\n\n{ANSWER}"


@pytest.fixture(autouse=True)
def _isolated_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD", raising=False)
    clear_dashboard_caches()
    yield
    clear_dashboard_caches()


def _database(path: Path, final_raw: str) -> tuple[str, int]:
    """A migrated database with one decision: a plain malformed attempt, then `final_raw`."""
    url = f"sqlite:///{path}"
    engine = create_db_engine(url)
    try:
        init_db(engine)
        (agent_id,) = new_cohort_agents(engine, ("thinker",))
        at = WEEK1 + timedelta(minutes=5)
        with session_scope(engine) as s:
            agent = s.exec(select(Agent).where(Agent.id == agent_id)).one()
            decision = Decision(
                agent_id=agent_id,
                cohort_id=agent.cohort_id,
                decision_week=1,
                status="ok",
                action="BET",
                attempts=2,
                raw_response=final_raw,
                decided_at=at,
            )
            s.add(decision)
            s.flush()
            for number, (outcome, raw) in enumerate(
                [("malformed", PLAIN), ("valid", final_raw)], start=1
            ):
                s.add(
                    DecisionAttempt(
                        decision_id=decision.id,  # type: ignore[arg-type]
                        attempt_no=number,
                        outcome=outcome,
                        raw_response=raw,
                        created_at=at,
                    )
                )
            s.flush()
            decision_id = decision.id
    finally:
        engine.dispose()
    assert decision_id is not None
    return url, decision_id


def _run_decision(monkeypatch: pytest.MonkeyPatch, url: str, decision_id: int) -> AppTest:
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    clear_dashboard_caches()
    at = AppTest.from_file(str(DASHBOARD), default_timeout=60)
    at.query_params["decision"] = str(decision_id)
    at.switch_page("pages/decisions.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_thinking_is_shown_collapsed_and_apart_from_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, decision_id = _database(tmp_path / "arena.db", WITH_THINKING)

    at = _run_decision(monkeypatch, url, decision_id)

    label = f"Model's thinking ({len(THINKING):,} characters)"
    expanders = at.expander
    assert [e.label for e in expanders] == [label, label]  # the attempt and the decision
    assert all(not e.proto.expanded for e in expanders)
    for expander in expanders:
        assert [str(c.value) for c in expander.code] == [THINKING]
    code = [str(c.value) for c in at.code]
    assert code.count(ANSWER) == 2 and code.count(THINKING) == 2
    assert PLAIN in code  # the attempt without thinking is shown verbatim
    assert WITH_THINKING not in code
    assert not any("<think>" in text for text in code)
    captions = [str(c.value) for c in at.caption]
    assert captions.count("Answer outside the thinking") == 2


def test_a_truncated_thinking_says_there_is_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    truncated = f"<think>{THINKING} Let me check the"
    url, decision_id = _database(tmp_path / "arena.db", truncated)

    at = _run_decision(monkeypatch, url, decision_id)

    thinking, answer = split_thinking(truncated)
    assert answer == ""
    assert len(at.expander) == 2
    code = [str(c.value) for c in at.code]
    assert code.count(thinking) == 2
    assert code.count("(nothing outside the thinking)") == 2


def test_answers_without_thinking_are_shown_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, decision_id = _database(tmp_path / "arena.db", ANSWER)

    at = _run_decision(monkeypatch, url, decision_id)

    assert not at.expander
    code = [str(c.value) for c in at.code]
    assert code.count(ANSWER) == 2 and PLAIN in code
    assert "Answer outside the thinking" not in [str(c.value) for c in at.caption]
