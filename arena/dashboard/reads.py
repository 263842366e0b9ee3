"""Cached reads: every page reads an `arena.analytics` read model through `read(fn, ...)`, on
the READ-ONLY engine, cached for `CACHE_TTL_S` seconds per database and arguments, so a page
refresh within the TTL costs nothing and a new snapshot shows up within a minute. The hourly
job's stored analyses are offered here too (`stored_or_offer`): no page makes a person wait on
a bootstrap unasked."""

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from arena.config import get_settings
from arena.storage.db import get_engine

CACHE_TTL_S = 20


T = TypeVar("T")


def database_url() -> str:
    return get_settings().database_url


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False, max_entries=512)
def _cached(
    name: str, url: str, args: tuple[Any, ...], kwargs: tuple[Any, ...], _fn: Callable[..., T]
) -> T:
    return _fn(get_engine(url, role="reader"), *args, **dict(kwargs))


def read(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(reader_engine, *args, **kwargs)`, cached `CACHE_TTL_S` s per database and arguments."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    return _cached(name, database_url(), args, tuple(sorted(kwargs.items())), fn)


ANALYSES_AT = ":30 past each hour"  # when the scheduler's `analyses` job runs (engine.jobs)


def stored_or_offer(
    name: str, what: str, *, cohort: int | None = None, methodology: str | None = None
) -> Any:
    """The hourly job's current stored frame of analysis `name`, or — when none is current —
    a note saying so, with when the job runs, and a button to compute it live on request.

    Returns (frame, stored) like `current_or_live`, or None when the person has not asked for
    the live computation yet (the caller stops or shows what it can without it). Why: at a
    year's scale the bootstrap behind these tables takes seconds; no page makes a person wait
    on it unasked (an imported database, the first hour after a restore).
    """
    from arena.analytics.stored import current_stored, live

    # None: a v1-only database (no selector); v1's all-cohort scope, read exactly as before.
    version = {} if methodology is None else {"methodology": methodology}
    stored = read(current_stored, name, cohort, **version)
    if stored is not None:
        return stored.frame, stored
    where = f"{name}:{cohort}" + (f":{methodology}" if methodology else "")
    flag = f"_live:{where}"
    if not st.session_state.get(flag):
        offer = st.empty()  # cleared once the person asks, so the note goes with the click
        with offer.container():
            st.info(
                f"No current stored {what} for this scope: the scheduler's `arena analyses` "
                f"job computes it at {ANALYSES_AT} (a fresh or imported database has none until "
                "the job runs, or until `arena analyses` is run by hand). Computing it here "
                "takes a few seconds on a long season.",
                icon=":material/schedule:",
            )
            clicked = st.button(f"Compute the {what} now", key=f"live-button:{where}")
        if not clicked:
            return None
        offer.empty()
        st.session_state[flag] = True
    with st.spinner(f"Computing the {what}…"):
        frame = read(live, name, cohort=cohort, **version)
    return frame, None


def stored_caption(stored: Any) -> None:
    """Say where a statistical table came from: the hourly job's stored frame, or live."""
    if stored is None:
        st.caption("Computed live on this page load (no current stored result).")
        return
    as_of = f", on snapshots up to {stored.data_as_of:%Y-%m-%d %H:%M}" if stored.data_as_of else ""
    st.caption(
        f"Computed {stored.computed_at:%Y-%m-%d %H:%M} UTC by the hourly `analyses` job{as_of}."
    )
