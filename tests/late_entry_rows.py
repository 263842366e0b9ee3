"""A late entrant's shadow cohort written row by row, for tests of what reads it.

`copy_shadow` copies one incumbent agent's whole history (decisions and their attempts,
positions, trades, Brier rows, portfolio snapshots and rollups) into a new shadow cohort of
the incumbent's cohort, as `arena late-entry` would leave it had the late entrant answered
exactly as the incumbent did: every figure of the late entrant then equals the incumbent's,
which a test can check, and every live figure must stay what it was. The engine's own player
is tested in tests/engine/test_late_entry*.py; this writes the same rows without a model.
"""

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Table, insert, select
from sqlalchemy.engine import Connection, Engine

from arena.agents.responders import BaselineResponder, Responder
from arena.core.late_entry import LateEntryStamp, shadow_stamp
from arena.lineup import FamilySpec, Lineup
from arena.storage.tables import (
    AGENTS,
    BRIER_SCORES,
    COHORTS,
    DECISION_ATTEMPTS,
    DECISIONS,
    FAMILIES,
    PORTFOLIO_ROLLUPS,
    PORTFOLIO_SNAPSHOTS,
    POSITIONS,
    TRADES,
)
from tests.analytics.season import lineup as season_lineup

PLAYED_AT = datetime(2027, 1, 3, 12, tzinfo=UTC)


def copy_shadow(
    engine: Engine,
    number: int,
    source_family: str,
    family: str | None = None,
    *,
    contaminated: bool = False,
    cutoff: date | None = None,
    played_at: datetime = PLAYED_AT,
) -> int:
    """The id of a new shadow of live cohort `number` for `family` (default: a new family
    ``<source_family>-late``, added to `families`), its one agent a copy of
    `source_family`'s replicate-1 agent there."""
    family = family or f"{source_family}-late"
    with engine.begin() as conn:
        cohort = (
            conn.execute(
                select(COHORTS).where(COHORTS.c.number == number, COHORTS.c.late_entry_of.is_(None))
            )
            .mappings()
            .one()
        )
        source = (
            conn.execute(
                select(AGENTS).where(
                    AGENTS.c.cohort_id == cohort["id"],
                    AGENTS.c.family_id == source_family,
                    AGENTS.c.replicate == 1,
                )
            )
            .mappings()
            .one()
        )
        _ensure_family(conn, family, source_family)
        entry = LateEntryStamp(number, family, played_at, contaminated, cutoff)
        shadow_id = _insert(
            conn,
            COHORTS,
            {
                **_plain(cohort),
                "constants": shadow_stamp(cohort["constants"], entry),
                "late_entry_of": cohort["id"],
                "late_entry_family": family,
            },
        )
        agent_id = _insert(
            conn,
            AGENTS,
            {**_plain(source), "cohort_id": shadow_id, "family_id": family, "replicate": 1},
        )
        decisions = _copy(
            conn,
            DECISIONS,
            DECISIONS.c.agent_id == source["id"],
            agent_id=agent_id,
            cohort_id=shadow_id,
        )
        for old, new in decisions.items():
            _copy(conn, DECISION_ATTEMPTS, DECISION_ATTEMPTS.c.decision_id == old, decision_id=new)
        positions = _copy(conn, POSITIONS, POSITIONS.c.agent_id == source["id"], agent_id=agent_id)
        trades: dict[int, int] = {}
        rows = conn.execute(
            select(TRADES).where(TRADES.c.agent_id == source["id"]).order_by(TRADES.c.id)
        ).mappings()
        for row in list(rows):
            decision = row["decision_id"]
            trades[row["id"]] = _insert(
                conn,
                TRADES,
                {
                    **_plain(row),
                    "agent_id": agent_id,
                    "position_id": positions[row["position_id"]],
                    "decision_id": None if decision is None else decisions[decision],
                },
            )
        for row in list(
            conn.execute(
                select(BRIER_SCORES).where(BRIER_SCORES.c.agent_id == source["id"])
            ).mappings()
        ):
            _insert(
                conn,
                BRIER_SCORES,
                {**_plain(row), "agent_id": agent_id, "trade_id": trades[row["trade_id"]]},
            )
        _copy(
            conn,
            PORTFOLIO_SNAPSHOTS,
            PORTFOLIO_SNAPSHOTS.c.agent_id == source["id"],
            agent_id=agent_id,
        )
        for row in list(
            conn.execute(
                select(PORTFOLIO_ROLLUPS).where(PORTFOLIO_ROLLUPS.c.agent_id == source["id"])
            ).mappings()
        ):
            conn.execute(insert(PORTFOLIO_ROLLUPS).values({**row, "agent_id": agent_id}))
    return shadow_id


def _ensure_family(conn: Connection, family: str, source_family: str) -> None:
    if conn.execute(select(FAMILIES.c.id).where(FAMILIES.c.id == family)).first():
        return
    row = conn.execute(select(FAMILIES).where(FAMILIES.c.id == source_family)).mappings().one()
    conn.execute(
        insert(FAMILIES).values(
            {**row, "id": family, "display_name": f"{row['display_name']} (new)"}
        )
    )


def _plain(row: Any) -> dict[str, Any]:
    values = dict(row)
    values.pop("id", None)
    return values


def _insert(conn: Connection, table: Table, values: dict[str, Any]) -> int:
    return int(conn.execute(insert(table).values(values).returning(table.c.id)).scalar_one())


def _copy(conn: Connection, table: Table, where: Any, **remap: Any) -> dict[int, int]:
    """Copy the rows of `table` matching `where` with the columns in `remap` replaced; old
    id → new id."""
    ids: dict[int, int] = {}
    for row in list(conn.execute(select(table).where(where).order_by(table.c.id)).mappings()):
        ids[row["id"]] = _insert(conn, table, {**_plain(row), **remap})
    return ids


def newcomer(family_id: str = "newcomer", cutoff: date | None = date(2025, 6, 30)) -> FamilySpec:
    """A late entrant that needs no model server: the `favorite` baseline strategy under a
    family of its own, its knowledge cutoff before the test season (January 2026)."""
    return FamilySpec(
        id=family_id,
        display_name=family_id.replace("-", " ").capitalize(),
        provider="Test",
        model="baseline/favorite",
        kind="baseline",
        strategy="favorite",
        knowledge_cutoff=cutoff,
    )


def season_lineup_with(*extra: FamilySpec) -> Lineup:
    """The test season's lineup (its LLM families on a dead endpoint: never asked) and `extra`."""
    return Lineup(families=[*season_lineup("http://127.0.0.1:9/v1").families, *extra])


def baseline_responders(family: FamilySpec) -> Responder | None:
    """Responders for baselines alone, answered in process."""
    return BaselineResponder(family, 0, None) if family.kind == "baseline" else None
