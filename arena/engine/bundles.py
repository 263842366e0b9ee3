"""The `bundle` job: build each finished cohort's replay bundle once and keep it.

Why a job: a published bundle's hash is a promise that every number of the cohort can be
recomputed from it, so it is built as soon as the cohort can no longer change (completed, and
every market it bought into final: `replay_bundle.unsettled_buys`) and never again. The
cohort is the table's key: two schedulers building at once both compute the same bytes, one
INSERT wins and the other is skipped, so nothing is kept twice and a kept bundle never moves.

A late entrant's shadow cohort (methodology §20) is bundled like a live one once completed: it
is found by its id (it repeats its original's number) and named in the result and the log by
its original's number and its family, ``3 late:qwen-3``.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from arena.analytics.replay.bundle import build_bundle, project_version, unsettled_buys
from arena.core.late_entry import entrant_id
from arena.engine.logs import log_event
from arena.storage.db import session_scope
from arena.storage.tables import COHORTS, REPLAY_BUNDLES

log = logging.getLogger("arena.engine.bundles")
SOURCE = "bundle"


@dataclass
class BundleResult:
    """What one run did: bundles built (cohort → hash), cohorts still waiting. A live cohort
    is its number; a late entrant's shadow its original's number and family (`label`)."""

    built: dict[int | str, str] = field(default_factory=dict)
    waiting: list[int | str] = field(default_factory=list)
    already_kept: list[int | str] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        return {
            "built": len(self.built),
            "hashes": {str(n): h for n, h in self.built.items()},
            "waiting": self.waiting,
            "already_kept": self.already_kept,
        }


def label(number: int, late_entry_family: str | None) -> int | str:
    """How the job names a cohort: a live one by its number, a shadow ``3 late:qwen-3``."""
    return number if late_entry_family is None else f"{number} {entrant_id(late_entry_family)}"


def cohorts_due(engine: Engine) -> list[tuple[int, int]]:
    """(id, number) of completed cohorts (live and late entrants' shadows) with no kept
    bundle, oldest first (a live cohort before its shadows)."""
    query = (
        select(COHORTS.c.id, COHORTS.c.number)
        .where(
            COHORTS.c.status == "completed",
            ~select(REPLAY_BUNDLES.c.cohort_id)
            .where(REPLAY_BUNDLES.c.cohort_id == COHORTS.c.id)
            .exists(),
        )
        .order_by(COHORTS.c.number, COHORTS.c.id)
    )
    with engine.connect() as conn:
        return [(int(i), int(n)) for i, n in conn.execute(query)]


def build_bundles(engine: Engine, at: datetime) -> BundleResult:
    """Build and keep the bundle of every finished cohort that has none yet."""
    result = BundleResult()
    for cohort_id, number in cohorts_due(engine):
        with engine.connect() as conn:
            family = conn.execute(
                select(COHORTS.c.late_entry_family).where(COHORTS.c.id == cohort_id)
            ).scalar()
            name = label(number, family)
            if unsettled_buys(conn, cohort_id):
                result.waiting.append(name)
                continue
        built = build_bundle(engine, number, cohort_id=cohort_id)
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
                    f"cohort {name}: replay bundle {built.hash}",
                    cohort=number,
                    bundle_hash=built.hash,
                    **({} if name == number else {"late_entry": name}),
                )
        except IntegrityError:  # another builder kept it first: the same bytes
            log.info("cohort %s: bundle already kept by another run", name)
            result.already_kept.append(name)
            continue
        result.built[name] = built.hash
    return result
