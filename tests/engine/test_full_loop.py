"""The whole loop through loopback servers, numbers computed by hand.

start cohort → sync (Gamma-shaped server) → decide (OpenAI-compatible server, one scripted
answer per model) → snapshot → prices move, two markets resolve → sync → resolve → snapshot.
The answers are scripted (not the simulated model server's personas) because every number
below is computed by hand from those exact bets; the personas' whole loop is `test_demo_llm`.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal as D
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.responders import default_responders
from arena.config import Methodology, load_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.market_sync import sync_markets
from arena.engine.settlement import resolve_markets
from arena.engine.snapshots import take_snapshots
from arena.engine.sources import GammaSource
from arena.lineup import parse_lineup
from arena.markets.gamma import GammaClient
from arena.storage.db import session_scope
from arena.storage.models import Agent, BrierScore, PortfolioSnapshot, Position
from tests.engine.chat_server import answer, serve_models
from tests.markets.gamma_server import Reply, serve
from tests.markets.test_gamma import raw_market

SUNDAY = datetime(2026, 11, 1, tzinfo=UTC)
NEXT_SUNDAY = SUNDAY + timedelta(weeks=1)
LINEUP = parse_lineup(
    '[[family]]\nid = "m-a"\ndisplay_name = "A"\nprovider = "T"\nmodel = "test/a"\n'
    '[[family]]\nid = "m-b"\ndisplay_name = "B"\nprovider = "T"\nmodel = "test/b"\n'
)


def gamma_market(
    mid: str, outcomes: list[str], prices: list[str], volume: float, **extra: Any
) -> dict[str, Any]:
    return raw_market(
        mid,
        outcomes=json.dumps(outcomes),
        outcomePrices=json.dumps(prices),
        volumeNum=volume,
        volume=str(volume),
        endDate="2026-12-31T00:00:00Z",
        **extra,
    )


def resolved(raw: dict[str, Any], prices: list[str]) -> dict[str, Any]:
    return {
        **raw,
        "closed": True,
        "umaResolutionStatus": "resolved",
        "outcomePrices": json.dumps(prices),
    }


WEEK1 = {
    "501": gamma_market("501", ["Yes", "No"], ["0.40", "0.60"], 9000),
    "502": gamma_market("502", ["No", "Yes"], ["0.70", "0.30"], 8000),
    "503": gamma_market("503", ["Red", "Blue", "Green"], ["0.5", "0.3", "0.2"], 7000),
}
WEEK2 = {
    "501": gamma_market("501", ["Yes", "No"], ["0.55", "0.45"], 9500),
    "502": resolved(WEEK1["502"], ["0", "1"]),  # Yes won: the NO position loses
    "503": resolved(WEEK1["503"], ["0", "1", "0"]),  # Blue won
}


@contextmanager
def gamma(markets: dict[str, dict[str, Any]]) -> Iterator[GammaSource]:
    """A Gamma-shaped server: open markets on the keyset list, every market by id."""
    with serve() as server:
        listed = [m for m in markets.values() if not m.get("closed")]
        server.script("/markets/keyset", Reply(body={"markets": listed}))
        for mid, raw in markets.items():
            server.script(f"/markets/{mid}", Reply(body=raw))
        with GammaClient(server.url, min_interval=0.0, sleep=lambda _s: None) as client:
            yield GammaSource(client)


def snapshot_of(engine: Engine, family: str, slot: datetime) -> PortfolioSnapshot:
    with session_scope(engine) as s:
        return s.exec(
            select(PortfolioSnapshot)
            .join(Agent, col(Agent.id) == PortfolioSnapshot.agent_id)
            .where(Agent.family_id == family, PortfolioSnapshot.slot == slot)
        ).one()


def test_full_loop_with_hand_computed_numbers(engine: Engine) -> None:
    methodology = Methodology()
    with serve_models() as llm:
        llm.script_model(
            "test/a",
            answer(
                {
                    "action": "BET",
                    "bets": [
                        {"market_id": "501", "side": "YES", "amount": 500},
                        {"market_id": "503", "side": "Blue", "amount": 300},
                    ],
                    "reasoning": "value",
                },
                "test/a",
            ),
        )
        llm.script_model(
            "test/b",
            answer(
                {
                    "action": "BET",
                    "bets": [{"market_id": "502", "side": "NO", "amount": 1000}],
                    "reasoning": "fade",
                },
                "test/b",
            ),
        )
        settings = load_settings(llm_api_key="sk-loop", llm_base_url=llm.url)
        start_cohort(engine, SUNDAY, LINEUP, methodology)
        with gamma(WEEK1) as source:
            assert sync_markets(engine, source, SUNDAY, 500).top == 3
        responders, close = default_responders(settings, sleep=lambda _s: None)
        try:
            result = run_decisions(
                engine, SUNDAY + timedelta(minutes=5), LINEUP, methodology, responders
            )
        finally:
            close()
        assert result.statuses == {"ok": 2} and result.trades == 3

    take_snapshots(engine, SUNDAY + timedelta(minutes=10))
    a1 = snapshot_of(engine, "m-a", SUNDAY + timedelta(minutes=10))
    assert (a1.cash_balance, a1.positions_value, a1.total_value) == (
        D("9200"),
        D("800"),
        D("10000"),
    )
    b1 = snapshot_of(engine, "m-b", SUNDAY + timedelta(minutes=10))
    # 1000 / 0.70 = 1428.571428 NO shares (rounded down), marked at 0.70 = 999.9999996 → $1,000
    assert (b1.cash_balance, b1.positions_value, b1.total_value) == (
        D("9000"),
        D("1000"),
        D("10000"),
    )
    assert b1.brier_score is None and b1.num_resolved_bets == 0

    with gamma(WEEK2) as source:
        synced = sync_markets(engine, source, NEXT_SUNDAY, 500)
        assert (synced.top, synced.held_refreshed) == (1, 2)
        settled = resolve_markets(engine, source, NEXT_SUNDAY)
    assert sorted(settled.resolved) == ["502", "503"] and settled.brier_rows == 2

    take_snapshots(engine, NEXT_SUNDAY + timedelta(minutes=10))
    a2 = snapshot_of(engine, "m-a", NEXT_SUNDAY + timedelta(minutes=10))
    # cash 9200 + 1000 Blue shares paid $1; 1250 YES shares of 501 now marked at 0.55
    assert (a2.cash_balance, a2.positions_value, a2.total_value) == (
        D("10200"),
        D("687.5"),
        D("10887.5"),
    )
    assert (a2.total_pnl, a2.total_pnl_percent) == (D("887.5"), pytest.approx(8.875))
    assert a2.brier_score == pytest.approx((1 - 300 / 2375) ** 2)
    b2 = snapshot_of(engine, "m-b", NEXT_SUNDAY + timedelta(minutes=10))
    assert (b2.cash_balance, b2.total_value, b2.total_pnl_percent) == (
        D("9000"),
        D("9000"),
        pytest.approx(-10.0),
    )
    assert b2.brier_score == pytest.approx(0.16) and b2.num_resolved_bets == 1

    with session_scope(engine) as s:
        positions = {(p.market_id, p.side): p for p in s.exec(select(Position))}
        assert positions[("502", "NO")].shares == 0 and positions[("502", "NO")].status == "lost"
        assert positions[("502", "NO")].realized_pnl == D("-1000")
        assert positions[("503", "Blue")].status == "won"
        assert positions[("503", "Blue")].realized_pnl == D("700")
        assert positions[("501", "YES")].shares == D("1250")
        briers = sorted(b.forecast_probability for b in s.exec(select(BrierScore)))
        assert briers == [pytest.approx(300 / 2375), pytest.approx(0.4)]
