"""The cohort picker every page shares, the "no cohort yet" stop before it, and the sidebar's
methodology selector (shown only once a database holds a cohort of another version than v1)."""

from collections.abc import Sequence
from typing import Any

import streamlit as st

from arena.analytics.query.scope import versions_present
from arena.analytics.views.cohorts import cohort_numbers
from arena.config import METHODOLOGY_VERSION
from arena.dashboard.links import ALL, get_link, names_nothing, select_link
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


VERSION_NAMES = {
    "v1": "v1 (archived): Gamma prices",
    "v2": "v2: order-book prices",
}


def methodology_link() -> str | None:
    """The sidebar's methodology selector, bound to link ``methodology``: which version's
    cohorts the page's all-cohort figures cover (v1 and v2 are never pooled).

    Shown only when the database holds a cohort of a version other than v1; then it returns
    the chosen version (v1 by default). A v1-only database shows nothing and returns None
    (the page reads v1, as it always did); a link naming a version this database did not run
    is named as a bad link."""
    versions: list[str] = read(versions_present)
    if [v for v in versions if v != METHODOLOGY_VERSION]:
        chosen = select_link(
            "Methodology",
            "methodology",
            versions,
            default=METHODOLOGY_VERSION,
            format_func=lambda v: VERSION_NAMES.get(v, v),
            container=st.sidebar,
            help="Whose cohorts the all-cohort figures cover: v1 and v2 are never pooled.",
        )
        return str(chosen)
    wanted = get_link("methodology")
    if wanted is not None and wanted != METHODOLOGY_VERSION:
        names_nothing("Methodology", "methodology", wanted, "every cohort here is v1")
    return None


def version_caption(methodology: str | None, cohort: int | None = None) -> None:
    """Say which version's cohorts the all-cohort figures below cover (nothing on a v1-only
    database, or when one cohort is chosen: a cohort is read as it is)."""
    if methodology is None or cohort is not None:
        return
    if methodology == METHODOLOGY_VERSION:
        text = "**Methodology v1** (archived): every v1 cohort; v2 cohorts are never pooled in."
    else:
        text = (
            f"**Methodology {methodology}**: every {methodology} cohort without protocol "
            "extensions; v1 cohorts are never pooled in (the sidebar switches version)."
        )
    st.caption(f":material/rule: {text}")
