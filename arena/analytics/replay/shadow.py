"""A late entrant's shadow cohort (methodology §20) in a replay bundle: finding it, and its
leaderboard row.

Why apart from `replay.bundle`: a shadow repeats its original's number, so it is found by
its original's number and family (`shadow_row`) or by its id (`cohort_row`), never by the
number alone; and its published figures are its row of the late-entry board (its entrant id
``late:<family>`` beside the incumbents of the cohort it replayed), which the bundle carries
as the shadow's own one-family leaderboard (rank 1 of 1, so `arena verify` recomputes every
column from the bundle alone) with its rank beside the incumbents under `LATE_RANK` (those
incumbents are in the original's bundle, not this one).
"""

from typing import Any

from sqlalchemy import ColumnElement, and_, select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.scope import protocol_key
from arena.analytics.stats.leaderboard import leaderboard, portfolio_value, ranked
from arena.config import METHODOLOGY_V2
from arena.core.errors import InputError
from arena.core.late_entry import entrant_id, is_entrant, stamped_late_entry
from arena.storage.models import FINAL_STATUSES
from arena.storage.tables import COHORTS, live_cohort
from arena.storage.tables import LATE_ENTRY_RESOLUTIONS as LATE_RESOLUTIONS

LATE_RANK = "rank_beside_incumbents"  # the late-entry board's rank; not recomputable here


def numbered(number: int, late_entry: str | None = None) -> ColumnElement[bool]:
    """SQL: the `cohorts` row is live cohort `number`, or (`late_entry`: a family) the shadow
    of cohort `number` that family played as a late entrant."""
    if late_entry is None:
        return and_(COHORTS.c.number == number, live_cohort())
    return and_(
        COHORTS.c.number == number,
        COHORTS.c.late_entry_of.is_not(None),
        COHORTS.c.late_entry_family == late_entry,
    )


def cohort_row(conn: Connection, cohort_id: int) -> dict[str, Any]:
    """Cohort row `cohort_id` (live or shadow); InputError when there is none."""
    row = conn.execute(select(COHORTS).where(COHORTS.c.id == cohort_id)).mappings().first()
    if row is None:
        raise InputError(f"no cohort with id {cohort_id}", "the bundle job names cohorts by id")
    return dict(row)


def shadow_row(conn: Connection, number: int, family: str) -> dict[str, Any]:
    """The shadow of live cohort `number` that late entrant `family` played; InputError
    naming the late entrants that cohort has when it is not one of them."""
    query = select(COHORTS).where(
        COHORTS.c.number == number,
        COHORTS.c.late_entry_of.is_not(None),
        COHORTS.c.late_entry_family == family,
    )
    row = conn.execute(query).mappings().first()
    if row is None:
        others = select(COHORTS.c.late_entry_family).where(
            COHORTS.c.number == number, COHORTS.c.late_entry_of.is_not(None)
        )
        known = sorted(str(f) for f in conn.execute(others).scalars())
        raise InputError(
            f"cohort {number} has no late entrant {family!r}",
            f"its late entrants: {', '.join(known)}" if known else "it has no late entrant",
        )
    return dict(row)


def board_rows(engine: Engine, cohort: dict[str, Any], v2: bool) -> list[dict[str, Any]]:
    """The shadow's leaderboard rows (one): its entrant row of the late-entry board of its
    original's cohort and protocol, as its own family ranked 1 of 1, with `LATE_RANK`."""
    late = stamped_late_entry(cohort["constants"])
    assert late is not None, "board_rows is for a late entrant's shadow"
    with engine.connect() as conn:
        original = cohort_row(conn, int(cohort["late_entry_of"]))
    key = protocol_key(str(original["methodology_version"]), original["constants"])
    board = leaderboard(
        engine, cohort=late.of, methodology=key, replicates=200, null_seeds=0, late_entry=True
    )
    if v2:
        board = ranked(board.assign(portfolio_value=portfolio_value(board)), METHODOLOGY_V2)
    else:
        board = ranked(board, str(original["methodology_version"]))
    # Its place among the incumbents alone: other late entrants of the cohort come and go,
    # and a bundle rebuilt later must be the bytes kept (their relative order is unchanged).
    me = entrant_id(late.family)
    field = board[[f == me or not is_entrant(str(f)) for f in board["family_id"]]]
    place = {str(f): i + 1 for i, f in enumerate(field["family_id"])}
    rows = []
    for row in board.loc[board["family_id"] == me].to_dict("records"):
        rows.append({**row, "family_id": late.family, "rank": 1, LATE_RANK: place[me]})
    return rows


def shadow_meta(cohort: dict[str, Any]) -> dict[str, Any]:
    """What a shadow's manifest and cohort.json add (nothing for a live cohort): its
    `late_entry` record, where a reader looks first."""
    late = stamped_late_entry(cohort["constants"])
    return {} if late is None else {"late_entry": late.record()}


def with_asked_resolutions(conn: Connection, markets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A late entrant's bundle's market rows with the resolutions asked for late entrants
    (`late_entry_resolutions`, methodology §20.3) in place of a market row the database never
    resolved: the fields the verdict rests on as the source answered, `resolved_at` when it was
    asked. A market final in `markets` keeps its row."""
    open_ids = [m["id"] for m in markets if m["status"] not in FINAL_STATUSES]
    if not open_ids:
        return markets
    asked = {
        row["market_id"]: row
        for row in conn.execute(
            select(LATE_RESOLUTIONS).where(LATE_RESOLUTIONS.c.market_id.in_(open_ids))
        ).mappings()
    }
    merged = []
    for market in markets:
        found = asked.get(market["id"])
        if found is None:
            merged.append(market)
            continue
        merged.append(
            {
                **market,
                "closed": found["closed"],
                "uma_resolution_status": found["uma_resolution_status"],
                "prices": list(found["prices"]),
                "status": found["state"],
                "resolution_outcome": found["resolution_outcome"],
                "resolved_at": found["asked_at"],
            }
        )
    return merged
