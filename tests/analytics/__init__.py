"""Data for the analytics tests: a hand-computed book and a simulated season.

`build_book` writes a few trades whose every number is worked out by hand in the tests.

The season: three weekly cohorts of the baselines and the oracle trade a seeded
`SimulatedWorld` through `start_cohort`, `sync_markets`, `run_decisions`, `resolve_markets` and
`take_snapshots` (daily, then two weeks of settling tail). It is built once per backend per
test session and only read afterwards, so every analytics module can use it cheaply.
"""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.responders import default_responders
from arena.app.demo import ORACLE
from arena.config import Methodology, load_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.market_sync import sync_markets
from arena.engine.settlement import resolve_markets, settle_market
from arena.engine.snapshots import take_snapshots
from arena.lineup import Lineup, parse_lineup
from arena.markets.resolution import Verdict
from arena.sim.world import SimulatedWorld
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import init_db
from arena.storage.models import Agent, Market
from tests.backends import BACKENDS
from tests.factories import WEEK1, family, market, new_cohort_agents, trade_into

SEASON_START = datetime(2026, 1, 4, tzinfo=UTC)  # a Sunday
SEASON_SEED = 5  # world and baseline seed: the random baseline is seeded with it too
SEASON_WEEKS = 3
SEASON_TAIL_WEEKS = 2
UNIVERSE = 30

_BASELINES = parse_lineup(
    "".join(
        f'[[family]]\nid = "baseline-{s}"\ndisplay_name = "Baseline {s}"\nprovider = "Arena"\n'
        f'model = "baseline/{s}"\nkind = "baseline"\nstrategy = "{s}"\n'
        for s in ("cash", "favorite", "random")
    )
)
SEASON_LINEUP = Lineup(families=[*_BASELINES.families, ORACLE])

_built: dict[str, str] = {}

AT = WEEK1 + timedelta(days=3, hours=23, minutes=30)  # settlement of the hand-built book
DAY = timedelta(days=1)


def play_season(engine: Engine) -> SimulatedWorld:
    """Play the season into a migrated, empty database (about 3 s on SQLite)."""
    world = SimulatedWorld(
        SEASON_SEED,
        SEASON_START,
        n_initial=120,
        new_per_day=10,
        days=(SEASON_WEEKS + SEASON_TAIL_WEEKS) * 7 + 1,
    )
    methodology = Methodology(market_universe_size=UNIVERSE)
    responders, close = default_responders(
        load_settings(llm_api_key=None), SEASON_SEED, probability=world.hidden_probability
    )
    season_end = SEASON_START + timedelta(weeks=SEASON_WEEKS)
    at, end = SEASON_START, season_end + timedelta(weeks=SEASON_TAIL_WEEKS)
    try:
        while at <= end:
            sunday = at.weekday() == 6 and at < season_end
            if sunday:
                start_cohort(engine, at, SEASON_LINEUP, methodology)
            sync_markets(engine, world, at, UNIVERSE)
            resolve_markets(engine, world, at)
            if sunday:
                run_decisions(
                    engine, at + timedelta(minutes=5), SEASON_LINEUP, methodology, responders
                )
            take_snapshots(engine, at + timedelta(minutes=10))
            take_snapshots(engine, at + timedelta(hours=12))
            at += timedelta(days=1)
    finally:
        close()
    return world


def season_url(backend: str, new_database: Callable[[], str], folder: Path) -> str:
    """The URL of the season's database on `backend`, built on first use and then shared."""
    if backend not in _built:
        url = new_database() if backend == "postgres" else f"sqlite:///{folder / 'season.db'}"
        engine = create_db_engine(url)
        try:
            init_db(engine)
            play_season(engine)
        finally:
            engine.dispose()
        _built[backend] = url
    return _built[backend]


def season_fixture() -> Callable[..., Iterator[Engine]]:
    """A `season` fixture for a test module: the shared season's engine on each backend."""

    @pytest.fixture(params=BACKENDS)
    def season(
        request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[Engine]:
        if request.param == "postgres":
            new_database = request.getfixturevalue("pg_cluster").new_database
        else:

            def new_database() -> str:
                raise AssertionError("SQLite needs no server database")

        folder = tmp_path_factory.getbasetemp() / "analytics-season"
        folder.mkdir(exist_ok=True)
        engine = create_db_engine(season_url(request.param, new_database, folder))
        try:
            yield engine
        finally:
            engine.dispose()

    return season


def build_book(engine: Engine) -> None:
    """Two cohorts. Cohort 1: A bets on both markets of event E1 (m1 wins, m2 loses) and on
    an open named market of event E2; B fades m1 and wins a lone market m3; cash holds.
    Cohort 2: A wins m3 again, B and cash hold. Marks: m4's Blue moves 0.30 → 0.45.
    m1 and m2 settle at `AT` (23:30 UTC), m3 the next day."""
    new_cohort_agents(engine, ("m-a", "m-b", "baseline-cash"), number=1)
    with session_scope(engine) as s:
        s.add(market("m1", event_id="E1"))
        s.add(market("m2", event_id="E1", prices=["0.3", "0.7"]))
        s.add(market("m3", prices=["0.8", "0.2"]))
        s.add(
            market(
                "m4",
                event_id="E2",
                market_type="named",
                outcomes=["Red", "Blue", "Green"],
                prices=["0.5", "0.3", "0.2"],
            )
        )
    new_cohort_agents(engine, ("m-a", "m-b", "baseline-cash"), number=2)
    with session_scope(engine) as s:
        s.merge(family("baseline-cash", "baseline"))
    with session_scope(engine) as s:
        agents: dict[tuple[int, str], int] = {}
        for a in s.exec(select(Agent).order_by(col(Agent.id))):
            assert a.id is not None  # loaded rows always carry their id
            agents[a.cohort_id, a.family_id] = a.id
        c1, c2 = sorted({cid for cid, _ in agents})
    t = WEEK1 + timedelta(minutes=5)
    trade_into(engine, agents[c1, "m-a"], "m1", "YES", "500", "0.4", t)
    trade_into(engine, agents[c1, "m-a"], "m2", "YES", "200", "0.3", t)
    trade_into(engine, agents[c1, "m-a"], "m4", "Blue", "300", "0.3", t)
    trade_into(engine, agents[c1, "m-b"], "m1", "NO", "1000", "0.6", t)
    trade_into(engine, agents[c1, "m-b"], "m3", "YES", "100", "0.8", t)
    trade_into(engine, agents[c2, "m-a"], "m3", "YES", "100", "0.8", t + timedelta(weeks=1))
    for mid, winner, when in (("m1", "Yes", AT), ("m2", "No", AT), ("m3", "Yes", AT + DAY)):
        settle_market(engine, mid, Verdict("resolved", winner, "test"), when)
    with session_scope(engine) as s:
        s.execute(
            update(Market).where(col(Market.id) == "m4").values(prices=["0.4", "0.45", "0.15"])
        )
    take_snapshots(engine, AT + timedelta(weeks=1))
