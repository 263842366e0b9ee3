"""The floor under a tiny dashboard page: what one read costs, from the wire up.

Run:
    .venv/bin/python bench/round_trips.py URL [--runs 500]

Why: the Exports page makes two reads (the schema gate every page runs, and the filters'
choices), about 1 ms in all, and its naive baseline is 11–22 ms. `bench/run.py` compares the
naive baseline with the page's own read (the gate is the same code for any page and the naive
side does not run it), so the 20× bar is on the filters' read alone; the page's absolute time
keeps the gate. Either way the margin depends on what a single read costs on this machine.
This prints, as medians of `--runs` calls on one warm connection:

- a bare `SELECT 1` through psycopg (or sqlite3) alone: the round trip itself;
- the same through the dashboard's reader engine (pool checkout, SQLAlchemy's execute);
- the two reads the Exports page makes, through that engine;
- the filters' statement on the bare driver (what PostgreSQL's execution adds);
- the naive baseline of the Exports page (bench/naive.py), and the ratios.
"""

import argparse
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import naive  # noqa: E402
from pages_catalog import Selection  # noqa: E402

from arena.analytics.agents import _FILTER_OPTIONS, filter_options  # noqa: E402
from arena.analytics.overview import schema_revision  # noqa: E402
from arena.storage.db import create_db_engine  # noqa: E402


def median_ms(call: Callable[[], Any], runs: int) -> float:
    """Median wall time of `call` in ms, after a warm-up of 20 calls (prepared statements)."""
    for _ in range(20):
        call()
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        times.append((time.perf_counter() - began) * 1000.0)
    return statistics.median(times)


def bare_driver(url: str) -> Any:
    """A plain DBAPI connection in autocommit, as the reader engine runs on PostgreSQL."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return sqlite3.connect(parsed.database or ":memory:", isolation_level=None)
    import psycopg

    dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    return psycopg.connect(dsn, autocommit=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--runs", type=int, default=500)
    args = parser.parse_args()

    engine = create_db_engine(args.url, role="reader")
    raw = bare_driver(args.url)
    filters_sql = str(_FILTER_OPTIONS.compile(engine, compile_kwargs={"literal_binds": True}))

    def raw_select_1() -> None:
        raw.execute("SELECT 1").fetchall()

    def engine_select_1() -> None:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1").fetchall()

    def raw_filters() -> None:
        raw.execute(filters_sql).fetchall()

    def naive_page() -> None:
        naive.NAIVE["exports"](naive.Tables(engine), Selection(None, None, None))

    rows = {
        "SELECT 1, bare driver": median_ms(raw_select_1, args.runs),
        "SELECT 1, reader engine": median_ms(engine_select_1, args.runs),
        "schema_revision() (the gate)": median_ms(lambda: schema_revision(engine), args.runs),
        "filter_options()": median_ms(lambda: filter_options(engine), args.runs),
        "filters' statement, bare driver": median_ms(raw_filters, args.runs),
    }
    naive_ms = median_ms(naive_page, max(5, args.runs // 50))
    page_ms = rows["schema_revision() (the gate)"] + rows["filter_options()"]
    floor_ms = 2 * rows["SELECT 1, reader engine"]
    print(f"{engine.dialect.name}: medians of {args.runs} calls on one warm connection")
    for label, ms in rows.items():
        print(f"  {label:<34} {ms:7.3f} ms")
    print(f"  {'Exports page (gate + filters)':<34} {page_ms:7.3f} ms")
    print(f"  {'naive baseline of the page':<34} {naive_ms:7.3f} ms")
    models_ms = rows["filter_options()"]
    print(f"  page ratio with the gate on one side only: {naive_ms / page_ms:.1f}x")
    print(
        f"  read-model ratio (bench/run.py's; the gate on neither side): "
        f"{naive_ms / models_ms:.1f}x; the 20x bar: {naive_ms / 20:.3f} ms"
    )
    print(f"  two SELECT 1 through the engine ({floor_ms:.3f} ms): {naive_ms / floor_ms:.1f}x")
    engine.dispose()
    raw.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
