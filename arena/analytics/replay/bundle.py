"""`arena bundle COHORT`: everything a finished cohort published, in files anyone can recompute.

What a bundle holds (`format.FILES`; the format is `replay_format`): the cohort and the
methodology constants stamped on it, the lineup (agent → family → model id served), every
frozen market snapshot a decision run used, every decision with its prompts, every HTTP attempt
with its raw answer, tokens, cost and latency, the parsed action and each leg's outcome
(rejected legs with their reasons), every trade, position and Brier row, the resolution fields
of every traded market (the Gamma fields the verdict rests on), the cohort's portfolio
snapshots, and the cohort leaderboard's point estimates as the project computes them. `arena
verify` recomputes the numbers from the other files alone (`replay_verify`).

A bundle is *final* when its cohort is finished: completed (every position settled) and every
market it bought into resolved, so a BUY sold before its market resolved has its Brier row;
from then on nothing of the cohort can change, and that is when the scheduler keeps one. A
cohort still running is bundled only on request (`provisional=True`, stamped `"final": false`):
its open positions are valued at their latest marks and its numbers may still move.
Everything is read in one snapshot (`consistent_read`) and ordered by id, so a bundle of the
same cohort is byte-identical whichever backend or process built it, and whenever.

Every string copied from the database (JSON values string by string) is redacted
(`arena.agents.secrets.redact`) of the configured API key in any case and escaped form, and of
`sk-or-…` keys: a database written before the engine redacted what it stored, by an endpoint
that echoed the key, still gives a bundle without it. Text holding no key is copied unchanged,
so a clean database's bundle keeps its bytes.

`trades.jsonl` holds every column of the trades table, but `probability` (the protocol
extension `stated_probability`, migration 0008) only in a bundle of a cohort stamped with that
extension: a v1 cohort's bundle is byte for byte what it was before the column existed, so a
rebuild still gives its published hash.

A cohort of methodology v2 (docs/methodology-v2.md, "Exports and replay bundles") also bundles
where every price came from: each frozen item's `quotes`, the trades' `price_source` and
`price_quote`, the valuation rows' marks (`marks.jsonl`, `replay.marks`), and its leaderboard's
capital and portfolio value in v2's order. None of it is in a v1 bundle, which keeps its bytes.

A cohort stamped `book_execution` (docs/book-execution.md) also bundles the books its legs walked
(`books.jsonl`, `replay.books`), its trades' `book_fill` and its valuation rows' bid marks
(`marks.jsonl`), whatever its methodology version; no other bundle has them.
"""

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from sqlalchemy import Table, func, select
from sqlalchemy.engine import Connection, Engine

from arena.agents.secrets import configured_secrets, redact_value
from arena.analytics.query.frames import raw_rows
from arena.analytics.replay.books import BOOKS, book_rows
from arena.analytics.replay.format import (
    PORTFOLIO_COLUMNS,
    README,
    BundleFiles,
    build_files,
    json_bytes,
    jsonl_bytes,
    plain,
)
from arena.analytics.replay.marks import MARKS, marks_jsonl
from arena.analytics.replay.readme import readme
from arena.analytics.replay.shadow import (
    LATE_RANK,
    board_rows,
    cohort_row,
    shadow_meta,
    shadow_row,
    with_asked_resolutions,
)
from arena.analytics.stats.leaderboard import leaderboard, portfolio_value, ranked
from arena.config import (
    BOOK_EXECUTION,
    METHODOLOGY_V2,
    STATED_PROBABILITY,
    is_v2,
    stamped_extensions,
    stamped_replicates,
)
from arena.core.errors import InputError
from arena.core.late_entry import stamped_late_entry
from arena.storage.db import consistent_read
from arena.storage.dbtypes import from_units
from arena.storage.models import FINAL_STATUSES
from arena.storage.tables import (
    AGENTS,
    BRIER_SCORES,
    COHORTS,
    DECISION_ATTEMPTS,
    DECISIONS,
    FAMILIES,
    LATE_ENTRY_RESOLUTIONS,
    MARKET_SNAPSHOT_ITEMS,
    MARKET_SNAPSHOTS,
    MARKETS,
    PORTFOLIO_SNAPSHOTS,
    POSITIONS,
    TRADES,
    live_cohort,
)

# What a bundle of a methodology v2 cohort holds besides (docs/methodology-v2.md, "Replay
# bundles"): the valuation rows' marks and their provenance. A v1 bundle never has it.
V2_FILES = (MARKS,)
# A cohort stamped `book_execution` (docs/book-execution.md): the books its legs walked.
BOOK_FILES = (BOOKS,)
# The decision columns a replay needs; the claim bookkeeping (tokens of ownership, wall-clock
# claim times) says nothing about the benchmark and is left out.
DECISION_COLUMNS = (
    "id",
    "agent_id",
    "decision_week",
    "market_snapshot_id",
    "status",
    "action",
    "attempts",
    "prompt_system",
    "prompt_user",
    "raw_response",
    "parsed_response",
    "validation_errors",
    "legs",
    "bets_executed",
    "sells_executed",
    "legs_rejected",
    "amount_bet",
    "error",
    "tokens_in",
    "tokens_out",
    "cost_usd",
    "latency_ms",
    "served_model",
    "provider",
    "decided_at",
)
MARKET_COLUMNS = (
    "id",
    "question",
    "event_id",
    "market_type",
    "outcomes",
    "prices",
    "closed",
    "uma_resolution_status",
    "status",
    "resolution_outcome",
    "resolved_at",
)
SNAPSHOT_ITEM_COLUMNS = (
    "market_id",
    "rank",
    "question",
    "market_type",
    "outcomes",
    "prices",
    "volume",
    "end_date",
)
# The cohort leaderboard's point estimates that `arena verify` recomputes.
LEADERBOARD_POINTS = (
    "family_id",
    "display_name",
    "kind",
    "rank",
    "total_pnl",
    "return_pct",
    "brier",
    "resolved_bets",
    "win_rate",
    "market_brier",
    "skill_vs_market",
    "skill_bets",
    "bets",
    "decisions",
    "fallback_holds",
    "api_cost_usd",
)
# v2's leaderboard ranks by portfolio value (`stats.leaderboard.ranked`): its point estimates
# also carry the capital and the portfolio value (never in a v1 bundle, which keeps its bytes).
V2_LEADERBOARD_POINTS = ("capital", "portfolio_value")


@dataclass(frozen=True)
class BuiltBundle:
    """A cohort's bundle: its files and what to say about it."""

    cohort: int
    bundle: BundleFiles

    @property
    def hash(self) -> str:
        return self.bundle.hash


def project_version() -> str:
    """The package version that built the bundle (recorded in the manifest)."""
    try:
        return version("forecaster-arena")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def build_bundle(
    engine: Engine,
    cohort_number: int,
    *,
    provisional: bool = False,
    secrets: Sequence[str] | None = None,
    cohort_id: int | None = None,
    late_entry: str | None = None,
) -> BuiltBundle:
    """The bundle of live cohort `cohort_number`; of the shadow of it that family
    `late_entry` played; or of cohort row `cohort_id` (a late entrant's shadow repeats its
    original's number: `replay.shadow`). InputError for an unknown cohort, and (unless
    `provisional`) for one not finished yet. `secrets`: the keys to redact from every string
    copied (default: the configured API key)."""
    scrub = _Scrub(configured_secrets() if secrets is None else tuple(secrets))
    with consistent_read(engine) as conn:
        if cohort_id is not None:
            cohort = cohort_row(conn, cohort_id)
        elif late_entry is not None:
            cohort = shadow_row(conn, cohort_number, late_entry)
        else:
            cohort = _cohort(conn, cohort_number)
        cohort_number = int(cohort["number"])
        unfinished = _unfinished(conn, cohort)
        if unfinished and not provisional:
            raise InputError(
                f"cohort {cohort_number} is not finished: {unfinished}",
                "wait until it is (the scheduler then keeps its bundle), or pass --provisional "
                "for a bundle of its state so far, stamped not final",
            )
        payload = _payload(conn, cohort, scrub, final=not unfinished)
    v2 = is_v2(cohort["methodology_version"])
    if stamped_late_entry(cohort["constants"]) is None:
        points = _board_points(engine, cohort_number, v2)
    else:  # a late entrant's shadow: its row of the late-entry board (`replay.shadow`)
        columns = (*LEADERBOARD_POINTS, *(V2_LEADERBOARD_POINTS if v2 else ()), LATE_RANK)
        rows = board_rows(engine, cohort, v2)
        points = [{column: _number(row[column]) for column in columns} for row in rows]
    payload["leaderboard.jsonl"] = scrub.jsonl(points)
    meta = {"cohort": cohort_number, **shadow_meta(cohort), "project_version": project_version()}
    return BuiltBundle(cohort_number, build_files(payload, meta))


def _board_points(engine: Engine, cohort_number: int, v2: bool) -> list[dict[str, Any]]:
    """The live cohort leaderboard's point estimates; a v2 cohort's in v2's order (portfolio
    value) with its capital and portfolio value."""
    if not v2:
        board = leaderboard(engine, cohort=cohort_number, replicates=200, null_seeds=0)
        return [
            {column: _number(row[column]) for column in LEADERBOARD_POINTS}
            for row in board.to_dict("records")
        ]
    board = leaderboard(
        engine, cohort=cohort_number, replicates=200, null_seeds=0, methodology=METHODOLOGY_V2
    )
    board = ranked(board.assign(portfolio_value=portfolio_value(board)), METHODOLOGY_V2)
    columns = (*LEADERBOARD_POINTS, *V2_LEADERBOARD_POINTS)
    rows = board.to_dict("records")
    return [{column: _number(row[column]) for column in columns} for row in rows]


def _cohort(conn: Connection, number: int) -> dict[str, Any]:
    """Live cohort `number` (a late entrant's shadow repeats the number: not this one)."""
    query = select(COHORTS).where(COHORTS.c.number == number, live_cohort())
    row = conn.execute(query).mappings().first()
    if row is None:
        numbers = select(COHORTS.c.number).where(live_cohort()).order_by(COHORTS.c.number)
        known = conn.execute(numbers).scalars().all()
        shown = ", ".join(map(str, known)) or "none yet"
        raise InputError(f"no cohort {number}", f"cohorts in this database: {shown}")
    return dict(row)


def _unfinished(conn: Connection, cohort: dict[str, Any]) -> str | None:
    """Why the cohort's numbers may still move, or None once it is finished."""
    if cohort["status"] != "completed":
        return f"its status is {cohort['status']} (positions open or decisions to come)"
    waiting = unsettled_buys(conn, cohort["id"])
    if waiting:
        return f"{waiting} BUY(s) sold before their markets resolved await their Brier rows"
    return None


def unsettled_buys(conn: Connection, cohort_id: int) -> int:
    """BUYs of the cohort's agents in markets not final yet: what keeps its Brier open. For a
    late entrant's shadow, a market whose resolution its late entry asked of the source
    (`late_entry_resolutions`) is final too (methodology §20.3)."""
    query = (
        select(func.count())
        .select_from(TRADES)
        .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
        .join(MARKETS, MARKETS.c.id == TRADES.c.market_id)
        .where(
            AGENTS.c.cohort_id == cohort_id,
            TRADES.c.trade_type == "BUY",
            MARKETS.c.status.not_in(FINAL_STATUSES),
        )
    )
    shadow = select(COHORTS.c.late_entry_of).where(COHORTS.c.id == cohort_id)
    if conn.execute(shadow).scalar() is not None:
        asked = select(LATE_ENTRY_RESOLUTIONS.c.market_id)
        query = query.where(TRADES.c.market_id.not_in(asked))
    return int(conn.execute(query).scalar_one())


def _rows(conn: Connection, table: Table, columns: Sequence[str], where: Any) -> list[dict]:
    query = select(*(table.c[c] for c in columns)).where(where).order_by(*table.primary_key)
    return [dict(row) for row in conn.execute(query).mappings()]


def trade_columns(constants: dict[str, Any] | None) -> list[str]:
    """The trades columns a cohort's bundle carries: every one, but `probability` only for a
    cohort stamped with the `stated_probability` extension and `book_fill` only for one stamped
    `book_execution` (a v1 bundle keeps its bytes)."""
    stated = STATED_PROBABILITY in stamped_extensions(constants)
    walks = BOOK_EXECUTION in stamped_extensions(constants)
    v2 = is_v2((constants or {}).get("version"))  # v2's price provenance: never in a v1 bundle
    return [
        c.name
        for c in TRADES.c
        if (stated or c.name != "probability")
        and (v2 or c.name not in V2_TRADE_COLUMNS)
        and (walks or c.name != "book_fill")
    ]


V2_TRADE_COLUMNS = ("price_source", "price_quote")


@dataclass(frozen=True)
class _Scrub:
    """The bundle's spelling of rows read from the database, every string redacted."""

    secrets: tuple[str, ...]

    def value(self, value: Any) -> Any:
        # Bearer-looking words are free text here ("the flag bearer at …"), not tokens.
        return redact_value(value, self.secrets, bearer=False)

    def jsonl(self, rows: Iterable[dict[str, Any]]) -> bytes:
        return jsonl_bytes(self.value(row) for row in rows)


def _payload(
    conn: Connection, cohort: dict[str, Any], scrub: _Scrub, *, final: bool
) -> dict[str, bytes]:
    agents = conn.execute(
        select(
            AGENTS.c.id.label("agent_id"),
            AGENTS.c.family_id,
            AGENTS.c.display_name,
            AGENTS.c.model_id,
            FAMILIES.c.kind,
            FAMILIES.c.provider,
            AGENTS.c.starting_balance,
            AGENTS.c.cash_balance,
            AGENTS.c.replicate,
        )
        .join(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .where(AGENTS.c.cohort_id == cohort["id"])
        .order_by(AGENTS.c.id)
    ).mappings()
    # `replicate` only in a replicated cohort: a v1 bundle keeps its bytes
    replicated = stamped_replicates(cohort["constants"]) > 1
    lineup = [{k: v for k, v in row.items() if replicated or k != "replicate"} for row in agents]
    agent_ids = [row["agent_id"] for row in lineup]
    of_agents = DECISIONS.c.agent_id.in_(agent_ids)
    decisions = _rows(conn, DECISIONS, DECISION_COLUMNS, of_agents)
    decision_ids = [d["id"] for d in decisions]
    attempt_columns = [c.name for c in DECISION_ATTEMPTS.c if c.name != "id"]
    attempts = conn.execute(
        select(*(DECISION_ATTEMPTS.c[c] for c in attempt_columns))
        .where(DECISION_ATTEMPTS.c.decision_id.in_(decision_ids))
        .order_by(DECISION_ATTEMPTS.c.decision_id, DECISION_ATTEMPTS.c.attempt_no)
    ).mappings()
    trades = _rows(
        conn, TRADES, trade_columns(cohort["constants"]), TRADES.c.agent_id.in_(agent_ids)
    )
    positions = _rows(
        conn, POSITIONS, [c.name for c in POSITIONS.c], POSITIONS.c.agent_id.in_(agent_ids)
    )
    briers = _rows(
        conn, BRIER_SCORES, [c.name for c in BRIER_SCORES.c], BRIER_SCORES.c.agent_id.in_(agent_ids)
    )
    market_ids = sorted({p["market_id"] for p in positions} | {t["market_id"] for t in trades})
    markets = _rows(conn, MARKETS, MARKET_COLUMNS, MARKETS.c.id.in_(market_ids))
    late = stamped_late_entry(cohort["constants"])
    if late is not None:  # what its late entry asked the source, where the database never knew
        markets = with_asked_resolutions(conn, markets)
    snapshot_ids = sorted({d["market_snapshot_id"] for d in decisions} - {None})
    v2 = is_v2(cohort["methodology_version"])
    # v2: the valuation rows' marks and their provenance (ids, instants, the engine's words)
    walks = BOOK_EXECUTION in stamped_extensions(cohort["constants"])
    # v2, book_execution and a late entrant: the valuation rows' marks and their provenance
    extra = {MARKS: marks_jsonl(conn, agent_ids)} if v2 or walks or late else {}
    if walks:  # the books its legs walked (`replay.books`); never in any other bundle
        extra[BOOKS] = scrub.jsonl(book_rows(conn, decisions, positions))
    return {
        README: readme(cohort["number"], v2, walks, late).encode("utf-8"),
        "cohort.json": json_bytes(
            scrub.value(
                {
                    "cohort": cohort["number"],
                    "week_start": cohort["week_start"],
                    "methodology_version": cohort["methodology_version"],
                    "constants": cohort["constants"] or {},
                    "status": cohort["status"],
                    "completed_at": cohort["completed_at"],
                    "final": final,
                    **shadow_meta(cohort),  # a late entrant's record (a live cohort: none)
                }
            )
        ),
        "lineup.jsonl": scrub.jsonl(lineup),
        "market_snapshots.jsonl": scrub.jsonl(_snapshots(conn, snapshot_ids, quotes=v2)),
        "decisions.jsonl": scrub.jsonl(decisions),
        "attempts.jsonl": scrub.jsonl(dict(row) for row in attempts),
        "trades.jsonl": scrub.jsonl(trades),
        "positions.jsonl": scrub.jsonl(positions),
        "markets.jsonl": scrub.jsonl(markets),
        "brier_scores.jsonl": scrub.jsonl(briers),
        # ids, instants and amounts only: nothing in it is text that could hold a key
        "portfolio_snapshots.csv": curve_csv(conn, agent_ids),
        **extra,
    }


def _snapshots(
    conn: Connection, snapshot_ids: list[int], *, quotes: bool = False
) -> list[dict[str, Any]]:
    """Each frozen snapshot with its items in rank order (universe first, then held markets);
    with `quotes` (a v2 cohort) each item also carries its outcomes' quotes."""
    item_columns = (*SNAPSHOT_ITEM_COLUMNS, "quotes") if quotes else SNAPSHOT_ITEM_COLUMNS
    heads = conn.execute(
        select(MARKET_SNAPSHOTS)
        .where(MARKET_SNAPSHOTS.c.id.in_(snapshot_ids))
        .order_by(MARKET_SNAPSHOTS.c.id)
    ).mappings()
    out = [
        {
            "id": h["id"],
            "taken_at": h["taken_at"],
            "purpose": h["purpose"],
            "market_count": h["market_count"],
            "items": [],
        }
        for h in heads
    ]
    by_id = {s["id"]: s for s in out}
    items = conn.execute(
        select(
            MARKET_SNAPSHOT_ITEMS.c.snapshot_id,
            *(MARKET_SNAPSHOT_ITEMS.c[c] for c in item_columns),
        )
        .where(MARKET_SNAPSHOT_ITEMS.c.snapshot_id.in_(snapshot_ids))
        .order_by(MARKET_SNAPSHOT_ITEMS.c.snapshot_id, MARKET_SNAPSHOT_ITEMS.c.rank)
    ).mappings()
    for item in items:
        by_id[item["snapshot_id"]]["items"].append({c: item[c] for c in item_columns})
    return out


def _number(value: Any) -> Any:
    """A leaderboard cell as JSON: numpy scalars as Python numbers, NaN as null, floats to 12
    significant digits (sums in SQL may differ in the last bits between backends, and the
    same season must give the same bytes; `verify` compares within 1e-9)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.12g}")
    return value


def curve_csv(conn: Connection, agent_ids: Sequence[int]) -> bytes:
    """`portfolio_snapshots.csv`: every snapshot row of the agents, in the bundle's spelling.

    The largest file (≈190,000 rows for a cohort of a year's season), so it is read as the
    driver's tuples and each distinct stored value is spelled once (`_Spelling`): typed reads
    and a `plain` per cell took 15 of a bundle's 20 s. The bytes are those of `csv_bytes` over
    typed rows (a test holds them equal on both backends).
    """
    columns = PORTFOLIO_SNAPSHOTS.c
    query = (
        select(*(columns[c] for c in PORTFOLIO_COLUMNS))
        .where(columns.agent_id.in_(agent_ids))
        .order_by(columns.agent_id, columns.slot)
    )
    spell = _Spelling()
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PORTFOLIO_COLUMNS)
    writer.writerows(
        (
            agent,
            spell.instant(slot),
            spell.instant(taken),
            spell.fixed(cash),
            spell.fixed(positions),
            spell.fixed(total),
            spell.fixed(pnl),
            "" if brier is None else brier,
            resolved,
        )
        for agent, slot, taken, cash, positions, total, pnl, brier, resolved in raw_rows(
            conn, query
        )
    )
    return out.getvalue().encode("utf-8")


class _Spelling:
    """Stored values in the bundle's spelling, each distinct one spelled once (a slot recurs
    for every agent, a cash balance for every slot until it moves)."""

    def __init__(self) -> None:
        self._instants: dict[Any, str] = {}
        self._fixed: dict[int, str] = {}

    def instant(self, raw: Any) -> str:
        """A stored instant: SQLite's text (`2026-01-04 00:10:00.000000`, UTC) or
        PostgreSQL's aware datetime, as `plain` spells the typed value."""
        spelled = self._instants.get(raw)
        if spelled is None:
            if isinstance(raw, str):
                raw_value: Any = datetime.fromisoformat(raw).replace(tzinfo=UTC)
            else:
                raw_value = raw
            spelled = self._instants[raw] = str(plain(raw_value))
        return spelled

    def fixed(self, units: int) -> str:
        """A `Fixed(6)` column's stored integer as fixed-point text (`from_units`, then
        `plain`): micro-units, six decimals, the sign in front."""
        spelled = self._fixed.get(units)
        if spelled is None:
            spelled = self._fixed[units] = format(from_units(units), "f")
        return spelled
