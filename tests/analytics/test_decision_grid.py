"""The Cohorts page's family × week grid of decisions (`cohorts.decision_grid`)."""

import pandas as pd

from arena.analytics.views.cohorts import decision_grid


def test_one_row_per_family_one_column_per_week() -> None:
    weeks = pd.DataFrame(
        {
            "decision_week": [1, 1, 2],
            "family_id": ["a", "b", "a"],
            "display_name": ["Model A", "Model B", "Model A"],
            "decision_id": [1, 2, 3],
            "action": ["BET", "HOLD", None],
            "status": ["ok", "fallback_hold", "in_progress"],
            "bets": [2, 0, 0],
            "sells": [0, 0, 0],
            "rejected": [1, 0, 0],
            "amount": [750.0, 0.0, 0.0],
            "cost_usd": [0.01, 0.02, 0.0],
        }
    )
    grid = decision_grid(weeks)
    assert grid.columns.tolist() == ["family", "week 1", "week 2"]
    rows = grid.set_index("family")
    assert rows.loc["Model A", "week 1"] == "BET 2 bet(s) $750, 1 rejected"
    assert rows.loc["Model B", "week 1"] == "HOLD [fallback_hold]"
    assert rows.loc["Model A", "week 2"] == "… [in_progress]"
    assert pd.isna(rows.loc["Model B", "week 2"])


def test_no_decision_gives_an_empty_grid() -> None:
    assert decision_grid(pd.DataFrame()).columns.tolist() == ["family"]
