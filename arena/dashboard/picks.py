"""The cohort picker every page shares, and the "no cohort yet" stop before it."""

from collections.abc import Sequence
from typing import Any

import streamlit as st

from arena.analytics.views.cohorts import cohort_numbers
from arena.dashboard.links import ALL, select_link
from arena.dashboard.notices import NO_COHORT, nothing_yet
from arena.dashboard.reads import read


def cohorts_or_stop(message: str = NO_COHORT) -> list[int]:
    """Every cohort's number, newest first; with none, the page says `message` and stops."""
    numbers: list[int] = read(cohort_numbers)
    if not numbers:
        nothing_yet(message)
    return numbers


def cohort_link(
    numbers: Sequence[int],
    *,
    all_label: str | None = "All cohorts",
    container: Any = None,
    label: str = "Cohort",
) -> int | None:
    """A cohort selectbox bound to link ``cohort``: `all_label` first (None when a page shows
    one cohort at a time: then the first of `numbers` is the default). Returns the chosen
    number, or None for all."""
    if all_label is None:
        chosen: int | None = select_link(
            label,
            "cohort",
            numbers,
            default=numbers[0],
            format_func=lambda n: f"Cohort {n}",
            container=container,
        )
        return chosen
    everything = all_label
    chosen = select_link(
        label,
        "cohort",
        numbers,
        format_func=lambda n: everything if n == ALL else f"Cohort {n}",
        container=container,
    )
    return chosen


def extension_cohort_link(numbers: Sequence[int], all_label: str) -> int | None:
    """The cohort filter of a protocol extension's page: its cohorts (`numbers`) or all of
    them (`all_label`), a quarter of the width."""
    left, _ = st.columns([1, 3])
    return cohort_link(numbers, all_label=all_label, container=left)
