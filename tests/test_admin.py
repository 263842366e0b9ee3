"""The Operations password gate: constant-time match, lockout after repeated failures, and
the page's form around it."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from arena.dashboard.admin import AdminGate

T0 = datetime(2026, 11, 22, tzinfo=UTC)


def test_right_password_unlocks_and_wrong_ones_do_not() -> None:
    gate = AdminGate()
    assert gate.check("nope", "s3cret", T0) == "wrong"
    assert gate.check("s3cret", "s3cret", T0) == "ok"
    assert gate.check("", "", T0) == "wrong"  # an empty secret never unlocks


def test_lockout_after_repeated_failures_even_for_the_right_password() -> None:
    gate = AdminGate(max_failures=3, lockout=timedelta(minutes=15))
    for _ in range(3):
        assert gate.check("guess", "s3cret", T0) == "wrong"
    assert gate.check("s3cret", "s3cret", T0 + timedelta(minutes=1)) == "locked"
    assert gate.check("s3cret", "s3cret", T0 + timedelta(minutes=16)) == "ok"


def test_a_success_resets_the_count() -> None:
    gate = AdminGate(max_failures=3)
    gate.check("a", "s3cret", T0)
    gate.check("b", "s3cret", T0)
    assert gate.check("s3cret", "s3cret", T0) == "ok"
    gate.check("c", "s3cret", T0)
    assert gate.check("s3cret", "s3cret", T0) == "ok"


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
def _fresh_gate() -> Iterator[None]:
    """Each test starts with a new process-wide gate (it lives in st.cache_resource)."""
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


def test_after_five_wrong_passwords_every_session_is_locked_out() -> None:
    at = AppTest.from_function(_locked_page).run()
    for _ in range(5):
        at.text_input(key="admin-password").input("guess").run()
    assert [e.value for e in at.error] == ["Wrong password."]

    other = AppTest.from_function(_locked_page).run()  # a new browser session
    other.text_input(key="admin-password").input("s3cret").run()
    assert _texts(other) == []
    assert [e.value for e in other.error] == ["Too many wrong passwords: locked for 15 minutes."]
