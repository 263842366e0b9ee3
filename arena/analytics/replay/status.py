"""Has a cohort a kept replay bundle, and if not, why not: the Exports and Cohorts pages' words.

A cohort's bundle is kept by the scheduler's hourly `bundle` job (`arena.engine.bundles`) once
the cohort is finished: completed (every position settled) and every market it bought into
resolved (`replay_bundle.unsettled_buys`), so a BUY sold before its market resolved has its
Brier row. Until then the pages say which of these holds, in plain words (`BundleStatus.why`),
and build a provisional bundle only when asked. The job's time is restated here
(`BUNDLE_MINUTE`; the pages may not import the engine) and a test holds it equal to the
scheduler's trigger table (`arena.engine.jobs.SCHEDULES`). A late entrant's shadow cohort is
asked for by its original's number and its family (`late_entry=`).
"""

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.replay.bundle import unsettled_buys
from arena.analytics.replay.shadow import numbered
from arena.storage.tables import COHORTS, REPLAY_BUNDLES

BUNDLE_MINUTE = 45  # the `bundle` job runs hourly at this minute
BUNDLE_SCHEDULE = f":{BUNDLE_MINUTE} past each hour"


@dataclass(frozen=True)
class BundleStatus:
    """One cohort's replay-bundle state: its status, the BUYs that keep its Brier open
    (counted only once it is completed; 0 before), and the kept bundle's hash if any."""

    cohort_number: int
    status: str
    unsettled_buys: int
    kept_hash: str | None

    @property
    def finished(self) -> bool:
        """Completed, and every market it bought into resolved: its numbers cannot move."""
        return self.status == "completed" and self.unsettled_buys == 0

    @property
    def why(self) -> str | None:
        """Why no bundle is kept yet, as the end of "cohort N is …"; None when one is."""
        if self.kept_hash is not None:
            return None
        if self.status == "deciding":
            return "still deciding (its agents decide each week until its decision weeks are over)"
        if self.status == "tracking":
            return (
                "tracking (its decision weeks are over, and its positions stay open until "
                "their markets settle)"
            )
        if self.status == "completed" and self.unsettled_buys:
            count = self.unsettled_buys
            waiting = (
                "1 BUY awaits its Brier row"
                if count == 1
                else f"{count:,} BUYs await their Brier rows"
            )
            return f"completed, but not every market it bought into has resolved yet ({waiting})"
        if self.status == "completed":
            return (
                "finished: the hourly bundle job keeps its bundle at its next run "
                f"({BUNDLE_SCHEDULE})"
            )
        return f"in status {self.status}"


def bundle_status(
    engine: Engine, cohort_number: int, late_entry: str | None = None
) -> BundleStatus | None:
    """Live cohort `cohort_number`'s `BundleStatus` (`late_entry`: the shadow of it that
    family played), or None when there is no such cohort.

    One read of the cohort joined to its kept bundle; the BUYs in markets not final yet are
    counted only for a completed cohort without one (before completion its status says why).
    """
    query = (
        select(COHORTS.c.id, COHORTS.c.status, REPLAY_BUNDLES.c.bundle_hash)
        .select_from(COHORTS)
        .outerjoin(REPLAY_BUNDLES, REPLAY_BUNDLES.c.cohort_id == COHORTS.c.id)
        .where(numbered(cohort_number, late_entry))
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
        if row is None:
            return None
        cohort_id, status, kept_hash = row
        waiting = 0
        if status == "completed" and kept_hash is None:
            waiting = unsettled_buys(conn, int(cohort_id))
    return BundleStatus(
        cohort_number=cohort_number,
        status=str(status),
        unsettled_buys=waiting,
        kept_hash=str(kept_hash) if kept_hash is not None else None,
    )
