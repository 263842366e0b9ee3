"""The replay bundles the scheduler kept: what the Exports and Cohorts pages offer and show.

A kept bundle is a finished cohort's (`arena.engine.bundles`); its hash is the one to publish
and to pass to `arena verify BUNDLE --hash`. A cohort still running has none: the page says
why and may build a provisional bundle on request (`replay_bundle.build_bundle`).

A late entrant's shadow cohort (methodology §20) repeats its original's number, so its kept
bundle is reached by that number and the late entrant's family (`late_entry=`); a live
cohort's reads, links and file names are as they were.
"""

import pandas as pd
from sqlalchemy import and_, func, select
from sqlalchemy.engine import Engine

from arena.analytics.replay.shadow import numbered
from arena.storage.tables import COHORTS, REPLAY_BUNDLES, live_cohort

KEPT_COLUMNS = (
    "cohort_number",
    "bundle_hash",
    "project_version",
    "file_count",
    "size_bytes",
    "zip_bytes",
    "built_at",
)
LATE_KEPT_COLUMNS = (*KEPT_COLUMNS, "late_entry_family")


def kept_bundles(engine: Engine, *, late_entry: bool = False) -> pd.DataFrame:
    """One row per kept bundle of a live cohort, oldest cohort first (`KEPT_COLUMNS`; the zip
    itself is not read: `kept_bundle_zip`). ``size_bytes`` is the files' total, ``zip_bytes``
    the zip's. `late_entry`: the late entrants' shadows' instead, by cohort then family
    (`LATE_KEPT_COLUMNS`: with ``late_entry_family``)."""
    late = (COHORTS.c.late_entry_family,) if late_entry else ()
    which = COHORTS.c.late_entry_of.is_not(None) if late_entry else live_cohort()
    query = (
        select(
            COHORTS.c.number.label("cohort_number"),
            REPLAY_BUNDLES.c.bundle_hash,
            REPLAY_BUNDLES.c.project_version,
            REPLAY_BUNDLES.c.file_count,
            REPLAY_BUNDLES.c.size_bytes,
            func.length(REPLAY_BUNDLES.c.zip).label("zip_bytes"),
            REPLAY_BUNDLES.c.built_at,
            *late,
        )
        .join(COHORTS, and_(COHORTS.c.id == REPLAY_BUNDLES.c.cohort_id, which))
        .order_by(COHORTS.c.number, *late)
    )
    with engine.connect() as conn:
        rows = [tuple(row) for row in conn.execute(query)]
    frame = pd.DataFrame(rows, columns=list(LATE_KEPT_COLUMNS if late_entry else KEPT_COLUMNS))
    for column in ("cohort_number", "file_count", "size_bytes", "zip_bytes"):
        frame[column] = frame[column].astype("int64")
    frame["built_at"] = pd.to_datetime(frame["built_at"], utc=True)
    return frame


def kept_bundle_zip(
    engine: Engine, cohort_number: int, late_entry: str | None = None
) -> bytes | None:
    """The kept zip of live cohort `cohort_number` (`late_entry`: of the shadow of it that
    family played), or None when it has none yet."""
    query = (
        select(REPLAY_BUNDLES.c.zip)
        .join(COHORTS, COHORTS.c.id == REPLAY_BUNDLES.c.cohort_id)
        .where(numbered(cohort_number, late_entry))
    )
    with engine.connect() as conn:
        data = conn.execute(query).scalar_one_or_none()
    return bytes(data) if data is not None else None


def bundle_file_name(cohort_number: int, bundle_hash: str, late_entry: str | None = None) -> str:
    """The zip's file name: the cohort (and a late entrant's family) and the start of its
    hash, so two never collide."""
    late = "" if late_entry is None else f"-late-entry-{late_entry}"
    return f"forecaster-arena-cohort-{cohort_number}{late}-replay-{bundle_hash[:12]}.zip"
