"""tests/tiers.py derives a test's tiers from what it uses, through helpers and fixtures."""

import subprocess
from collections.abc import Callable
from importlib import import_module
from typing import Any

import pytest

from tests.tiers import tiers


def _plain() -> None:
    assert sum([1, 2]) == 3


def _runs_a_process() -> None:
    subprocess.run(["true"], check=True)


def _calls_a_helper_that_runs_a_process() -> None:
    _runs_a_process()


def _asks_for_the_cluster(request: Any) -> None:
    request.getfixturevalue("pg_cluster")


def _plays() -> None:
    from arena.app.demo import run_demo

    assert callable(run_demo)


# Reached through a dict, so these tests do not themselves use what the samples use.
SAMPLES: dict[str, Callable[..., Any]] = {
    "process": _calls_a_helper_that_runs_a_process,
    "direct": _runs_a_process,
    "cluster": _asks_for_the_cluster,
    "plays": _plays,
}


def test_a_plain_test_is_in_no_tier() -> None:
    assert tiers(_plain, [("tmp_path", "function", _plain)], []) == set()


def test_a_process_per_test_is_slow_even_through_a_helper() -> None:
    assert tiers(SAMPLES["process"], [], []) == {"slow"}
    assert tiers(_plain, [("server", "function", SAMPLES["direct"])], []) == {"slow"}


def test_a_process_started_once_for_many_tests_is_not() -> None:
    assert tiers(_plain, [("server", "session", SAMPLES["direct"])], []) == set()


@pytest.mark.parametrize(
    ("params", "expected"), [(["postgres"], {"postgres"}), (["sqlite"], set())]
)
def test_a_backend_parameter_that_asks_for_the_cluster_at_run_time(
    params: list[str], expected: set[str]
) -> None:
    assert tiers(_plain, [("db", "function", SAMPLES["cluster"])], params) == expected


def test_a_parameter_named_postgres_alone_is_not_postgres() -> None:
    assert tiers(_plain, [], ["postgres"]) == set()


def test_the_cluster_fixture_by_name_and_a_played_season() -> None:
    assert tiers(_plain, [("pg_cluster", "session", _plain)], []) == {"postgres"}
    assert tiers(SAMPLES["plays"], [], []) == {"season"}  # a lazy import is a use too
    seasons = vars(import_module("tests.conftest"))["demo_seasons"]
    assert tiers(_plain, [("demo_seasons", "session", seasons)], []) == {"season"}


def test_the_suite_s_own_fixtures_land_in_their_tiers(request: pytest.FixtureRequest) -> None:
    """The real closure of a test that asks for `engine`: sqlite only in the fast tier."""
    assert request.node.get_closest_marker("postgres") is None
