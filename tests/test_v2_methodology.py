"""Methodology v2 as a stamp: the settings, the v1 stamp byte for byte, migration 0010's row,
the v2 prompt and the pure total-cap rule (docs/methodology-v2.md)."""

import json
from datetime import UTC, datetime
from decimal import Decimal as D
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from arena.agents.baselines import (
    BaselineInput,
    favorite_strategy,
    oracle_strategy,
    random_strategy,
)
from arena.agents.parsing import Decision, parse_decision
from arena.agents.prompts import (
    V2_CAP_HEADING,
    V2_OBJECTIVE_HEADING,
    PortfolioView,
    PromptMarket,
    system_prompt,
    user_prompt,
)
from arena.app.cli import main
from arena.config import Methodology, cohort_stamp, load_settings, methodology_from
from arena.core.accounting import BetLimits
from arena.core.errors import ConfigError
from arena.core.execution import total_bet_error
from arena.storage.db import session_scope
from arena.storage.models import MethodologyVersion

# Methodology().stamp() as JSON, exactly as every v1 cohort before v2 was stamped.
V1_STAMP = (
    '{"version": "v1", "starting_balance": "10000", "min_bet": "50", "max_bet_fraction": '
    '"0.25", "snapshot_interval_minutes": 10, "decision_window_weeks": 5, "malformed_retries": '
    '2, "transport_attempts": 3, "market_universe_size": 500, "is_default": true}'
)


def test_the_v1_stamp_is_unchanged_byte_for_byte() -> None:
    assert json.dumps(Methodology().stamp()) == V1_STAMP
    assert json.dumps(cohort_stamp(Methodology())) == V1_STAMP


def test_the_v2_stamp_adds_its_rules_as_keys_only_v2_carries() -> None:
    stamp = Methodology(version="v2").stamp()
    assert list(stamp)[-4:] == ["prices", "bet_cap", "rule_set", "is_default"]
    assert (stamp["rule_set"], stamp["malformed_retries"]) == ("source-7c78b0c", 1)
    assert Methodology().stamp()["malformed_retries"] == 2  # v1 keeps its two retries
    assert (stamp["prices"], stamp["bet_cap"], stamp["is_default"]) == (
        "clob_mid",
        "decision_total",
        True,
    )
    assert Methodology(version="v2", min_bet=D(100)).stamp()["is_default"] is False
    extended = cohort_stamp(Methodology(version="v2"), ["stated_probability"])
    assert extended["bet_cap"] == "decision_total" and extended["is_default"] is False


def test_arena_methodology_names_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_METHODOLOGY", "v2")
    assert load_settings().methodology == Methodology(version="v2")
    monkeypatch.setenv("ARENA_METHODOLOGY__MIN_BET", "75")  # a research override still applies
    assert load_settings().methodology == Methodology(version="v2", min_bet=D(75))
    monkeypatch.delenv("ARENA_METHODOLOGY")
    assert load_settings().methodology == Methodology(min_bet=D(75))  # default v1
    monkeypatch.setenv("ARENA_METHODOLOGY", "v3")
    with pytest.raises(ConfigError, match="unknown methodology version 'v3'"):
        load_settings()


def test_methodology_from_reads_json_and_names() -> None:
    assert methodology_from('{"version": "v2", "min_bet": "60"}', {}) == {
        "version": "v2",
        "min_bet": "60",
    }
    assert methodology_from("v2", {"ARENA_METHODOLOGY__MIN_BET": "80"}) == {
        "version": "v2",
        "min_bet": "80",
    }
    assert methodology_from({"version": "v1"}, {}) == {"version": "v1"}


def test_clob_url_setting() -> None:
    assert load_settings().clob_url == "https://clob.polymarket.com"
    assert load_settings(clob_url="http://127.0.0.1:9/").clob_url == "http://127.0.0.1:9"
    with pytest.raises(ConfigError):
        load_settings(clob_url="clob.polymarket.com")


def test_migrations_0010_and_0014_give_the_v2_row(engine: Engine) -> None:
    with session_scope(engine) as session:
        v2 = session.get(MethodologyVersion, "v2")
        assert v2 is not None
        assert v2.constants == Methodology(version="v2").stamp()
        assert "v2" in v2.title


LIMITS = BetLimits()


def decision(*amounts: float) -> Decision:
    legs = [{"market_id": f"m{i}", "side": "YES", "amount": a} for i, a in enumerate(amounts)]
    outcome = parse_decision(json.dumps({"action": "BET", "bets": legs, "reasoning": "r"}))
    assert outcome.ok is not None
    return outcome.ok


def test_the_total_cap_counts_every_bet_of_the_decision() -> None:
    assert total_bet_error(decision(1250, 1250), D(10000), LIMITS) is None  # exactly 25%
    error = total_bet_error(decision(1250, 1250.01), D(10000), LIMITS)
    assert error is not None
    assert "$2,500.01" in error and "$2,500.00" in error and "$10,000.00" in error
    # v1 would take both (each under 25% of the cash left); v2 refuses the whole plan
    assert total_bet_error(decision(2000, 1500), D(10000), LIMITS) is not None
    hold = parse_decision('{"action": "HOLD", "reasoning": "r"}').ok
    assert hold is not None and total_bet_error(hold, D(10), LIMITS) is None


def test_the_v2_prompt_states_objective_prices_and_total_cap() -> None:
    v1 = system_prompt(D(50), D("0.25"), D(10000))
    v2 = system_prompt(D(50), D("0.25"), D(10000), total_cap=True)
    assert V2_OBJECTIVE_HEADING not in v1 and V2_CAP_HEADING not in v1
    assert "Each bet is at least $50 and at most 25% of your current cash." in v1
    assert "ranked by portfolio value" in v2 and "only as a diagnostic" in v2
    assert f"{V2_CAP_HEADING} are at most 25% of your cash before the decision." in v2
    assert "order-book midpoints" in v2
    assert "An answer whose bets add up to more is invalid as a whole" in v2
    stated = system_prompt(D(50), D("0.25"), D(10000), stated_probability=True, total_cap=True)
    assert "STATED PROBABILITY" in stated and V2_CAP_HEADING in stated
    view = PortfolioView(cash=D(10000), max_bet=D(2500), min_bet=D(50), positions=[])
    at = datetime(2026, 1, 4, tzinfo=UTC)
    assert "per bet (the maximum falls as cash is spent)" in user_prompt(at, 1, view, [])
    assert "$2,500.00 for all of this decision's bets together." in user_prompt(
        at, 1, view, [], total_cap=True
    )


def _markets(n: int) -> list[PromptMarket]:
    return [
        PromptMarket(
            market_id=f"m{i}",
            question=f"q{i}?",
            event_title=None,
            category=None,
            market_type="binary",
            outcomes=["Yes", "No"],
            prices=[D("0.6"), D("0.4")],
            volume=1000.0 - i,
            close_date=None,
        )
        for i in range(n)
    ]


def _total(answer: str) -> D:
    parsed = parse_decision(answer).ok
    assert parsed is not None
    return sum((D(str(bet.amount)) for bet in parsed.bets), D(0))


@pytest.mark.parametrize("total_cap", [False, True])
def test_the_baselines_keep_to_the_cap_of_their_version(total_cap: bool) -> None:
    """v2's baselines stop their legs at the decision's budget (25% of cash before it); v1's
    take each leg against 25% of the cash left, as before."""
    view = PortfolioView(cash=D(1000), max_bet=D(250), min_bet=D(50), positions=[])
    inp = BaselineInput(
        datetime(2026, 1, 4, tzinfo=UTC), 1, 1, view, _markets(8), total_cap=total_cap
    )
    favourite = _total(favorite_strategy(inp))
    oracle = _total(
        oracle_strategy(inp, lambda _m, outcome, _at: 0.95 if outcome == "Yes" else 0.05)
    )
    random_totals = [_total(random_strategy(inp, seed)) for seed in range(40)]
    if total_cap:
        assert favourite == D(250) and oracle <= D(250)
        assert max(random_totals) <= D(250)
    else:
        assert favourite == D(500) and oracle > D(250)  # five $100 legs; v1's per-bet cap
        assert max(random_totals) > D(250)


def test_the_demo_refuses_an_unknown_methodology_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{tmp_path / 'demo.db'}")
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--weeks", "1", "--methodology", "v3"])
    _out, err = capsys.readouterr()
    assert exited.value.code != 0
    assert "--methodology: unknown version 'v3'" in err and "v1, v2" in err
    assert len(err.strip().splitlines()) <= 2
