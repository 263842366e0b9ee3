"""Methodology v2's CLOB client is closed when the command or the scheduler ends, a v1-only
snapshot pass never reads v2 holdings, and the v2 snapshot bench prices a pass through the
real client over HTTP.

Real SQLite files, real loopback CLOB servers (the scripted one of `tests.markets.clob_server`
and the simulated world's `arena.sim.clob_server`), the project's real `ClobClient`.
"""

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest
import sqlmodel
from sqlalchemy import event, select
from sqlalchemy.engine import Engine

import arena.markets.clob
from arena.app.cli import main
from arena.app.scheduler import build_context
from arena.config import Methodology, load_settings
from arena.engine.jobs import CLOB_MIN_INTERVAL, SNAPSHOT, JobContext, run_job, slot_for
from arena.engine.market_sync import upsert_markets
from arena.engine.snapshots import take_snapshots
from arena.lineup import Lineup
from arena.markets.clob import ClobClient
from arena.sim.clob_server import ClobServer as SimulatedClob
from arena.sim.world import SimulatedWorld
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import init_db
from arena.storage.models import Cohort
from arena.storage.tables import COHORTS, PORTFOLIO_SNAPSHOTS
from bench.v2_snapshot import measure, prepare
from tests.factories import WEEK1, market, new_cohort_agents, trade_into
from tests.markets.clob_server import ClobServer, serve

AT = WEEK1 + timedelta(days=2, hours=3)
BOOK = {
    "market": "0xabc",
    "asset_id": "t1y",
    "timestamp": "1761342851801",
    "hash": "h",
    "bids": [{"price": "0.41", "size": "100"}],
    "asks": [{"price": "0.45", "size": "100"}],
}


@dataclass
class Arena:
    url: str
    engine: Engine
    clob: ClobServer


def stamp(engine: Engine, version: str) -> None:
    """Every cohort stamped `version` (as if started under it)."""
    with session_scope(engine) as s:
        for cohort in s.exec(sqlmodel.select(Cohort)).all():
            cohort.methodology_version = version
            cohort.constants = Methodology(version=version).stamp()
            s.add(cohort)


@pytest.fixture
def v2_holding(tmp_path: Path) -> Iterator[Arena]:
    """A SQLite database whose one live cohort (v2) holds an open position in market 1, whose
    YES token `t1y` the scripted CLOB serves."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    engine = create_db_engine(url)
    init_db(engine)
    with session_scope(engine) as s:
        s.add(market("1", clob_token_ids=["t1y", "t1n"], updated_at=WEEK1))
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    trade_into(engine, agent, "1", "YES", "500", "0.4", WEEK1 + timedelta(minutes=5))
    stamp(engine, "v2")
    with serve(BOOK) as clob:
        yield Arena(url, engine, clob)
    engine.dispose()


class Recording(ClobClient):
    """The real client, remembering each one built (to ask it whether it was closed)."""

    built: ClassVar[list[ClobClient]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        Recording.built.append(self)


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> list[ClobClient]:
    Recording.built = []
    monkeypatch.setattr(arena.markets.clob, "ClobClient", Recording)
    return Recording.built


def test_the_snapshot_command_closes_the_clob_client_it_built(
    v2_holding: Arena,
    recording: list[ClobClient],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", v2_holding.url)
    monkeypatch.setenv("ARENA_CLOB_URL", v2_holding.clob.url)
    with pytest.raises(SystemExit) as exited:
        main(["snapshot", "--at", AT.isoformat()])
    assert exited.value.code in (0, None), capsys.readouterr().err
    assert "1 agent(s) valued" in capsys.readouterr().out
    (client,) = recording
    assert v2_holding.clob.requests_to("POST", "/books")  # the pass read the CLOB through it
    assert client._client.is_closed


def test_the_scheduler_closes_the_clob_client_when_it_stops(
    v2_holding: Arena, recording: list[ClobClient]
) -> None:
    settings = load_settings(
        database_url=v2_holding.url, clob_url=v2_holding.clob.url, llm_api_key=None
    )
    ctx, close = build_context(settings, Lineup(families=[]))
    run = run_job(ctx, SNAPSHOT, slot_for(SNAPSHOT, AT), AT)
    assert run.status == "ok", run.error
    (client,) = recording
    assert ctx.clob is client and not client._client.is_closed
    assert client._retrier.policy.min_interval == CLOB_MIN_INTERVAL
    close()  # what `scheduler.run` does once the scheduler has shut down
    assert client._client.is_closed
    assert ctx.clob is None  # a later job would build a new one, never use a closed one


def test_a_reader_handed_in_is_its_owners_to_close(v2_holding: Arena) -> None:
    """The demo passes the simulated CLOB's client and closes it with its server."""
    settings = load_settings(database_url=v2_holding.url, llm_api_key=None)
    reader = ClobClient(v2_holding.clob.url)
    ctx = JobContext(
        v2_holding.engine,
        settings,
        Lineup(families=[]),
        cast(Any, None),  # no market source: the context only hands out its reader here
        lambda _f: None,
        clob=reader,
    )
    ctx.close()
    assert ctx.price_reader() is reader and not reader._client.is_closed
    reader.close()


def test_a_pass_reads_v2_holdings_only_while_a_v2_cohort_is_live(v2_holding: Arena) -> None:
    """A v1-only deployment's pass does not run v2's holdings read (the only statement of a
    pass naming `clob_token_ids`); with a live v2 cohort it does, and reads the CLOB."""
    engine = v2_holding.engine
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))

    def no_clob() -> Any:
        raise AssertionError("a v1 pass read the CLOB")

    stamp(engine, "v1")
    take_snapshots(engine, AT, prices=no_clob)
    assert statements and not [s for s in statements if "clob_token_ids" in s]
    stamp(engine, "v2")
    reader = ClobClient(v2_holding.clob.url, min_interval=0.0)
    try:
        take_snapshots(engine, AT + timedelta(minutes=10), prices=lambda: reader)
    finally:
        reader.close()
    assert [s for s in statements if "clob_token_ids" in s]


# ---- bench/v2_snapshot.py -------------------------------------------------------------------


def test_the_v2_bench_prices_its_markets_through_the_real_client(tmp_path: Path) -> None:
    """A small year: the bench turns the live v1 cohort v2, tops its holdings up to the
    markets asked, and times passes that read the world's books over HTTP."""
    url = f"sqlite:///{tmp_path / 'year.db'}"
    engine = create_db_engine(url)
    init_db(engine)
    world = SimulatedWorld(5, WEEK1, n_initial=80, new_per_day=0, days=30)
    listed = world.top_markets(AT, 40)
    with session_scope(engine) as s:
        upsert_markets(s, listed, AT)
    agents = new_cohort_agents(engine, ("gpt-5.1", "baseline-random"))
    binaries = [m for m in listed if m.market_type == "binary" and m.prices][:4]
    for index, parsed in enumerate(binaries):
        price = str(parsed.prices[0]) if parsed.prices else "0.5"
        trade_into(engine, agents[index % 2], parsed.id, "YES", "100", price, AT)
    take_snapshots(engine, AT)  # the year's last v1 pass
    setup = prepare(engine, 20)
    assert (setup.cohorts, setup.agents, setup.markets) == (1, 2, 20)
    assert setup.added == 16 and setup.positions == 20
    with engine.connect() as conn:
        assert conn.execute(select(COHORTS.c.methodology_version)).scalars().all() == ["v2"]
    with SimulatedClob(world, at=setup.at) as clob:
        point = measure(url, clob.origin, setup, repeats=1)
        served = Counter(call.route for call in clob.log)
    assert len(point.first_ms) == len(point.next_ms) == len(point.read_ms) == 1
    assert point.tokens >= 20
    assert served["/books"] >= 4 and point.requests["POST /books"] >= 3
    assert sum(point.statuses.values()) == 20  # each open position's mark, with provenance
    assert point.statuses["accepted"] + point.statuses["accepted_with_gamma_disagreement"] >= 15
    with engine.connect() as conn:
        latest = conn.execute(
            select(PORTFOLIO_SNAPSHOTS.c.price_provenance).order_by(PORTFOLIO_SNAPSHOTS.c.id.desc())
        ).first()
    assert latest is not None and latest[0]
    engine.dispose()
