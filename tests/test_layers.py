"""The house's layers hold: imports run downward only, with no circle.

Read from the source with `ast` (every import, at module level, inside functions and under
TYPE_CHECKING alike), so a lazy import cannot hide a dependency:

    core  <-  storage  <-  sources (markets, agents)  <-  engine  <-  app (CLI, demo, scheduler)
                  ^                                          |
                  +---------  analytics (reads only)  <------+      pages -> analytics, dashboard

(the simulation, `sim`, is a source beside markets and agents: it reads both),

and inside the read side its groups likewise (`READ_GROUPS`):

    query  <-  export  <-  views  <-  stored
      ^                      |          |
      +------  stats  <------+----------+      replay -> query, stats, export
"""

import ast
import functools
import itertools
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "arena"

# What each layer may import from inside `arena` (besides itself). `config` and `lineup` are the
# settings every layer reads.
SETTINGS = {"arena.config", "arena.lineup"}
ALLOWED: dict[str, set[str]] = {
    "arena.core": set(),
    "arena.config": {"arena.core"},
    "arena.lineup": {"arena.core"},
    "arena.storage": {"arena.core", *SETTINGS},
    "arena.markets": {"arena.core", *SETTINGS},
    "arena.agents": {"arena.core", "arena.markets", *SETTINGS},
    # The simulation: a world of markets (their types) and the personas reading the prompt.
    "arena.sim": {"arena.core", "arena.markets", "arena.agents", *SETTINGS},
    "arena.analytics": {
        "arena.core",
        "arena.storage",
        "arena.markets",
        "arena.agents",
        "arena.sim",
        *SETTINGS,
    },
    "arena.engine": {
        "arena.core",
        "arena.storage",
        "arena.markets",
        "arena.agents",
        "arena.analytics",
        *SETTINGS,
    },
    "arena.dashboard": {"arena.core", "arena.storage", "arena.analytics", *SETTINGS},
    "arena.app": {
        "arena.core",
        "arena.storage",
        "arena.markets",
        "arena.agents",
        "arena.sim",
        "arena.analytics",
        "arena.engine",
        *SETTINGS,
    },
    "arena": set(),
    "arena.data": set(),  # the bundled lineup TOML
    "arena.__main__": {"arena.app"},
}
# Pages and dashboard.py: pick, read, show. Never the engine, the sources or the shells.
PAGE_FORBIDDEN = ("arena.engine", "arena.markets", "arena.agents", "arena.sim", "arena.app")
# The methodology core is pure: no database, no network, no dashboard, no clock-reading I/O.
CORE_FORBIDDEN_THIRD_PARTY = ("sqlalchemy", "sqlmodel", "httpx", "streamlit", "pandas", "alembic")
# Inside the read side: its groups (`arena/analytics/<group>/`, and `stored.py`) and which other
# groups each may import. A chain: query <- export <- views, query <- stats <- {views, replay},
# and stored, the hourly analyses' cache, the one module that reads both stats and views.
READ_SIDE = "arena.analytics"
READ_GROUPS: dict[str, set[str]] = {
    "": set(),  # arena/analytics/__init__.py: a docstring, no imports
    "query": set(),
    "export": {"query"},
    "stats": {"query"},
    "views": {"query", "export", "stats"},
    "replay": {"query", "export", "stats"},
    "stored": {"query", "stats", "views"},
}
# Statements that write; the read side imports none of them.
WRITES = {"insert", "update", "delete", "session_scope", "bulk_execute"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def arena_modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if "migrations" not in p.parts}


def imports(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(module, names) of every import statement in a file."""
    for module, names in _imports(path):
        yield module, list(names)


@functools.cache
def _imports(path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each file parsed once per test process: four tests walk every module's imports."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Import):
            found += [(alias.name, ()) for alias in node.names]
    return tuple(found)


def arena_targets(path: Path, known: dict[str, Path]) -> set[str]:
    """The arena modules a file imports (`from arena.x import y` counts y when y is a module)."""
    found: set[str] = set()
    for module, names in imports(path):
        if not module.startswith("arena"):
            continue
        candidates = [f"{module}.{name}" for name in names if f"{module}.{name}" in known]
        found.update(candidates or ([module] if module in known else []))
    return found


def layer_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def read_group(module: str) -> str:
    """The read-side group of an `arena.analytics` module: `query`, `views`, … or `stored`."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else ""


def read_side_violations(edges: dict[str, set[str]]) -> list[str]:
    """The imports between read-side groups that `READ_GROUPS` does not allow."""
    wrong = []
    for module, targets in edges.items():
        if layer_of(module) != READ_SIDE:
            continue
        group = read_group(module)
        allowed = READ_GROUPS.get(group)
        assert allowed is not None, f"{module}: read-side group {group!r} has no rule in this test"
        wrong += [
            f"{module} -> {t}"
            for t in sorted(targets)
            if layer_of(t) == READ_SIDE and read_group(t) not in allowed | {group}
        ]
    return wrong


def graph() -> dict[str, set[str]]:
    known = arena_modules()
    return {module: arena_targets(path, known) - {module} for module, path in known.items()}


def find_circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle of `edges` (a depth-first walk), or None."""
    state: dict[str, int] = {}  # 1: on the walk's path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if state.get(nxt) is None and (circle := visit(nxt)):
                return circle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if state.get(node) is None and (circle := visit(node)):
            return circle
    return None


def test_no_import_circle_inside_arena() -> None:
    circle = find_circle(graph())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_circle_check_finds_circles() -> None:
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_every_layer_imports_only_the_layers_below_it() -> None:
    wrong = []
    for module, targets in graph().items():
        layer = layer_of(module)
        allowed = ALLOWED.get(layer)
        assert allowed is not None, f"{module}: layer {layer} has no rule in this test"
        wrong += [
            f"{module} -> {t}" for t in sorted(targets) if layer_of(t) not in allowed | {layer}
        ]
    assert wrong == []


def test_the_read_side_groups_import_only_the_groups_before_them() -> None:
    assert read_side_violations(graph()) == []


def test_the_read_side_rule_finds_forbidden_imports() -> None:
    edges = {
        "arena.analytics.stats.leaderboard": {"arena.analytics.views.cohorts"},
        "arena.analytics.query.selects": {"arena.analytics.stored"},
        "arena.analytics.export.tables": {"arena.analytics.stats.risk", "arena.core.money"},
        "arena.analytics.replay.bundle": {"arena.analytics.stats.leaderboard"},
        "arena.analytics.stored": {"arena.analytics.views.status", "arena.analytics.stats.cost"},
    }
    assert read_side_violations(edges) == [
        "arena.analytics.stats.leaderboard -> arena.analytics.views.cohorts",
        "arena.analytics.query.selects -> arena.analytics.stored",
        "arena.analytics.export.tables -> arena.analytics.stats.risk",
    ]


def test_the_core_is_pure() -> None:
    for module, path in arena_modules().items():
        if layer_of(module) != "arena.core":
            continue
        third = {m.split(".")[0] for m, _ in imports(path)}
        assert not third & set(CORE_FORBIDDEN_THIRD_PARTY), module


def test_the_read_side_never_writes() -> None:
    for module, path in arena_modules().items():
        if layer_of(module) not in ("arena.analytics", "arena.dashboard"):
            continue
        for source, names in imports(path):
            if source.startswith(("sqlalchemy", "sqlmodel", "arena.storage")):
                assert not WRITES & set(names), f"{module} imports {WRITES & set(names)}"
        text = path.read_text()
        assert ".begin()" not in text and "session.add(" not in text, module


def test_pages_pick_read_and_show() -> None:
    known = arena_modules()
    for path in itertools.chain((ROOT / "app_pages").glob("*.py"), [ROOT / "dashboard.py"]):
        bad = [t for t in arena_targets(path, known) if t.startswith(PAGE_FORBIDDEN)]
        assert bad == [], f"{path.name} imports {bad}"


def test_no_module_imports_a_library_mypy_skips() -> None:
    """pyproject's mypy `follow_imports = "skip"` libraries type nothing of ours only while no
    module of ours imports them (else our calls into them would go unchecked)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    skipped = {
        pattern.removesuffix(".*")
        for override in config.get("overrides", [])
        if override.get("follow_imports") == "skip"
        for pattern in override["module"]
    }
    assert skipped, "pyproject.toml's mypy overrides skip no library"
    folders = ("arena", "app_pages", "tests", "bench")
    files = [p for f in folders for p in (ROOT / f).rglob("*.py")]
    files += [ROOT / "dashboard.py", ROOT / "scheduler.py"]
    for path in files:
        used = {module.split(".")[0] for module, _ in imports(path)}
        assert not used & skipped, f"{path.relative_to(ROOT)} imports {used & skipped}"
