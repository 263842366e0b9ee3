"""Benchmark: a late entry over the 8 cohorts of a finished demo season.

Run: .venv/bin/python bench/late_entry.py [--database /tmp/late-bench/demo.db] [--weeks 8]

What it does: plays `arena demo --weeks W` into the database unless it already holds a finished
demo season (not timed: the season is the input), then times the second command,
`arena demo --weeks W --late-entry newcomer` (the late entrant from the simulated model server
over HTTP, the simulated world as its market source), in its own process under
`/usr/bin/time -v`: wall time and peak RSS of that process. Prints the command's summary, the
late entrant's rows (shadow cohorts, decisions, trades) and the load average before and after.
"""

import argparse
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARENA = [sys.executable, "-c", "from arena.app.cli import main; main()"]


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def arena(args: list[str], env: dict[str, str], timed: bool) -> tuple[str, str]:
    """Run `arena ARGS` (under /usr/bin/time -v when `timed`); its stdout and stderr."""
    command = (["/usr/bin/time", "-v"] if timed else []) + ARENA + args
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"arena {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", type=Path, default=Path("/tmp/late-bench/demo.db"))
    parser.add_argument("--weeks", type=int, default=8)
    args = parser.parse_args()
    args.database.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, ARENA_DATABASE_URL=f"sqlite:///{args.database}")
    weeks = ["--weeks", str(args.weeks)]
    print(f"load at start: {load()}")
    if not args.database.exists():
        arena(["demo", *weeks], env, timed=False)
    out, err = arena(["demo", *weeks, "--late-entry", "newcomer"], env, timed=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", err)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    print(out.strip())
    print(f"wall: {wall.group(1) if wall else '?'}")
    print(f"peak RSS: {int(rss.group(1)) / 1024:.0f} MiB" if rss else "peak RSS: ?")
    with sqlite3.connect(args.database) as conn:
        for label, sql in (
            ("shadow cohorts", "SELECT count(*) FROM cohorts WHERE late_entry_of IS NOT NULL"),
            (
                "late entrant decisions",
                "SELECT count(*) FROM decisions d JOIN agents a ON a.id = d.agent_id "
                "WHERE a.family_id = 'newcomer'",
            ),
            (
                "late entrant trades",
                "SELECT count(*) FROM trades t JOIN agents a ON a.id = t.agent_id "
                "WHERE a.family_id = 'newcomer'",
            ),
        ):
            print(f"{label}: {conn.execute(sql).fetchone()[0]}")
    print(f"load at end: {load()}")


if __name__ == "__main__":
    main()
