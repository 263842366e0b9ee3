"""Year-scale benchmark: dashboard read models, snapshot job, decision run, demo, prompt size.

Run:
    .venv/bin/python bench/run.py --sqlite data/bench/year.db [--postgres URL]
        [--only pages,snapshot,decide,demo,prompt] [--pages leaderboard,curve]
        [--markdown] [--skip-demo] [--two-years] [--snapshot-extra PATH_OR_URL ...]

Why: the issue's targets are relative ("at least 20x faster than the naive baseline") and
absolute ("under 300 ms warm on this machine"), so every figure here is measured in this one
process, twice: the read model, and a naive pandas baseline computing the same thing
(bench/naive.py, spot-checked against the read model's output).

What is measured, per backend:

- pages: each dashboard page's read models as the page runs them on first load with default
  selections (bench/pages_catalog.py), plus the clicks worth timing and the curve per range
  key. Cold = a brand-new reader engine, first call, after dropping the OS page cache when
  permitted (`echo 3 > /proc/sys/vm/drop_caches`); warm = median of `--repeats` runs on one
  engine after one warm-up run. Naive = load the needed tables with pandas + compute, median of
  up to `--naive-repeats` runs (fewer when one run is slow). Ratio = naive / the page's own
  read models warm: dashboard.py's schema gate, which every page pays before its reads and
  which a naive page would pay alike, is in the warm and cold totals but not in the ratio
  (the naive baseline does not run it either).
- snapshot: `take_snapshots` on a COPY of the database, just after its last snapshot (one
  untimed pass warms the process, as in the long-running scheduler), timed with the valuation
  memo cleared (a sync changes prices every 5 minutes), then again 10 minutes later (medians
  of 3); and on a second copy whose history (snapshots, job runs and logs older than a week)
  was deleted: the same open positions with far less history should cost the same.
- decide: `run_decisions` on a fresh SQLite database with a 500-market simulated universe and
  the default lineup; LLM families answer through an instant in-process responder, so the
  time is the engine's own; per agent, split by step.
- demo: `bench/demo.py --weeks 8` in a subprocess (wall time, peak RSS).
- prompt: `bench/prompt_size.py` in a subprocess, plus the prompts the decide run stored.

Targets (the issue): page read models < 300 ms warm and < 1.5 s cold, >= 20x the naive
baseline; snapshot pass < 2 s; engine overhead < 50 ms per agent decision; 500-market prompt
<= 40 estimated tokens (chars / 4) per market (anchor ~70); demo < 60 s and < 500 MB.
`--markdown` prints ready-to-paste rows for bench/RESULTS.md. `--sqlite ""` skips SQLite (to
run PostgreSQL alone). Exit status 1 when a measured figure misses its target.
"""

import argparse
import os
import platform
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.engine import Engine, make_url

from arena.analytics.overview import schema_revision
from arena.storage.db import create_db_engine
from arena.storage.tables import AGENTS, COHORTS, PORTFOLIO_SNAPSHOTS, POSITIONS

try:
    from bench import naive
    from bench.pages_catalog import PAGES, Page, Reader, Selection, resolve_selection
except ModuleNotFoundError:  # run as a script (python bench/run.py): bench/ is on sys.path
    import naive  # type: ignore[no-redef]
    from pages_catalog import (  # type: ignore[no-redef]
        PAGES,
        Page,
        Reader,
        Selection,
        resolve_selection,
    )

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

WARM_MS = 300.0
COLD_MS = 1500.0
NAIVE_RATIO = 20.0
GATE = schema_revision.__name__  # dashboard.py's gate before every page (pages_catalog._entry)
SNAPSHOT_MS = 2000.0
DECIDE_MS = 50.0
TOKENS_PER_MARKET = 40.0
ANCHOR_TOKENS = 70.0
DEMO_S = 60.0
DEMO_MB = 500.0
NAIVE_BUDGET_S = 8.0  # stop repeating a naive run once its runs took this long in total


# --------------------------------------------------------------------------------------------
# Small helpers


def now_ms() -> float:
    return time.perf_counter() * 1000.0


def database_url(value: str) -> str:
    """A path or a URL → a SQLAlchemy URL (paths are SQLite files)."""
    return value if "://" in value else f"sqlite:///{Path(value).resolve()}"


def backend(url: str) -> str:
    return make_url(url).get_backend_name()


def shown_url(url: str) -> str:
    """The URL without a password (printed in the report)."""
    return make_url(url).render_as_string(hide_password=True)


def database_name(url: str) -> str:
    """The file name (SQLite) or database name (PostgreSQL), for labels."""
    return Path(make_url(url).database or "db").name


def machine() -> str:
    """CPU, cores, memory, OS and Python: the RESULTS.md machine column."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f"{pages / 2**30:.0f} GiB"
    except (OSError, ValueError):
        memory = "? GiB"
    return (
        f"{os.cpu_count()} vCPU {cpu}, {memory}, Linux {platform.release().split('-')[0]}, "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )


def drop_os_cache() -> bool:
    """Drop the OS page cache (root in a VM); False when the kernel refuses."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt_ms(value: float) -> str:
    if value != value:  # NaN
        return "—"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def table(rows: list[list[str]], header: list[str], right: set[int] | None = None) -> str:
    """A plain-text table: numbers right-aligned; the first and a trailing text column left."""
    right = right if right is not None else set(range(1, len(header)))
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            str(c).rjust(w) if i in right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


@dataclass
class Row:
    """One RESULTS.md row (`server`: the database server, when not the embedded SQLite)."""

    metric: str
    target: str
    measured: str
    ratio: str
    server: str = ""


# --------------------------------------------------------------------------------------------
# Pages


@dataclass
class PageResult:
    page: Page
    calls: list[str] = field(default_factory=list)
    cold_ms: float = float("nan")
    cold_calls: list[float] = field(default_factory=list)
    warm_ms: float = float("nan")
    warm_calls: list[float] = field(default_factory=list)
    naive_ms: float = float("nan")
    naive_load_ms: float = float("nan")
    naive_runs: int = 0
    mismatches: list[str] = field(default_factory=list)
    error: str | None = None
    stored: bool | None = None  # whether the page was served a stored analysis

    @property
    def gate_ms(self) -> float:
        """Warm ms of dashboard.py's schema gate within this page's total (0 if not run)."""
        return sum(
            ms for call, ms in zip(self.calls, self.warm_calls, strict=False) if is_gate(call)
        )

    @property
    def models_ms(self) -> float:
        """Warm ms of the page's own read models: the total less the shared gate."""
        return self.warm_ms - self.gate_ms

    @property
    def ratio(self) -> float:
        """Naive / the page's own read models: both sides without the gate, which is the same
        code for any implementation of the page."""
        return self.naive_ms / self.models_ms if self.models_ms > 0 else float("nan")

    def misses(self) -> list[str]:
        """The targets this page misses, each with how far off it is."""
        out = []
        if self.error:
            return [f"error: {self.error}"]
        if self.warm_ms > WARM_MS:
            out.append(f"warm {self.warm_ms / WARM_MS:.1f}x over {WARM_MS:.0f} ms")
        if self.cold_ms > COLD_MS:
            out.append(f"cold {self.cold_ms / COLD_MS:.1f}x over {COLD_MS:,.0f} ms")
        if self.ratio == self.ratio and self.ratio < NAIVE_RATIO:
            out.append(f"only {self.ratio:.1f}x naive (< {NAIVE_RATIO:.0f}x)")
        return out


def is_gate(call: str) -> bool:
    """Whether a timed call's label is dashboard.py's schema gate (pages_catalog._entry)."""
    return call.split("(")[0] == GATE


def run_page(engine: Engine, page: Page, selection: Selection) -> Reader:
    read = Reader(engine)
    page.run(read, selection)
    return read


def measure_pages(
    url: str,
    pages: Sequence[Page],
    *,
    repeats: int,
    naive_repeats: int,
    cold: bool,
    do_naive: bool,
) -> tuple[list[PageResult], str]:
    """Cold, warm and naive timings for every page; returns the results and a cache note."""
    results = [PageResult(page) for page in pages]
    setup = create_db_engine(url, role="reader")
    try:
        selection = resolve_selection(setup)
    finally:
        setup.dispose()
    dropped = False
    if cold:
        for result in results:
            dropped = drop_os_cache() or dropped
            engine = create_db_engine(url, role="reader")
            try:
                read = run_page(engine, result.page, selection)
                result.cold_ms = read.total_ms
                result.cold_calls = [c.ms for c in read.calls]
                result.calls = [c.label for c in read.calls]
            except Exception as exc:  # one broken read model must not hide the others
                result.error = _one_line(exc)
            finally:
                engine.dispose()
    if not cold:
        note = "not measured (--no-cold)"
    elif dropped:
        note = "OS page cache dropped before each cold run"
    else:
        note = "OS cache warm (dropping it was not permitted)"
    if cold and backend(url) == "postgresql":
        note += " (PostgreSQL shared_buffers stay warm)"
    engine = create_db_engine(url, role="reader")
    try:
        for result in results:
            if result.error:
                continue
            try:
                run_page(engine, result.page, selection)  # warm-up
                reads = [run_page(engine, result.page, selection) for _ in range(repeats)]
            except Exception as exc:
                result.error = _one_line(exc)
                continue
            result.calls = [c.label for c in reads[0].calls]
            result.stored = reads[0].used_stored()
            result.warm_ms = median([r.total_ms for r in reads])
            result.warm_calls = [
                median([r.calls[i].ms for r in reads]) for i in range(len(reads[0].calls))
            ]
            if do_naive:
                _measure_naive(engine, result, selection, reads[0].results, naive_repeats)
    finally:
        engine.dispose()
    return results, note


def _measure_naive(
    engine: Engine,
    result: PageResult,
    selection: Selection,
    read_results: dict[str, Any],
    repeats: int,
) -> None:
    baseline = naive.NAIVE.get(result.page.name)
    if baseline is None:
        return
    times: list[float] = []
    loads: list[float] = []
    checks: naive.Checks = {}
    try:
        for i in range(repeats):
            tables = naive.Tables(engine)
            began = now_ms()
            got = baseline(tables, selection)
            times.append(now_ms() - began)
            loads.append(tables.load_ms)
            if i == 0:
                checks = got
            if sum(times) > NAIVE_BUDGET_S * 1000.0:
                break
    except Exception as exc:
        result.mismatches.append(f"naive baseline failed: {_one_line(exc)}")
        if os.environ.get("BENCH_DEBUG"):
            traceback.print_exc()
        return
    result.naive_ms = median(times)
    result.naive_load_ms = median(loads)
    result.naive_runs = len(times)
    try:
        expected = naive.expect(result.page.name, read_results)
    except Exception as exc:
        result.mismatches.append(f"could not read the read model's numbers: {_one_line(exc)}")
        return
    result.mismatches += naive.compare(checks, expected)


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def stored_mark(result: PageResult) -> str:
    if result.stored is None:
        return ""
    return " [stored]" if result.stored else " [live]"


def verdict(result: PageResult) -> str:
    misses = result.misses()
    if result.error:
        return "ERROR"
    return "PASS" if not misses else "FAIL"


def print_pages(label: str, url: str, results: list[PageResult], note: str) -> None:
    print(f"\n== Dashboard read models: {label} ({shown_url(url)}) — cold: {note}")
    rows = []
    for r in results:
        suffix = stored_mark(r)
        rows.append(
            [
                r.page.name + suffix,
                str(len(r.calls)),
                fmt_ms(r.cold_ms),
                fmt_ms(r.warm_ms),
                fmt_ms(r.models_ms),
                fmt_ms(r.naive_ms) + (f" ({r.naive_runs})" if r.naive_runs else ""),
                fmt_ms(r.naive_load_ms),
                f"{r.ratio:.1f}x" if r.ratio == r.ratio else "—",
                verdict(r),
                ", ".join(c.split("(")[0] for c in r.calls if not is_gate(c)),
            ]
        )
    print(
        table(
            rows,
            right=set(range(1, 9)),
            header=[
                "page",
                "calls",
                "cold ms",
                "warm ms",
                "w/o gate",
                "naive ms (runs)",
                "of which load",
                "naive/models",
                "verdict",
                f"read models (after {GATE})",
            ],
        )
    )
    print(
        f"targets: warm < {WARM_MS:.0f} ms, cold < {COLD_MS:,.0f} ms, naive/models >= "
        f"{NAIVE_RATIO:.0f}x; warm = median of the page's total over repeated runs, the "
        "schema gate included; w/o gate = the page's own read models, which the naive "
        "baseline is compared with; "
        "[stored]/[live]: the page showed the hourly job's stored analysis / computed it live"
    )
    print("\nper read-model call (cold ms / warm ms):")
    for r in results:
        print(f"  {r.page.name}")
        if r.error:
            print(f"    ERROR {r.error}")
        for i, call in enumerate(r.calls):
            cold = r.cold_calls[i] if i < len(r.cold_calls) else float("nan")
            warm = r.warm_calls[i] if i < len(r.warm_calls) else float("nan")
            print(f"    {fmt_ms(cold):>8} {fmt_ms(warm):>8}  {call}")
    misses = [(r, r.misses()) for r in results if r.misses()]
    if misses:
        print("\nmisses:")
        for r, why in misses:
            print(f"  {r.page.name}: {'; '.join(why)}")
    mismatched = [r for r in results if r.mismatches]
    if mismatched:
        print("\nWARNING: naive baseline and read model disagree:")
        for r in mismatched:
            for line in r.mismatches[:8]:
                print(f"  {r.page.name}: {line}")
            if len(r.mismatches) > 8:
                print(f"  {r.page.name}: … {len(r.mismatches) - 8} more")
    else:
        print("\nnaive spot checks: every checked number matches the read model")


def leaderboard_parts(url: str, repeats: int = 3) -> dict[str, float]:
    """Where `leaderboard()` spends its time (warm medians): the SQL loads plus the bootstrap
    draw, the random null's inputs, and its 200-seed replay (pure compute). Empty when the
    module no longer has these functions."""
    from arena.analytics import leaderboard as lb

    parts = {
        "family_bootstrap (loads + 2,000-replicate draw)": lambda e: lb.family_bootstrap(e),
        "load_null_inputs (frozen universes, markets)": lambda e: lb.load_null_inputs(e),
    }
    if not all(hasattr(lb, n) for n in ("family_bootstrap", "load_null_inputs")):
        return {}
    engine = create_db_engine(url, role="reader")
    out: dict[str, float] = {}
    try:
        inputs = lb.load_null_inputs(engine)
        for name, call in parts.items():
            call(engine)
            times = []
            for _ in range(repeats):
                began = now_ms()
                call(engine)
                times.append(now_ms() - began)
            out[name] = median(times)
        if hasattr(lb, "simulate_random_pnl") and hasattr(lb, "DEFAULT_NULL_SEEDS"):
            began = now_ms()
            lb.simulate_random_pnl(*inputs, range(lb.DEFAULT_NULL_SEEDS))
            out["simulate_random_pnl (200 seeds, pure compute)"] = now_ms() - began
    finally:
        engine.dispose()
    return out


def server_version(url: str) -> str:
    """ "PostgreSQL 15.x" for a PostgreSQL URL, "" for SQLite (already in `machine()`)."""
    if backend(url) != "postgresql":
        return ""
    engine = create_db_engine(url, role="reader")
    try:
        with engine.connect() as conn:
            version = str(conn.execute(text("SHOW server_version")).scalar()).split()[0]
            return f"PostgreSQL {version}"
    finally:
        engine.dispose()


def page_rows(label: str, results: list[PageResult], server: str = "") -> list[Row]:
    out = []
    for r in results:
        if r.error:
            out.append(
                Row(f"{label}: {r.page.name} read models", "", f"error: {r.error}", "", server)
            )
            continue
        naive_text = f", naive {fmt_ms(r.naive_ms)} ms" if r.naive_ms == r.naive_ms else ""
        ratio = (
            f"{r.ratio:.1f}x faster than naive ({fmt_ms(r.models_ms)} ms without the gate); "
            if r.ratio == r.ratio
            else ""
        )
        out.append(
            Row(
                f"{label}: {r.page.name}{stored_mark(r)} read models "
                f"({len(r.calls)} call{'' if len(r.calls) == 1 else 's'})",
                f"warm < {WARM_MS:.0f} ms, cold < {COLD_MS / 1000:.1f} s, "
                f">= {NAIVE_RATIO:.0f}x naive",
                f"warm {fmt_ms(r.warm_ms)} ms, cold {fmt_ms(r.cold_ms)} ms{naive_text}",
                f"{ratio}warm {r.warm_ms / WARM_MS:.2f}x target",
                server,
            )
        )
    return out


# --------------------------------------------------------------------------------------------
# Snapshot job


@dataclass
class SnapshotPoint:
    label: str
    agents: int
    open_positions: int
    history_rows: int
    first_ms: float
    second_ms: float
    rows_written: int


@contextmanager
def database_copy(url: str) -> Iterator[str]:
    """A throw-away copy of the database (the snapshot job writes): SQLite through the
    online backup API, PostgreSQL as `CREATE DATABASE … TEMPLATE` (needs no other session)."""
    if backend(url) == "sqlite":
        with tempfile.TemporaryDirectory(prefix="bench-snap-") as tmp:
            target = Path(tmp) / "copy.db"
            source = sqlite3.connect(make_url(url).database or "")
            dest = sqlite3.connect(target)
            try:
                source.backup(dest)
            finally:
                source.close()
                dest.close()
            yield f"sqlite:///{target}"
        return
    parsed = make_url(url)
    name = f"bench_copy_{os.getpid()}_{int(time.time())}"
    admin = create_db_engine(parsed.set(database="postgres").render_as_string(False))
    try:
        with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{parsed.database}"'))
        try:
            yield parsed.set(database=name).render_as_string(False)
        finally:
            with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def _live_counts(engine: Engine, at: datetime) -> tuple[int, int, int]:
    """(agents of live cohorts, their open positions, portfolio snapshot rows) at `at`."""
    live = (COHORTS.c.status != "completed") & (COHORTS.c.week_start <= at)
    with engine.connect() as conn:
        agents = conn.execute(
            select(func.count()).select_from(AGENTS.join(COHORTS)).where(live)
        ).scalar_one()
        positions = conn.execute(
            select(func.count())
            .select_from(POSITIONS.join(AGENTS).join(COHORTS))
            .where(live, POSITIONS.c.status == "open")
        ).scalar_one()
        history = conn.execute(select(func.count()).select_from(PORTFOLIO_SNAPSHOTS)).scalar_one()
    return int(agents), int(positions), int(history)


def _clear_valuation_memo() -> None:
    """The snapshot pass memoises valuations in-process; a sync changes prices every 5
    minutes, so the realistic pass starts with nothing memoised."""
    from arena.engine import snapshots

    memo = getattr(snapshots, "_valued", None)
    if memo is not None and hasattr(memo, "cache_clear"):
        memo.cache_clear()


def _trim_history(engine: Engine, keep_from: datetime) -> None:
    """Delete snapshots, job runs and logs older than `keep_from` (the history-only copy)."""
    with engine.begin() as conn:
        for name, column in (
            ("portfolio_snapshots", "slot"),
            ("job_runs", "slot"),
            ("system_logs", "at"),
        ):
            bound: Any = keep_from
            if engine.dialect.name == "sqlite":  # stored as naive UTC text
                bound = keep_from.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
            conn.execute(text(f'DELETE FROM "{name}" WHERE "{column}" < :bound'), {"bound": bound})
    if engine.dialect.name == "sqlite":  # outside a transaction: the DBAPI autocommits
        raw = engine.raw_connection()
        try:
            raw.cursor().execute("VACUUM")
        finally:
            raw.close()


def snapshot_point(url: str, label: str, *, trim: bool = False, repeats: int = 3) -> SnapshotPoint:
    """Time the next snapshot pass on a copy of `url` (see the module docstring)."""
    from arena.engine.snapshots import take_snapshots

    with database_copy(url) as copy:
        engine = create_db_engine(copy)
        try:
            with engine.connect() as conn:
                last = conn.execute(select(func.max(PORTFOLIO_SNAPSHOTS.c.slot))).scalar()
            if last is None:
                raise RuntimeError("the database has no portfolio snapshot")
            at = last + timedelta(minutes=10)
            if trim:
                _trim_history(engine, at - timedelta(weeks=1))
            take_snapshots(engine, at)  # warms this process (statements, pool), not timed
            at += timedelta(minutes=10)
            agents, positions, history = _live_counts(engine, at)
            cleared, reused = [], []
            for _ in range(repeats):  # memo cleared, then the next slot with the memo kept
                _clear_valuation_memo()
                began = now_ms()
                first = take_snapshots(engine, at)
                cleared.append(now_ms() - began)
                at += timedelta(minutes=10)
                began = now_ms()
                take_snapshots(engine, at)
                reused.append(now_ms() - began)
                at += timedelta(minutes=10)
        finally:
            engine.dispose()
    return SnapshotPoint(
        label, agents, positions, history, median(cleared), median(reused), first.rows_written
    )


def measure_snapshots(targets: list[tuple[str, str]]) -> list[SnapshotPoint]:
    points = []
    for label, url in targets:
        for trim in (False, True):
            name = f"{label}, history trimmed to 1 week" if trim else label
            try:
                points.append(snapshot_point(url, name, trim=trim))
            except Exception as exc:
                print(f"  snapshot {name}: ERROR {_one_line(exc)}")
                if os.environ.get("BENCH_DEBUG"):
                    traceback.print_exc()
    return points


def print_snapshots(points: list[SnapshotPoint]) -> None:
    print("\n== Snapshot job: take_snapshots on a copy, at the slot after the last snapshot")
    rows = [
        [
            p.label,
            f"{p.agents:,}",
            f"{p.open_positions:,}",
            f"{p.history_rows:,}",
            fmt_ms(p.first_ms),
            fmt_ms(p.second_ms),
            f"{p.first_ms / max(p.open_positions, 1) * 1000:,.0f}",
            "PASS" if p.first_ms < SNAPSHOT_MS else "FAIL",
        ]
        for p in points
    ]
    print(
        table(
            rows,
            [
                "database",
                "agents",
                "open pos.",
                "history rows",
                "pass ms",
                "next pass ms",
                "µs/open pos.",
                "verdict",
            ],
        )
    )
    print(
        f"target: a pass < {SNAPSHOT_MS / 1000:.0f} s (slot: 10 min); medians of 3. 'pass' starts "
        "with the valuation memo cleared (prices change at every sync), 'next pass' 10 minutes "
        "later reuses it. Same open positions with history trimmed ≈ same time → cost follows open "
        "positions, not history."
    )


def snapshot_rows(points: list[SnapshotPoint]) -> list[Row]:
    return [
        Row(
            f"snapshot job, {p.label} ({p.agents:,} agents, {p.open_positions:,} open positions, "
            f"{p.history_rows:,} snapshot rows)",
            f"< {SNAPSHOT_MS / 1000:.0f} s",
            f"{fmt_ms(p.first_ms)} ms (next pass {fmt_ms(p.second_ms)} ms)",
            f"{p.first_ms / SNAPSHOT_MS:.3f}x target",
        )
        for p in points
    ]


# --------------------------------------------------------------------------------------------
# Decision run


@dataclass
class DecideRun:
    week: int
    cohorts: int
    agents: int
    ms: float
    responder_ms: float
    steps: dict[str, float]
    prompt_bytes: float
    prompt_tokens: float
    markets: int

    @property
    def per_agent_ms(self) -> float:
        return (self.ms - self.responder_ms) / max(self.agents, 1)


STEPS = (
    ("claim_decision", "claim"),
    ("_freeze", "freeze universe"),
    ("load_universe", "load universe"),
    ("load_inputs", "load agent state"),
    ("system_prompt", "prompt build"),
    ("user_prompt", "prompt build"),
    ("_store_prompts", "store prompts"),
    ("parse_decision", "parse"),
    ("_record_attempts", "store attempts"),
    ("_finish", "execute + finish"),
    ("_finish_error", "execute + finish"),
)


@contextmanager
def timed_steps(spent: dict[str, float]) -> Iterator[None]:
    """Wrap the decision module's step functions (by name, in this process only) to time them.

    Exclusive time: a step called inside another (`_finish` re-reads the agent's state with
    `load_inputs`) counts for the inner step only, so the split adds up to the run.
    """
    from arena.engine import decisions

    saved = {}
    children: list[float] = []  # per active step: time spent in nested steps

    for name, step in STEPS:
        original = getattr(decisions, name, None)
        if original is None:
            continue
        saved[name] = original

        def wrapper(
            *args: Any, _f: Callable[..., Any] = original, _s: str = step, **kw: Any
        ) -> Any:
            children.append(0.0)
            began = now_ms()
            try:
                return _f(*args, **kw)
            finally:
                elapsed = now_ms() - began
                nested = children.pop()
                spent[_s] = spent.get(_s, 0.0) + elapsed - nested
                if children:
                    children[-1] += elapsed

        setattr(decisions, name, wrapper)
    try:
        yield
    finally:
        for name, original in saved.items():
            setattr(decisions, name, original)


class TimedResponder:
    """An instant responder's wrapper that keeps the time spent answering (not the engine's)."""

    def __init__(self, inner: Any, spent: list[float]) -> None:
        self.inner = inner
        self.spent = spent

    def respond(self, messages: Any, context: Any) -> Any:
        began = now_ms()
        try:
            return self.inner.respond(messages, context)
        finally:
            self.spent.append(now_ms() - began)


def _instant_llm_factory(baselines: Any, seed: int, probability: Any) -> Any:
    """LLM families answer in-process: bench/year_llm.py's simulated LLM when present (real
    multi-leg answers), else the random baseline's strategy under the family's name."""
    try:
        try:
            from bench.year_llm import with_simulated_llms
        except ModuleNotFoundError:
            from year_llm import with_simulated_llms  # type: ignore[no-redef]

        return with_simulated_llms(baselines, seed, probability)
    except ImportError:
        from arena.agents.responders import BaselineResponder

        def factory(family: Any) -> Any:
            if family.kind == "llm":
                return BaselineResponder(family.model_copy(update={"strategy": "random"}), seed)
            return baselines(family)

        return factory


def measure_decide(weeks: int, markets: int = 500, seed: int = 7) -> list[DecideRun]:
    """Weekly cohorts on a fresh SQLite database: sync, start a cohort, decide; week `weeks`
    has `weeks` cohorts deciding at once (the steady state of a 5-week decision window)."""
    import arena.app.demo
    from arena.agents.prompts import estimate_tokens
    from arena.agents.responders import default_responders
    from arena.config import load_settings
    from arena.engine.cohorts import start_cohort
    from arena.engine.decisions import run_decisions
    from arena.engine.market_sync import sync_markets
    from arena.lineup import load_lineup
    from arena.markets.simulated import SimulatedWorld
    from arena.storage.migrate import init_db
    from arena.storage.tables import DECISIONS

    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-decide-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'decide.db'}"
        engine = create_db_engine(url)
        try:
            init_db(engine)
            settings = load_settings(database_url=url, llm_api_key=None)
            methodology = settings.methodology
            start = arena.app.demo.DEMO_START
            world = SimulatedWorld(
                seed,
                start,
                n_initial=arena.app.demo.WORLD_INITIAL_MARKETS,
                new_per_day=arena.app.demo.WORLD_NEW_PER_DAY,
                days=weeks * 7 + 1,
            )
            lineup = load_lineup(None)
            baselines, close = default_responders(
                settings, seed, probability=world.hidden_probability
            )
            answering: list[float] = []
            inner = _instant_llm_factory(baselines, seed, world.hidden_probability)

            def responders(family: Any) -> Any:
                found = inner(family)
                return TimedResponder(found, answering) if found is not None else None

            try:
                for week in range(weeks):
                    at = start + timedelta(weeks=week)
                    sync_markets(engine, world, at, markets)
                    start_cohort(engine, at, lineup, methodology)
                    spent: dict[str, float] = {}
                    answering.clear()
                    began = now_ms()
                    with timed_steps(spent):
                        result = run_decisions(
                            engine, at + timedelta(minutes=5), lineup, methodology, responders
                        )
                    ms = now_ms() - began
                    with engine.connect() as conn:
                        prompts = conn.execute(
                            select(DECISIONS.c.prompt_user).where(
                                DECISIONS.c.market_snapshot_id == result.snapshot_id
                            )
                        ).scalars()
                        texts = [p for p in prompts if p]
                    universe = min(markets, methodology.market_universe_size)
                    runs.append(
                        DecideRun(
                            week + 1,
                            result.cohorts,
                            result.claimed,
                            ms,
                            sum(answering),
                            spent,
                            median([len(p.encode()) / universe for p in texts]),
                            median([estimate_tokens(p) / universe for p in texts]),
                            universe,
                        )
                    )
            finally:
                close()
        finally:
            engine.dispose()
    return runs


def print_decide(runs: list[DecideRun]) -> None:
    print("\n== Decision run: run_decisions, 500-market universe, instant in-process responders")
    rows = []
    for r in runs:
        rows.append(
            [
                str(r.week),
                str(r.cohorts),
                str(r.agents),
                fmt_ms(r.ms),
                fmt_ms(r.responder_ms),
                fmt_ms(r.per_agent_ms),
                f"{r.prompt_bytes:.1f} / {r.prompt_tokens:.1f}",
                "PASS" if r.per_agent_ms < DECIDE_MS else "FAIL",
            ]
        )
    print(
        table(
            rows,
            [
                "week",
                "cohorts",
                "agents",
                "run ms",
                "responder ms",
                "engine ms/agent",
                "prompt B/tok per market",
                "verdict",
            ],
        )
    )
    last = runs[-1]
    steps = sorted(last.steps.items(), key=lambda kv: -kv[1])
    accounted = sum(v for _, v in steps)
    split = ", ".join(f"{k} {v / max(last.agents, 1):.1f}" for k, v in steps)
    other = (last.ms - last.responder_ms - accounted) / max(last.agents, 1)
    print(f"week {last.week} split, ms per agent: {split}, other {other:.1f}")
    print(
        f"target: engine overhead < {DECIDE_MS:.0f} ms per agent decision (run time minus "
        "responder time, over agents decided; the universe freeze is shared by the run)"
    )


def decide_rows(runs: list[DecideRun]) -> list[Row]:
    last = runs[-1]
    return [
        Row(
            f"decision run engine overhead per agent, 500-market universe, {last.cohorts} "
            f"cohorts / {last.agents} agents deciding, network excluded",
            f"< {DECIDE_MS:.0f} ms",
            f"{last.per_agent_ms:.1f} ms (run {fmt_ms(last.ms)} ms)",
            f"{last.per_agent_ms / DECIDE_MS:.2f}x target",
        ),
        Row(
            "engine's stored 500-market user prompt (with held positions), per market",
            f"<= {TOKENS_PER_MARKET:.0f} est. tokens",
            f"{last.prompt_bytes:.1f} bytes, {last.prompt_tokens:.1f} est. tokens",
            f"{last.prompt_tokens / ANCHOR_TOKENS:.2f}x the anchor",
        ),
    ]


# --------------------------------------------------------------------------------------------
# Demo and prompt size (subprocesses running the existing bench scripts)


# A child exec'd straight from this process inherits its peak RSS as its own `ru_maxrss`
# (Linux keeps the replaced memory map's high-water mark), and the naive baselines make this
# process big. A small Python in between gives the script a fresh, honest figure.
LAUNCHER = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"


def run_script(args: list[str], timeout: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-500:]}")
    return done.stdout


def measure_demo(weeks: int) -> dict[str, float]:
    out = run_script([str(BENCH / "demo.py"), "--weeks", str(weeks)], timeout=1800)
    found = re.search(r"wall time: ([\d.]+) s\s+CPU time: ([\d.]+) s\s+peak RSS: (\d+) MB", out)
    if found is None:
        raise RuntimeError("bench/demo.py printed no 'wall time' line")
    figures = {
        "wall_s": float(found.group(1)),
        "cpu_s": float(found.group(2)),
        "rss_mb": float(found.group(3)),
    }
    snap = re.search(r"snapshot\s+(\d+) runs\s+[\d.]+ s\s+([\d.]+) ms/run", out)
    if snap:
        figures["snapshot_runs"] = float(snap.group(1))
        figures["snapshot_ms"] = float(snap.group(2))
    return figures


def measure_prompt() -> dict[str, float]:
    out = run_script([str(BENCH / "prompt_size.py")], timeout=300)
    found = re.search(r"per market \(whole prompt / n\): ([\d.]+) bytes, ([\d.]+) est", out)
    markets = re.search(r"markets: (\d+)", out)
    if found is None or markets is None:
        raise RuntimeError("bench/prompt_size.py printed no per-market line")
    return {
        "bytes": float(found.group(1)),
        "tokens": float(found.group(2)),
        "markets": float(markets.group(1)),
    }


def demo_rows(weeks: int, figures: dict[str, float]) -> list[Row]:
    rows = [
        Row(
            f"`arena demo --weeks {weeks}` wall time (bench/demo.py)",
            f"< {DEMO_S:.0f} s",
            f"{figures['wall_s']:.1f} s wall, {figures['cpu_s']:.1f} s CPU",
            f"{figures['wall_s'] / DEMO_S:.2f}x target",
        ),
        Row(
            f"`arena demo --weeks {weeks}` peak memory",
            f"< {DEMO_MB:.0f} MB",
            f"{figures['rss_mb']:.0f} MB",
            f"{figures['rss_mb'] / DEMO_MB:.2f}x target",
        ),
    ]
    if "snapshot_ms" in figures:
        rows.append(
            Row(
                "demo: snapshot job CPU per 10-minute pass",
                "far inside the 10-minute slot",
                f"{figures['snapshot_ms']:.1f} ms ({figures['snapshot_runs']:,.0f} passes)",
                "",
            )
        )
    return rows


def prompt_rows(figures: dict[str, float]) -> list[Row]:
    return [
        Row(
            f"{figures['markets']:.0f}-market user prompt, est. tokens per market (chars / 4)",
            f"<= {TOKENS_PER_MARKET:.0f} (anchor ~{ANCHOR_TOKENS:.0f})",
            f"{figures['tokens']:.1f} ({figures['bytes']:.1f} bytes)",
            f"{figures['tokens'] / ANCHOR_TOKENS:.2f}x the anchor, "
            f"{figures['tokens'] / TOKENS_PER_MARKET:.2f}x target",
        )
    ]


# --------------------------------------------------------------------------------------------
# Main


def print_load(when: str) -> None:
    """The load average: on 2 cores another busy process skews every figure (say so)."""
    one, five, fifteen = os.getloadavg()
    print(f"load average {when}: {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)")


def print_markdown(rows: list[Row]) -> None:
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    where = machine().replace("|", "/")
    print("\n== bench/RESULTS.md rows (bench/run.py)")
    print("| metric | target | measured | ratio | date | machine |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        place = f"{where}, {row.server}" if row.server else where
        cells = [row.metric, row.target, row.measured, row.ratio or "—", day, place]
        print("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")


def ensure_two_years(path: Path, seed: int, weeks: int = 104) -> str:
    """The two-year database for the snapshot scaling point (built once, then reused)."""
    url = database_url(str(path))
    if path.exists():
        return url
    try:
        from bench.make_year import build_year
    except ModuleNotFoundError:
        from make_year import build_year  # type: ignore[no-redef]

    print(f"building {path} ({weeks} weeks; about 25 s per week on 2 cores)…", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    build_year(url, weeks=weeks, seed=seed)
    return url


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlite", default=str(ROOT / "data" / "bench" / "year.db"))
    parser.add_argument("--postgres", default=None, help="PostgreSQL URL of the same season")
    parser.add_argument(
        "--only",
        default="pages,snapshot,decide,demo,prompt",
        help="comma list of: pages, snapshot, decide, demo, prompt",
    )
    parser.add_argument("--pages", default=None, help="comma list of page-name substrings")
    parser.add_argument("--repeats", type=int, default=5, help="warm runs per page (median)")
    parser.add_argument("--naive-repeats", type=int, default=5)
    parser.add_argument("--no-naive", action="store_true")
    parser.add_argument("--no-cold", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="print RESULTS.md rows")
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--demo-weeks", type=int, default=8)
    parser.add_argument("--decide-weeks", type=int, default=5)
    parser.add_argument("--two-years", action="store_true", help="add a 104-week snapshot point")
    parser.add_argument("--two-years-db", default=str(ROOT / "data" / "bench" / "year2.db"))
    parser.add_argument("--two-years-weeks", type=int, default=104, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--snapshot-extra",
        action="append",
        default=[],
        help="another database (path or URL) to time the snapshot job on",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    only = {part.strip() for part in args.only.split(",") if part.strip()}
    unknown = only - {"pages", "snapshot", "decide", "demo", "prompt"}
    if unknown:
        print(f"unknown --only part(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if args.skip_demo:
        only.discard("demo")
    backends: list[tuple[str, str]] = []
    if args.sqlite:
        url = database_url(args.sqlite)
        if backend(url) == "sqlite" and not Path(make_url(url).database or "").is_file():
            print(
                f"no SQLite database at {args.sqlite}: build it with bench/make_year.py",
                file=sys.stderr,
            )
            return 2
        backends.append(("SQLite", url))
    if args.postgres:
        backends.append(("PostgreSQL", database_url(args.postgres)))
    pages = list(PAGES)
    if args.pages:
        wanted = [p.strip() for p in args.pages.split(",") if p.strip()]
        pages = [p for p in PAGES if any(w in p.name for w in wanted)]

    print(f"bench/run.py — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {machine()}")
    print_load("at start")
    rows: list[Row] = []
    failed = False
    if "pages" in only:
        for label, url in backends:
            results, note = measure_pages(
                url,
                pages,
                repeats=args.repeats,
                naive_repeats=args.naive_repeats,
                cold=not args.no_cold,
                do_naive=not args.no_naive,
            )
            print_pages(label, url, results, note)
            print_load(f"after the {label} pages")
            if any(r.page.name == "leaderboard" and not r.error for r in results):
                try:
                    parts = leaderboard_parts(url)
                except Exception as exc:
                    parts = {}
                    print(f"leaderboard breakdown failed: {_one_line(exc)}")
                if parts:
                    print(
                        "\nleaderboard() parts, warm ms: "
                        + ", ".join(f"{name} {fmt_ms(ms)}" for name, ms in parts.items())
                    )
            rows += page_rows(f"{label} {database_name(url)}", results, server_version(url))
            failed = failed or any(r.misses() for r in results)
    if "snapshot" in only:
        targets = [(f"{label} {database_name(u)}", u) for label, u in backends]
        if args.two_years:
            two = ensure_two_years(Path(args.two_years_db), args.seed, args.two_years_weeks)
            targets.append((f"SQLite {args.two_years_weeks}-week", two))
        targets += [(f"extra {Path(e).name}", database_url(e)) for e in args.snapshot_extra]
        points = measure_snapshots(targets)
        if points:
            print_snapshots(points)
            rows += snapshot_rows(points)
            failed = failed or any(p.first_ms >= SNAPSHOT_MS for p in points)
    if "decide" in only:
        runs = measure_decide(args.decide_weeks, seed=args.seed)
        print_decide(runs)
        rows += decide_rows(runs)
        failed = failed or runs[-1].per_agent_ms >= DECIDE_MS
    if "demo" in only:
        print(f"\n== Demo: bench/demo.py --weeks {args.demo_weeks} (subprocess)", flush=True)
        figures = measure_demo(args.demo_weeks)
        print(
            f"wall {figures['wall_s']:.1f} s (target < {DEMO_S:.0f} s), CPU "
            f"{figures['cpu_s']:.1f} s, peak RSS {figures['rss_mb']:.0f} MB (target < "
            f"{DEMO_MB:.0f} MB)"
            + (
                f", snapshot pass {figures['snapshot_ms']:.1f} ms"
                if "snapshot_ms" in figures
                else ""
            )
        )
        rows += demo_rows(args.demo_weeks, figures)
    if "prompt" in only:
        figures = measure_prompt()
        print(
            f"\n== Prompt size: bench/prompt_size.py — {figures['markets']:.0f} markets, "
            f"{figures['bytes']:.1f} bytes and {figures['tokens']:.1f} est. tokens per market "
            f"(target <= {TOKENS_PER_MARKET:.0f}, anchor ~{ANCHOR_TOKENS:.0f})"
        )
        rows += prompt_rows(figures)
    print_load("at the end")
    if args.markdown:
        print_markdown(rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
