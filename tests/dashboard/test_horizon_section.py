"""The horizon cohorts' completion as a person reads it (arena.dashboard.horizon_section):
expected against actual completion, days late, overruns, from `horizon_summary` rows."""

from datetime import UTC, datetime

import pandas as pd

from arena.analytics.views.horizon import SUMMARY_COLUMNS
from arena.dashboard.horizon_section import cohort_sentence, completion_rows, overrun_text

RUN = datetime(2026, 2, 1, 0, 5, tzinfo=UTC)


def _summary() -> pd.DataFrame:
    rows = [
        {
            "cohort": 1,
            "horizon_days": 14,
            "window_end": datetime(2026, 2, 8, tzinfo=UTC),
            "last_decision_run": RUN,
            "expected_completion": datetime(2026, 2, 15, 0, 5, tzinfo=UTC),
            "last_resolution": datetime(2026, 2, 16, 0, 5, tzinfo=UTC),
            "completed_at": None,
            "open_positions": 0,
            "bets": 1265,
            "overrun_bets": 0,
            "overrun_markets": 0,
            "overrun_share": 0.0,
            "days_late": 1.0,
        },
        {
            "cohort": 2,
            "horizon_days": 7,
            "window_end": datetime(2026, 2, 15, tzinfo=UTC),
            "last_decision_run": RUN,
            "expected_completion": datetime(2026, 2, 8, 0, 5, tzinfo=UTC),
            "last_resolution": None,
            "completed_at": None,
            "open_positions": 3,
            "bets": 150,
            "overrun_bets": 3,
            "overrun_markets": 2,
            "overrun_share": 0.02,
            "days_late": None,
        },
    ]
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def test_the_table_says_expected_against_actual_and_overruns() -> None:
    shown = completion_rows(_summary())
    assert shown.loc[0].to_dict() == {
        "cohort_text": "#1",
        "horizon": "14 days",
        "last_run": "2026-02-01 00:05 UTC",
        "expected": "2026-02-15 00:05 UTC",
        "finished": "2026-02-16 00:05 UTC",
        "late": "+1.0",
        "overruns": "0 of 1,265 bets",
    }
    assert shown.loc[1, "finished"] == "open (3 positions)"
    assert shown.loc[1, "late"] == "—"
    assert shown.loc[1, "overruns"] == "3 of 150 bets (2.0%)"


def test_one_cohort_in_a_sentence() -> None:
    first, second = (row for _, row in _summary().iterrows())
    assert cohort_sentence(first) == (
        "**Horizon 14 days**: every market shown ended within 14 days of its decision run; "
        "expected to complete 2026-02-15 00:05 UTC, its last position resolved 2026-02-16 "
        "00:05 UTC (+1.0 days against expected). Overruns: 0 of 1,265 bets."
    )
    assert "still open (3 positions)" in cohort_sentence(second)
    assert overrun_text(0, 0) == "no bets"
