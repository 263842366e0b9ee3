"""The Execution page's read model: the sensitivity frame as a person reads it, and its CSV.

Why its own module: the page stays thin (pick, read, show), and the leaderboard reads the same
frame for its "not robust to the execution rule" flag. The figures are
`arena.analytics.stats.execution_inputs.execution_sensitivity`'s (stored hourly).
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from arena.analytics.stats.execution import NO_BOOKS, RULES, SENSITIVITY_COLUMNS

RULE_NAMES = {"display": "Display price", "mid": "Mid", "book": "Book walk"}
# The CSV: stable ids and raw numbers, every column of the frame in its order.
CSV_COLUMNS: tuple[str, ...] = SENSITIVITY_COLUMNS


def coverage(frame: pd.DataFrame) -> pd.DataFrame:
    """Per rule: the scope's legs, the ones the rule executed and the ones it left unexecuted
    (summed over families), and whether it has figures at all."""
    legs = int(frame["legs"].sum()) if len(frame) else 0
    rows = []
    for rule in RULES:
        refused = int(frame[f"refused_{rule}"].sum()) if len(frame) else 0
        has = bool(len(frame)) and bool(frame[f"return_{rule}"].notna().any())
        rows.append(
            {
                "rule": rule,
                "legs": legs,
                "executed": legs - refused,
                "refused": refused,
                "figures": has,
            }
        )
    return pd.DataFrame(rows)


def books_note(cohorts: Sequence[Mapping[str, Any]]) -> str | None:
    """What a scope's cohorts without stored books means for the page (None: all have them)."""
    without = [int(c["number"]) for c in cohorts if not c.get("books")]
    if not without:
        return None
    names = ", ".join(str(n) for n in without)
    if len(without) == len(cohorts):
        return (
            f"Cohort {names}: {NO_BOOKS}." if len(without) == 1 else f"Cohorts {names}: {NO_BOOKS}."
        )
    return (
        f"Cohorts {names} of this scope have {NO_BOOKS}: their legs stay cash under the book "
        "walk (and, in v1, the mid), counted below, never guessed."
    )


def display(frame: pd.DataFrame, pct_interval: Callable[[Any, Any, Any], str]) -> pd.DataFrame:
    """One row per family: each rule's return as "value [low, high]", its rank and P(#1), the
    legs it could not execute, and the flag."""
    texts: dict[str, Any] = {"family": frame["display_name"].tolist()}
    for rule in RULES:
        texts[f"return_{rule}_text"] = [
            pct_interval(v, lo, hi)
            for v, lo, hi in zip(
                frame[f"return_{rule}"],
                frame[f"return_{rule}_ci_low"],
                frame[f"return_{rule}_ci_high"],
                strict=True,
            )
        ]
        texts[f"rank_{rule}_text"] = [
            "—" if np.isnan(r) else str(int(r)) for r in frame[f"rank_{rule}"].astype(float)
        ]
    texts["refused_text"] = [
        " · ".join(
            f"{RULE_NAMES[rule]}: {int(row[f'refused_{rule}'])}"
            for rule in RULES
            if int(row[f"refused_{rule}"])
        )
        or "none"
        for _, row in frame.iterrows()
    ]
    texts["flag"] = ["rank not robust" if f else "" for f in frame["not_robust"]]
    return frame.assign(**texts)[list(TABLE_KEYS)].reset_index(drop=True)


TABLE_KEYS: tuple[str, ...] = (
    "family",
    "flag",  # beside the name: the one thing a person must not miss, on screen unscrolled
    # the three returns side by side (what the page is for, unscrolled), then ranks, P(#1)
    *(f"return_{rule}_text" for rule in RULES),
    *(f"rank_{rule}_text" for rule in RULES),
    *(f"p_rank_1_{rule}" for rule in RULES),
    "legs",
    "refused_text",
)


def robustness_flags(frame: pd.DataFrame) -> dict[str, bool]:
    """family id → its rank is not robust to the execution rule (the leaderboard's column)."""
    if frame.empty or "not_robust" not in frame:
        return {}
    return {str(f): bool(v) for f, v in zip(frame["family_id"], frame["not_robust"], strict=True)}


FLAG_COLUMN = "execution_not_robust"  # the leaderboard's column (page and `arena leaderboard`)


def with_flags(board: pd.DataFrame, flags: Mapping[str, bool]) -> pd.DataFrame:
    """The leaderboard with `execution_not_robust` as its last column (None: no figures)."""
    return board.assign(**{FLAG_COLUMN: [flags.get(str(f)) for f in board["family_id"]]})
