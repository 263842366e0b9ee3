"""The Decisions drill-down: the model's rationale up front, its thinking apart, every raw
answer shown once.

Streamlit AppTest on a real SQLite file: a decision whose answers carry `<think>` blocks shows
the reasoning its answer gave as text, the thinking in a collapsed expander, the rest of the
raw answer in another (collapsed), and each earlier attempt's raw answer in its own collapsed
expander — the final answer is not repeated under the attempts. An answer without a thinking
block is shown verbatim.
"""

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from arena.agents.json_extraction import split_thinking
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import init_db
from arena.storage.models import Agent, Decision, DecisionAttempt
from tests.dashboard_caches import clear_dashboard_caches
from tests.factories import WEEK1, new_cohort_agents

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboard.py"
PLAIN = "I would rather not say."
THINKING = 'Market 501 at 40c looks cheap. Draft: {"action": "HOLD"} ... no, it is mispriced.'
REASONING = "Market 501 at <b>40c</b> is cheap."
ANSWER = (
    '{"action": "BET", "bets": [{"market_id": "501", "side": "YES", "amount": 500}], '
    f'"reasoning": "{REASONING}"}}'
)
WITH_THINKING = f"<think>\n{THINKING}\n</think>\n\n{ANSWER}"
PARSED: dict[str, Any] = {
    "action": "BET",
    "bets": [{"market_id": "501", "side": "YES", "amount": "500"}],
    "sells": [],
    "reasoning": REASONING,
    "notes": ["Check 501 next week."],
}


@pytest.fixture(autouse=True)
def _isolated_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD", raising=False)
    clear_dashboard_caches()
    yield
    clear_dashboard_caches()


def _database(
    path: Path, final_raw: str, first_raw: str = PLAIN, parsed: dict[str, Any] | None = None
) -> tuple[str, int]:
    """A migrated database with one decision: a malformed attempt (`first_raw`), then
    `final_raw`, the answer the decision was read from (parsed as `parsed`)."""
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
                parsed_response=parsed,
                decided_at=at,
            )
            s.add(decision)
            s.flush()
            for number, (outcome, raw) in enumerate(
                [("malformed", first_raw), ("valid", final_raw)], start=1
            ):
                s.add(
                    DecisionAttempt(
                        decision_id=decision.id,  # type: ignore[arg-type]
                        attempt_no=number,
                        outcome=outcome,
                        raw_response=raw,
                        error="no JSON object" if outcome == "malformed" else None,
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
    at.switch_page("app_pages/decisions.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _codes(element: Any) -> list[str]:
    return [str(c.value) for c in element.code]


def test_the_rationale_is_text_and_the_thinking_and_raw_answer_are_apart_and_collapsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, decision_id = _database(tmp_path / "arena.db", WITH_THINKING, parsed=PARSED)

    at = _run_decision(monkeypatch, url, decision_id)

    texts = [str(t.value) for t in at.text]
    assert REASONING in texts  # the rationale, as text: the markup is not rendered
    assert "Note: Check 501 next week." in texts
    assert "<b>" not in " ".join(str(m.value) for m in at.markdown)
    labels = [e.label for e in at.expander]
    assert labels == [
        f"Model's thinking ({len(THINKING):,} characters)",
        f"Raw response ({len(WITH_THINKING):,} characters)",
        f"Attempt 1 — malformed · raw response ({len(PLAIN)} characters)",
    ]
    assert all(not e.proto.expanded for e in at.expander)
    thinking, raw, first = at.expander
    assert _codes(thinking) == [THINKING]
    assert _codes(raw) == [ANSWER]  # the rest of the raw answer, the thinking not repeated
    assert _codes(first) == [PLAIN]
    code = _codes(at)
    # Each text once: the final answer is not repeated under the attempts.
    assert (code.count(THINKING), code.count(ANSWER), code.count(PLAIN)) == (1, 1, 1)
    assert WITH_THINKING not in code and not any("<think>" in text for text in code)
    captions = [str(c.value) for c in at.caption]
    assert "Attempt 2 — valid: its answer is the raw response under Rationale, above." in captions
    assert "Rejected: no JSON object" in captions


def test_a_truncated_thinking_says_there_is_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    truncated = f"<think>{THINKING} Let me check the"
    url, decision_id = _database(tmp_path / "arena.db", truncated)

    at = _run_decision(monkeypatch, url, decision_id)

    thinking, answer = split_thinking(truncated)
    assert answer == ""
    assert len(at.expander) == 3
    assert _codes(at.expander[0]) == [thinking]
    assert _codes(at.expander[1]) == ["(nothing outside the thinking)"]
    assert "No rationale: nothing could be parsed from the answer." in [
        str(c.value) for c in at.caption
    ]


def test_an_earlier_attempts_thinking_is_shown_apart_inside_its_expander(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, decision_id = _database(tmp_path / "arena.db", ANSWER, first_raw=WITH_THINKING)

    at = _run_decision(monkeypatch, url, decision_id)

    assert [e.label for e in at.expander] == [
        f"Raw response ({len(ANSWER):,} characters)",
        f"Attempt 1 — malformed · raw response ({len(WITH_THINKING):,} characters)",
    ]
    first = at.expander[1]
    assert _codes(first) == [THINKING, ANSWER]
    assert [str(c.value) for c in first.caption] == [
        "Rejected: no JSON object",
        f"Model's thinking ({len(THINKING):,} characters)",
        "Answer outside the thinking",
    ]


def test_answers_without_thinking_are_shown_verbatim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, decision_id = _database(tmp_path / "arena.db", ANSWER)

    at = _run_decision(monkeypatch, url, decision_id)

    assert [e.label for e in at.expander] == [
        f"Raw response ({len(ANSWER):,} characters)",
        f"Attempt 1 — malformed · raw response ({len(PLAIN)} characters)",
    ]
    code = _codes(at)
    assert code.count(ANSWER) == 1 and code.count(PLAIN) == 1
    assert "Answer outside the thinking" not in [str(c.value) for c in at.caption]
