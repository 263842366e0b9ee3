"""The floor under a tiny dashboard page: what one read costs, from the wire up.

Run:
    .venv/bin/python bench/round_trips.py URL [--runs 500]

Why: the Exports page makes two reads (the schema gate every page runs, and the filters'
choices), about a millisecond in all, so its time in a browser (bench/browser.py) is nearly all
Streamlit and the browser. This prints, as medians of `--runs` calls on one warm connection:

- a bare `SELECT 1` through psycopg (or sqlite3) alone: the round trip itself;
- the same through the dashboard's reader engine (pool checkout, SQLAlchemy's execute);
- the two reads the Exports page makes, through that engine;
- the filters' statement on the bare driver (what the database's execution adds).
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

from arena.analytics.views.agents import _FILTER_OPTIONS, filter_options  # noqa: E402
from arena.analytics.views.database import schema_revision  # noqa: E402
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

    rows = {
        "SELECT 1, bare driver": median_ms(raw_select_1, args.runs),
        "SELECT 1, reader engine": median_ms(engine_select_1, args.runs),
        "schema_revision() (the gate)": median_ms(lambda: schema_revision(engine), args.runs),
        "filter_options()": median_ms(lambda: filter_options(engine), args.runs),
        "filters' statement, bare driver": median_ms(raw_filters, args.runs),
    }
    page_ms = rows["schema_revision() (the gate)"] + rows["filter_options()"]
    print(f"{engine.dialect.name}: medians of {args.runs} calls on one warm connection")
    for label, ms in rows.items():
        print(f"  {label:<34} {ms:7.3f} ms")
    print(f"  {'Exports page (gate + filters)':<34} {page_ms:7.3f} ms")
    engine.dispose()
    raw.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
