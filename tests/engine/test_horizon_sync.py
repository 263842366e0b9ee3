"""The live sync of a `horizon` universe, on both backends: the overall top N is all
long-dated, yet the horizon cohort decides on the top short-dated markets, because the sync
also asks Gamma (the loopback, filtering by end date as Gamma does) for the top N ending within
the horizon; a database without horizon cohorts makes exactly the one request it always made."""

import random
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.agents.responders import default_responders
from arena.config import Methodology, load_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.jobs import FRESH_UNIVERSE, JobContext, sync_markets_job
from arena.engine.market_sync import HORIZON_MARGIN, horizons_to_sync
from arena.engine.sources import GammaSource
from arena.engine.universe import snapshot_items
from arena.markets.gamma import KEYSET_PATH, GammaClient, GammaUnavailable
from arena.storage.db import session_scope
from arena.storage.models import Cohort, Decision, Market
from tests.engine.test_horizon import CASH_ONLY
from tests.factories import WEEK1
from tests.markets.gamma_server import GammaServer, Reply, serve
from tests.markets.test_gamma_window import V1_QUERY, copy, recorded

RUN = WEEK1 + timedelta(weeks=1, minutes=5)  # cohort 2's first decision run
AT = RUN - timedelta(minutes=5)  # the sync before it (Sunday 00:00)
N = 3
METHOD = Methodology(market_universe_size=N)
TOP = {**V1_QUERY, "limit": "100"}
WINDOW = {"end_date_min": "2026-11-08T00:00:00Z", "end_date_max": "2026-11-22T01:00:00Z"}


def catalogue() -> list[dict[str, object]]:
    """By volume: three long-dated markets (two recorded, ending 2026-12-31), one short of
    volume but past the 14-day horizon, then four within it."""
    return [
        copy("90", RUN + timedelta(days=200), 9e8),
        *recorded()[1:],
        copy("80", RUN + timedelta(days=20), 9e6),
        copy("1", RUN + timedelta(days=2), 5e6),
        copy("2", RUN + timedelta(days=10), 4e6),
        copy("3", RUN + timedelta(days=13), 3e6),
        copy("4", RUN + timedelta(days=13), 2e6),
    ]


@pytest.fixture
def gamma() -> Iterator[GammaServer]:
    with serve() as running:
        running.catalogue(catalogue())
        yield running


def sync(engine: Engine, server: GammaServer) -> dict[str, object]:
    settings = load_settings().model_copy(update={"methodology": METHOD})
    responders, close = default_responders(settings, sleep=lambda _s: None)
    options: dict[str, object] = {"min_interval": 0.0, "max_attempts": 1, "timeout": 2.0}
    try:
        with GammaClient(server.url, rng=random.Random(1), **options) as client:  # type: ignore[arg-type]
            ctx = JobContext(engine, settings, CASH_ONLY, GammaSource(client), responders)
            return sync_markets_job(ctx, AT).counts()
    finally:
        close()


def universes(engine: Engine) -> dict[int, list[str]]:
    responders, close = default_responders(load_settings(), sleep=lambda _s: None)
    try:
        run_decisions(engine, RUN, CASH_ONLY, METHOD, responders)
    finally:
        close()
    with session_scope(engine) as s:
        rows = s.exec(select(Cohort.number, Decision).join(Decision)).all()
        return {
            n: [i.market_id for i in snapshot_items(s, d.market_snapshot_id or 0)] for n, d in rows
        }


def test_a_horizon_cohort_gets_the_short_dated_top_though_the_overall_top_is_long_dated(
    engine: Engine, gamma: GammaServer
) -> None:
    lineup = CASH_ONLY
    start_cohort(engine, WEEK1, lineup, METHOD)
    start_cohort(engine, RUN, lineup, METHOD, horizon_days=14)
    counts = sync(engine, gamma)
    assert [r.query for r in gamma.requests_to(KEYSET_PATH)] == [TOP, {**TOP, **WINDOW}]
    assert counts["top"] == N and counts["horizon_top"] == {"14d": N}
    assert universes(engine) == {1: ["90", "703258", "665374"], 2: ["1", "2", "3"]}


def test_a_database_without_horizon_cohorts_syncs_with_the_one_request_it_always_made(
    engine: Engine, gamma: GammaServer
) -> None:
    start_cohort(engine, WEEK1, CASH_ONLY, METHOD)
    counts = sync(engine, gamma)
    assert [r.query for r in gamma.requests_to(KEYSET_PATH)] == [TOP]
    assert "horizon_top" not in counts and counts["inserted"] == N
    # The horizon a process is configured to start is fetched before its cohort exists.
    assert horizons_to_sync(engine, AT, METHOD.decision_window_weeks) == []
    assert horizons_to_sync(engine, AT, METHOD.decision_window_weeks, configured=7) == [7]


def test_a_horizon_fetch_that_fails_fails_the_sync_with_nothing_written(engine: Engine) -> None:
    start_cohort(engine, RUN, CASH_ONLY, METHOD, horizon_days=14)
    with serve() as server:
        server.script(
            KEYSET_PATH, Reply(503, "down"), query={"end_date_min": WINDOW["end_date_min"]}
        )
        server.script(
            "/markets", Reply(503, "down"), query={"end_date_min": WINDOW["end_date_min"]}
        )
        server.catalogue(catalogue())
        with pytest.raises(GammaUnavailable):
            sync(engine, server)
    with session_scope(engine) as s:
        assert s.exec(select(func.count()).select_from(Market)).one() == 0


def test_the_margin_covers_the_oldest_sync_a_decision_run_accepts() -> None:
    assert HORIZON_MARGIN >= FRESH_UNIVERSE
