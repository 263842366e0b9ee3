"""Notices a page shows around its figures: the empty state, the cohorts an all-cohort view
leaves out (extended ones, methodology §18, and another methodology version's, told apart),
the simulated-model badge, a list's cap.

Untrusted text (a family id, a link's value) goes through `fmt.escaped` in any Markdown element
here, never through HTML."""

from collections.abc import Mapping, Sequence
from typing import NoReturn

import streamlit as st

from arena.analytics.query.scope import is_group, protocol_label
from arena.analytics.views.protocol import number_ranges
from arena.analytics.views.simulated import SERVED_BY, simulated_families
from arena.analytics.views.versions import VersionScope, version_scope
from arena.config import METHODOLOGY_VERSION
from arena.dashboard import fmt
from arena.dashboard.reads import read

# How a person sees a cohort an all-cohort view leaves out: (one cohort, several).
COHORT_FILTER = (
    "choose it in the cohort filter to see it",
    "choose one in the cohort filter to see it",
)


# Where a left-out cohort's own pooled figures are, when the sidebar offers its protocol.
SELECTOR = (
    "Their protocol's own pooled figures: the sidebar's Methodology selector (protocol groups "
    "are never pooled)."
)


def left_out_text(
    numbers: Sequence[int],
    how: tuple[str, str] = COHORT_FILTER,
    *,
    other: Mapping[str, Sequence[int]] | None = None,
    version: str = METHODOLOGY_VERSION,
    selector: bool = False,
) -> str:
    """What an all-cohort view's figures of `version` (or of a protocol group, `version` its
    key) leave out, by why ("" when nothing):

    - `numbers`, its cohorts with protocol extensions: "2 extended cohorts (#3, #4) are left
      out of these v1 figures; choose one in the cohort filter to see it." (`selector`: the
      sidebar offers their protocol groups, and the note says so);
    - `other`, the cohorts of another methodology version, by version (never pooled: not
      extended, so never called so): "v2 cohorts 5–8 are not in these v1 figures: another
      methodology version, never pooled with v1 (the sidebar's Methodology selector shows
      theirs)."; by protocol key under a group's view ("another protocol").
    """
    name = protocol_label(version)
    parts: list[str] = []
    if numbers:
        listed = ", ".join(f"#{n}" for n in numbers)
        if len(numbers) == 1:
            parts.append(
                f"1 extended cohort ({listed}) is left out of these {name} figures; {how[0]}."
            )
        else:
            parts.append(
                f"{len(numbers)} extended cohorts ({listed}) are left out of these {name} "
                f"figures; {how[1]}."
            )
        if selector:
            parts.append(SELECTOR)
    for theirs, group in sorted((other or {}).items()):
        if group:
            several = len(group) > 1
            kind = "protocol" if is_group(theirs) or is_group(version) else "methodology version"
            parts.append(
                f"{protocol_label(theirs)} cohort{'s' if several else ''} "
                f"{number_ranges(list(group))} {'are' if several else 'is'} not in these "
                f"{name} figures: another {kind}, never pooled with {name} (the sidebar's "
                "Methodology selector shows theirs)."
            )
    return " ".join(parts)


def left_out_note(
    cohort: int | None,
    how: tuple[str, str] = COHORT_FILTER,
    methodology: str | None = None,
) -> list[int]:
    """Under an all-cohort view (`cohort` None) of version `methodology` (None: v1, a
    database without a selector): a note naming the cohorts its figures leave out, extended
    ones (methodology §18) apart from other versions' (`views.versions.version_scope`).
    Nothing when a cohort is chosen or nothing is left out. Returns the numbers left out."""
    if cohort is not None:
        return []
    scope: VersionScope = read(version_scope, methodology or METHODOLOGY_VERSION)
    left_out_caption(scope.extended, how, other=scope.other, version=scope.version, selector=True)
    return scope.left_out


def left_out_caption(
    numbers: Sequence[int],
    how: tuple[str, str] = COHORT_FILTER,
    *,
    other: Mapping[str, Sequence[int]] | None = None,
    version: str = METHODOLOGY_VERSION,
    selector: bool = False,
) -> None:
    """The note of `left_out_note` (`left_out_text`'s arguments; nothing when there are
    none)."""
    text = left_out_text(numbers, how, other=other, version=version, selector=selector)
    if text:
        st.caption(f":material/filter_alt_off: {text}")


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
