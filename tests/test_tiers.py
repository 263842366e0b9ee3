"""tests/tiers.py derives a test's tiers from what it uses, through helpers and fixtures."""

import dis
import inspect
import subprocess
import sys
import types
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest

from tests.examples import examples
from tests.tiers import _codes, _import_froms, tiers


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


def _dis_import_froms(code: types.CodeType) -> list[tuple[str, str]]:
    """The reference reading: `from module import name` pairs by `dis.get_instructions`."""
    found, module = [], None
    for instruction in dis.get_instructions(code):
        if instruction.opname == "IMPORT_NAME":
            module = str(instruction.argval)
        elif instruction.opname == "IMPORT_FROM" and module is not None:
            found.append((module, str(instruction.argval)))
    return found


def test_the_raw_bytecode_reading_equals_dis_on_every_function_of_the_suite() -> None:
    """`_import_froms` reads the bytecode without `dis` (collection time): on every code object
    of every loaded module of `tests` and `arena` (a quarter of those without imports in
    `make check`) it finds what `dis` finds, a large function with EXTENDED_ARG included."""
    # 300 global names first: the import's indices into co_names need EXTENDED_ARG.
    names = "; ".join(f"g{i}" for i in range(300))
    source = f"def big():\n    {names}\n    from os import path, sep\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, "<big>", "exec"), namespace)
    found = {id(namespace["big"].__code__): namespace["big"].__code__}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("tests", "arena"):
            for value in vars(module).values():
                code = getattr(inspect.unwrap(value), "__code__", None) if callable(value) else None
                if isinstance(code, types.CodeType):  # once each: many modules import a name
                    found.update((id(c), c) for c in _codes(code))
    codes = list(found.values())
    assert len(codes) > 500
    # Every code object the raw reading finds imports in, and of the others all in `make test`,
    # an evenly spread share in `make check` (`examples`: `dis` is the slow side here).
    others = [code for code in codes if not _import_froms(code)]
    step = max(1, len(others) // examples(len(others)))
    codes = [code for code in codes if _import_froms(code)] + others[::step]
    with_imports = 0
    for code in codes:
        expected = _dis_import_froms(code)
        assert list(_import_froms(code)) == expected, code
        with_imports += bool(expected)
    big = namespace["big"].__code__
    assert dis.EXTENDED_ARG in big.co_code[::2]
    assert _import_froms(big) == (("os", "path"), ("os", "sep"))
    assert with_imports > 10


def test_make_check_draws_a_quarter_of_the_examples_and_make_test_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ARENA_TEST_EXAMPLES", raising=False)
    assert examples(2000) == 2000
    monkeypatch.setenv("ARENA_TEST_EXAMPLES", "0.25")
    assert (examples(2000), examples(100), examples(20)) == (500, 25, 20)
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    assert "ARENA_TEST_EXAMPLES=0.25" in makefile.split("\ncheck:")[1].split("\ntest:")[0]
    for bad in ("0", "2", "a quarter"):
        monkeypatch.setenv("ARENA_TEST_EXAMPLES", bad)
        with pytest.raises(ValueError, match="a fraction in"):
            examples(100)
