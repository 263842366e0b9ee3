"""Live jobs never touch simulated markets, and the simulated world never touches live ones.

The probe: `arena resolve` on a demo database, with ARENA_GAMMA_URL at a
Gamma that knows real markets under the simulated ids (900001…), asked Gamma about every due
simulated market, overwrote it with the real one and settled its positions against a
real-world outcome, with no warning. Here a short demo season (the real `run_demo`, baselines
only) is played into a SQLite file and a PostgreSQL database; a loopback Gamma answers the
recorded real payloads (tests/fixtures/gamma/recorded) under the simulated ids; the real CLI
runs against it, and its request log, the rows and the output are checked.
"""

import copy
import json
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.app.cli import main
from arena.app.demo import DEMO_START, run_demo
from arena.config import load_settings
from arena.core.timeutil import parse_instant
from arena.engine.market_sync import upsert_markets
from arena.engine.settlement import markets_due
from arena.lineup import parse_lineup
from arena.markets.gamma import parse_market
from arena.storage.db import create_db_engine, dispose_engines, session_scope
from arena.storage.migrate import init_db
from arena.storage.tables import (
    BRIER_SCORES,
    MARKET_SNAPSHOT_ITEMS,
    MARKET_SNAPSHOTS,
    MARKETS,
    POSITIONS,
    SYSTEM_LOGS,
    TRADES,
)
from tests.backends import BACKENDS
from tests.markets.gamma_server import GammaServer, Reply, serve
from tests.pg import PostgresCluster
from tests.stated_season import DemoSeasons, checkpoint

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "gamma" / "recorded"
LINEUP_TOML = """[[family]]
id = "baseline-favorite"
display_name = "Favourite"
provider = "Forecaster Arena"
model = "baseline/favorite"
kind = "baseline"
strategy = "favorite"
"""
DEMO_END = DEMO_START + timedelta(days=2)  # two simulated days: open positions, few settled
LATER = "2026-06-01T00:00:00Z"  # every simulated market held at DEMO_END has ended by then
SKIPPED = "simulated market(s) skipped: this source (gamma) is live"


def recorded(name: str) -> Any:
    return json.loads((RECORDED / name).read_text())


def real_under(market_id: str, raw: dict[str, Any]) -> dict[str, Any]:
    """A real, recorded Gamma payload as if Polymarket had a market with this id."""
    return {**copy.deepcopy(raw), "id": market_id}


def play(url: str) -> None:
    """The short `arena demo` season (baselines and the oracle) into the empty database `url`."""
    engine = create_db_engine(url)
    try:
        init_db(engine)
        settings = load_settings(database_url=url, llm_api_key=None)
        run_demo(engine, settings, parse_lineup(LINEUP_TOML), weeks=1, seed=1, stop_at=DEMO_END)
    finally:
        engine.dispose()


def play_sqlite(folder: Path) -> None:
    play(f"sqlite:///{folder / 'demo.db'}")
    checkpoint(folder / "demo.db")  # a copy is whole


@pytest.fixture(scope="module", params=BACKENDS)
def demo_template(request: pytest.FixtureRequest, demo_seasons: DemoSeasons) -> Iterator[str]:
    """A short `arena demo` season (baselines and the oracle): a SQLite file played once per
    test run (`DemoSeasons.once`, shared by the xdist workers), or a PostgreSQL database of
    the worker's cluster, played once per worker, the tests copy (CREATE DATABASE … TEMPLATE)."""
    if request.param == "sqlite":
        played, _ = demo_seasons.once("test_live_vs_simulated: baselines, 2 days", play_sqlite)
        yield f"sqlite:///{played / 'demo.db'}"
        return
    url = request.getfixturevalue("pg_cluster").new_database()
    play(url)
    yield url
    request.getfixturevalue("pg_cluster").drop_database(url)


@pytest.fixture
def demo_url(demo_template: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The test's own copy of the played season."""
    if demo_template.startswith("sqlite:///"):
        shutil.copyfile(demo_template.removeprefix("sqlite:///"), tmp_path / "demo.db")
        yield f"sqlite:///{tmp_path / 'demo.db'}"
        return
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    url = cluster.new_database(template=demo_template.rsplit("/", 1)[1])
    try:
        yield url
    finally:
        dispose_engines()
        cluster.drop_database(url)


@pytest.fixture
def demo_db(demo_url: str) -> Iterator[Engine]:
    engine = create_db_engine(demo_url)
    try:
        yield engine
    finally:
        engine.dispose()


@pytest.fixture
def gamma(demo_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[GammaServer]:
    """A loopback Gamma the CLI is pointed at, with the test's database and lineup."""
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(LINEUP_TOML)
    with serve() as server:
        monkeypatch.setenv("ARENA_DATABASE_URL", demo_url)
        monkeypatch.setenv("ARENA_GAMMA_URL", server.url)
        monkeypatch.setenv("ARENA_LINEUP", str(lineup))
        yield server


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def state(engine: Engine) -> dict[str, list[dict[str, Any]]]:
    """Every row a settlement or a sync could change, in id order."""
    with engine.connect() as conn:
        return {
            table.name: [
                dict(row._mapping) for row in conn.execute(select(table).order_by(table.c.id))
            ]
            for table in (MARKETS, POSITIONS, TRADES, BRIER_SCORES)
        }


def simulated_rows(snapshot: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [row for row in snapshot["markets"] if row["source"] == "simulated"]


def held_ids(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        query = select(POSITIONS.c.market_id).where(POSITIONS.c.status == "open")
        return set(conn.execute(query).scalars())


def asked_about(server: GammaServer, ids: set[str]) -> list[str]:
    """The simulated ids the server was asked about, one by one."""
    return sorted(r.path for r in server.requests if r.path.rsplit("/", 1)[-1] in ids)


def warnings(engine: Engine, source: str) -> list[str]:
    with engine.connect() as conn:
        query = select(SYSTEM_LOGS.c.message).where(
            SYSTEM_LOGS.c.source == source, SYSTEM_LOGS.c.level == "WARNING"
        )
        return list(conn.execute(query).scalars())


def test_resolve_on_a_demo_database_leaves_every_simulated_market_alone(
    demo_db: Engine, gamma: GammaServer, capsys: pytest.CaptureFixture[str]
) -> None:
    held = held_ids(demo_db)
    with session_scope(demo_db) as s:
        due = {m.id for m in markets_due(s, parse_instant(LATER))}
    assert held and held <= due  # the probe's setting: open simulated positions, all due
    resolved = recorded("market_resolved.raw.json")
    for market_id in due:
        gamma.script(f"/markets/{market_id}", Reply(body=real_under(market_id, resolved)))
    before = state(demo_db)

    code, out, err = run(["resolve", "--at", LATER], capsys)

    assert code == 0, err
    assert asked_about(gamma, due) == []  # Gamma was never asked about a simulated id
    assert state(demo_db) == before  # no market, position, trade or Brier row changed
    assert f"{len(due)} {SKIPPED}" in out
    assert "checked 0 markets" in out and "0 positions settled" in out
    assert f"{len(due)} {SKIPPED}" in warnings(demo_db, "resolve")


def test_sync_on_a_demo_database_neither_asks_about_nor_overwrites_simulated_markets(
    demo_db: Engine, gamma: GammaServer, capsys: pytest.CaptureFixture[str]
) -> None:
    held = held_ids(demo_db)
    before = state(demo_db)
    unheld = next(r["id"] for r in simulated_rows(before) if r["id"] not in held)
    clash_held = min(held)
    real = recorded("markets_list.raw.json")  # three real open markets
    listed = [*real, real_under(clash_held, real[0]), real_under(unheld, real[1])]
    gamma.script("/markets/keyset", Reply(body={"markets": listed}), query={})
    for market_id in held:
        gamma.script(f"/markets/{market_id}", Reply(body=real_under(market_id, real[2])))

    code, out, err = run(["sync-markets", "--at", "2026-01-11T00:00:00Z"], capsys)

    assert code == 0, err
    assert asked_about(gamma, held | {unheld}) == []  # held simulated markets not refreshed
    after = state(demo_db)
    assert simulated_rows(after) == simulated_rows(before)  # the clashing ids included
    assert {k: after[k] for k in ("positions", "trades")} == {
        k: before[k] for k in ("positions", "trades")
    }
    live = {r["id"]: r for r in after["markets"] if r["source"] == "gamma"}
    assert set(live) == {str(raw["id"]) for raw in real}  # the live ones are synced beside
    skipped = len(held | {unheld})
    assert f"{skipped} {SKIPPED}" in out
    assert f"{skipped} {SKIPPED}" in warnings(demo_db, "sync-markets")


def test_a_live_decision_run_shows_no_simulated_market(
    demo_db: Engine, gamma: GammaServer, capsys: pytest.CaptureFixture[str]
) -> None:
    real = recorded("markets_list.raw.json")
    gamma.script("/markets/keyset", Reply(body={"markets": real}), query={})
    assert run(["sync-markets", "--at", "2026-01-11T00:00:00Z"], capsys)[0] == 0
    before = state(demo_db)

    code, _, err = run(["decide", "--at", "2026-01-11T00:05:00Z"], capsys)

    assert code == 0, err
    with demo_db.connect() as conn:
        snapshot = conn.execute(
            select(MARKET_SNAPSHOTS).order_by(MARKET_SNAPSHOTS.c.id.desc()).limit(1)
        ).one()
        shown = conn.execute(
            select(MARKET_SNAPSHOT_ITEMS.c.market_id).where(
                MARKET_SNAPSHOT_ITEMS.c.snapshot_id == snapshot.id,
                MARKET_SNAPSHOT_ITEMS.c.rank <= snapshot.market_count,
            )
        ).scalars()
        universe = set(shown)
    assert universe == {str(raw["id"]) for raw in real}  # the live markets, nothing simulated
    new_buys = [
        t
        for t in state(demo_db)["trades"]
        if t not in before["trades"] and t["trade_type"] == "BUY"
    ]
    assert new_buys and {t["market_id"] for t in new_buys} <= universe
    assert any(
        "simulated market(s) left out of the universe" in w for w in warnings(demo_db, "decide")
    )


def test_the_simulated_world_never_touches_live_markets(db_url: str) -> None:
    """A demo played into a database that already synced live markets (no cohort yet)."""
    engine = create_db_engine(db_url)
    real = recorded("markets_list.raw.json")
    # A live market under an id the simulated world also lists, and a live one trading
    # throughout the demo with more volume than any simulated market.
    clash = real_under("900001", real[1])
    with session_scope(engine) as s:
        upsert_markets(s, [parse_market(clash), parse_market(real[0])], DEMO_START)
    live_ids = {"900001", str(real[0]["id"])}
    before = [r for r in state(engine)["markets"] if r["id"] in live_ids]
    try:
        settings = load_settings(database_url=db_url, llm_api_key=None)
        run_demo(engine, settings, parse_lineup(LINEUP_TOML), weeks=1, seed=1, stop_at=DEMO_END)
        after = state(engine)
        with engine.connect() as conn:
            shown = set(conn.execute(select(MARKET_SNAPSHOT_ITEMS.c.market_id)).scalars())
    finally:
        engine.dispose()
    assert [r for r in after["markets"] if r["id"] in live_ids] == before
    assert not live_ids & shown  # never in a simulated decision run's snapshot
    assert not live_ids & {t["market_id"] for t in after["trades"]}
