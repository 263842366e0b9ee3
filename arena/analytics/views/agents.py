"""Read models of one agent (a family in one cohort): its book, its trades, its numbers; and
of a family across its cohorts (`family_returns`, `family_cohorts`).

Positions and trades come from the same queries as `arena export positions` / `trades`
(`arena.analytics.export.tables.EXPORTS`), so the open positions' values here are the export's,
marked by the snapshot rule (§12.4), and a researcher's CSV matches the page exactly.
"""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pandas as pd
from sqlalchemy import Integer, Select, String, cast, func, literal_column, null, select, union_all
from sqlalchemy.engine import Engine

from arena.analytics.export.tables import EXPORTS, ExportFilters
from arena.analytics.query.frames import FLOAT, INT, MONEY, TEXT, TIME, query_frame
from arena.analytics.query.scope import cohort_id_of, cohort_in_scope, live_cohort_of
from arena.analytics.query.selects import (
    agent_book,
    agent_display_name,
    agent_ids,
    agent_stats,
    fetch,
    latest_snapshots,
    ratio,
    read_frame,
    typed_frame,
)
from arena.analytics.views.cohorts import FIELD_COLUMNS, family_standings
from arena.config import METHODOLOGY_VERSION
from arena.storage.tables import (
    AGENTS,
    COHORTS,
    FAMILIES,
    MARKETS,
    POSITIONS,
    TRADES,
    live_cohort,
)

ROW_CAP = 100_000  # one agent never holds this many; a bound against a runaway read

# Position status → the outcome a reader asks about.
OUTCOMES = {
    "open": "pending",
    "won": "won",
    "lost": "lost",
    "sold": "sold",
    "cancelled": "cancelled",
}

AGENT_INDEX_COLUMNS: dict[str, str] = {
    "cohort_number": INT,
    "family_id": TEXT,
    "display_name": TEXT,
    "kind": TEXT,
}


def agent_index(engine: Engine) -> pd.DataFrame:
    """Every agent as (cohort, family), for selectors: newest cohort first, then family id.

    Columns: ``cohort_number``, ``family_id``, ``display_name``, ``kind``.
    """
    query = (
        select(
            COHORTS.c.number.label("cohort_number"),
            AGENTS.c.family_id,
            func.coalesce(FAMILIES.c.display_name, AGENTS.c.display_name).label("display_name"),
            func.coalesce(FAMILIES.c.kind, "llm").label("kind"),
        )
        .join(COHORTS, live_cohort_of(AGENTS.c.cohort_id))
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .order_by(COHORTS.c.number.desc(), AGENTS.c.family_id)
    )
    return read_frame(engine, query, AGENT_INDEX_COLUMNS)


@dataclass(frozen=True)
class FilterOptions:
    """What the cohort and family filters offer: cohort numbers newest first, family ids."""

    cohorts: list[int]
    families: list[str]


def _filter_options_query() -> Select[Any]:
    """Both lists in one statement: a cohort row has no family, a family row no cohort.

    Every cohort is offered: one is created with its agents or not at all
    (`start_cohort`). A family is offered when it has an agent (`_first_agent_of`).
    """
    cohorts = select(COHORTS.c.number, cast(null(), String).label("family_id")).where(live_cohort())
    families = select(cast(null(), Integer), FAMILIES.c.id).where(
        _first_agent_of(FAMILIES.c.id).is_not(None)
    )
    both = union_all(cohorts, families).subquery()
    return select(both).order_by(both.c.number.desc(), both.c.family_id)


def _first_agent_of(family_id: Any) -> Any:
    """SQL: the family id of the first agent of `family_id` (NULL when it has none).

    A probe that stops at the family's first agent: PostgreSQL plans `EXISTS` as a hash over
    every agent, which cost as much as the rest of the Exports page. Its LIMIT is a literal:
    a bound LIMIT cost PostgreSQL a fifth more.
    """
    return (
        select(AGENTS.c.family_id)
        .join(COHORTS, live_cohort_of(AGENTS.c.cohort_id))  # a live agent
        .where(AGENTS.c.family_id == family_id)
        .limit(literal_column("1"))
        .scalar_subquery()
    )


# Built once: constructing the statement cost more than SQLite running it.
_FILTER_OPTIONS = _filter_options_query()


def filter_options(engine: Engine) -> FilterOptions:
    """Every cohort (newest first) and every family with an agent (by id).

    For pages that only need the choices of their filters: two lists, not the agent index as
    a frame (a tenth of its cost), read by one statement (one PostgreSQL round trip instead
    of two); each list keeps the statement's order.
    """
    with engine.connect() as conn:
        rows = conn.execute(_FILTER_OPTIONS).all()
    return FilterOptions(
        cohorts=[int(number) for number, _ in rows if number is not None],
        families=[str(family) for _, family in rows if family is not None],
    )


SUMMARY_COLUMNS: dict[str, str] = {
    "cohort_number": INT,
    "family_id": TEXT,
    "replicate": INT,
    "display_name": TEXT,
    "kind": TEXT,
    "model_id": TEXT,
    "starting_balance": MONEY,
    "cash_balance": MONEY,
    "positions_value": MONEY,
    "total_value": MONEY,
    "total_pnl": MONEY,
    "return_pct": FLOAT,
    "brier": FLOAT,
    "resolved_bets": INT,
    "open_positions": INT,
    "positions": INT,
    "decisions": INT,
    "fallback_holds": INT,
    "api_cost_usd": FLOAT,
    "last_snapshot": TIME,
}


def agent_summary(
    engine: Engine, cohort: int, family: str, replicate: int | None = None
) -> pd.DataFrame:
    """One row for the agent of `family` in cohort `cohort` (no row: no such agent; one row
    per replicate in a replicated cohort unless `replicate` names one).

    Columns: ``cohort_number``, ``family_id``, ``display_name``, ``kind``, ``model_id``;
    ``starting_balance``; ``cash_balance`` (the agent's cash now); from the latest snapshot
    ``positions_value``, ``total_value``, ``total_pnl`` ($) and ``return_pct`` (NaN before
    the first snapshot); ``brier``, ``resolved_bets``; ``open_positions`` and ``positions``
    (ever held); ``decisions``, ``fallback_holds``, ``api_cost_usd``; ``last_snapshot``.
    """
    mine = agent_ids(cohort, family, replicate)
    book = agent_book(mine)
    decisions, positions = agent_stats(mine)
    query = (
        select(
            COHORTS.c.number.label("cohort_number"),
            AGENTS.c.family_id,
            AGENTS.c.replicate,
            agent_display_name(),
            func.coalesce(FAMILIES.c.kind, "llm").label("kind"),
            AGENTS.c.model_id,
            book.c.capital.label("starting_balance"),
            book.c.cash.label("cash_balance"),
            book.c.positions_value,
            book.c.total_value,
            book.c.total_pnl,
            book.c.total_pnl_percent.label("return_pct"),
            book.c.slot.label("last_snapshot"),
            book.c.brier_sum,
            book.c.resolved_bets,
            positions.c.open_positions,
            positions.c.positions,
            decisions.c.decisions,
            decisions.c.fallback_holds,
            decisions.c.api_cost_usd,
        )
        .select_from(AGENTS)
        .join(COHORTS, live_cohort_of(AGENTS.c.cohort_id))
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .join(book, book.c.agent_id == AGENTS.c.id)
        .outerjoin(positions, positions.c.agent_id == AGENTS.c.id)
        .outerjoin(decisions, decisions.c.agent_id == AGENTS.c.id)
        .order_by(AGENTS.c.replicate)
    )
    with engine.connect() as conn:
        kinds = {c: k for c, k in SUMMARY_COLUMNS.items() if c != "brier"}
        frame = query_frame(conn, query, {**kinds, "brier_sum": FLOAT})
    frame["brier"] = ratio(frame.pop("brier_sum"), frame["resolved_bets"])
    return frame[list(SUMMARY_COLUMNS)]


# --------------------------------------------------------------------------------------------
# A family across its cohorts (the Family page)

FAMILY_RETURN_COLUMNS: dict[str, str] = {
    "rank": INT,
    "family_id": TEXT,
    "display_name": TEXT,
    "kind": TEXT,
    "cohorts": INT,
    "capital": MONEY,
    "total_pnl": MONEY,
    "return_pct": FLOAT,
}


def family_returns(engine: Engine, methodology: str = METHODOLOGY_VERSION) -> pd.DataFrame:
    """Every family with an agent, by its point return across its v1 cohorts (its
    `methodology` version's), best first.

    The leaderboard's headline numbers without its bootstrap (a cheap read for choosing and
    labelling families; the leaderboard adds the intervals), over the same cohorts: every
    plain cohort of the version, extended cohorts and other versions' left out
    (`arena.analytics.query.scope`). ``total_pnl`` ($) is summed over the family's agents in
    them, each from its latest snapshot, else its cash plus its open positions at cost minus
    its start; ``capital`` sums their starting balances; ``return_pct`` = total_pnl /
    capital × 100; ``rank`` is the competition rank by return_pct (1 = best, ties share; the
    leaderboard's ``rank``). A family with no agent in those cohorts (all in extended
    cohorts, or in another version's) is listed last with ``cohorts`` 0, ``capital`` and
    ``total_pnl`` 0, ``return_pct`` NaN and ``rank`` 0 (unranked). Columns: ``rank``,
    ``family_id``, ``display_name``, ``kind``, ``cohorts``, ``capital``, ``total_pnl``,
    ``return_pct``; ordered by rank (the unranked last), then family id.
    """
    # v1's scope is None (the SQL it was before v2); another version's, its name; a protocol
    # group's, its cohorts' ids.
    with engine.connect() as conn:
        scope = cohort_id_of(conn, None, methodology)
    latest = latest_snapshots()
    open_cost = (
        select(POSITIONS.c.agent_id, func.sum(POSITIONS.c.cost_basis).label("open_cost"))
        .where(POSITIONS.c.status == "open")
        .group_by(POSITIONS.c.agent_id)
        .subquery("open_cost")
    )
    query = (
        select(
            AGENTS.c.family_id,
            func.coalesce(FAMILIES.c.display_name, AGENTS.c.display_name).label("display_name"),
            func.coalesce(FAMILIES.c.kind, "llm").label("kind"),
            AGENTS.c.starting_balance,
            AGENTS.c.cash_balance,
            open_cost.c.open_cost,
            latest.c.total_pnl,
            cohort_in_scope(AGENTS.c.cohort_id, scope).label("counted"),
        )
        .select_from(AGENTS)
        .join(COHORTS, live_cohort_of(AGENTS.c.cohort_id))  # live agents: no late entrant
        .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
        .outerjoin(latest, latest.c.agent_id == AGENTS.c.id)
        .outerjoin(open_cost, open_cost.c.agent_id == AGENTS.c.id)
    )
    with engine.connect() as conn:
        rows = fetch(conn, query)
    families: dict[str, dict[str, Any]] = {}
    for row in rows:
        one = families.setdefault(
            str(row["family_id"]),
            {
                "family_id": row["family_id"],
                "display_name": row["display_name"],
                "kind": row["kind"],
                "cohorts": 0,
                "capital": Decimal(0),
                "total_pnl": Decimal(0),
            },
        )
        if not row["counted"]:  # out of the version's scope (extended, another version): listed
            continue
        pnl = row["total_pnl"]
        if pnl is None:  # never valued yet: cash plus open positions at cost, minus the start
            pnl = row["cash_balance"] + (row["open_cost"] or 0) - row["starting_balance"]
        one["cohorts"] += 1
        one["capital"] += row["starting_balance"]
        one["total_pnl"] += pnl
    for one in families.values():
        capital = one["capital"]
        one["return_pct"] = float(one["total_pnl"] / capital * 100) if capital else float("nan")
    frame = typed_frame(list(families.values()), FAMILY_RETURN_COLUMNS)
    frame["rank"] = frame["return_pct"].rank(method="min", ascending=False).fillna(0).astype(int)
    unranked = frame["rank"] == 0
    frame = frame.assign(_unranked=unranked).sort_values(
        ["_unranked", "rank", "family_id"], kind="stable"
    )
    return frame.drop(columns="_unranked").reset_index(drop=True)


def best_llm_family(returns: pd.DataFrame) -> str | None:
    """The best-ranked LLM family of `family_returns` (an unranked one only when no LLM
    family is ranked; None when no LLM family has an agent)."""
    llms = returns[returns["kind"] == "llm"]
    return str(llms["family_id"].iloc[0]) if not llms.empty else None


FAMILY_COHORT_COLUMNS: dict[str, str] = {
    "cohort_number": INT,
    "week_start": TIME,
    "status": TEXT,
    "family_id": TEXT,
    "display_name": TEXT,
    "kind": TEXT,
    "model_id": TEXT,
    **FIELD_COLUMNS,
    "total_value": MONEY,
    "total_pnl": MONEY,
    "brier": FLOAT,
    "resolved_bets": INT,
    "win_rate": FLOAT,
    "decisions": INT,
    "fallback_holds": INT,
    "api_cost_usd": FLOAT,
    "last_snapshot": TIME,
}


def family_cohorts(engine: Engine, family: str) -> pd.DataFrame:
    """One row per cohort `family` has an agent in, newest first: that agent's numbers and
    its place in the cohort (empty: no such family, or no agent yet).

    Columns: ``cohort_number``, ``week_start``, ``status`` (the cohort's); ``family_id``,
    ``display_name``, ``kind``, ``model_id``; from `cohort_field`: ``rank`` of ``agents``
    (baselines included), ``return_pct``, the cohort's ``cohort_mean_return``,
    ``cohort_best_return`` / ``cohort_best`` and ``cohort_worst_return`` / ``cohort_worst``
    (display names), ``vs_mean``, ``vs_best``, ``vs_worst`` (percentage points); then as in
    `cohort_standings`: ``total_value``, ``total_pnl``, ``brier``, ``resolved_bets``,
    ``win_rate``, ``decisions``, ``fallback_holds``, ``api_cost_usd``, ``last_snapshot``.
    """
    standings = family_standings(engine, family)
    if standings.empty:
        return typed_frame([], FAMILY_COHORT_COLUMNS)
    numbers = sorted({int(n) for n in standings["cohort_number"]})
    with engine.connect() as conn:
        weeks = {
            int(number): (week_start, status)
            for number, week_start, status in conn.execute(
                select(COHORTS.c.number, COHORTS.c.week_start, COHORTS.c.status).where(
                    COHORTS.c.number.in_(numbers), live_cohort()
                )
            )
        }
    # Each cohort's field at once (`cohort_field`'s numbers, vectorised: a year has 52).
    returns = standings.groupby("cohort_number")["return_pct"]
    valued = standings.dropna(subset=["return_pct"]).groupby("cohort_number")["return_pct"]
    names = standings["display_name"]
    field = pd.DataFrame(
        {
            "agents": returns.size(),
            "cohort_mean_return": returns.mean(),
            "cohort_best_return": returns.max(),
            # Ties: the first in the standings' order (rank, then family id), as cohort_field.
            "cohort_best": names.reindex(valued.idxmax()).set_axis(valued.idxmax().index),
            "cohort_worst_return": returns.min(),
            "cohort_worst": names.reindex(valued.idxmin()).set_axis(valued.idxmin().index),
        }
    )
    mine = standings[standings["family_id"] == family].set_index("cohort_number")
    frame = mine.join(field)
    frame["vs_mean"] = frame["return_pct"] - frame["cohort_mean_return"]
    frame["vs_best"] = frame["return_pct"] - frame["cohort_best_return"]
    frame["vs_worst"] = frame["return_pct"] - frame["cohort_worst_return"]
    frame["week_start"] = [weeks[int(n)][0] for n in frame.index]
    frame["status"] = [weeks[int(n)][1] for n in frame.index]
    rows = frame.reset_index().to_dict("records")
    return typed_frame(rows, FAMILY_COHORT_COLUMNS)


def pooled_brier(per_cohort: pd.DataFrame) -> float:
    """The family's Brier over all its resolved bets from `family_cohorts` rows: each
    cohort's mean weighted by its resolved bets (the leaderboard's point Brier); NaN before
    any resolution."""
    bets = per_cohort["resolved_bets"].sum()
    if not bets:
        return float("nan")
    return float((per_cohort["brier"].fillna(0.0) * per_cohort["resolved_bets"]).sum() / bets)


def export_rows(
    engine: Engine, table: str, filters: ExportFilters, market_id: str | None = None
) -> list[dict[str, Any]]:
    """Rows of `arena export TABLE` (its query and enrichment), optionally for one market."""
    spec = EXPORTS[table]
    query = spec.query(filters).limit(ROW_CAP)
    if market_id is not None:
        column = POSITIONS.c.market_id if table == "positions" else TRADES.c.market_id
        query = query.where(column == market_id)
    with engine.connect() as conn:
        rows = []
        for row in conn.execute(query).mappings():
            record = dict(row)
            if spec.enrich is not None:
                record.update(spec.enrich(row))
            rows.append(record)
    return rows


def _questions(engine: Engine, market_ids: set[str]) -> dict[str, str]:
    """The question of each of `market_ids`, by id."""
    if not market_ids:
        return {}
    query = select(MARKETS.c.id, MARKETS.c.question).where(MARKETS.c.id.in_(sorted(market_ids)))
    with engine.connect() as conn:
        return {str(mid): str(question) for mid, question in conn.execute(query)}


def _stakes(engine: Engine, position_ids: set[int]) -> dict[int, Decimal]:
    """What was paid into each of `position_ids`: the sum of its BUY amounts, by id."""
    if not position_ids:
        return {}
    query = (
        select(TRADES.c.position_id, func.sum(TRADES.c.amount))
        .where(TRADES.c.trade_type == "BUY", TRADES.c.position_id.in_(sorted(position_ids)))
        .group_by(TRADES.c.position_id)
    )
    with engine.connect() as conn:
        return {int(pid): Decimal(total) for pid, total in conn.execute(query) if pid is not None}


POSITION_COLUMNS: dict[str, str] = {
    "position_id": INT,
    "cohort_number": INT,
    "family_id": TEXT,
    "market_id": TEXT,
    "question": TEXT,
    "side": TEXT,
    "outcome": TEXT,
    "status": TEXT,
    "shares": FLOAT,
    "avg_entry_price": FLOAT,
    "cost_basis": MONEY,
    "mark_price": FLOAT,
    "current_value": MONEY,
    "unrealized_pnl": MONEY,
    "realized_pnl": MONEY,
    "opened_at": TIME,
    "closed_at": TIME,
    "stake": MONEY,
}


def positions(
    engine: Engine,
    *,
    cohort: int | None = None,
    family: str | None = None,
    market_id: str | None = None,
    replicate: int | None = None,
) -> pd.DataFrame:
    """Positions (open first, then closed, newest first) with the outcome a reader asks about.

    Scope: any combination of cohort number, family id (and replicate) and market id (None:
    all).

    Columns: ``position_id``, ``cohort_number``, ``family_id``, ``market_id``, ``question``,
    ``side``; ``outcome`` (pending | won | lost | sold | cancelled) and the raw ``status``;
    ``shares``, ``avg_entry_price``, ``cost_basis``; for open positions ``mark_price``,
    ``current_value`` and ``unrealized_pnl`` (the export's §12.4 marks; 0 once closed);
    ``realized_pnl`` (sells, settlement, refund); ``opened_at``, ``closed_at``; ``stake``, what
    was paid into the position (its BUYs): a closed position's cost basis is 0 (settling or
    selling it removes it), and a reader asks what it risked.
    """
    filters = ExportFilters(cohort, family, replicate=replicate)
    rows = export_rows(engine, "positions", filters, market_id)
    questions = _questions(engine, {str(r["market_id"]) for r in rows})
    stakes = _stakes(engine, {int(r["position_id"]) for r in rows})
    for row in rows:
        row["question"] = questions.get(str(row["market_id"]), "")
        row["stake"] = stakes.get(int(row["position_id"]), Decimal(0))
        row["outcome"] = OUTCOMES.get(str(row["status"]), str(row["status"]))
        if row["status"] != "open":
            row["mark_price"] = None
    frame = typed_frame(rows, POSITION_COLUMNS)
    frame["_open"] = frame["status"] == "open"
    frame = frame.sort_values(["_open", "opened_at", "position_id"], ascending=False)
    return frame.drop(columns="_open").reset_index(drop=True)


TRADE_COLUMNS: dict[str, str] = {
    "trade_id": INT,
    "created_at": TIME,
    "cohort_number": INT,
    "family_id": TEXT,
    "trade_type": TEXT,
    "market_id": TEXT,
    "question": TEXT,
    "side": TEXT,
    "amount": MONEY,
    "price": FLOAT,
    "shares": FLOAT,
    "implied_confidence": FLOAT,
    "realized_pnl": MONEY,
    "cash_before": MONEY,
    "decision_id": INT,
    "position_id": INT,
}


def trades(
    engine: Engine,
    *,
    cohort: int | None = None,
    family: str | None = None,
    market_id: str | None = None,
    replicate: int | None = None,
) -> pd.DataFrame:
    """Cash movements, newest first: BUY and SELL from decisions, SETTLE and REFUND.

    Scope: any combination of cohort number, family id and market id (None: all).

    Columns: ``trade_id``, ``created_at``, ``cohort_number``, ``family_id``, ``trade_type``,
    ``market_id``, ``question``, ``side``, ``amount`` ($ paid or received), ``price``,
    ``shares``, ``implied_confidence`` (BUY only), ``realized_pnl``, ``cash_before``,
    ``decision_id`` (0 for settlements), ``position_id``.
    """
    filters = ExportFilters(cohort, family, replicate=replicate)
    rows = export_rows(engine, "trades", filters, market_id)
    questions = _questions(engine, {str(r["market_id"]) for r in rows})
    for row in rows:
        row["question"] = questions.get(str(row["market_id"]), "")
    frame = typed_frame(rows, TRADE_COLUMNS)
    return frame.sort_values(["created_at", "trade_id"], ascending=False).reset_index(drop=True)
