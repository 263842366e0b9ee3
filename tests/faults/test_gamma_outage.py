"""Gamma down for an hour, through the scheduler's job runner: sync fails are recorded, the
other jobs go on, positions keep their last valuation, and the next sync after it recovers."""

from datetime import timedelta

from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.responders import default_responders
from arena.config import load_settings
from arena.engine.jobs import JobContext, run_job, slot_for
from arena.engine.market_sync import upsert_markets
from arena.engine.sources import GammaSource
from arena.lineup import parse_lineup
from arena.markets.gamma import GammaClient
from arena.storage.db import session_scope
from arena.storage.models import JobRun, Market, PortfolioSnapshot
from tests.engine.test_decisions import MARKETS
from tests.factories import WEEK1, new_cohort_agents, trade_into
from tests.markets.gamma_server import Reply, serve
from tests.markets.test_gamma import raw_market

LINEUP = parse_lineup(
    '[[family]]\nid = "gpt-5.1"\ndisplay_name = "G"\nprovider = "T"\nmodel = "m"\n'
)


def test_an_hour_without_gamma(engine: Engine) -> None:
    with session_scope(engine) as s:
        upsert_markets(s, MARKETS, WEEK1)
    (agent,) = new_cohort_agents(engine, ("gpt-5.1",))
    trade_into(engine, agent, "100", "YES", "500", "0.5", WEEK1)
    settings = load_settings()
    responders, close = default_responders(settings)
    outage_end = WEEK1 + timedelta(hours=1)
    with serve() as gamma:
        gamma.script("/markets/keyset", Reply(503, "down"), query={})
        client = GammaClient(gamma.url, min_interval=0.0, sleep=lambda _s: None, max_attempts=2)
        ctx = JobContext(engine, settings, LINEUP, GammaSource(client), responders)
        at = WEEK1
        while at < outage_end:
            results = [
                run_job(ctx, job, slot_for(job, at), at) for job in ("sync-markets", "snapshot")
            ]
            assert [r.status for r in results] == ["failed", "ok"]
            assert "503" in (results[0].error or "")
            at += timedelta(minutes=10)
        gamma.reset()  # Gamma is back, with a new price for market 100
        gamma.script(
            "/markets/keyset",
            Reply(
                body={
                    "markets": [
                        raw_market("100", outcomes='["Yes", "No"]', outcomePrices='["0.6", "0.4"]')
                    ]
                }
            ),
        )
        assert run_job(ctx, "sync-markets", slot_for("sync-markets", at), at).status == "ok"
        assert run_job(ctx, "snapshot", slot_for("snapshot", at), at).status == "ok"
        client.close()
    close()
    with session_scope(engine) as s:
        runs = s.exec(select(JobRun).where(JobRun.job == "sync-markets")).all()
        assert sorted(r.status for r in runs) == ["failed"] * 6 + ["ok"]
        values = [
            p.total_value
            for p in s.exec(select(PortfolioSnapshot).order_by(col(PortfolioSnapshot.slot)))
        ]
        market = s.get(Market, "100")
        assert market is not None and market.prices == ["0.6", "0.4"]
    assert values[:6] == [values[0]] * 6  # marked at the last known price during the outage
    assert values[-1] > values[0]  # and at the fresh price once Gamma is back
