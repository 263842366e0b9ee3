"""Test tiers derived from what a test uses, never marked by hand.

`tests/conftest.py`'s `pytest_collection_modifyitems` hands each collected test to `tiers()`:
the test's own function, every fixture of its closure (pytest resolves it transitively) and
every helper of `tests` they call are read for what they reach:

- `postgres`: the `pg_cluster` fixture, or a backend parameter `"postgres"` whose fixture asks
  for the cluster at run time (`request.getfixturevalue("pg_cluster")`);
- `browser`: Playwright, or a `streamlit run` dashboard server;
- `season`: a played season (`arena demo`'s `run_demo`, the analytics and finished seasons);
- `slow`: another process (`subprocess`, `multiprocessing`) started for each test: an `arena`
  CLI run starts a Python that imports the whole app, seconds on a loaded two-core machine.

Why by use: a hand mark is forgotten (tests reached PostgreSQL without `postgres`, so
`-m "not postgres"` still started a cluster), a derived one cannot be.
"""

import dis
import inspect
import multiprocessing
import subprocess
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

# What a played season is made by: `arena demo`'s loop and the test suite's season builders.
SEASON_BUILDERS = frozenset(
    {
        "arena.app.demo.run_demo",
        "tests.analytics.season.build_season",
        "tests.analytics.play_season",
        "tests.analytics.finished_season.finish",
        "tests.test_demo.arena_demo",  # `arena demo` in its own process
        "bench.make_year.build_year",  # the bench's year, played at a smaller scale
    }
)
# `arena demo` through the CLI in this process: the command's entry point, asked for "demo".
CLI_MAIN = "arena.app.cli.main"
CLI_DEMO = "demo"
BROWSER_USES = frozenset(
    {"playwright.sync_api.sync_playwright", "tests.e2e.conftest.dashboard_server"}
)
POSTGRES_USES = frozenset({"tests.pg.start_cluster"})
PROCESS_MODULES = (subprocess, multiprocessing)
PG_FIXTURE = "pg_cluster"
TIERS = ("postgres", "browser", "season", "slow")


def _qualname(value: Any) -> str:
    return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"


def _codes(code: types.CodeType) -> Iterable[types.CodeType]:
    """A code object and those nested in it (inner functions, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _lazy_imports(code: types.CodeType) -> Iterable[Any]:
    """What `from module import name` inside a function binds (a lazy import is a use too);
    only modules already imported are read, so collection imports nothing new."""
    for module_name, name in _import_froms(code):
        module = sys.modules.get(module_name)
        if module is not None:
            yield getattr(module, name, None)


_FROMS: dict[int, tuple[types.CodeType, tuple[tuple[str, str], ...]]] = {}
IMPORT_NAME, IMPORT_FROM, EXTENDED_ARG = (
    dis.opmap["IMPORT_NAME"],
    dis.opmap["IMPORT_FROM"],
    dis.EXTENDED_ARG,
)


def _import_froms(code: types.CodeType) -> tuple[tuple[str, str], ...]:
    """(module, name) of each `from module import name` in `code`, decoded once per code
    object (by identity: hashing a code object hashes all it holds) from the raw bytecode:
    `dis.get_instructions` over every helper each test reaches was half of collection (~6 s
    a worker). The modules are looked up at each read, as they may be imported later."""
    kept = _FROMS.get(id(code))
    if kept is not None and kept[0] is code:
        return kept[1]
    found: list[tuple[str, str]] = []
    module: str | None = None
    raw, names, extended = code.co_code, code.co_names, 0
    for at in range(0, len(raw), 2):  # (opcode, argument) pairs: dis without its objects
        op, arg = raw[at], raw[at + 1] | extended
        extended = arg << 8 if op == EXTENDED_ARG else 0
        if op == IMPORT_NAME:
            module = names[arg]
        elif op == IMPORT_FROM and module is not None:
            found.append((module, names[arg]))
    _FROMS[id(code)] = (code, tuple(found))  # the code object kept: its id is never reused
    return _FROMS[id(code)][1]


def _unwrap(func: Any) -> Any:
    return inspect.unwrap(getattr(func, "__func__", func))


class Reach:
    """What a set of functions reaches: other processes, builders, named uses, strings."""

    def __init__(self) -> None:
        self.names: set[str] = set()  # qualified names of every callable referenced
        self.strings: set[str] = set()  # string constants (fixture names asked at run time)
        self.process = False
        self._seen: set[int] = set()

    def add(self, func: Any) -> None:
        """Read `func` and, transitively, the suite's own helpers it refers to."""
        func = _unwrap(func)
        code = getattr(func, "__code__", None)
        if code is None or id(code) in self._seen:
            return
        self._seen.add(id(code))
        env: dict[str, Any] = getattr(func, "__globals__", {})
        for inner in _codes(code):
            self.strings.update(c for c in inner.co_consts if isinstance(c, str))
            for name in inner.co_names:
                self._refer(env.get(name))
            for value in _lazy_imports(inner):
                self._refer(value)

    def _refer(self, value: Any) -> None:
        if value is None:
            return
        if any(value is module for module in PROCESS_MODULES):
            self.process = True
            return
        module = getattr(value, "__module__", None) or ""
        if module.split(".")[0] in ("subprocess", "multiprocessing"):
            self.process = True
            return
        self.names.add(_qualname(value))
        if not module.startswith("tests"):
            return
        if inspect.isclass(value):
            for member in vars(value).values():
                self.add(member)
        elif callable(value):
            self.add(value)


_READ: dict[Any, Reach] = {}


def read(func: Any) -> Reach:
    """What `func` reaches, read once per function for the whole collection (a fixture is
    shared by hundreds of tests; `dis` is slow enough to matter at two thousand)."""
    key = _unwrap(func)
    if key not in _READ:
        reach = Reach()
        reach.add(key)
        _READ[key] = reach
    return _READ[key]


def tiers(
    test: Callable[..., Any],
    fixtures: Iterable[tuple[str, str, Callable[..., Any]]],
    params: Iterable[Any],
) -> set[str]:
    """The tiers of a test: its function, its fixture closure as (name, scope, function), and
    the values of its parameters.

    Another process counts as `slow` only when each test pays for it (the test itself or a
    function-scoped fixture): a session's PostgreSQL cluster or dashboard server is started
    once, and is told by its own tier."""
    each: list[Reach] = [read(test)]
    once: list[Reach] = []
    names = set()
    for name, scope, func in fixtures:
        names.add(name)
        (each if scope == "function" else once).append(read(func))
    used = set().union(*(reach.names for reach in each + once))
    strings = set().union(*(reach.strings for reach in each + once))
    asks_cluster = PG_FIXTURE in names or PG_FIXTURE in strings
    found = set()
    if PG_FIXTURE in names or used & POSTGRES_USES or (asks_cluster and "postgres" in params):
        found.add("postgres")
    if used & BROWSER_USES:
        found.add("browser")
    if used & SEASON_BUILDERS or (CLI_MAIN in used and CLI_DEMO in strings):
        found.add("season")
    if any(reach.process for reach in each):
        found.add("slow")
    return found
