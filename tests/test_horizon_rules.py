"""The extension `horizon`'s pure parts: its stamp, its settings, its prompt section, which
run universe a cohort decides on, and the demo's settling tail."""

import json
from datetime import UTC, datetime
from decimal import Decimal as D

import pytest

from arena.agents.prompts import HORIZON_HEADING, system_prompt
from arena.config import (
    DEFAULT_HORIZON_DAYS,
    HORIZON,
    Methodology,
    cohort_stamp,
    load_settings,
    stamped_extensions,
    stamped_horizon_days,
)
from arena.core.errors import ConfigError
from arena.engine.decisions import universe_key
from arena.sim.world import horizon_tail_weeks
from arena.storage.models import Cohort


def test_a_v1_stamp_stays_byte_for_byte_and_a_horizon_stamp_records_its_days() -> None:
    v1 = Methodology()
    assert json.dumps(cohort_stamp(v1)) == json.dumps(v1.stamp())
    assert stamped_horizon_days(cohort_stamp(v1)) is None
    stamp = cohort_stamp(v1, horizon_days=7)
    assert stamp["extensions"] == [HORIZON] and stamp["horizon_days"] == 7
    assert stamp["is_default"] is False and list(stamp)[-1] == "is_default"
    assert stamped_horizon_days(stamp) == 7
    both = cohort_stamp(v1, ["stated_probability"], replicates=3, horizon_days=30)
    assert both["extensions"] == ["horizon", "replicates", "stated_probability"]
    assert (both["replicates"], both["horizon_days"]) == (3, 30)


def test_naming_horizon_without_days_uses_the_default() -> None:
    stamp = cohort_stamp(Methodology(), [HORIZON])
    assert stamp["horizon_days"] == DEFAULT_HORIZON_DAYS == 14
    assert stamped_extensions(stamp) == (HORIZON,)


@pytest.mark.parametrize("days", [0, -1, 3651])
def test_a_horizon_out_of_range_is_refused(days: int) -> None:
    with pytest.raises(ValueError, match="horizon_days"):
        cohort_stamp(Methodology(), horizon_days=days)
    with pytest.raises(ConfigError, match="horizon_days"):
        load_settings(horizon_days=days)


def test_settings_enable_the_horizon_by_days_or_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_HORIZON_DAYS", "10")
    assert load_settings().horizon() == 10
    monkeypatch.delenv("ARENA_HORIZON_DAYS")
    monkeypatch.setenv("ARENA_EXTENSIONS", "horizon")
    assert load_settings().horizon() == DEFAULT_HORIZON_DAYS
    monkeypatch.delenv("ARENA_EXTENSIONS")
    assert load_settings().horizon() is None


def test_the_prompt_says_the_horizon_and_v1_text_is_unchanged() -> None:
    args = (D("50"), D("0.25"), D("10000"))
    v1 = system_prompt(*args)
    assert system_prompt(*args, horizon_days=None) == v1
    assert HORIZON_HEADING not in v1
    text = system_prompt(*args, horizon_days=14)
    assert "every market listed ends within 14 days of this decision" in text
    assert "completes about 14 days after its last weekly decision" in text
    assert text.replace(text[text.index("\n\nHORIZON\n") : text.index("\n\nANSWER")], "") == v1
    assert "ends within 1 day of" in system_prompt(*args, horizon_days=1)


def test_cohorts_of_different_horizons_never_share_a_universe() -> None:
    def cohort(version: str, stamp: dict[str, object]) -> Cohort:
        at = datetime(2026, 11, 1, tzinfo=UTC)
        return Cohort(number=1, week_start=at, methodology_version=version, constants=stamp)

    v1 = cohort("v1", Methodology().stamp())
    stated = cohort("v1", cohort_stamp(Methodology(), ["stated_probability"]))
    h7 = cohort("v1", cohort_stamp(Methodology(), horizon_days=7))
    h14 = cohort("v1", cohort_stamp(Methodology(), [HORIZON]))
    v2h7 = cohort("v2", cohort_stamp(Methodology(version="v2"), horizon_days=7))
    assert universe_key(v1) == universe_key(stated) == ("v1", None)
    keys = {universe_key(c) for c in (v1, h7, h14, v2h7)}
    assert keys == {("v1", None), ("v1", 7), ("v1", 14), ("v2", 7)}


def test_the_demo_tail_covers_the_horizon_and_the_longest_resolution() -> None:
    assert horizon_tail_weeks(14) == 7  # 14 + 35 days = 49 days
    assert horizon_tail_weeks(1) == 6
    assert horizon_tail_weeks(15) == 8
