"""Which cohorts a methodology version's all-cohort figures pool, and which they leave out and
why: for the pages to say so, to list a family's cohorts in or out of its figures, and to open
a page about one cohort on the chosen version's newest.

Why its own read: v1 and v2 are never pooled (docs/methodology-v2.md), and a cohort is left
out of a version's figures for one of two reasons a reader should be told apart: it ran
another methodology version, or it ran protocol extensions (methodology §18). The rule is
`arena.analytics.query.scope`'s (`cohort_in_scope`), read here as cohort numbers.
"""

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.query.scope import (
    cohort_id_of,
    cohort_protocols,
    is_group,
    protocols_present,
    rule_key,
    version_or_error,
)
from arena.config import METHODOLOGY_VERSION
from arena.storage.tables import COHORTS, live_cohort


@dataclass(frozen=True)
class VersionScope:
    """The cohorts of one all-cohort view, by number (each list oldest first).

    ``version``: the methodology version viewed; ``pooled``: its plain cohorts, the ones its
    all-cohort figures cover; ``extended``: its cohorts with protocol extensions (left out);
    ``other``: the cohorts of every other version, by version (never pooled with it);
    ``versions``: every cohort's version, by number.
    """

    version: str
    pooled: list[int]
    extended: list[int]
    other: dict[str, list[int]]
    versions: dict[int, str]

    @property
    def left_out(self) -> list[int]:
        """Every cohort the view's figures leave out, oldest first (extended or another
        version): for v1, `arena.analytics.query.scope.excluded_cohorts`."""
        return sorted([*self.extended, *(n for group in self.other.values() for n in group)])

    def newest(self) -> int | None:
        """The newest cohort of the version viewed (plain or extended; a protocol group's: its
        own); None without one."""
        if is_group(self.version):
            return max(self.pooled) if self.pooled else None
        mine = [n for n, v in self.versions.items() if v == self.version]
        return max(mine) if mine else None


def version_scope(engine: Engine, methodology: str = METHODOLOGY_VERSION) -> VersionScope:
    """The `VersionScope` of version `methodology` (an unknown version → InputError), or of
    the protocol group it names (`scope.protocol_key`). A cohort of the version under another
    rule set (v2's ``frozen-quotes``) is another protocol: under ``other`` by its key, never
    pooled nor called extended."""
    if is_group(methodology):
        return group_scope(engine, methodology)
    version = version_or_error(methodology)
    query = select(COHORTS.c.id, COHORTS.c.methodology_version).where(live_cohort())
    with engine.connect() as conn:
        of_id = {int(i): str(v) for i, v in conn.execute(query)}
        keys = cohort_protocols(conn)
    rows = sorted((n, of_id[i], key) for i, (n, key) in keys.items())
    other: dict[str, list[int]] = {}
    pooled: list[int] = []
    extended: list[int] = []
    for number, of, key in rows:
        if of != version:
            other.setdefault(of, []).append(number)
        elif key == version:
            pooled.append(number)
        elif rule_key(key) != version:
            other.setdefault(key, []).append(number)
        else:
            extended.append(number)
    return VersionScope(
        version=version,
        pooled=pooled,
        extended=extended,
        other=other,
        versions={n: of for n, of, _ in rows},
    )


def group_scope(engine: Engine, key: str) -> VersionScope:
    """The `VersionScope` of protocol group `key`: its cohorts pooled, nothing extended left
    out of it (an extension is part of its protocol), every other cohort by its own protocol
    key under ``other`` (never pooled with it). A key no cohort ran → InputError."""
    with engine.connect() as conn:
        cohort_id_of(conn, None, key)  # names the groups run when none ran `key`
        groups = protocols_present(conn)
        versions = {
            int(n): str(v)
            for n, v in conn.execute(
                select(COHORTS.c.number, COHORTS.c.methodology_version).where(live_cohort())
            )
        }
    return VersionScope(
        version=key,
        pooled=groups[key],
        extended=[],
        other={k: numbers for k, numbers in groups.items() if k != key},
        versions=dict(sorted(versions.items())),
    )
