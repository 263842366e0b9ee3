"""The replay bundles the scheduler kept: what the Exports and Cohorts pages offer and show.

A kept bundle is a finished cohort's (`arena.engine.bundles`); its hash is the one to publish
and to pass to `arena verify BUNDLE --hash`. A cohort still running has none: the page says
why and may build a provisional bundle on request (`replay_bundle.build_bundle`).
"""

import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.storage.tables import COHORTS, REPLAY_BUNDLES

KEPT_COLUMNS = (
    "cohort_number",
    "bundle_hash",
    "project_version",
    "file_count",
    "size_bytes",
    "zip_bytes",
    "built_at",
)


def kept_bundles(engine: Engine) -> pd.DataFrame:
    """One row per kept bundle, oldest cohort first (`KEPT_COLUMNS`; the zip itself is not
    read: `kept_bundle_zip`). ``size_bytes`` is the files' total, ``zip_bytes`` the zip's."""
    query = (
        select(
            COHORTS.c.number.label("cohort_number"),
            REPLAY_BUNDLES.c.bundle_hash,
            REPLAY_BUNDLES.c.project_version,
            REPLAY_BUNDLES.c.file_count,
            REPLAY_BUNDLES.c.size_bytes,
            func.length(REPLAY_BUNDLES.c.zip).label("zip_bytes"),
            REPLAY_BUNDLES.c.built_at,
        )
        .join(COHORTS, COHORTS.c.id == REPLAY_BUNDLES.c.cohort_id)
        .order_by(COHORTS.c.number)
    )
    with engine.connect() as conn:
        rows = [tuple(row) for row in conn.execute(query)]
    frame = pd.DataFrame(rows, columns=list(KEPT_COLUMNS))
    for column in ("cohort_number", "file_count", "size_bytes", "zip_bytes"):
        frame[column] = frame[column].astype("int64")
    frame["built_at"] = pd.to_datetime(frame["built_at"], utc=True)
    return frame


def kept_bundle_zip(engine: Engine, cohort_number: int) -> bytes | None:
    """The kept zip of cohort `cohort_number`, or None when it has none yet."""
    query = (
        select(REPLAY_BUNDLES.c.zip)
        .join(COHORTS, COHORTS.c.id == REPLAY_BUNDLES.c.cohort_id)
        .where(COHORTS.c.number == cohort_number)
    )
    with engine.connect() as conn:
        data = conn.execute(query).scalar_one_or_none()
    return bytes(data) if data is not None else None


def bundle_file_name(cohort_number: int, bundle_hash: str) -> str:
    """The zip's file name: the cohort and the start of its hash, so two never collide."""
    return f"forecaster-arena-cohort-{cohort_number}-replay-{bundle_hash[:12]}.zip"
