"""Benchmark: `arena demo` (a whole simulated season) into a throw-away SQLite database.

Run: .venv/bin/python bench/demo.py [--weeks 8] [--seed 7]  — prints wall time, peak RSS and
the time spent in each job; record the figures in bench/RESULTS.md. Target (issue 5): 8 weeks
under 60 s and under 500 MB on 2 cores.
"""

import argparse
import resource
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from arena import jobs
from arena.config import load_settings
from arena.db import create_db_engine
from arena.demo import format_summary, run_demo
from arena.lineup import load_lineup
from arena.migrate import init_db


def _timed(name: str, job: Callable[..., Any], spent: dict[str, list[float]]) -> Callable[..., Any]:
    def wrapper(ctx: jobs.JobContext, at: datetime) -> Any:
        began = time.perf_counter()
        try:
            return job(ctx, at)
        finally:
            spent[name].append(time.perf_counter() - began)

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--weeks", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    spent: dict[str, list[float]] = defaultdict(list)
    for name, job in list(jobs.JOBS.items()):
        jobs.JOBS[name] = _timed(name, job, spent)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'demo.db'}"
        settings = load_settings(database_url=url, llm_api_key=None)
        engine = create_db_engine(url)
        began = time.perf_counter()
        init_db(engine)
        summary = run_demo(
            engine, settings, load_lineup(None), weeks=args.weeks, seed=args.seed
        )
        wall = time.perf_counter() - began
        size = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 1e6
        engine.dispose()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("\n".join(format_summary(summary)))
    print()
    print(f"weeks: {args.weeks}   seed: {args.seed}   python: {sys.version.split()[0]}")
    print(f"wall time: {wall:.1f} s   peak RSS: {peak_kb / 1024:.0f} MB   database: {size:.1f} MB")
    for name, times in sorted(spent.items(), key=lambda kv: -sum(kv[1])):
        total = sum(times)
        print(
            f"  {name:<13} {len(times):>6} runs  {total:6.1f} s  "
            f"{total / len(times) * 1000:7.2f} ms/run"
        )


if __name__ == "__main__":
    main()
