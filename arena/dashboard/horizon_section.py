"""How soon horizon cohorts finish: the `horizon` extension's promise against what happened.

Why one module: "When will we know?" shows it for a horizon group's cohorts and the Cohorts
page for one horizon cohort, in the same words. A horizon cohort should complete about D days
after its last decision run (methodology §18, "Horizon"); resolution lags end dates and end
dates move, so each cohort's expected and actual completion and its overruns (bets whose
market now ends past the horizon) are shown side by side. `completion_rows` and
`cohort_sentence` are pure (tested without Streamlit); `horizon_section` draws.
"""

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.views.horizon import SUMMARY_COLUMNS, horizon_summary
from arena.dashboard import fmt, reads, tables

# The table a person reads: (column, label, width in px, help).
COMPLETION_TABLE = [
    ("cohort_text", "Cohort", 80, None),
    ("horizon", "Horizon", 80, "Markets shown end within this many days of each decision run."),
    ("last_run", "Last decision run", 150, None),
    ("expected", "Expected", 150, "The last decision run plus the horizon."),
    ("finished", "Last resolution", 150, "Its last position's settlement; open until then."),
    ("late", "Days late", 90, "Last resolution minus expected: resolution lags end dates."),
    ("overruns", "Overruns", 150, "Bets whose market now ends past its run plus the horizon."),
]


def _days(value: Any) -> str:
    """Days late as a person reads it: "+1.0", "−0.5", "—" while open."""
    if fmt.missing(value):
        return fmt.DASH
    return f"{fmt.MINUS if float(value) < 0 else '+'}{abs(float(value)):.1f}"


def overrun_text(overruns: Any, bets: Any) -> str:
    """ "0 of 1,265 bets", "3 of 150 bets (2.0%)"."""
    if fmt.missing(bets) or int(bets) == 0:
        return "no bets"
    text = f"{fmt.count(overruns)} of {fmt.count(bets)} bets"
    return text if int(overruns) == 0 else f"{text} ({fmt.share(overruns / bets, 1)})"


def completion_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """`horizon_summary` rows as the table shows them (`COMPLETION_TABLE` columns)."""
    return pd.DataFrame(
        {
            "cohort_text": [f"#{int(n)}" for n in summary["cohort"]],
            "horizon": [f"{int(d)} days" for d in summary["horizon_days"]],
            "last_run": [fmt.instant(v) for v in summary["last_decision_run"]],
            "expected": [fmt.instant(v) for v in summary["expected_completion"]],
            "finished": [
                fmt.instant(v) if not fmt.missing(v) else f"open ({fmt.count(n)} positions)"
                for v, n in zip(summary["last_resolution"], summary["open_positions"], strict=True)
            ],
            "late": [_days(v) for v in summary["days_late"]],
            "overruns": [
                overrun_text(o, b)
                for o, b in zip(summary["overrun_bets"], summary["bets"], strict=True)
            ],
        }
    )


def cohort_sentence(row: pd.Series) -> str:
    """One horizon cohort in a sentence, for the Cohorts page."""
    head = (
        f"**Horizon {int(row['horizon_days'])} days**: every market shown ended within "
        f"{int(row['horizon_days'])} days of its decision run"
    )
    if fmt.missing(row["expected_completion"]):
        return f"{head}; no decision run yet."
    expected = f"expected to complete {fmt.instant(row['expected_completion'])}"
    if fmt.missing(row["last_resolution"]):
        done = f"still open ({fmt.count(row['open_positions'])} positions)"
    else:
        done = (
            f"its last position resolved {fmt.instant(row['last_resolution'])} "
            f"({_days(row['days_late'])} days against expected)"
        )
    overruns = overrun_text(row["overrun_bets"], row["bets"])
    return f"{head}; {expected}, {done}. Overruns: {overruns}."


def horizon_rows(numbers: Sequence[int] | None = None) -> pd.DataFrame:
    """The summary of the horizon cohorts among `numbers` (None: all of them), read cached."""
    chosen = None if numbers is None else tuple(sorted(numbers))
    summary: pd.DataFrame = reads.read(horizon_summary, chosen)
    return summary


def horizon_section(numbers: Sequence[int], scope: str) -> None:
    """The completion table of the horizon cohorts among `numbers` and its CSV (nothing when
    none of them ran the extension)."""
    summary = horizon_rows(numbers)
    if summary.empty:
        return
    st.subheader("How soon these cohorts finish")
    st.caption(
        "A horizon cohort is shown only markets ending within its horizon of each decision "
        "run, so it should complete about that many days after its last run. Resolution lags "
        "the end date (a disputed market by weeks) and an end date can move after a bet: the "
        "bet stays held and is counted here as an overrun."
    )
    tables.table(
        completion_rows(summary),
        key=f"horizon-{scope}",
        column_config={
            key: st.column_config.Column(label, width=width, help=help)
            for key, label, width, help in COMPLETION_TABLE
        },
    )
    tables.download_csv(
        summary[list(SUMMARY_COLUMNS)], f"horizon-{scope}", label="Download completion CSV"
    )
