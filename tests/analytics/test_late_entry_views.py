"""The pure parts of the late-entry read side: pairing a shadow agent with the incumbents,
the per-entrant summary, the Leaderboard's sentence and its CSV's late-entry columns."""

from datetime import UTC, date, datetime

import pandas as pd

from arena.analytics.stats.late_entry import SHADOW_COLUMNS, LateScope, remap_agents
from arena.analytics.views.late_entry import (
    LATE_ENTRY_COLUMNS,
    cohort_sentence,
    entrants,
    marks_sentence,
    with_late_columns,
)

AT = datetime(2027, 1, 3, tzinfo=UTC)


def _scope() -> LateScope:
    rows = [
        (11, 1, 1, "qwen", "late:qwen", "completed", AT, date(2026, 1, 1), False, AT, "v1"),
        (12, 2, 2, "qwen", "late:qwen", "tracking", AT, date(2026, 1, 1), True, AT, "v1"),
    ]
    return LateScope("v1", pd.DataFrame(rows, columns=list(SHADOW_COLUMNS)))


def test_a_shadow_agent_takes_its_originals_cohort_and_its_entrant_id() -> None:
    agents = pd.DataFrame(
        {"agent_id": [1, 2, 3, 4], "cohort_id": [1, 2, 11, 12], "family_id": ["qwen"] * 4}
    )
    paired = remap_agents(agents, _scope())
    assert paired["cohort_id"].tolist() == [1, 2, 1, 2]
    assert paired["family_id"].tolist() == ["qwen", "qwen", "late:qwen", "late:qwen"]
    assert agents["family_id"].tolist() == ["qwen"] * 4  # the input is left as it was
    scope = _scope()
    assert scope.ids == (1, 2, 11, 12) and scope.cohort_numbers == [1, 2]
    assert scope.contaminated() == {"late:qwen": True}


def _entries() -> pd.DataFrame:
    rows = [
        (
            "late:qwen",
            "qwen",
            "Qwen · late entry, contaminated",
            2,
            "v1",
            "tracking",
            AT,
            None,
            True,
            True,
        ),
        (
            "late:qwen",
            "qwen",
            "Qwen · late entry, contaminated",
            1,
            "v1",
            "completed",
            AT,
            None,
            False,
            True,
        ),
        ("late:gpt", "gpt", "GPT · late entry", 1, "v1", "completed", AT, None, False, False),
    ]
    return pd.DataFrame(rows, columns=list(LATE_ENTRY_COLUMNS))


def test_each_entrant_lists_its_cohorts_in_order_and_any_contamination() -> None:
    summary = entrants(_entries()).set_index("entrant_id")
    assert summary.loc["late:qwen", "cohorts"] == [1, 2]
    assert summary.loc["late:qwen", "statuses"] == ["completed", "tracking"]
    assert bool(summary.loc["late:qwen", "contaminated"])
    assert not bool(summary.loc["late:gpt", "contaminated"])
    assert entrants(_entries().iloc[0:0]).empty


def test_the_sentence_names_the_cohorts_and_the_contaminated_entrant() -> None:
    assert cohort_sentence(_entries()) == (
        "Late entrants replayed cohorts 1, 2; Qwen · late entry, contaminated: contaminated: "
        "its cohorts started on or before its knowledge cutoff."
    )
    clean = _entries()[lambda f: f["entrant_id"] == "late:gpt"]
    assert cohort_sentence(clean) == "Late entrants replayed cohort 1."


def test_the_csv_marks_late_entrants_and_contamination() -> None:
    board = pd.DataFrame({"family_id": ["qwen", "late:qwen", "late:gpt"]})
    marked = with_late_columns(board, _entries())
    assert marked["late_entry"].tolist() == [False, True, True]
    assert marked["contaminated"].tolist() == [False, True, False]


def test_the_marks_sentence_names_every_source_in_order() -> None:
    counts = {"carried": 19, "run": 1510}
    assert marks_sentence(counts) == (
        "Open positions' marks: 1,510 at the runs' frozen prices, 0 from CLOB price history, "
        "19 carried from the last mark."
    )
