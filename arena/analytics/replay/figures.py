"""The replay's figures from the rebuilt books: Brier rows, each agent's final books, the
portfolio curve and the cohort leaderboard's point estimates, checked against the bundle.

Why apart from `verify`: `verify` rebuilds what happened (parsing, execution, settlement) and
these read the rebuilt books; each check is a function of the replay's tables (`Rebuilt`).
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

import numpy as np

from arena.analytics.replay.format import PORTFOLIO_COLUMNS
from arena.analytics.replay.report import Check
from arena.config import is_v2
from arena.core.accounting import mark_value, portfolio_value, side_won
from arena.core.execution import HeldPosition
from arena.core.scoring import brier, cumulative_brier, return_pct
from arena.core.stats import competition_ranks
from arena.markets.resolution import Verdict


@dataclass
class Book:
    """One agent's books as the replay rebuilds them."""

    cash: Decimal
    holdings: dict[int, HeldPosition] = field(default_factory=dict)  # open, by position id
    closed: dict[int, tuple[HeldPosition, str, Decimal | None]] = field(default_factory=dict)
    avg_entry: dict[int, Decimal] = field(default_factory=dict)
    opened: set[int] = field(default_factory=set)


class Rebuilt(Protocol):
    """What the checks read of a replay (`verify.Replay`): the bundle's tables and the books."""

    cohort: dict[str, Any]
    lineup: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    trades: list[dict[str, Any]]
    positions: dict[int, dict[str, Any]]
    markets: dict[str, dict[str, Any]]
    briers: list[dict[str, Any]]
    curve: list[list[str]]
    at: dict[str, int]
    board: list[dict[str, Any]]
    books: dict[int, Book]
    open_values: dict[int, Decimal]  # a position valued otherwise than shares × its mark

    def verdict(self, market_id: str) -> Verdict | None: ...


def check_brier(replay: Rebuilt) -> Check:
    """One Brier row per BUY in a resolved market: implied confidence vs the outcome."""
    check = Check("Brier rows recomputed")
    published = {row["trade_id"]: row for row in replay.briers}
    expected: set[int] = set()
    for trade in replay.trades:
        if trade["trade_type"] != "BUY":
            continue
        verdict = replay.verdict(trade["market_id"])
        market = replay.markets.get(trade["market_id"])
        if verdict is None or market is None or market["status"] != "resolved":
            continue
        if verdict.state != "resolved" or verdict.winner is None:
            continue
        expected.add(trade["id"])
        row = published.get(trade["id"])
        if row is None:
            check.fail(f"trade {trade['id']}: a resolved BUY with no Brier row")
            continue
        won = side_won(trade["side"], verdict.winner, market["market_type"])
        confidence = trade["implied_confidence"]
        forecast = 1.0 if confidence is None else float(confidence)
        where = f"Brier of trade {trade['id']}"
        check.expect(f"{where} forecast", row["forecast_probability"], forecast)
        check.expect(f"{where} outcome", row["actual_outcome"], int(won))
        check.expect(f"{where} score", row["brier_score"], brier(forecast, won))
        price = None if trade["price"] is None else float(Decimal(trade["price"]))
        check.expect(f"{where} market price", row["market_price"], price)
    for trade_id in sorted(set(published) - expected):
        check.fail(f"Brier row of trade {trade_id}: no resolved BUY for it")
    return check


def final_books(replay: Rebuilt) -> dict[int, dict[str, Any]]:
    """Each agent's recomputed books at the bundle's instant: cash, value (open positions
    at their latest published marks), Brier and resolved bets, and its last snapshot.
    Computed once the books are replayed (three checks read it)."""
    scores: dict[int, list[float]] = defaultdict(list)
    for row in replay.briers:
        scores[row["agent_id"]].append(float(row["brier_score"]))
    agent_at = replay.at["agent_id"]
    last_rows = {row[agent_at]: row for row in replay.curve}  # by agent, then slot: last wins
    last = {
        int(agent): {column: row[replay.at[column]] for column in PORTFOLIO_COLUMNS}
        for agent, row in last_rows.items()
    }
    latest_event: dict[int, datetime] = {}
    for event in (*replay.trades, *replay.briers):
        at = datetime.fromisoformat(event["created_at"])
        latest_event[event["agent_id"]] = max(at, latest_event.get(event["agent_id"], at))
    out: dict[int, dict[str, Any]] = {}
    for agent in replay.lineup:
        agent_id = agent["agent_id"]
        book = replay.books[agent_id]
        marks = (
            replay.open_values[pid]
            if pid in replay.open_values
            else mark_value(held.holding.shares, Decimal(replay.positions[pid]["mark_price"] or 0))
            for pid, held in book.holdings.items()
            if pid in replay.positions
        )
        snapshot = last.get(agent_id)
        moved = snapshot is not None and agent_id in latest_event
        if moved and snapshot is not None:
            moved = latest_event[agent_id] > datetime.fromisoformat(snapshot["snapshot_timestamp"])
        out[agent_id] = {
            "start": Decimal(agent["starting_balance"]),
            "cash": book.cash,
            "value": portfolio_value(book.cash, marks),
            "brier": cumulative_brier(scores[agent_id]),
            "resolved": len(scores[agent_id]),
            "open": len(book.holdings),
            "snapshot": snapshot,
            # a trade or Brier row newer than the last snapshot: it cannot agree with the
            # books any more, and the leaderboard's P/L (the last snapshot's) is as of then
            "moved_since_snapshot": moved,
        }
    return out


def check_agents(replay: Rebuilt, final: Mapping[int, dict[str, Any]]) -> Check:
    check = Check("agents' final cash and value")
    completed = replay.cohort["status"] == "completed"
    for agent in replay.lineup:
        mine = final[agent["agent_id"]]
        where = f"agent {agent['agent_id']} ({agent['family_id']})"
        check.expect(f"{where} cash", agent["cash_balance"], mine["cash"])
        if completed:
            check.expect(f"{where} open positions of a completed cohort", 0, mine["open"])
    return check


def check_curve(replay: Rebuilt, final: Mapping[int, dict[str, Any]]) -> Check:
    """Every snapshot adds up; each agent's last one equals its recomputed books."""
    check = Check("portfolio snapshots")
    starts = {str(a["agent_id"]): Decimal(a["starting_balance"]) for a in replay.lineup}
    at = replay.at
    agent, slot, cash_at, positions_at, total_at, pnl_at = (
        at["agent_id"],
        at["slot"],
        at["cash_balance"],
        at["positions_value"],
        at["total_value"],
        at["total_pnl"],
    )
    for row in replay.curve:  # one tight loop: ~190,000 rows for a year's cohort
        total = Decimal(row[total_at])
        added = Decimal(row[cash_at]) + Decimal(row[positions_at])
        gained = total - starts[row[agent]]
        if total != added:
            check.expect(f"snapshot agent {row[agent]} {row[slot]} total", total, added)
        else:
            check.compared += 1
        if Decimal(row[pnl_at]) != gained:
            check.expect(f"snapshot agent {row[agent]} {row[slot]} P/L", row[pnl_at], gained)
        else:
            check.compared += 1
    for agent_id, mine in final.items():
        row = mine["snapshot"]
        if row is None:
            check.fail(f"agent {agent_id}: no portfolio snapshot")
            continue
        where = f"agent {agent_id} last snapshot"
        if mine["moved_since_snapshot"]:
            check.note(f"{where}: the books moved after it; compared with the trades only")
            continue
        check.expect(f"{where} cash", Decimal(row["cash_balance"]), mine["cash"])
        check.expect(f"{where} value", Decimal(row["total_value"]), mine["value"])
        brier_cell = float(row["brier_score"]) if row["brier_score"] else None
        check.expect(f"{where} Brier", brier_cell, mine["brier"])
        check.expect(f"{where} resolved bets", int(row["num_resolved_bets"]), mine["resolved"])
    return check


def check_leaderboard(replay: Rebuilt, final: Mapping[int, dict[str, Any]]) -> Check:
    """The cohort leaderboard's point estimates, from the recomputed books and Brier rows."""
    check = Check("leaderboard point estimates")
    recomputed = _family_points(replay, final)
    published = {row["family_id"]: row for row in replay.board}
    if is_v2(replay.cohort["methodology_version"]):
        order = [row["family_id"] for row in replay.board]
        check.expect("the order by portfolio value", order, v2_order(recomputed))
    for family_id in sorted(set(published) | set(recomputed)):
        row, mine = published.get(family_id), recomputed.get(family_id)
        if row is None or mine is None:
            check.fail(f"family {family_id}: {'published' if row else 'recomputed'} only")
            continue
        for column, value in mine.items():
            check.expect(f"{family_id} {column}", row[column], value)
    return check


def _family_points(
    replay: Rebuilt, final: Mapping[int, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    family_of = {a["agent_id"]: a["family_id"] for a in replay.lineup}
    points: dict[str, dict[str, Any]] = {}
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in replay.briers:
        rows[family_of[row["agent_id"]]].append(row)
    buys: dict[str, int] = defaultdict(int)
    for trade in replay.trades:
        if trade["trade_type"] == "BUY":
            buys[family_of[trade["agent_id"]]] += 1
    decided: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for decision in replay.decisions:
        decided[family_of[decision["agent_id"]]].append(decision)
    # Replicates of a family (several agents) pool: values and starts summed.
    values: dict[str, Decimal] = defaultdict(Decimal)
    starts: dict[str, Decimal] = defaultdict(Decimal)
    for agent in replay.lineup:
        mine = final[agent["agent_id"]]
        # the leaderboard's P/L is the last snapshot's: the books when nothing moved since
        value = mine["value"]
        if mine["moved_since_snapshot"] or mine["snapshot"] is None:
            value = Decimal(mine["snapshot"]["total_value"]) if mine["snapshot"] else value
        values[agent["family_id"]] += value
        starts[agent["family_id"]] += mine["start"]
    for family in values:
        value, start, scored = values[family], starts[family], rows[family]
        pnl = value - start
        priced = [r for r in scored if r["market_price"] is not None]
        market = [(r["market_price"] - r["actual_outcome"]) ** 2 for r in priced]
        points[family] = {
            "total_pnl": float(pnl),
            "return_pct": return_pct(value, start),
            "brier": _mean(r["brier_score"] for r in scored),
            "resolved_bets": len(scored),
            "win_rate": _mean(r["actual_outcome"] for r in scored),
            "market_brier": _mean(market),
            "skill_vs_market": _mean(
                r["brier_score"] - m for r, m in zip(priced, market, strict=True)
            ),
            "skill_bets": len(priced),
            "bets": buys[family],
            "decisions": sum(1 for d in decided[family] if d["status"] != "in_progress"),
            "fallback_holds": sum(1 for d in decided[family] if d["status"] == "fallback_hold"),
            "api_cost_usd": sum(d["cost_usd"] for d in decided[family]),
        }
    _rank(points, values, starts, v2=is_v2(replay.cohort["methodology_version"]))
    return points


def _rank(
    points: dict[str, dict[str, Any]],
    values: Mapping[str, Decimal],
    starts: Mapping[str, Decimal],
    *,
    v2: bool,
) -> None:
    """Each family's competition rank by return; v2 (which ranks by portfolio value: the same
    order, every dollar of capital alike) also carries the capital and portfolio value."""
    families = sorted(points)
    ranks = competition_ranks(np.array([points[f]["return_pct"] for f in families]))
    for family, rank in zip(families, ranks, strict=True):
        points[family]["rank"] = int(rank)
        if v2:
            points[family]["capital"] = float(starts[family])
            points[family]["portfolio_value"] = float(values[family])


def v2_order(points: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The families in v2's order (`stats.leaderboard.ranked`): portfolio value per dollar
    of capital, best first, ties by family id."""

    def key(family: str) -> tuple[float, str]:
        capital = points[family]["capital"]
        return (-(points[family]["portfolio_value"] / capital if capital else 0.0), family)

    return sorted(points, key=key)


def _mean(values: Iterable[float]) -> float | None:
    listed = [float(v) for v in values]
    return sum(listed) / len(listed) if listed else None
