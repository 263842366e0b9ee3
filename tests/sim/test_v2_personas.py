"""The simulated personas under methodology v2's total cap (docs/methodology-v2.md).

A v2 prompt caps the SUM of a decision's bets at 25% of the cash before it. The personas fit
their legs to that total, except at their `overspend` rate, where they add up wrong and are
refused and asked again (the malformed-answer retry path, kept exercised). A v1 prompt is
answered as it always was (tests/test_demo.py and tests/test_v2_v1_identity.py hold v1's
season to the cent).
"""

import random
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from arena.agents.parsing import parse_decision
from arena.agents.prompts import PortfolioView, PromptMarket, system_prompt, user_prompt
from arena.app.demo import DEMO_START, run_demo
from arena.config import Methodology, load_settings
from arena.core.accounting import BetLimits
from arena.core.execution import total_bet_error
from arena.lineup import load_lineup
from arena.sim.models import SimulatedModels
from arena.sim.personas import PERSONAS
from arena.sim.prompt_view import PromptMarket as ShownMarket
from arena.sim.prompt_view import PromptView, parse_prompt, states_total_cap
from arena.sim.replies import OVERSHOOT, Leg, fit_total, overshoot, total_capped
from arena.sim.world import SimulatedWorld
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db
from arena.storage.tables import DECISIONS

SEED = 5
LIMITS = BetLimits()
CAP_REFUSAL = "above the total cap"  # the engine's refusal text (core.execution.total_bet_error)


def leg(amount: str, market: str = "m1") -> Leg:
    sides = (("YES", Decimal("0.4")), ("NO", Decimal("0.6")))
    return Leg(
        ShownMarket(market, "Will it?", "binary", sides),
        "YES",
        Decimal("0.4"),
        0.6,
        Decimal(amount),
    )


def test_fit_total_scales_every_leg_by_one_factor_and_drops_what_falls_under_the_minimum() -> None:
    legs = [leg("2000", "a"), leg("1000", "b"), leg("100", "c")]
    fitted = fit_total(legs, Decimal("2500"), Decimal("50"))
    assert [x.amount for x in fitted] == [Decimal("1612.90"), Decimal("806.45"), Decimal("80.64")]
    assert sum(x.amount for x in fitted) <= Decimal("2500")
    # a leg scaled under the minimum is left out (it would be rejected on its own)
    small = fit_total([leg("2400", "a"), leg("60", "b")], Decimal("1000"), Decimal("50"))
    assert [(x.market.market_id, x.amount) for x in small] == [("a", Decimal("975.60"))]
    # within the total: untouched
    assert fit_total(legs[1:], Decimal("2500"), Decimal("50")) == legs[1:]


def test_overshoot_adds_up_over_the_total() -> None:
    legs = [leg("600", "a"), leg("400", "b")]
    over = overshoot(legs, Decimal("2500"), Decimal("1.2"))
    assert [x.amount for x in over] == [Decimal("1800.00"), Decimal("1200.00")]
    assert sum(x.amount for x in over) > Decimal("2500")


def test_total_capped_overspends_at_the_personas_rate() -> None:
    """The draw alone: `overspend` of the answers go over, each 10-50% over the maximum."""
    persona = next(p for p in PERSONAS if p.name == "gambler")
    view = PromptView(None, Decimal(10000), Decimal(50), Decimal(2500), (), ())
    legs = [leg("2000", "a"), leg("1500", "b")]
    rng = random.Random(1)
    totals = [sum(x.amount for x in total_capped(persona, view, legs, rng)) for _ in range(4000)]
    over = [t for t in totals if t > Decimal(2500)]
    assert len(over) / len(totals) == pytest.approx(persona.overspend, abs=0.015)
    low, high = OVERSHOOT
    assert all(2500 * low - 1 <= t <= 2500 * high for t in map(float, over))
    assert all(t <= Decimal(2500) for t in totals if t not in over)


# ---- the personas answering real prompts ---------------------------------------------------


@pytest.fixture(scope="module")
def world() -> SimulatedWorld:
    return SimulatedWorld(SEED, DEMO_START, n_initial=150, new_per_day=0, days=60)


def messages(world: SimulatedWorld, day: int, cash: Decimal, *, v2: bool) -> list[dict[str, str]]:
    """A decision prompt of `day` as the engine writes it, v1's or v2's."""
    at = DEMO_START + timedelta(days=day, minutes=5)
    markets = [PromptMarket.from_parsed(m) for m in world.top_markets(at, 120)]
    cap = LIMITS.max_bet(cash)
    portfolio = PortfolioView(cash, cap, LIMITS.min_bet, [])
    system = system_prompt(LIMITS.min_bet, LIMITS.max_bet_fraction, Decimal(10000), total_cap=v2)
    user = user_prompt(at, 1, portfolio, markets, total_cap=v2)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass
class Answers:
    bets: int = 0
    over: int = 0


def answer_totals(world: SimulatedWorld, *, v2: bool) -> dict[str, Answers]:
    """Each persona's BET answers over 40 decision states, and how many break the total cap
    by the engine's own rule (`total_bet_error`)."""
    models = SimulatedModels(SEED, world)
    counts: dict[str, Answers] = {}
    for persona in PERSONAS:
        tally = counts.setdefault(persona.name, Answers())
        for day in range(0, 40):
            cash = Decimal(3000 + 250 * day)
            served = models.respond(persona.models[0], messages(world, day, cash, v2=v2))
            if served.status != 200:
                continue
            parsed = parse_decision(served.body["choices"][0]["message"]["content"]).ok
            if parsed is None or parsed.action != "BET":
                continue
            tally.bets += 1
            tally.over += total_bet_error(parsed, cash, LIMITS) is not None
    return counts


def test_the_v2_prompt_is_recognised_and_v1_is_not(world: SimulatedWorld) -> None:
    assert states_total_cap(messages(world, 0, Decimal(10000), v2=True))
    assert not states_total_cap(messages(world, 0, Decimal(10000), v2=False))
    view = parse_prompt(messages(world, 0, Decimal(8000), v2=True)[1]["content"])
    assert (view.max_bet, view.cap_fraction) == (Decimal(2000), Decimal("0.2500"))


def test_under_v2_personas_keep_their_bets_within_the_total_cap(world: SimulatedWorld) -> None:
    """Under v1's prompt a sixth of the BET answers add up past 25% of the cash (v1 caps each
    bet, not the sum: 37 of 235 here); under v2's the personas fit the total, but for their
    overspend rate (7 of 236 here), which keeps the refusal path exercised."""
    v1 = answer_totals(world, v2=False)
    v2 = answer_totals(world, v2=True)
    v1_share = sum(a.over for a in v1.values()) / sum(a.bets for a in v1.values())
    v2_share = sum(a.over for a in v2.values()) / sum(a.bets for a in v2.values())
    assert sum(a.bets for a in v2.values()) >= 200
    assert v1_share > 0.10  # what the v2 engine refused before the personas knew the rule
    expected = statistics.mean(p.overspend for p in PERSONAS)  # 0.039
    assert 0 < v2_share <= 2 * expected


# ---- a v2 demo season ----------------------------------------------------------------------

WEEKS = 2  # two decision Sundays: 1 + 2 cohorts of the seven LLM families decide (21)
# The named rate: decisions with an answer refused for the total cap. The personas' mean
# overspend is 0.039 a betting answer; 0.08 leaves room for chance (one refusal in 21).
CAP_DECISION_RATE = 0.08


@pytest.fixture(scope="module")
def v2_season(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Any]]:
    """A v2 demo season with the bundled lineup, stopped just after its second decision run
    (16 s; a third run doubled it for the same check); its LLM families' decisions."""
    path: Path = tmp_path_factory.mktemp("v2_personas") / "demo.db"
    url = f"sqlite:///{path}"
    engine = create_db_engine(url)
    try:
        init_db(engine)
        settings = load_settings(
            database_url=url, llm_api_key=None, methodology=Methodology(version="v2")
        )
        stop = DEMO_START + timedelta(weeks=WEEKS - 1, hours=1)
        run_demo(
            engine, settings, load_lineup(None), weeks=WEEKS, seed=3, stop_at=stop, finish=False
        )
        with engine.connect() as conn:
            columns = (DECISIONS.c.status, DECISIONS.c.validation_errors, DECISIONS.c.provider)
            rows = conn.execute(select(*columns)).all()
    finally:
        engine.dispose()
    yield [row for row in rows if row.provider == "simulated"]


def test_a_v2_season_refuses_few_decisions_for_the_total_cap(v2_season: list[Any]) -> None:
    """Before the personas knew v2's cap, three weeks of this season (seed 3) had 5 of their 42
    LLM decisions (11.9%) refused for it, 4 of them ending as fallback HOLDs (the persona
    repeated its plan on every retry); now at most `CAP_DECISION_RATE` are (2 of 42 over
    three weeks, 1 of the 21 of these two when written), and a refused plan is answered again
    within the cap: none is lost to a fallback HOLD."""
    assert len(v2_season) == 7 * (1 + 2)
    assert any(CAP_REFUSAL in e for row in v2_season for e in row.validation_errors or [])
    refused = [
        row for row in v2_season if any(CAP_REFUSAL in e for e in row.validation_errors or [])
    ]
    assert len(refused) / len(v2_season) <= CAP_DECISION_RATE
    assert not [row for row in refused if row.status == "fallback_hold"]
