"""Late entrants on the same cohorts (methodology §20): the scope the leaderboard ranks them in.

Why its own module: a late entrant is ranked beside the incumbents of the cohorts it replayed,
never pooled with live cohorts. Its shadow cohorts are read with their originals, and each
shadow agent is *paired* with the incumbents by its original: its cohort is taken to be the
original's (so the cluster bootstrap resamples the same events of the same cohort for both),
and its family to be its entrant id (``late:<family>``, `arena.core.late_entry.entrant_id`),
so it is one more family of those cohorts even when its family also played them live.

`late_scope` finds, for a protocol key of the ORIGINAL cohorts (``v1``, ``v1+horizon-14d``),
the originals that have late entrants and their shadows; `remap_agents` turns a shadow agent
into its entrant row; `late_risk` is the leaderboard's risk columns over that scope.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.scope import protocol_key
from arena.analytics.stats.risk import (
    LEADERBOARD_RISK_COLUMNS,
    daily_values,
    leaderboard_columns,
    risk_of_daily,
)
from arena.core.late_entry import entrant_family, entrant_id, stamped_late_entry
from arena.storage.tables import AGENTS, COHORTS, FAMILIES

SHADOW_COLUMNS: tuple[str, ...] = (
    "shadow_id",
    "original_id",
    "cohort_number",
    "family_id",
    "entrant_id",
    "status",
    "played_at",
    "knowledge_cutoff",
    "contaminated",
    "week_start",
    "protocol",
)


@dataclass(frozen=True)
class LateScope:
    """The originals of one protocol that have late entrants, and their shadows."""

    protocol: str
    shadows: pd.DataFrame  # one row per shadow cohort, `SHADOW_COLUMNS`

    @property
    def original_ids(self) -> tuple[int, ...]:
        return tuple(sorted({int(i) for i in self.shadows["original_id"]}))

    @property
    def ids(self) -> tuple[int, ...]:
        """Every cohort id read: the originals and their shadows (a `CohortScope` tuple)."""
        return tuple(sorted({*self.original_ids, *(int(i) for i in self.shadows["shadow_id"])}))

    @property
    def cohort_numbers(self) -> list[int]:
        return sorted({int(n) for n in self.shadows["cohort_number"]})

    def contaminated(self) -> dict[str, bool]:
        """Entrant id → whether any of its shadows is stamped contaminated."""
        if self.shadows.empty:
            return {}
        return {
            str(k): bool(v)
            for k, v in self.shadows.groupby("entrant_id")["contaminated"].any().items()
        }


def _stamp_row(shadow: Any, original: Any, protocol: str) -> dict[str, Any]:
    """One shadow as a `SHADOW_COLUMNS` row (its stamp read by `stamped_late_entry`)."""
    stamp = stamped_late_entry(shadow.constants)
    family = str(shadow.late_entry_family)
    return {
        "shadow_id": int(shadow.id),
        "original_id": int(original.id),
        "cohort_number": int(original.number),
        "family_id": family,
        "entrant_id": entrant_id(family),
        "status": str(shadow.status),
        "played_at": None if stamp is None else stamp.played_at,
        "knowledge_cutoff": None if stamp is None else stamp.knowledge_cutoff,
        "contaminated": bool(stamp is not None and stamp.contaminated),
        "week_start": original.week_start,
        "protocol": protocol,
    }


def late_scope(
    conn: Connection, protocol: str | None = None, cohort: int | None = None
) -> LateScope:
    """The shadows whose original ran protocol `protocol` (None: any protocol) and, with
    `cohort`, is live cohort number `cohort`: oldest cohort first, then by family."""
    original = COHORTS.alias("original")
    query = (
        select(
            COHORTS.c.id,
            COHORTS.c.constants,
            COHORTS.c.status,
            COHORTS.c.late_entry_family,
            original.c.id.label("original_id"),
            original.c.number,
            original.c.week_start,
            original.c.methodology_version,
            original.c.constants.label("original_constants"),
        )
        .join(original, original.c.id == COHORTS.c.late_entry_of)
        .where(COHORTS.c.late_entry_of.is_not(None))
        .order_by(original.c.number, COHORTS.c.late_entry_family, COHORTS.c.id)
    )
    if cohort is not None:
        query = query.where(original.c.number == cohort)
    rows = []
    for row in conn.execute(query):
        key = protocol_key(row.methodology_version, row.original_constants)
        if protocol is not None and key != protocol:
            continue
        orig = _Original(row.original_id, row.number, row.week_start)
        rows.append(_stamp_row(row, orig, key))
    return LateScope(protocol or "", pd.DataFrame(rows, columns=list(SHADOW_COLUMNS)))


@dataclass(frozen=True)
class _Original:
    id: int
    number: int
    week_start: datetime


def remap_agents(agents: pd.DataFrame, scope: LateScope) -> pd.DataFrame:
    """Agents (``cohort_id``, ``family_id`` columns) with each shadow agent paired with the
    incumbents: its cohort is its original's, its family its entrant id."""
    if agents.empty or scope.shadows.empty:
        return agents
    by_shadow = scope.shadows.set_index("shadow_id")
    out = agents.copy()
    shadow = out["cohort_id"].isin(by_shadow.index)
    ids = out.loc[shadow, "cohort_id"]
    out.loc[shadow, "family_id"] = by_shadow.loc[ids, "entrant_id"].to_numpy()
    out.loc[shadow, "cohort_id"] = by_shadow.loc[ids, "original_id"].to_numpy()
    return out


def late_risk(engine: Engine, scope: LateScope) -> pd.DataFrame:
    """The leaderboard's risk columns (`LEADERBOARD_RISK_COLUMNS`, index family or entrant
    id) over the scope, by `arena.analytics.stats.risk`'s own rules (the combined book's daily
    returns, max drawdown on their compounded index, Mertens' Sharpe), each shadow agent under
    its entrant id."""
    daily = daily_values(engine, cohort_ids=scope.ids)
    if daily.empty:
        return pd.DataFrame(
            columns=list(LEADERBOARD_RISK_COLUMNS), index=pd.Index([], name="family_id")
        )
    shadows = tuple(int(i) for i in scope.shadows["shadow_id"])
    with engine.connect() as conn:
        kinds = dict(conn.execute(select(FAMILIES.c.id, FAMILIES.c.kind)).all())
        owners = conn.execute(
            select(AGENTS.c.id, AGENTS.c.cohort_id).where(AGENTS.c.cohort_id.in_(shadows))
        ).all()
    entrant = dict(zip(scope.shadows["shadow_id"], scope.shadows["entrant_id"], strict=True))
    of_agent = {int(agent): str(entrant[cohort]) for agent, cohort in owners}
    daily["family_id"] = [
        of_agent.get(int(a), f) for a, f in zip(daily["agent_id"], daily["family_id"], strict=True)
    ]
    kinds.update({e: kinds.get(entrant_family(e), "llm") for e in set(of_agent.values())})
    return leaderboard_columns(risk_of_daily(daily, kinds))
