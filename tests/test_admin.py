"""The Operations password gate: constant-time match, a lockout per browser session (another
visitor's wrong guesses never refuse the right password), a process-wide pacer that slows a
burst of wrong guesses, and the page's form around it."""

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from arena.dashboard import admin

T0 = datetime(2026, 11, 22, tzinfo=UTC)
SECOND = timedelta(seconds=1)


def test_right_password_unlocks_and_wrong_ones_do_not() -> None:
    gate, tries = admin.AdminGate(), admin.SessionTries()
    assert gate.check("nope", "s3cret", T0, tries).verdict == "wrong"
    assert gate.check("s3cret", "s3cret", T0, tries).verdict == "ok"
    assert gate.check("", "", T0, tries).verdict == "wrong"  # an empty secret never unlocks


def test_a_sessions_own_failures_lock_that_session_even_for_the_right_password() -> None:
    gate, mine = (
        admin.AdminGate(max_failures=3, lockout=timedelta(minutes=15)),
        admin.SessionTries(),
    )
    for _ in range(3):
        assert gate.check("guess", "s3cret", T0, mine).verdict == "wrong"
    assert gate.check("s3cret", "s3cret", T0 + timedelta(minutes=1), mine).verdict == "locked"
    assert gate.check("s3cret", "s3cret", T0 + timedelta(minutes=16), mine).verdict == "ok"


def test_another_sessions_failures_never_refuse_the_right_password() -> None:
    gate = admin.AdminGate(max_failures=5)
    attacker, operator = admin.SessionTries(), admin.SessionTries()
    for i in range(50):  # ten lockouts' worth of wrong guesses from elsewhere
        gate.check(f"guess-{i}", "s3cret", T0, attacker)
    assert gate.check("s3cret", "s3cret", T0, attacker).verdict == "locked"
    right = gate.check("s3cret", "s3cret", T0, operator)
    assert right == admin.Attempt("ok")  # unlocked, and not held back by the pacer


def test_a_success_resets_the_count() -> None:
    gate, tries = admin.AdminGate(max_failures=3), admin.SessionTries()
    gate.check("a", "s3cret", T0, tries)
    gate.check("b", "s3cret", T0, tries)
    assert gate.check("s3cret", "s3cret", T0, tries).verdict == "ok"
    gate.check("c", "s3cret", T0, tries)
    assert gate.check("s3cret", "s3cret", T0, tries).verdict == "ok"


def test_the_pacer_slows_a_burst_of_wrong_guesses_from_many_sessions() -> None:
    gate = admin.AdminGate(pacer=admin.GuessPacer(interval=SECOND, most=timedelta(seconds=30)))
    # Forty sessions guess once each at the same instant: answered one slot apart, capped.
    held = [gate.check(f"g{i}", "s3cret", T0, admin.SessionTries()).held for i in range(40)]
    assert held[:3] == [SECOND, 2 * SECOND, 3 * SECOND]
    assert held[29:] == [timedelta(seconds=30)] * 11
    # Once the burst has drained, a lone wrong guess costs one slot again.
    later = T0 + timedelta(minutes=5)
    assert gate.check("g", "s3cret", later, admin.SessionTries()).held == SECOND


def test_a_lone_sessions_guesses_each_cost_one_slot() -> None:
    pacer = admin.GuessPacer(interval=SECOND)
    at = T0
    for _ in range(4):
        held = pacer.charge(at)
        assert held == SECOND
        at += held  # it waited for its answer before guessing again


# --------------------------------------------------------------------------------------------
# The form around it (`require_unlock`), run by Streamlit's AppTest


def _locked_page() -> None:
    """A page behind the gate (AppTest runs this function's source as a script)."""
    import streamlit as st
    from pydantic import SecretStr

    from arena.dashboard import admin

    admin.require_unlock(SecretStr("s3cret"))
    st.text("unlocked")


def _unconfigured_page() -> None:
    import streamlit as st

    from arena.dashboard import admin

    admin.require_unlock(None)
    st.text("unlocked")


@pytest.fixture(autouse=True)
def _fresh_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with a new process-wide gate (it lives in st.cache_resource), paced
    at 50 ms a slot so the form's tests do not wait a second per wrong guess."""
    monkeypatch.setattr(admin, "PACE", timedelta(milliseconds=50), raising=False)
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def _texts(at: AppTest) -> list[str]:
    return [str(t.value) for t in at.text]


def test_no_configured_password_shows_no_form() -> None:
    at = AppTest.from_function(_unconfigured_page).run()

    assert "ARENA_ADMIN_PASSWORD" in str(at.warning[0].value)
    assert not at.text_input and _texts(at) == []


def test_the_form_unlocks_on_the_right_password_and_forgets_it() -> None:
    at = AppTest.from_function(_locked_page).run()
    assert _texts(at) == []

    at.text_input(key="admin-password").input("guess").run()
    assert [e.value for e in at.error] == ["Wrong password."]
    assert _texts(at) == []

    at.text_input(key="admin-password").input("s3cret").run()
    assert _texts(at) == ["unlocked"]
    assert at.session_state["admin-password"] == ""  # the secret is not kept

    at.button(key="lock").click().run()
    assert _texts(at) == [] and at.text_input


def test_five_wrong_passwords_lock_that_session_and_no_other() -> None:
    at = AppTest.from_function(_locked_page).run()
    for _ in range(5):
        at.text_input(key="admin-password").input("guess").run()
    assert [e.value for e in at.error] == ["Wrong password."]
    at.text_input(key="admin-password").input("s3cret").run()
    assert _texts(at) == []
    assert [e.value for e in at.error] == [
        "Too many wrong passwords in this browser session: locked for 15 minutes."
    ]

    other = AppTest.from_function(_locked_page).run()  # the operator's own browser session
    other.text_input(key="admin-password").input("s3cret").run()
    assert _texts(other) == ["unlocked"] and not other.error


def test_a_wrong_answer_is_held_back_by_the_pacer() -> None:
    at = AppTest.from_function(_locked_page).run()
    started = time.monotonic()
    at.text_input(key="admin-password").input("guess").run()
    assert time.monotonic() - started >= 0.05  # one 50 ms slot (the test's pace)
    assert [e.value for e in at.error] == ["Wrong password."]
