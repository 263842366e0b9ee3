"""`arena demo --methodology v2`: a short v2 season offline, against the simulated CLOB through
the real ClobClient, every price it used with its provenance (methodology v2)."""

import csv
import io
import json
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.analytics.export.tables import ExportFilters, write_csv
from arena.app.demo import DemoSummary, format_summary
from arena.storage.db import create_db_engine
from arena.storage.tables import (
    COHORTS,
    MARKET_SNAPSHOT_ITEMS,
    MARKETS,
    PORTFOLIO_SNAPSHOTS,
    TRADES,
)
from tests.stated_season import DemoSeasons


@pytest.fixture(scope="module")
def v2_season(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, DemoSummary]]:
    """The suite's v2 demo season (`tests.stated_season.V2_LINEUP`: the baselines, the oracle
    and one simulated LLM, nine days), played once per run and shared with the bundle, export
    and dashboard tests; what is asserted here holds of any v2 season with an LLM family."""
    engine = create_db_engine(demo_seasons.v2(tmp_path_factory.mktemp("v2_demo")))
    yield engine, demo_seasons.v2_summary()
    engine.dispose()


def test_a_v2_season_plays_end_to_end(v2_season: tuple[Engine, DemoSummary]) -> None:
    engine, summary = v2_season
    assert summary.methodology == "v2"
    assert summary.cohorts == 2 and summary.decisions > 0
    assert any("methodology v2" in line for line in format_summary(summary))
    with engine.connect() as conn:
        versions = conn.execute(select(COHORTS.c.methodology_version)).scalars().all()
        assert versions == ["v2", "v2"]
        assert (
            conn.execute(
                select(func.count()).where(MARKETS.c.clob_token_ids.is_(None))
            ).scalar_one()
            == 0
        )
        # every frozen-universe item carries its quotes; most prices are CLOB midpoints
        items = conn.execute(select(MARKET_SNAPSHOT_ITEMS.c.quotes)).scalars().all()
        assert items and all(quotes for quotes in items)
        sources = [quotes[0]["source"] for quotes in items]
        assert sources.count("clob_mid") > len(sources) // 2
        # the world's faulted books show up as Gamma fallbacks with their reasons
        reasons = {q[0]["fallback_reason"] for q in items if q[0]["source"] == "gamma"}
        assert reasons and reasons <= {
            "unknown_token",
            "empty_book",
            "one_sided_book",
            "crossed_book",
            "malformed",
            "clob_unavailable",
            "no_token",
        }
        # every BUY/SELL trade carries its source and quote; settlements none
        trades = conn.execute(
            select(TRADES.c.trade_type, TRADES.c.price, TRADES.c.price_source, TRADES.c.price_quote)
        ).all()
        bought = [t for t in trades if t.trade_type in ("BUY", "SELL")]
        assert bought
        # the original's rule set: no trade at Gamma's price, each at its re-read midpoint
        assert all(t.price_source == "clob_mid" and t.price_quote for t in bought)
        assert all(t.price_quote["frozen_price"] is not None for t in bought)
        assert all(t.price_source is None for t in trades if t.trade_type not in ("BUY", "SELL"))
        # every valuation row records each open position's mark provenance
        missing = conn.execute(
            select(func.count()).where(PORTFOLIO_SNAPSHOTS.c.price_provenance.is_(None))
        ).scalar_one()
        assert missing == 0
        marks = conn.execute(
            select(PORTFOLIO_SNAPSHOTS.c.price_provenance)
            .order_by(PORTFOLIO_SNAPSHOTS.c.id.desc())
            .limit(50)
        ).scalars()
        statuses = {r["status"] for row in marks for r in row.values()}
        assert statuses & {"accepted", "accepted_with_gamma_disagreement"}
    # the legs refused for want of a CLOB price, as the `legs` CSV lists them
    out = io.StringIO()
    write_csv(engine, "legs", ExportFilters(), out, 10**6)
    legs = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert legs and all(json.loads(leg["execution_quotes"]) for leg in legs)
    refused = [leg for leg in legs if leg["reason"] == "no_clob_price"]
    assert all(leg["executed"] == "false" for leg in refused)
    fell_back = [json.loads(leg["execution_quotes"]) for leg in refused]
    assert all(q["source"] == "gamma" for quotes in fell_back for q in quotes)
