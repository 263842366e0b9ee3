"""Benchmark: the random null — N seeded random traders over a simulated demo season.

Run: .venv/bin/python bench/random_null.py [--seeds 200] [--weeks 8] [--world-seed 7]
     [--database sqlite:///data/demo.db]
Prints how long the world takes to build and the N replays to run (pure accounting, no
database), the null's spread of returns, and, with --database, the same null recomputed from
that database's frozen universes plus the full leaderboard's time (2,000 bootstrap replicates).
Record the figures in bench/RESULTS.md.
"""

import argparse
import time
from datetime import datetime

import numpy as np

from arena.analytics.stats import leaderboard as lb
from arena.analytics.stats import null_replay, random_null


def _summary(returns: np.ndarray) -> str:
    low, median, high = np.quantile(returns, [0.025, 0.5, 0.975])
    return (
        f"return % over the season: median {median:.2f}, 95% of seeds in [{low:.2f}, {high:.2f}],"
        f" mean {returns.mean():.2f}, sd {returns.std(ddof=1):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--weeks", type=int, default=8)
    parser.add_argument("--world-seed", type=int, default=7)
    parser.add_argument("--database", default=None, help="also time the null from this DB")
    args = parser.parse_args()

    from arena.sim.world import DEFAULT_TAIL_WEEKS, DEMO_START, demo_world

    began = time.perf_counter()
    world = demo_world(args.world_seed, args.weeks)
    cohorts, markets = random_null.world_null_inputs(
        world, args.weeks, start=DEMO_START, tail_weeks=DEFAULT_TAIL_WEEKS
    )
    built = time.perf_counter() - began
    began = time.perf_counter()
    pnl = null_replay.simulate_random_pnl(cohorts, markets, range(args.seeds))
    replay = time.perf_counter() - began
    capital = sum(float(c.starting_balance) for c in cohorts)
    returns = pnl.sum(axis=1) / capital * 100.0
    runs = sum(len(c.runs) for c in cohorts)
    print(
        f"simulated world (seed {args.world_seed}, {args.weeks} weeks): {len(cohorts)} cohorts,"
        f" {runs} decision runs, {len(markets)} markets shown"
    )
    print(f"world + universes: {built:.2f} s")
    per_seed_ms = replay / args.seeds * 1000
    per_run_us = replay / max(1, args.seeds * runs) * 1e6
    print(
        f"random null, {args.seeds} seeds: {replay:.2f} s "
        f"({per_seed_ms:.1f} ms per seed, {per_run_us:.0f} µs per decision run)"
    )
    print(_summary(returns))

    if args.database:
        from arena.storage.db import create_db_engine

        engine = create_db_engine(args.database, role="reader")
        began = time.perf_counter()
        null = random_null.database_random_null(engine, seeds=range(args.seeds))
        from_db = time.perf_counter() - began
        if null.empty:
            print("database: no decision run with a frozen universe")
            return
        per_seed = null.groupby("seed")["pnl"].sum() / null.groupby("seed")["capital"].sum() * 100
        print(f"database null, {args.seeds} seeds: {from_db:.2f} s (load + replay)")
        print("database " + _summary(per_seed.to_numpy()))
        began = time.perf_counter()
        board = lb.leaderboard(engine, null_seeds=args.seeds)
        print(
            f"leaderboard (2,000 replicates + {args.seeds}-seed null): "
            f"{time.perf_counter() - began:.2f} s at {datetime.now():%Y-%m-%d}"
        )
        columns = [
            "family_id",
            "return_pct",
            "return_ci_low",
            "return_ci_high",
            "p_rank_1",
            "rank_low",
            "rank_high",
            "resolved_bets",
            "random_null_percentile",
        ]
        print(board[columns].to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
