"""Year-scale figures: dashboard read models, the snapshot job, the demo, the prompt.

Run:
    .venv/bin/python bench/run.py --sqlite data/bench/year.db [--postgres URL]
        [--only pages,snapshot,demo,prompt] [--pages leaderboard,curve] [--markdown]
        [--snapshot-extra PATH_OR_URL ...]

Build the year first with bench/make_year.py. What is measured, per backend:

- pages: each dashboard page's read models as the page runs them on first load with default
  selections (bench/pages_catalog.py), plus the clicks worth timing and the curve per range
  key. Cold = a brand-new reader engine, first call, after dropping the OS page cache when
  permitted (`echo 3 > /proc/sys/vm/drop_caches`); warm = median of `--repeats` runs on one
  engine after one warm-up run. Figures without a target: what holds for a page is its time
  to idle in a browser (bench/browser.py); these say which reads it spends it on.
- snapshot: `take_snapshots` on a COPY of the database, just after its last snapshot (one
  untimed pass warms the process, as in the long-running scheduler), timed with the valuation
  memo cleared (a sync changes prices every 5 minutes), then again 10 minutes later (medians
  of 3). Target: a pass < 2 s at a year.
- demo: `bench/demo.py --weeks 8` in a subprocess (wall time, peak RSS). Target: < 90 s and
  < 600 MB.
- prompt: `bench/prompt_size.py` in a subprocess. Target: <= 40 estimated tokens (chars / 4)
  per market of the 500-market prompt (anchor ~70).

`--markdown` prints rows for bench/RESULTS.md's table, stamped with the commit measured.
`--sqlite ""` skips SQLite (to run PostgreSQL alone). Exit status 1 when a target is missed.
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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select, text
from sqlalchemy.engine import Engine, make_url

from arena.storage.db import create_db_engine
from arena.storage.tables import AGENTS, COHORTS, PORTFOLIO_SNAPSHOTS, POSITIONS

try:
    from bench.pages_catalog import PAGES, Page, Reader, Selection, resolve_selection
except ModuleNotFoundError:  # run as a script (python bench/run.py): bench/ is on sys.path
    from pages_catalog import (  # type: ignore[no-redef]
        PAGES,
        Page,
        Reader,
        Selection,
        resolve_selection,
    )

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

SNAPSHOT_MS = 2000.0
DEMO_S = 90.0
DEMO_MB = 600.0
TOKENS_PER_MARKET = 40.0
ANCHOR_TOKENS = 70.0


def now_ms() -> float:
    return time.perf_counter() * 1000.0


def database_url(value: str) -> str:
    """A path or a URL → a SQLAlchemy URL (paths are SQLite files)."""
    return value if "://" in value else f"sqlite:///{Path(value).resolve()}"


def backend(url: str) -> str:
    return make_url(url).get_backend_name()


def machine() -> str:
    """Cores, CPU, memory, OS and Python: the machine a figure was measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        memory = f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB"
    except (OSError, ValueError):
        memory = "? GiB"
    return (
        f"{os.cpu_count()} cores {cpu}, {memory}, Linux {platform.release().split('-')[0]}, "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )


def load_average() -> str:
    """On 2 cores another busy process skews every figure: say how busy the machine was."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt_ms(value: float) -> str:
    if value != value:  # NaN
        return "—"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


@dataclass
class Row:
    """One row of bench/RESULTS.md's table: what is measured, its target, how, the figure."""

    what: str
    target: str
    command: str
    figure: str
    met: bool


def commit() -> str:
    """The commit measured, `+` when the work tree has changes beside it."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0
    return (head or "?") + ("+" if dirty else "")


def markdown(rows: Sequence[Row]) -> str:
    """The rows as bench/RESULTS.md's table prints them."""
    stamp = commit()
    lines = ["| what | target | figure | command | commit |", "|---|---|---|---|---|"]
    for row in rows:
        figure = row.figure + ("" if row.met else " — MISSED")
        lines.append(f"| {row.what} | {row.target} | {figure} | `{row.command}` | {stamp} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Pages: read-model times (figures, no target)


@dataclass
class PageResult:
    page: Page
    calls: list[str] = field(default_factory=list)
    cold_ms: float = float("nan")
    cold_calls: list[float] = field(default_factory=list)
    warm_ms: float = float("nan")
    warm_calls: list[float] = field(default_factory=list)
    stored: bool | None = None  # whether the page was served a stored analysis (False: offered)
    error: str | None = None


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def drop_os_cache() -> bool:
    """Drop the OS page cache (root in a VM); False when the kernel refuses."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def run_page(engine: Engine, page: Page, selection: Selection) -> Reader:
    read = Reader(engine)
    page.run(read, selection)
    return read


def measure_pages(
    url: str, pages: Sequence[Page], repeats: int, drop: bool = True
) -> tuple[list[PageResult], str]:
    """Cold and warm times of every page's read models; the results and a cache note."""
    results = [PageResult(page) for page in pages]
    setup = create_db_engine(url, role="reader")
    try:
        selection = resolve_selection(setup)
    finally:
        setup.dispose()
    dropped = False
    for result in results:
        dropped = (drop and drop_os_cache()) or dropped
        engine = create_db_engine(url, role="reader")
        try:
            read = run_page(engine, result.page, selection)
            result.cold_ms, result.cold_calls = read.total_ms, [c.ms for c in read.calls]
        except Exception as exc:  # one broken read model must not hide the others
            result.error = _one_line(exc)
        finally:
            engine.dispose()
    note = "OS page cache dropped" if dropped else "OS page cache kept (--keep-cache, or refused)"
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
                median([r.calls[i].ms for r in reads]) for i in range(len(result.calls))
            ]
    finally:
        engine.dispose()
    return results, note


def print_pages(label: str, results: list[PageResult], note: str) -> None:
    print(f"\n== Dashboard read models: {label} — cold: new reader engine, {note}")
    width = max(len(r.page.name) + 9 for r in results)
    print(f"{'page':<{width}}  calls   cold ms   warm ms")
    for r in results:
        mark = {True: " [stored]", False: " [offer]", None: ""}[r.stored]
        if r.error:
            print(f"{r.page.name + mark:<{width}}  ERROR {r.error}")
            continue
        print(
            f"{r.page.name + mark:<{width}}  {len(r.calls):>5}  {fmt_ms(r.cold_ms):>8}  "
            f"{fmt_ms(r.warm_ms):>8}"
        )
    print(
        "warm = median of the page's total over repeated runs, dashboard.py's schema gate "
        "included; [stored]/[offer]: the page showed the hourly job's stored analysis / had "
        "none current and offered to compute it live (the '… computed live' entries time "
        "that)\n\nper read-model call (cold ms / warm ms):"
    )
    for r in results:
        print(f"  {r.page.name}")
        for i, call in enumerate(r.calls):
            cold = r.cold_calls[i] if i < len(r.cold_calls) else float("nan")
            print(f"    {fmt_ms(cold):>8} {fmt_ms(r.warm_calls[i]):>8}  {call}")


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


def snapshot_point(url: str, label: str, repeats: int = 3) -> SnapshotPoint:
    """Time the next snapshot passes on a copy of `url` (see the module docstring)."""
    from arena.engine import snapshots

    with database_copy(url) as copy:
        engine = create_db_engine(copy)
        try:
            with engine.connect() as conn:
                last = conn.execute(select(func.max(PORTFOLIO_SNAPSHOTS.c.slot))).scalar()
            if last is None:
                raise RuntimeError("the database has no portfolio snapshot")
            at = last + timedelta(minutes=10)
            snapshots.take_snapshots(engine, at)  # warms this process (statements, pool)
            at += timedelta(minutes=10)
            agents, positions, history = _live_counts(engine, at)
            cleared, reused = [], []
            for _ in range(repeats):  # memo cleared, then the next slot with the memo kept
                snapshots._valued.cache_clear()
                began = now_ms()
                snapshots.take_snapshots(engine, at)
                cleared.append(now_ms() - began)
                at += timedelta(minutes=10)
                began = now_ms()
                snapshots.take_snapshots(engine, at)
                reused.append(now_ms() - began)
                at += timedelta(minutes=10)
        finally:
            engine.dispose()
    return SnapshotPoint(label, agents, positions, history, median(cleared), median(reused))


def print_snapshots(points: list[SnapshotPoint]) -> None:
    print("\n== Snapshot job: take_snapshots on a copy, at the slot after the last snapshot")
    for p in points:
        print(
            f"  {p.label}: {p.agents:,} agents, {p.open_positions:,} open positions, "
            f"{p.history_rows:,} snapshot rows — pass {fmt_ms(p.first_ms)} ms, next pass "
            f"{fmt_ms(p.second_ms)} ms"
        )
    print(
        f"target: a pass < {SNAPSHOT_MS / 1000:.0f} s (slot: 10 min); medians of 3; 'pass' "
        "starts with the valuation memo cleared (prices change at every sync), 'next pass' "
        "10 minutes later reuses it"
    )


# --------------------------------------------------------------------------------------------
# Demo and prompt size (subprocesses running the bench scripts)


# A child exec'd straight from this process inherits its peak RSS as its own `ru_maxrss`
# (Linux keeps the replaced memory map's high-water mark), and a year's pages make this process
# big. A small Python in between gives the script a fresh, honest figure.
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
    return {"wall_s": float(found[1]), "cpu_s": float(found[2]), "rss_mb": float(found[3])}


def measure_prompt() -> dict[str, float]:
    out = run_script([str(BENCH / "prompt_size.py")], timeout=300)
    found = re.search(r"per market \(whole prompt / n\): ([\d.]+) bytes, ([\d.]+) est", out)
    markets = re.search(r"markets: (\d+)", out)
    if found is None or markets is None:
        raise RuntimeError("bench/prompt_size.py printed no per-market line")
    return {"bytes": float(found[1]), "tokens": float(found[2]), "markets": float(markets[1])}


# --------------------------------------------------------------------------------------------
# Main


def print_markdown(rows: list[Row]) -> None:
    print("\n== bench/RESULTS.md rows")
    print(markdown(rows))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlite", default=str(ROOT / "data" / "bench" / "year.db"))
    parser.add_argument("--postgres", default=None, help="PostgreSQL URL of the same season")
    parser.add_argument(
        "--only", default="pages,snapshot,demo,prompt", help="comma list of those parts"
    )
    parser.add_argument("--pages", default=None, help="comma list of page-name substrings")
    parser.add_argument("--repeats", type=int, default=5, help="warm runs per page (median)")
    parser.add_argument(
        "--keep-cache", action="store_true", help="cold runs without dropping the OS page cache"
    )
    parser.add_argument("--markdown", action="store_true", help="print RESULTS.md rows")
    parser.add_argument("--demo-weeks", type=int, default=8)
    parser.add_argument(
        "--snapshot-extra",
        action="append",
        default=[],
        help="another database (path or URL) to time the snapshot job on",
    )
    return parser.parse_args(argv)


def _backends(args: argparse.Namespace, only: set[str]) -> list[tuple[str, str]] | None:
    """The (label, URL) databases to measure; None (after one stderr line) when the SQLite
    file asked for does not exist."""
    backends: list[tuple[str, str]] = []
    if args.sqlite and only & {"pages", "snapshot"}:
        url = database_url(args.sqlite)
        if backend(url) == "sqlite" and not Path(make_url(url).database or "").is_file():
            print(
                f"no database at {args.sqlite}: build it with bench/make_year.py", file=sys.stderr
            )
            return None
        backends.append((f"SQLite {Path(make_url(url).database or '').name}", url))
    if args.postgres:
        backends.append((f"PostgreSQL {make_url(args.postgres).database}", args.postgres))
    return backends


def _snapshot_rows(args: argparse.Namespace, backends: list[tuple[str, str]]) -> list[Row]:
    targets = backends + [(f"extra {Path(e).name}", database_url(e)) for e in args.snapshot_extra]
    points = [snapshot_point(url, label) for label, url in targets]
    print_snapshots(points)
    return [
        Row(
            f"the snapshot pass (v1) at a year, {p.label}",
            f"< {SNAPSHOT_MS / 1000:.0f} s",
            "bench/run.py --only snapshot",
            f"{fmt_ms(p.first_ms)} ms (next pass {fmt_ms(p.second_ms)} ms); "
            f"{p.agents:,} agents, {p.open_positions:,} open positions, "
            f"{p.history_rows:,} snapshot rows",
            p.first_ms < SNAPSHOT_MS,
        )
        for p in points
    ]


def _demo_row(weeks: int) -> Row:
    print(f"\n== Demo: bench/demo.py --weeks {weeks} (subprocess)", flush=True)
    demo = measure_demo(weeks)
    print(
        f"wall {demo['wall_s']:.1f} s (target < {DEMO_S:.0f} s), CPU {demo['cpu_s']:.1f} s, "
        f"peak RSS {demo['rss_mb']:.0f} MB"
    )
    return Row(
        f"`arena demo --weeks {weeks}`",
        f"< {DEMO_S:.0f} s, < {DEMO_MB:.0f} MB",
        f"bench/demo.py --weeks {weeks}",
        f"{demo['wall_s']:.1f} s wall, {demo['cpu_s']:.1f} s CPU, {demo['rss_mb']:.0f} MB peak RSS",
        demo["wall_s"] < DEMO_S and demo["rss_mb"] < DEMO_MB,
    )


def _prompt_row() -> Row:
    prompt = measure_prompt()
    print(
        f"\n== Prompt size: bench/prompt_size.py — {prompt['markets']:.0f} markets, "
        f"{prompt['bytes']:.1f} bytes and {prompt['tokens']:.1f} est. tokens per market "
        f"(target <= {TOKENS_PER_MARKET:.0f}, anchor ~{ANCHOR_TOKENS:.0f})"
    )
    return Row(
        f"the {prompt['markets']:.0f}-market prompt",
        f"≤ {TOKENS_PER_MARKET:.0f} est. tokens (chars / 4) a market; anchor ~{ANCHOR_TOKENS:.0f}",
        "bench/prompt_size.py",
        f"{prompt['tokens']:.1f} est. tokens ({prompt['bytes']:.1f} bytes) per market",
        prompt["tokens"] <= TOKENS_PER_MARKET,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    only = {part.strip() for part in args.only.split(",") if part.strip()}
    unknown = only - {"pages", "snapshot", "demo", "prompt"}
    if unknown:
        print(f"unknown --only part(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    backends = _backends(args, only)
    if backends is None:
        return 2
    pages = list(PAGES)
    if args.pages:
        wanted = [p.strip() for p in args.pages.split(",") if p.strip()]
        pages = [p for p in PAGES if any(w in p.name for w in wanted)]

    print(f"bench/run.py — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {machine()}")
    print(load_average() + " at start")
    rows: list[Row] = []
    if "pages" in only:
        for label, url in backends:
            results, note = measure_pages(url, pages, args.repeats, not args.keep_cache)
            print_pages(label, results, note)
    if "snapshot" in only:
        rows.extend(_snapshot_rows(args, backends))
    if "demo" in only:
        rows.append(_demo_row(args.demo_weeks))
    if "prompt" in only:
        rows.append(_prompt_row())
    print(load_average() + " at the end")
    if args.markdown:
        print_markdown(rows)
    return 0 if all(row.met for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
