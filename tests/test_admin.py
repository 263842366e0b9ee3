"""The Operations password gate: constant-time match, lockout after repeated failures."""

from datetime import UTC, datetime, timedelta

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
