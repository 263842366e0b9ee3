"""The `bundle` job: build each finished cohort's replay bundle once and keep it.

Why a job: a published bundle's hash is a promise that every number of the cohort can be
recomputed from it, so it is built as soon as the cohort can no longer change (completed, and
every market it bought into final: `replay_bundle.unsettled_buys`) and never again. The
cohort is the table's key: two schedulers building at once both compute the same bytes, one
INSERT wins and the other is skipped, so nothing is kept twice and a kept bundle never moves.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from arena.analytics.replay.bundle import build_bundle, project_version, unsettled_buys
from arena.engine.logs import log_event
from arena.storage.db import session_scope
from arena.storage.tables import COHORTS, REPLAY_BUNDLES

log = logging.getLogger("arena.engine.bundles")
SOURCE = "bundle"


@dataclass
class BundleResult:
    """What one run did: bundles built (cohort number → hash), cohorts still waiting."""

    built: dict[int, str] = field(default_factory=dict)
    waiting: list[int] = field(default_factory=list)
    already_kept: list[int] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        return {
            "built": len(self.built),
            "hashes": {str(n): h for n, h in self.built.items()},
            "waiting": self.waiting,
            "already_kept": self.already_kept,
        }


def cohorts_due(engine: Engine) -> list[tuple[int, int]]:
    """(id, number) of completed cohorts with no kept bundle, oldest first."""
    query = (
        select(COHORTS.c.id, COHORTS.c.number)
        .where(
            COHORTS.c.status == "completed",
            ~select(REPLAY_BUNDLES.c.cohort_id)
            .where(REPLAY_BUNDLES.c.cohort_id == COHORTS.c.id)
            .exists(),
        )
        .order_by(COHORTS.c.number)
    )
    with engine.connect() as conn:
        return [(int(i), int(n)) for i, n in conn.execute(query)]


def build_bundles(engine: Engine, at: datetime) -> BundleResult:
    """Build and keep the bundle of every finished cohort that has none yet."""
    result = BundleResult()
    for cohort_id, number in cohorts_due(engine):
        with engine.connect() as conn:
            if unsettled_buys(conn, cohort_id):
                result.waiting.append(number)
                continue
        built = build_bundle(engine, number)
        files = built.bundle.files
        row = {
            "cohort_id": cohort_id,
            "bundle_hash": built.hash,
            "project_version": project_version(),
            "file_count": len(files),
            "size_bytes": sum(len(data) for data in files.values()),
            "zip": built.bundle.zip_bytes(),
            "built_at": at,
        }
        try:
            with session_scope(engine) as session:
                session.execute(insert(REPLAY_BUNDLES).values(**row))
                log_event(
                    session,
                    at,
                    "INFO",
                    SOURCE,
                    f"cohort {number}: replay bundle {built.hash}",
                    cohort=number,
                    bundle_hash=built.hash,
                )
        except IntegrityError:  # another builder kept it first: the same bytes
            log.info("cohort %s: bundle already kept by another run", number)
            result.already_kept.append(number)
            continue
        result.built[number] = built.hash
    return result
