"""Benchmark: one cohort's replay bundle, built then verified, at a year's scale.

Run: .venv/bin/python bench/bundle.py --url sqlite:///PATH/year.db [--cohort N] [--repeats 3]
The year comes from `bench/make_year.py`. Without --cohort: the middle one of the completed
cohorts (or of all, if none completed). A cohort not finished is bundled provisionally, as
`arena bundle --provisional` does. Prints, per repeat, the build time (`build_bundle`: every
read and the leaderboard), the zip's time, the verify time (`verify_bundle` on the files read
back from the zip, as `arena verify FILE.zip` does after its imports), then the bundle's size
per file, zipped and not, and the process's peak RSS. Record the figures in bench/RESULTS.md.
"""

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

from arena.analytics.replay.bundle import build_bundle
from arena.analytics.replay.format import read_bundle
from arena.analytics.replay.verify import verify_bundle
from arena.storage.db import create_db_engine
from arena.storage.tables import COHORTS


def pick_cohort(url: str) -> tuple[int, str]:
    """The middle completed cohort (else the middle cohort) and its status."""
    engine = create_db_engine(url, role="reader")
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                select(COHORTS.c.number, COHORTS.c.status).order_by(COHORTS.c.number)
            ).all()
    finally:
        engine.dispose()
    if not rows:
        sys.exit("no cohort in this database: build a year with bench/make_year.py first")
    completed = [r for r in rows if r.status == "completed"] or list(rows)
    middle = completed[len(completed) // 2]
    return int(middle.number), str(middle.status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--cohort", type=int)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    number, status = pick_cohort(args.url) if args.cohort is None else (args.cohort, "?")
    engine = create_db_engine(args.url, role="reader")
    builds, zips, verifies = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bundle.zip"
        for _ in range(args.repeats):
            began = time.perf_counter()
            try:
                built = build_bundle(engine, number)
            except Exception:  # not finished: as `arena bundle --provisional`
                built = build_bundle(engine, number, provisional=True)
            builds.append(time.perf_counter() - began)
            began = time.perf_counter()
            path.write_bytes(built.bundle.zip_bytes())
            zips.append(time.perf_counter() - began)
            began = time.perf_counter()
            report = verify_bundle(read_bundle(path), published_hash=built.hash)
            verifies.append(time.perf_counter() - began)
            if not report.ok:
                sys.exit(f"verify failed on cohort {number}: {report.checks}")
        zipped = path.stat().st_size
    engine.dispose()
    files = built.bundle.files
    print(f"cohort {number} ({status}), bundle {built.hash}")
    print(f"{'file':<26}{'bytes':>14}")
    for name, data in sorted(files.items(), key=lambda item: -len(item[1])):
        print(f"{name:<26}{len(data):>14,}")
    total = sum(len(data) for data in files.values())
    print(f"{'all files':<26}{total:>14,}")
    print(f"{'zip':<26}{zipped:>14,}")
    compared = sum(check.compared for check in report.checks)
    for label, times in (("build", builds), ("zip", zips), ("verify", verifies)):
        print(
            f"{label:<8} median {statistics.median(times):7.2f} s   "
            f"min {min(times):7.2f} s   max {max(times):7.2f} s"
        )
    print(f"values compared by verify: {compared:,}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {peak:,.0f} MB")


if __name__ == "__main__":
    main()
