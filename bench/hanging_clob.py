"""A decision run against a CLOB that hangs on every token, with production's client settings.

Run:
    .venv/bin/python bench/hanging_clob.py [--markets 500] [--behaviour hang|slowloris]

A fresh SQLite database gets `--markets` binary markets (two CLOB tokens each) and one v2
cohort of the baseline families (no model endpoint: the wait measured is the CLOB's alone).
The run reads its universe through the project's real `ClobClient` built as the jobs build
it (`JobContext.price_reader`: 15 s per read, four attempts, 30 s a request in all, batches of
100, requests paced 0.02 s apart), from a loopback server (`tests.hostile_http`) that accepts
every request and never answers (`hang`) or trickles one header byte every 2 s
(`slowloris`). Prints the run's wall time, the requests the server saw, and the decisions'
statuses. Before the client was bounded, a hanging CLOB cost about 122 s a token.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.agents.responders import default_responders
from arena.config import (
    Methodology,
    load_settings,
)
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.jobs import CLOB_MIN_INTERVAL
from arena.engine.market_sync import upsert_markets
from arena.lineup import parse_lineup
from arena.markets.clob import ClobClient
from arena.markets.types import ParsedMarket
from arena.storage.db import get_engine, session_scope
from arena.storage.migrate import init_db
from tests.factories import WEEK1
from tests.hostile_http import hang, hostile, slowloris

LINEUP = """
[[family]]
id = "baseline-favorite"
display_name = "Baseline: favourite"
provider = "Forecaster Arena"
model = "baseline/favorite"
kind = "baseline"
strategy = "favorite"
"""


def markets(count: int) -> list[ParsedMarket]:
    end = WEEK1 + timedelta(days=30)
    return [
        ParsedMarket(
            id=str(1000 + n),
            question=f"Will event {n} happen?",
            market_type="binary",
            outcomes=["Yes", "No"],
            prices=[Decimal("0.4"), Decimal("0.6")],
            volume=float(10_000 - n),
            end_date=end,
            clob_token_ids=[f"y{n}", f"n{n}"],
        )
        for n in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markets", type=int, default=500)
    parser.add_argument("--behaviour", choices=["hang", "slowloris"], default="hang")
    args = parser.parse_args()
    behaviour = hang if args.behaviour == "hang" else slowloris(2.0)
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/bench.db"
        engine = get_engine(url)
        init_db(engine)
        lineup = parse_lineup(LINEUP)
        methodology = Methodology(version="v2")
        with session_scope(engine) as s:
            upsert_markets(s, markets(args.markets), WEEK1)
        start_cohort(engine, WEEK1, lineup, methodology)
        responders, close = default_responders(load_settings())
        with hostile(behaviour) as server:
            reader = ClobClient(server.url, min_interval=CLOB_MIN_INTERVAL)
            started = time.monotonic()
            try:
                result = run_decisions(
                    engine,
                    WEEK1 + timedelta(minutes=5),
                    lineup,
                    methodology,
                    responders,
                    prices=lambda: reader,
                    books=lambda: reader,
                )
            finally:
                seconds = time.monotonic() - started
                reader.close()
                close()
            asked = server.requests
    print(
        f"{args.markets} markets ({2 * args.markets} tokens), CLOB {args.behaviour}: "
        f"run {seconds:.1f} s, {asked} requests sent, decisions {result.statuses}"
    )


if __name__ == "__main__":
    main()
