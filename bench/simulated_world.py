"""Benchmark: building the simulated world and ranking its top 500 markets.

Run: .venv/bin/python bench/simulated_world.py  — prints its figures; record them in
bench/RESULTS.md. The engine calls top_markets every sync (5 minutes of simulated time), so it
must stay far below a demo's per-step budget.
"""

import statistics
import time
from datetime import UTC, datetime, timedelta

from arena.sim.world import SimulatedWorld

START = datetime(2026, 1, 4, tzinfo=UTC)


def main() -> None:
    began = time.perf_counter()
    world = SimulatedWorld(11, START, n_initial=1000, new_per_day=6)
    build = time.perf_counter() - began
    at = START + timedelta(hours=3)
    world.top_markets(at)
    timings = []
    for hours in range(20):
        began = time.perf_counter()
        world.top_markets(at + timedelta(hours=hours), limit_total=500)
        timings.append(time.perf_counter() - began)
    print(f"markets in world: {len(world.market_ids())}")
    print(f"build: {build * 1000:.0f} ms")
    print(
        f"top_markets(500) median: {statistics.median(timings) * 1000:.1f} ms "
        f"(max {max(timings) * 1000:.1f} ms)"
    )


if __name__ == "__main__":
    main()
