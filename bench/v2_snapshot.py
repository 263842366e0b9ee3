"""Methodology v2's snapshot pass at a year: ~500 markets marked at CLOB midpoints read over
HTTP from the loopback simulated CLOB.

Run:
    .venv/bin/python bench/v2_snapshot.py --sqlite /tmp/year.db [--markets 500] [--repeats 3]
        [--seed 7 --weeks 52] [--markdown]

The year is `bench/make_year.py`'s (seed and weeks must be the ones it was built with: the
simulated CLOB serves that world's books). On a COPY of it (`bench/run.py`'s
`database_copy`):

1. **The year's live cohorts become v2** (version and stamp), at the slot after the year's
   last snapshot. Why convert rather than start new v2 cohorts: their agents, cash, open
   positions and history are the year's own, built by the engine's jobs, so this pass values
   the very books `bench/run.py --only snapshot` values under v1, and the two figures differ
   only by what v2 adds (the CLOB read, the marks computed afresh, the provenance written).
2. **Topped up to `--markets` held markets.** The year's live cohorts hold ~360-480 distinct
   open markets; if fewer than asked, their agents get one more open position each in the
   most traded markets of the latest sync that no one holds (a $100 YES or first-outcome
   position at the market's price, round-robin over the agents), so the pass prices that
   many markets.
3. **The simulated CLOB** of the year's world is started as `arena clob-server` in its own
   process (the real CLOB is another machine: its book-drawing is not this process's CPU), at
   the pass's instant; the pass reads it through the project's real `ClobClient` as the jobs
   build it (`JobContext.price_reader`: retries, batches of 100 tokens, requests paced
   `CLOB_MIN_INTERVAL` apart; `--min-interval` and `--batch-size` try others).

Timed (`take_snapshots(engine, at, prices=...)`, the job's own call), after one untimed pass
that warms the process: per repeat a **first pass** with a new database engine and a new CLOB
client (new connections: what each `arena snapshot` run pays) and the valuation memo cleared,
then the **next pass** 10 minutes later on the same client (the scheduler's case); medians of
`--repeats`. Then the CLOB read alone (`snapshot_prices.v2_quotes`), to say where the time
goes. Target: a pass < 2 s. Prints the request counts and the marks' provenance.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.sql.elements import ColumnElement

from arena.config import METHODOLOGY_V2, VERSION_RULES
from arena.engine import snapshot_prices, snapshots
from arena.engine.jobs import CLOB_MIN_INTERVAL
from arena.markets.clob import BATCH_SIZE, ClobClient
from arena.storage.db import create_db_engine
from arena.storage.tables import AGENTS, COHORTS, MARKETS, PORTFOLIO_SNAPSHOTS, POSITIONS

try:
    from bench.run import (
        Row,
        database_copy,
        database_url,
        fmt_ms,
        load_average,
        machine,
        markdown,
        median,
    )
except ModuleNotFoundError:  # run as a script (python bench/v2_snapshot.py): bench/ on sys.path
    from run import (  # type: ignore[no-redef]
        Row,
        database_copy,
        database_url,
        fmt_ms,
        load_average,
        machine,
        markdown,
        median,
    )

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
TARGET_MS = 2000.0
TOP_UP_STAKE = Decimal(100)


@dataclass
class Setup:
    """What the copy holds for the pass: v2 agents, their open positions, held markets."""

    at: datetime
    cohorts: int = 0
    agents: int = 0
    positions: int = 0
    markets: int = 0
    added: int = 0


@dataclass(frozen=True)
class ClientOptions:
    """How the pass's client paces and batches: by default as `JobContext.price_reader`
    builds it (the options measure the alternatives: `--min-interval 0.1` is the client's
    own default, slower than the jobs' pacing: bench/RESULTS.md)."""

    min_interval: float = CLOB_MIN_INTERVAL
    batch_size: int = BATCH_SIZE


@dataclass
class V2Point:
    """The timed passes and what they read and wrote."""

    setup: Setup
    options: ClientOptions
    first_ms: list[float] = field(default_factory=list)
    next_ms: list[float] = field(default_factory=list)
    read_ms: list[float] = field(default_factory=list)
    requests: Counter[str] = field(default_factory=Counter)
    passes: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    provenance_bytes: int = 0
    tokens: int = 0


# --------------------------------------------------------------------------------------------
# The copy: live cohorts to v2, topped up to the markets wanted


def _live(at: datetime) -> ColumnElement[bool]:
    """A cohort still valued at `at` (the snapshot pass's own rule)."""
    return (COHORTS.c.status != "completed") & (COHORTS.c.week_start <= at)


def live_cohorts_to_v2(conn: Connection, at: datetime) -> int:
    """Stamp every cohort live at `at` v2 (its version and the stamp's v2 rules)."""
    rows = conn.execute(select(COHORTS.c.id, COHORTS.c.constants).where(_live(at))).all()
    for cohort_id, constants in rows:
        stamp = {**(constants or {}), "version": METHODOLOGY_V2, **VERSION_RULES[METHODOLOGY_V2]}
        conn.execute(
            update(COHORTS)
            .where(COHORTS.c.id == cohort_id)
            .values(methodology_version=METHODOLOGY_V2, constants=stamp)
        )
    return len(rows)


def _held_markets(conn: Connection, at: datetime) -> set[str]:
    query = (
        select(POSITIONS.c.market_id)
        .join(AGENTS, AGENTS.c.id == POSITIONS.c.agent_id)
        .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
        .join(MARKETS, MARKETS.c.id == POSITIONS.c.market_id)
        .where(
            _live(at), POSITIONS.c.status == "open", MARKETS.c.status == "open", ~MARKETS.c.closed
        )
        .distinct()
    )
    return set(conn.execute(query).scalars())


def top_up(conn: Connection, at: datetime, wanted: int) -> int:
    """Open positions in the most traded open markets no live agent holds, until the live
    cohorts hold `wanted` open markets; how many were added. Only markets of the latest sync
    (the universe a decision would see): a market that left the top 500 unheld is no longer
    refreshed, so its row may still say open long after the CLOB stopped serving its book."""
    held = _held_markets(conn, at)
    missing = wanted - len(held)
    if missing <= 0:
        return 0
    agents = (
        conn.execute(select(AGENTS.c.id).join(COHORTS).where(_live(at)).order_by(AGENTS.c.id))
        .scalars()
        .all()
    )
    synced = select(func.max(MARKETS.c.updated_at)).where(MARKETS.c.status == "open")
    candidates = conn.execute(
        select(MARKETS.c.id, MARKETS.c.outcomes, MARKETS.c.prices)
        .where(
            MARKETS.c.status == "open",
            ~MARKETS.c.closed,
            MARKETS.c.updated_at >= synced.scalar_subquery(),
            MARKETS.c.clob_token_ids.is_not(None),
            MARKETS.c.id.not_in(held) if held else MARKETS.c.id.is_not(None),
        )
        .order_by(MARKETS.c.volume.desc(), MARKETS.c.id)
    ).all()
    rows: list[dict[str, Any]] = []
    for market_id, outcomes, prices in candidates:
        if len(rows) == missing or not agents:
            break
        price = Decimal(str(prices[0])) if prices else Decimal(0)
        if not 0 < price < 1:  # a position needs a price to enter at
            continue
        side = "YES" if [o.casefold() for o in outcomes] == ["yes", "no"] else outcomes[0]
        rows.append(
            {
                "agent_id": agents[len(rows) % len(agents)],
                "market_id": market_id,
                "side": side,
                "status": "open",
                "shares": (TOP_UP_STAKE / price).quantize(Decimal("0.000001")),
                "cost_basis": TOP_UP_STAKE,
                "avg_entry_price": price,
                "realized_pnl": Decimal(0),
                "opened_at": at - timedelta(days=1),
            }
        )
    if rows:
        conn.execute(insert(POSITIONS), rows)
    return len(rows)


def prepare(engine: Engine, wanted: int) -> Setup:
    """The copy made ready: v2 live cohorts holding `wanted` markets, at the next slot."""
    with engine.begin() as conn:
        last = conn.execute(select(func.max(PORTFOLIO_SNAPSHOTS.c.slot))).scalar()
        if last is None:
            raise RuntimeError("the database has no portfolio snapshot")
        at = (last if last.tzinfo else last.replace(tzinfo=UTC)) + timedelta(minutes=10)
        setup = Setup(at)
        setup.cohorts = live_cohorts_to_v2(conn, at)
        setup.added = top_up(conn, at, wanted)
        setup.markets = len(_held_markets(conn, at))
        setup.agents = conn.execute(
            select(func.count()).select_from(AGENTS.join(COHORTS)).where(_live(at))
        ).scalar_one()
        setup.positions = conn.execute(
            select(func.count())
            .select_from(POSITIONS.join(AGENTS).join(COHORTS))
            .where(_live(at), POSITIONS.c.status == "open")
        ).scalar_one()
    return setup


# --------------------------------------------------------------------------------------------
# The simulated CLOB in its own process, and a client that counts its requests


@contextmanager
def clob_server(seed: int, weeks: int, at: datetime) -> Iterator[tuple[str, list[str]]]:
    """`arena clob-server` for the year's world at `at`: its origin, and its last lines once
    stopped (it says how many requests it served)."""
    command = [sys.executable, "-m", "arena", "clob-server", "--port", "0"]
    command += ["--seed", str(seed), "--weeks", str(weeks), "--at", at.isoformat()]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    tail: list[str] = []
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+)", banner)
        if found is None:
            raise RuntimeError(f"arena clob-server did not start: {banner!r}")
        yield found[1], tail
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=60)
        tail.extend(line for line in out.splitlines() if line.strip())


class CountingTransport(httpx.HTTPTransport):
    """The default transport, counting requests by method and path."""

    def __init__(self, counts: Counter[str]) -> None:
        super().__init__()
        self.counts = counts

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.counts[f"{request.method} {request.url.path}"] += 1
        return super().handle_request(request)


def client_for(
    origin: str, counts: Counter[str], options: ClientOptions = ClientOptions()
) -> ClobClient:
    """The real client (deployed options unless told), counting its requests."""
    return ClobClient(
        origin,
        transport=CountingTransport(counts),
        min_interval=options.min_interval,
        batch_size=options.batch_size,
    )


# --------------------------------------------------------------------------------------------
# Timing


def _slot_facts(engine: Engine, slot: datetime, point: V2Point) -> None:
    """The marks' statuses and the provenance's size in the rows of `slot`."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(PORTFOLIO_SNAPSHOTS.c.price_provenance).where(PORTFOLIO_SNAPSHOTS.c.slot == slot)
        ).scalars()
        for record in rows:
            if not record:
                continue
            point.provenance_bytes += len(json.dumps(record))
            point.statuses.update(mark["status"] for mark in record.values())


def _always(client: ClobClient) -> Callable[[], ClobClient]:
    """The pass's `prices`: this client."""
    return lambda: client


def measure(
    url: str, origin: str, setup: Setup, repeats: int, options: ClientOptions = ClientOptions()
) -> V2Point:
    """Warm pass, then per repeat a first pass (new engine, new client) and the next pass."""
    point = V2Point(setup, options)
    at = setup.at
    counts: Counter[str] = Counter()
    engine = create_db_engine(url)
    client = client_for(origin, counts, options)
    try:
        snapshots.take_snapshots(engine, at, prices=_always(client))  # warms this process
    finally:
        client.close()
        engine.dispose()
    for _ in range(repeats):
        at += timedelta(minutes=10)
        engine = create_db_engine(url)
        client = client_for(origin, point.requests, options)
        try:
            snapshots._valued.cache_clear()
            began = time.perf_counter()
            snapshots.take_snapshots(engine, at, prices=_always(client))
            point.first_ms.append((time.perf_counter() - began) * 1000)
            at += timedelta(minutes=10)
            began = time.perf_counter()
            result = snapshots.take_snapshots(engine, at, prices=_always(client))
            point.next_ms.append((time.perf_counter() - began) * 1000)
            point.passes += 2
            began = time.perf_counter()
            quotes = snapshot_prices.v2_quotes(engine, at, _always(client))
            point.read_ms.append((time.perf_counter() - began) * 1000)
            point.tokens = sum(len(q) for q in quotes.values())
        finally:
            client.close()
            engine.dispose()
    assert result.slot is not None
    engine = create_db_engine(url)
    try:
        _slot_facts(engine, result.slot, point)
    finally:
        engine.dispose()
    return point


# --------------------------------------------------------------------------------------------
# Output


def report(point: V2Point) -> str:
    """The figures as printed; returns the markdown figure."""
    setup = point.setup
    first, following, read = median(point.first_ms), median(point.next_ms), median(point.read_ms)
    calls = point.passes + len(point.read_ms)
    per_pass = ", ".join(f"{n / calls:.1f} {route}" for route, n in sorted(point.requests.items()))
    marks = sum(point.statuses.values())
    clob = sum(n for s, n in point.statuses.items() if s.startswith("accepted"))
    print(f"\n== v2 snapshot pass at {setup.at:%Y-%m-%d %H:%M} UTC (copy, live cohorts made v2)")
    print(
        f"  {setup.cohorts} cohorts, {setup.agents:,} agents, {setup.positions:,} open positions "
        f"in {setup.markets} open markets ({setup.added} positions added to reach them); "
        f"{point.tokens} token quotes"
    )
    print(
        f"  first pass {fmt_ms(first)} ms (runs: {', '.join(fmt_ms(v) for v in point.first_ms)}), "
        f"next pass {fmt_ms(following)} ms (runs: {', '.join(fmt_ms(v) for v in point.next_ms)})"
    )
    print(f"  of which the CLOB read alone (v2_quotes): {fmt_ms(read)} ms")
    options = point.options
    print(f"  client: min_interval {options.min_interval} s, batch_size {options.batch_size}")
    print(f"  requests per pass: {per_pass}")
    print(
        f"  marks of the last pass: {clob} of {marks} at CLOB midpoints "
        f"({dict(sorted(point.statuses.items()))}); provenance {point.provenance_bytes:,} bytes"
    )
    print(f"  target: a pass < {TARGET_MS / 1000:.0f} s")
    return (
        f"{fmt_ms(first)} ms first pass, {fmt_ms(following)} ms next pass (CLOB read "
        f"{fmt_ms(read)} ms); {setup.agents:,} agents, {setup.positions:,} open positions in "
        f"{setup.markets} markets, {point.tokens} tokens read"
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlite", default=str(ROOT / "data" / "bench" / "year.db"))
    parser.add_argument("--markets", type=int, default=500, help="open markets to hold")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7, help="the year's seed (make_year.py)")
    parser.add_argument("--weeks", type=int, default=52, help="the year's weeks (make_year.py)")
    parser.add_argument("--markdown", action="store_true", help="print a RESULTS.md row")
    parser.add_argument(
        "--min-interval",
        type=float,
        default=CLOB_MIN_INTERVAL,
        help=f"client pacing, s (default the jobs' {CLOB_MIN_INTERVAL}; 0.1 was the client's)",
    )
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="tokens per POST")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    url = database_url(args.sqlite)
    if url.startswith("sqlite") and not Path(args.sqlite).is_file():
        print(f"no database at {args.sqlite}: build it with bench/make_year.py", file=sys.stderr)
        return 2
    print(f"bench/v2_snapshot.py — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {machine()}")
    print(load_average() + " at start", flush=True)
    with database_copy(url) as copy:
        engine = create_db_engine(copy)
        try:
            setup = prepare(engine, args.markets)
        finally:
            engine.dispose()
        with clob_server(args.seed, args.weeks, setup.at) as (origin, tail):
            options = ClientOptions(args.min_interval, args.batch_size)
            point = measure(copy, origin, setup, args.repeats, options)
    figure = report(point)
    print("  " + "; ".join(tail))
    print(load_average() + " at the end")
    met = median(point.first_ms) < TARGET_MS and median(point.next_ms) < TARGET_MS
    if args.markdown:
        what = (
            f"the snapshot pass (v2) at a year, {setup.markets} markets priced by the loopback CLOB"
        )
        target = f"< {TARGET_MS / 1000:.0f} s"
        print(markdown([Row(what, target, "bench/v2_snapshot.py --sqlite <year.db>", figure, met)]))
    return 0 if met else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
