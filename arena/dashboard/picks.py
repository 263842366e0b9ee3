"""The cohort picker every page shares, the "no cohort yet" stop before it, and the sidebar's
methodology selector (shown only once a database holds a cohort of another protocol than plain
v1: another version, or a protocol group such as ``v1+horizon-14d``)."""

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from arena.analytics.query.scope import (
    cohort_version,
    is_group,
    key_version,
    protocol_label,
    protocols_present,
    rule_key,
)
from arena.analytics.views.cohorts import cohort_numbers
from arena.analytics.views.protocol import number_ranges
from arena.analytics.views.versions import version_scope
from arena.config import METHODOLOGY_VERSION
from arena.dashboard.links import (
    ALL,
    forget_link,
    get_link,
    id_value,
    names_nothing,
    select_link,
    set_link,
)
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
    default: int | None = None,
    versions: Mapping[int, str] | None = None,
) -> int | None:
    """A cohort selectbox bound to link ``cohort``: `all_label` first (None when a page shows
    one cohort at a time: then `default`, else the first of `numbers`, is the default).
    `versions` (each cohort's methodology version, on a database of several): each option
    names its version. Returns the chosen number, or None for all."""

    def named(n: int) -> str:
        return f"Cohort {n}" + (f" ({versions[n]})" if versions and n in versions else "")

    if all_label is None:
        chosen: int | None = select_link(
            label,
            "cohort",
            numbers,
            default=numbers[0] if default is None else default,
            format_func=named,
            container=container,
        )
        return chosen
    everything = all_label
    chosen = select_link(
        label,
        "cohort",
        numbers,
        format_func=lambda n: everything if n == ALL else named(n),
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
# What a version's rules are, in a phrase (docs/methodology-v2.md, "What changed from v1").
VERSION_RULES = {
    "v1": "archived: Gamma's display prices, a 25% cap per bet, ranked by return",
    "v2": "order-book midpoint prices, a 25% cap on a decision's total bets, ranked by "
    "dollar P/L summed over cohorts, Brier a diagnostic only",
    "v2+frozen-quotes": "order-book midpoint prices as frozen with the universe, a 25% cap on "
    "a decision's total bets, ranked by return, Brier a diagnostic only",
}


def scope_name(key: str, numbers: Sequence[int]) -> str:
    """A selector option as a person reads it: a version as before ("v1 (archived): Gamma
    prices"), a protocol group as its label and cohorts ("v1 + horizon 14d (cohorts 1–8)")."""
    if not is_group(key):
        return VERSION_NAMES.get(key, key)
    several = len(numbers) > 1
    return f"{protocol_label(key)} (cohort{'s' if several else ''} {number_ranges(list(numbers))})"


def shows_selector(groups: Mapping[str, Sequence[int]]) -> bool:
    """Whether the sidebar offers a choice of scope: more than one protocol here, or none of
    plain v1 (a horizon-only deployment opens on its own group, said so)."""
    return len(groups) > 1 or (bool(groups) and METHODOLOGY_VERSION not in groups)


def methodology_link() -> str | None:
    """The sidebar's methodology selector, bound to link ``methodology``: whose cohorts the
    page's all-cohort figures cover, a methodology version's plain cohorts (v1, v2) or one
    protocol group's (`scope.protocol_key`: ``v1+horizon-14d``); never two pooled.

    Shown when the database holds more than one protocol, or no plain v1 cohort; then it
    returns the chosen key (v1 by default, else the first group). A database of plain v1
    cohorts alone shows nothing and returns None (the page reads v1, as it always did); a
    link naming a scope this database did not run is named as a bad link, and forgotten
    (never carried to the next page). A hand-typed link's "+" arrives as a space
    (`links.restore_links` puts it back).

    The choice is the session's (`links.SESSION_KEYS`): every page that calls this finds the
    scope picked on another. Picking another drops this page's cohort when it is not in it,
    so the page shows the scope picked (all its cohorts, or its newest) rather than a cohort
    of another."""
    groups: dict[str, list[int]] = read(protocols_present)
    wanted = get_link("methodology")
    shown = shows_selector(groups)
    if wanted is not None and wanted not in (groups if shown else [METHODOLOGY_VERSION]):
        forget_link("methodology")
    if shown:
        chosen = select_link(
            "Methodology",
            "methodology",
            list(groups),
            default=METHODOLOGY_VERSION if METHODOLOGY_VERSION in groups else next(iter(groups)),
            format_func=lambda key: scope_name(key, groups[key]),
            container=st.sidebar,
            help="Whose cohorts the all-cohort figures cover: one methodology version's plain "
            "cohorts, or one protocol group's (the same version, extensions and parameters). "
            "Never two pooled.",
            after_change=_keep_cohort_of,
        )
        return str(chosen)
    if wanted is not None and wanted != METHODOLOGY_VERSION:
        names_nothing("Methodology", "methodology", wanted, "every cohort here is v1")
    return None


def _keep_cohort_of(key: Any) -> None:
    """After the selector changed to `key`: drop this page's cohort link when that cohort ran
    another version (a protocol group: is not one of the group's), so the page then opens on
    the scope's own cohorts."""
    number = id_value(st.query_params.get("cohort"))
    if number is None:
        return
    if is_group(str(key)):
        if number not in read(protocols_present).get(str(key), []):
            set_link("cohort", None)
    elif read(cohort_version, number) != key:
        set_link("cohort", None)


def cohort_versions() -> dict[int, str] | None:
    """Every cohort's methodology version by number, on a database holding several versions
    (for cohort pickers to name them); None on a database of one version."""
    versions: dict[int, str] = read(version_scope).versions
    return versions if len(set(versions.values())) > 1 else None


def newest_of(numbers: Sequence[int], methodology: str | None) -> int:
    """The cohort a page about one cohort opens on: the newest of version `methodology` (of
    the protocol group it names) among `numbers` (newest first), else the newest of all
    (None: a v1-only database)."""
    if is_group(methodology):
        group = set(read(protocols_present).get(methodology, []))
        return next((n for n in numbers if n in group), numbers[0])
    versions = cohort_versions() if methodology is not None else None
    if versions:
        mine = [n for n in numbers if versions.get(n) == methodology]
        if mine:
            return mine[0]
    return numbers[0]


def scoped(methodology: str | None) -> dict[str, str]:
    """A read model's keyword for the version `methodology_link` returned: none for None (a
    v1-only database reads exactly as it always did), else ``methodology``."""
    return {} if methodology is None else {"methodology": methodology}


def cohort_version_caption(number: int | None) -> str | None:
    """On a page about one cohort or one of its agents: say which methodology version cohort
    `number` ran, on a database holding several (nothing otherwise, as before v2). Returns
    that version (None: one version only)."""
    versions = cohort_versions()
    if number is None or not versions or number not in versions:
        return None
    version = versions[number]
    groups: dict[str, list[int]] = read(protocols_present)
    key = next((k for k, numbers in groups.items() if number in numbers), version)
    rules = VERSION_RULES.get(rule_key(key))
    st.caption(
        f":material/rule: Cohort {number} ran **methodology {version}**"
        + (f" ({rules})" if rules else "")
        + f": this page reads it under {version}'s rules, whichever version the sidebar shows."
    )
    return version


def version_caption(methodology: str | None, cohort: int | None = None) -> None:
    """Say which version's (protocol group's) cohorts the all-cohort figures below cover
    (nothing on a v1-only database, or when one cohort is chosen: a cohort is read as it is)."""
    if methodology is None or cohort is not None:
        return
    if is_group(methodology):
        numbers = read(protocols_present).get(methodology, [])
        version = key_version(methodology)
        rules = VERSION_RULES.get(rule_key(methodology))
        text = (
            f"**Protocol {protocol_label(methodology)}** "
            f"(cohort{'s' if len(numbers) > 1 else ''} {number_ranges(numbers)}): "
            f"every cohort run under this protocol, read under methodology {version}'s rules"
            + (f" ({rules})" if rules else "")
            + "; cohorts of any other protocol or version are never pooled in (the sidebar "
            "switches)."
        )
    elif methodology == METHODOLOGY_VERSION:
        text = (
            "**Methodology v1** (archived): every plain v1 cohort; cohorts of another version "
            "or protocol group are never pooled in."
        )
    else:
        text = (
            f"**Methodology {methodology}**: every {methodology} cohort without protocol "
            "extensions, of the original's rule set; v1 cohorts and cohorts of another rule "
            "set are never pooled in (the sidebar switches version)."
        )
    st.caption(f":material/rule: {text}")
