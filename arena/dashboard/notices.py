"""Notices a page shows around its figures: the empty state, the extended cohorts an
all-cohort view leaves out (methodology §18), the simulated-model badge, a list's cap.

Untrusted text (a family id, a link's value) goes through `fmt.escaped` in any Markdown element
here, never through HTML."""

from collections.abc import Sequence
from typing import NoReturn

import streamlit as st

from arena.analytics.query.scope import excluded_cohorts
from arena.analytics.views.simulated import SERVED_BY, simulated_families
from arena.dashboard import fmt
from arena.dashboard.reads import read

# How a person sees a cohort an all-cohort view leaves out: (one cohort, several).
COHORT_FILTER = (
    "choose it in the cohort filter to see it",
    "choose one in the cohort filter to see it",
)


def left_out_text(numbers: Sequence[int], how: tuple[str, str] = COHORT_FILTER) -> str:
    """What an all-cohort view's v1 figures leave out: "2 extended cohorts (#3, #4) are left
    out of these v1 figures; choose one in the cohort filter to see it." ("" when none)."""
    if not numbers:
        return ""
    listed = ", ".join(f"#{n}" for n in numbers)
    if len(numbers) == 1:
        return f"1 extended cohort ({listed}) is left out of these v1 figures; {how[0]}."
    return f"{len(numbers)} extended cohorts ({listed}) are left out of these v1 figures; {how[1]}."


def left_out_note(cohort: int | None, how: tuple[str, str] = COHORT_FILTER) -> list[int]:
    """Under an all-cohort view (`cohort` None): a note naming the extended cohorts its v1
    figures leave out (`arena.analytics.query.scope.excluded_cohorts`; methodology §18). Nothing
    when a cohort is chosen or every cohort is v1. Returns the numbers left out."""
    if cohort is not None:
        return []
    numbers: list[int] = read(excluded_cohorts)
    left_out_caption(numbers, how)
    return numbers


def left_out_caption(numbers: Sequence[int], how: tuple[str, str] = COHORT_FILTER) -> None:
    """The note of `left_out_note` for these cohort numbers (nothing when there are none)."""
    if numbers:
        st.caption(f":material/filter_alt_off: {left_out_text(numbers, how)}")


def simulated_notice(family_ids: Sequence[str] | None = None, detail: str | None = None) -> None:
    """A badge when the shown families' results come from the simulated model server (the
    offline demo), so they are never mistaken for real models'. `None`: any family.
    `detail` replaces the closing sentence (what is simulated) where one thing matters most,
    such as the costs beside a cost chart."""
    simulated = read(simulated_families)
    if family_ids is not None:
        shown = set(family_ids)
        simulated = [family_id for family_id in simulated if family_id in shown]
    if simulated:
        closing = detail or "Personas, reasoning, tokens and costs are simulated."
        st.warning(
            f"**Simulated** — {fmt.escaped(', '.join(simulated))}: answered by the {SERVED_BY} "
            f"(`arena demo`), not by real models. {closing}",
            icon="🧪",
        )


NO_COHORT = "No cohort yet: run `arena start-cohort` or `make demo`."


def empty(message: str) -> None:
    """The empty state: what is missing and what to do about it."""
    st.info(message)


def nothing_yet(message: str) -> NoReturn:
    """The empty state of a page that has nothing to show without it: say so, end the run."""
    empty(message)
    st.stop()
    raise AssertionError("st.stop() returned")  # pragma: no cover (st.stop raises)


def listed(count: int, cap: int, noun: str, order: str, *, exported: bool = True) -> str:
    """A list's caption: how many rows and in which order, and, when the list reached its cap,
    that it may not be everything (a silently cut list reads as complete). `exported`: the
    table is one of the Exports page's, where every row can be downloaded."""
    text = f"{count:,} {noun}, {order}."
    if count >= cap:
        text += f" That is this list's cap of {cap:,}: more may match. Narrow it with the filters"
        text += ", or download every row from Exports." if exported else "."
    return text
