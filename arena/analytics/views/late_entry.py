"""Every late entrant (methodology §20) as a table, for the pages and the CSV.

Why here: the Leaderboard and Compare pages name late entrants beside incumbents and must say
which cohorts each replayed, whether it is finished and whether it is contaminated; they read
that here, raw (ids, numbers, timestamps), and format it themselves.
"""

import json
from collections import Counter
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.stats.late_entry import late_scope
from arena.analytics.stats.paired import family_comparison
from arena.config import METHODOLOGY_VERSION
from arena.core import stats
from arena.core.late_entry import entrant_name, is_entrant
from arena.storage.tables import AGENTS, COHORTS, FAMILIES, PORTFOLIO_SNAPSHOTS

LATE_ENTRY_COLUMNS: tuple[str, ...] = (
    "entrant_id",
    "family_id",
    "display_name",
    "cohort_number",
    "protocol",
    "status",
    "played_at",
    "knowledge_cutoff",
    "contaminated",
    "entrant_contaminated",
)
ENTRANT_COLUMNS: tuple[str, ...] = (
    "entrant_id",
    "family_id",
    "display_name",
    "protocol",
    "cohorts",
    "statuses",
    "contaminated",
)


def late_entries(engine: Engine, protocol: str | None = None) -> pd.DataFrame:
    """One row per shadow cohort (a late entrant on one cohort), of the originals that ran
    `protocol` (a `protocol_key`; None: every protocol), by cohort number then family.

    Columns `LATE_ENTRY_COLUMNS`: ``entrant_id`` (``late:<family>``), ``family_id``,
    ``display_name`` (the entrant's name, "Model A · late entry[, contaminated]", contaminated
    when any of its shadows is), ``cohort_number`` (the original's number), ``protocol`` (the
    original's protocol key), ``status`` (the shadow's: deciding, tracking, completed),
    ``played_at`` (when the late entry was started), ``knowledge_cutoff`` (date or None),
    ``contaminated`` (this shadow's stamp), ``entrant_contaminated`` (any of its shadows')."""
    with engine.connect() as conn:
        scope = late_scope(conn, protocol)
        names = dict(conn.execute(select(FAMILIES.c.id, FAMILIES.c.display_name)).all())
    frame = scope.shadows
    if frame.empty:
        return pd.DataFrame(columns=list(LATE_ENTRY_COLUMNS))
    tainted = scope.contaminated()
    frame = frame.assign(
        entrant_contaminated=[tainted[e] for e in frame["entrant_id"]],
        display_name=[
            entrant_name(str(names.get(f, f)), tainted[e])
            for f, e in zip(frame["family_id"], frame["entrant_id"], strict=True)
        ],
    )
    return frame[list(LATE_ENTRY_COLUMNS)].reset_index(drop=True)


def entrants(entries: pd.DataFrame) -> pd.DataFrame:
    """`late_entries` one row per entrant and protocol: ``cohorts`` (the cohort numbers it
    played, ascending, as a list), ``statuses`` (each shadow's status in that order) and
    ``contaminated`` (any shadow stamped so). Pure."""
    if entries.empty:
        return pd.DataFrame(columns=list(ENTRANT_COLUMNS))
    rows = []
    for (entrant, protocol), group in entries.groupby(["entrant_id", "protocol"], sort=True):
        group = group.sort_values("cohort_number")
        rows.append(
            {
                "entrant_id": entrant,
                "family_id": group["family_id"].iloc[0],
                "display_name": group["display_name"].iloc[0],
                "protocol": protocol,
                "cohorts": [int(n) for n in group["cohort_number"]],
                "statuses": [str(s) for s in group["status"]],
                "contaminated": bool(group["contaminated"].any()),
            }
        )
    return pd.DataFrame(rows, columns=list(ENTRANT_COLUMNS))


def cohort_sentence(entries: pd.DataFrame) -> str:
    """One sentence naming the cohorts late entrants replayed and any contaminated entrant,
    for the Leaderboard page (`entries`: `late_entries` of one protocol, non-empty). Pure."""
    numbers = sorted({int(n) for n in entries["cohort_number"]})
    named = ", ".join(str(n) for n in numbers)
    sentence = f"Late entrants replayed cohort{'s' if len(numbers) > 1 else ''} {named}"
    tainted = sorted(set(entries.loc[entries["entrant_contaminated"].astype(bool), "display_name"]))
    if tainted:
        sentence += (
            f"; {' and '.join(tainted)}: contaminated: its cohorts started on or before its "
            "knowledge cutoff"
        )
    return sentence + "."


def with_late_columns(board: pd.DataFrame, entries: pd.DataFrame) -> pd.DataFrame:
    """A late-entry leaderboard (`leaderboard(..., late_entry=True)`) with ``late_entry``
    (bool: the row is a late entrant, not an incumbent) and ``contaminated`` (bool: a late
    entrant any of whose shadows is stamped contaminated; False for an incumbent). Pure."""
    tainted = dict(zip(entries["entrant_id"], entries["entrant_contaminated"], strict=True))
    late = [is_entrant(str(f)) for f in board["family_id"]]
    return board.assign(
        late_entry=late,
        contaminated=[bool(tainted.get(str(f), False)) for f in board["family_id"]],
    )


def late_comparison(
    engine: Engine,
    family_a: str,
    family_b: str,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
) -> pd.DataFrame:
    """The Compare page's pair when one side (or both) is a late entrant (``late:<family>``):
    `arena.analytics.stats.paired.family_comparison`'s frame over the late-entry scope of
    protocol `methodology` (cohort number `cohort` alone, when given), so only the markets
    both traded in the same original cohort are paired: the late entrant's cohorts. A side
    with no agent in that scope → InputError."""
    return family_comparison(
        engine,
        family_a,
        family_b,
        cohort=cohort,
        methodology=methodology,
        replicates=replicates,
        seed=seed,
        late_entry=True,
    )


def late_incumbents(engine: Engine, protocol: str | None = None) -> pd.DataFrame:
    """The incumbents a late entrant can be compared with: ``family_id``, ``display_name``
    and ``kind`` of every family with a live agent in an original cohort (of `protocol`;
    None: any) that has late entrants, by family id."""
    with engine.connect() as conn:
        originals = late_scope(conn, protocol).original_ids
        query = (
            select(FAMILIES.c.id, FAMILIES.c.display_name, FAMILIES.c.kind)
            .where(
                FAMILIES.c.id.in_(
                    select(AGENTS.c.family_id).where(AGENTS.c.cohort_id.in_(originals))
                )
            )
            .order_by(FAMILIES.c.id)
        )
        rows = conn.execute(query).all()
    return pd.DataFrame([tuple(r) for r in rows], columns=["family_id", "display_name", "kind"])


# Where a late entrant's marks came from (`arena.engine.late_entry_runs`), in the order a
# sentence names them.
MARK_SOURCES = ("run", "clob_history", "carried")
_MARK_WORDS = {
    "run": "at the runs' frozen prices",
    "clob_history": "from CLOB price history",
    "carried": "carried from the last mark",
}


def mark_sources(engine: Engine, entries: pd.DataFrame) -> dict[str, int]:
    """How often each source marked the open positions of the late entrants in `entries`
    (`late_entries` rows: their shadows), summed over every snapshot their player wrote:
    ``{"run": …, "clob_history": …, "carried": …}`` (methodology §20.1)."""
    wanted = set(zip(entries["cohort_number"], entries["family_id"], strict=True))
    counts: Counter[str] = Counter({source: 0 for source in MARK_SOURCES})
    if not wanted:
        return dict(counts)
    query = (
        select(
            COHORTS.c.number, COHORTS.c.late_entry_family, PORTFOLIO_SNAPSHOTS.c.price_provenance
        )
        .join(AGENTS, AGENTS.c.cohort_id == COHORTS.c.id)
        .join(PORTFOLIO_SNAPSHOTS, PORTFOLIO_SNAPSHOTS.c.agent_id == AGENTS.c.id)
        .where(COHORTS.c.late_entry_of.is_not(None))
    )
    with engine.connect() as conn:
        for number, family, provenance in conn.execute(query):
            if (number, family) in wanted:
                for record in _records(provenance):
                    counts[str(record.get("source"))] += 1
    return dict(counts)


def _records(provenance: Any) -> list[dict[str, Any]]:
    if isinstance(provenance, str):
        provenance = json.loads(provenance)
    if not isinstance(provenance, dict):
        return []
    return [r for r in provenance.values() if isinstance(r, dict)]


def marks_sentence(counts: dict[str, int]) -> str:
    """The mark counts as one sentence: "Marks between runs: 151 at the runs' frozen prices,
    0 from CLOB price history, 19 carried from the last mark." Pure."""
    parts = [f"{counts.get(s, 0):,} {_MARK_WORDS[s]}" for s in MARK_SOURCES]
    extra = sorted(set(counts) - set(MARK_SOURCES))
    parts += [f"{counts[s]:,} {s}" for s in extra]
    return "Open positions' marks: " + ", ".join(parts) + "."
