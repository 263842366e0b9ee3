"""`arena sync-markets`: the universe plus held markets, upserted without losing known values."""

import json
from datetime import timedelta
from decimal import Decimal as D
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select

from arena.app.cli import main
from arena.engine.market_sync import upsert_markets
from arena.engine.universe import freeze_universe, snapshot_items
from arena.markets.gamma import parse_market
from arena.storage.db import create_db_engine, session_scope
from arena.storage.migrate import init_db
from arena.storage.models import Market, SystemLog
from tests.engine.sources import fixture_markets, reopened
from tests.factories import WEEK1, new_cohort_agents, trade_into
from tests.markets.gamma_server import Reply, serve


def test_missing_values_never_overwrite_known_ones(engine: Engine) -> None:
    raw = fixture_markets()["703258"]
    with session_scope(engine) as s:
        upsert_markets(
            s, [parse_market({**raw, "category": "Politics", "liquidityNum": 1234.5})], WEEK1
        )
    sparse = {k: v for k, v in raw.items() if k not in ("liquidity", "liquidityNum", "category")}
    sparse["outcomePrices"] = "not json"
    with session_scope(engine) as s:
        inserted, updated = upsert_markets(s, [parse_market(sparse)], WEEK1 + timedelta(hours=1))
        assert (inserted, updated) == (0, 1)
    with session_scope(engine) as s:
        market = s.get(Market, "703258")
        assert market is not None
        assert market.category == "Politics"
        assert market.liquidity == 1234.5
        assert market.prices == ["0.0195", "0.9805"]
        assert market.updated_at == WEEK1 + timedelta(hours=1)


def test_a_settled_market_keeps_its_final_status(engine: Engine) -> None:
    raw = fixture_markets()["842093"]
    with session_scope(engine) as s:
        upsert_markets(s, [parse_market(raw)], WEEK1)
        market = s.get(Market, "842093")
        assert market is not None and market.status == "closed"
        market.status = "resolved"
    with session_scope(engine) as s:
        upsert_markets(s, [parse_market(reopened(raw))], WEEK1)
        market = s.get(Market, "842093")
        assert market is not None and market.status == "resolved"


def test_frozen_universe_ranks_open_priced_markets_by_volume(engine: Engine) -> None:
    raw = fixture_markets()
    with session_scope(engine) as s:
        upsert_markets(s, [parse_market(r) for r in raw.values()], WEEK1)
        snapshot = freeze_universe(s, WEEK1, limit=2)
        items = snapshot_items(s, snapshot.id)  # type: ignore[arg-type]
        markets = list(s.exec(select(Market)))
    volumes = {m.id: m.volume for m in markets}
    prices = {m.id: m.prices for m in markets}
    assert snapshot.market_count == len(items) == 2
    assert [i.rank for i in items] == [1, 2]
    assert volumes[items[0].market_id] >= volumes[items[1].market_id]  # type: ignore[operator]
    assert all(i.market_id not in ("842093", "40", "253591") for i in items)  # closed: excluded
    assert items[0].prices == prices[items[0].market_id]


def test_cli_sync_against_a_gamma_shaped_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Top markets by keyset paging, plus a held market fetched by id and one that vanished."""
    raw = fixture_markets()
    url = f"sqlite:///{tmp_path / 'sync.db'}"
    eng = create_db_engine(url)
    init_db(eng)
    with session_scope(eng) as s:
        upsert_markets(s, [parse_market(reopened(raw[m])) for m in ("842093", "40")], WEEK1)
    (agent,) = new_cohort_agents(eng, ("gpt-5.1",))
    trade_into(eng, agent, "842093", "YES", "500", "0.5", WEEK1)
    trade_into(eng, agent, "40", "YES", "500", "0.5", WEEK1)
    with serve() as server:
        server.script(
            "/markets/keyset",
            Reply(body={"markets": [raw["703258"], raw["665374"]], "next_cursor": "c2"}),
            query={"after_cursor": None},
        )
        server.script("/markets/keyset", Reply(body={"markets": []}), query={"after_cursor": "c2"})
        server.script("/markets/842093", Reply(body=raw["842093"]))
        monkeypatch.setenv("ARENA_DATABASE_URL", url)
        monkeypatch.setenv("ARENA_GAMMA_URL", server.url)
        with pytest.raises(SystemExit) as exited:
            main(["sync-markets", "--at", "2026-11-22T00:00:00Z"])
        out, err = capsys.readouterr()
    assert exited.value.code == 0, err
    assert "synced 2 top markets and 1 held markets" in out and "1 unavailable" in out
    with session_scope(eng) as s:
        markets = {m.id: m for m in s.exec(select(Market))}
        assert set(markets) == {"842093", "40", "703258", "665374"}
        assert markets["842093"].closed and markets["842093"].uma_resolution_status == "resolved"
        assert markets["703258"].prices == ["0.0195", "0.9805"]
        logs = [log.message for log in s.exec(select(SystemLog))]
        assert any("not available" in message for message in logs)
    assert json.loads(raw["703258"]["outcomePrices"]) == ["0.0195", "0.9805"]
    assert D(markets["665374"].prices[0]) == D("0.175")
