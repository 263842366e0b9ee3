"""Benchmark: `arena demo` (a whole simulated season) into a throw-away SQLite database.

Run: .venv/bin/python bench/demo.py [--weeks 8] [--seed 7] [--tail WEEKS] [--sync-hours H]
Prints wall time, CPU time and peak RSS, progress each simulated Sunday, and the CPU time
spent inside each job (CPU, not wall, so a busy machine does not skew the split). Record the
figures in bench/RESULTS.md. Target: 8 weeks under 90 s and 600 MB on 2 cores.
"""

import argparse
import resource
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import arena.app.demo
from arena.app.demo import format_summary, run_demo
from arena.config import load_settings
from arena.engine import jobs
from arena.lineup import load_lineup
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db


def _timed(name: str, job: Callable[..., Any], spent: dict[str, list[float]]) -> Callable[..., Any]:
    def wrapper(ctx: jobs.JobContext, at: datetime) -> Any:
        began = time.process_time()
        try:
            return job(ctx, at)
        finally:
            spent[name].append(time.process_time() - began)

    return wrapper


def _weekly_report(engine: Any, began: float) -> Callable[[Any], None]:
    """Each simulated Sunday: elapsed CPU and wall time, and positions still open."""
    from sqlalchemy import text

    def on_tick(tick: Any) -> None:
        if tick.at.weekday() == 6 and tick.at.hour == 0 and tick.at.minute == 0:
            with engine.connect() as conn:
                sql = "SELECT count(*) FROM positions WHERE status = 'open'"
                still_open = conn.execute(text(sql)).scalar_one()
            phase = "settling" if tick.settling else "season"
            print(
                f"  {tick.at:%Y-%m-%d} {phase:<8} wall {time.perf_counter() - began:6.1f} s  "
                f"cpu {time.process_time():6.1f} s  open positions {still_open}",
                flush=True,
            )

    return on_tick


def _what_it_shows(engine: Any) -> str:
    """What the season should show: the stored leaderboard (oracle first, P(rank #1)),
    fallback HOLDs, retried decisions and API spend per family."""
    from sqlalchemy import text

    from arena.analytics.stored import stored_result

    stored = stored_result(engine, "leaderboard")
    if stored is None:
        return "no stored leaderboard (the demo's final analyses run did not store one)"
    retried_sql = (
        "SELECT a.family_id, count(*) FROM decisions d JOIN agents a ON a.id = d.agent_id "
        "WHERE (SELECT max(t.attempt_no) FROM decision_attempts t "
        "WHERE t.decision_id = d.id) > 1 GROUP BY a.family_id"
    )
    with engine.connect() as conn:
        retried = dict(conn.execute(text(retried_sql)).all())
    lines = ["family                 return   P(rank 1)  decisions  fallback  retried   API $"]
    for row in stored.frame.sort_values("rank").itertuples():
        lines.append(
            f"  {row.family_id:<20} {row.return_pct:+7.1f}%  {row.p_rank_1:9.3f}  "
            f"{row.decisions:9.0f}  {row.fallback_holds:8.0f}  {retried.get(row.family_id, 0):7d}  "
            f"{row.api_cost_usd:6.2f}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--weeks", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tail", type=int, default=None, help="settling tail cap in weeks")
    parser.add_argument(
        "--sync-hours", type=int, default=None, help="demo sync cadence in hours (default 6)"
    )
    args = parser.parse_args()
    if args.sync_hours:
        arena.app.demo.SYNC_EVERY = timedelta(hours=args.sync_hours)
    spent: dict[str, list[float]] = defaultdict(list)
    for name, job in list(jobs.JOBS.items()):
        jobs.JOBS[name] = _timed(name, job, spent)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'demo.db'}"
        settings = load_settings(database_url=url, llm_api_key=None)
        engine = create_db_engine(url)
        began = time.perf_counter()
        init_db(engine)
        options = {} if args.tail is None else {"tail_weeks": args.tail}
        summary = run_demo(
            engine,
            settings,
            load_lineup(None),
            weeks=args.weeks,
            seed=args.seed,
            on_tick=_weekly_report(engine, began),
            **options,
        )
        wall = time.perf_counter() - began
        size = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 1e6
        shows = _what_it_shows(engine)
        engine.dispose()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak_kb, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    print("\n".join(format_summary(summary)))
    print()
    print(
        f"weeks: {args.weeks}   seed: {args.seed}   sync every {arena.app.demo.SYNC_EVERY}   "
        f"python: {sys.version.split()[0]}"
    )
    print(
        f"wall time: {wall:.1f} s   CPU time: {cpu:.1f} s   peak RSS: {peak_kb / 1024:.0f} MB   "
        f"database: {size:.1f} MB"
    )
    print(shows)
    print("CPU time inside each job (excluding job-run bookkeeping):")
    for name, times in sorted(spent.items(), key=lambda kv: -sum(kv[1])):
        total = sum(times)
        print(
            f"  {name:<13} {len(times):>6} runs  {total:6.1f} s  "
            f"{total / len(times) * 1000:7.2f} ms/run"
        )


if __name__ == "__main__":
    main()
