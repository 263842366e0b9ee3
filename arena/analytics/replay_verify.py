"""`arena verify BUNDLE`: recompute a cohort's every published number from its bundle alone.

No database, no network: the bundle's files and the engine's own pure functions. Parsing is
`agents.parsing.parse_decision` on every raw answer; execution is `core.execution
.plan_execution` on the frozen snapshot's prices with the cohort's stamped constants;
settlement is `markets.resolution.resolution_verdict` on the stored Gamma fields and
`core.accounting.settle` / `refund`; Brier is `core.scoring.brier` of the implied confidence;
ranks are `core.stats.competition_ranks`. So a change to any of them that would change a
published number makes `verify` fail on the bundles already published.

Replay order (per agent): trades happened in id order (each writer holds the agent's row lock,
so ids follow the books' history); a decision that executed nothing is placed by its time.
What is taken as recorded, not recomputed: which markets were closed at the instant a decision
executed (the legs refused `market_closed`: a fact of the live market table at that moment),
the marks of positions between decisions (live prices), and latency (a wall-clock reading).

A cohort stamped with the protocol extension `stated_probability` is replayed with that
extension's parser, so each leg's stated probability (in its record and on its BUY trade) is
recomputed from the raw answer like every other field.
"""

import csv
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import numpy as np

from arena.agents.parsing import FALLBACK, decision_model, parse_decision
from arena.agents.parsing import Decision as ParsedDecision
from arena.analytics.replay_format import (
    MANIFEST,
    PORTFOLIO_COLUMNS,
    BundleFiles,
    FileCheck,
    check_files,
    plain,
    read_csv,
    read_jsonl,
)
from arena.config import STATED_PROBABILITY, stamped_extensions
from arena.core.accounting import (
    BetLimits,
    Holding,
    mark_value,
    portfolio_value,
    refund,
    settle,
    side_won,
)
from arena.core.errors import InputError
from arena.core.execution import ExecutionPlan, HeldPosition, SnapshotMarket, plan_execution
from arena.core.scoring import brier, cumulative_brier, return_pct
from arena.core.stats import competition_ranks
from arena.core.text import printable
from arena.markets.resolution import Verdict, resolution_verdict
from arena.markets.types import ParsedMarket

EXECUTED = ("ok", "zero_trade", "fallback_hold")  # decisions whose plan was applied
FLOAT_TOLERANCE = 1e-9
MAX_SHOWN = 5  # mismatches listed per check
# What a file that reads as JSON / CSV but is not what it should be raises in the replay (a
# missing key, a wrong type, a bad number, a CSV field over csv's limit, nesting deeper than
# the parser's stack).
DAMAGED = (
    csv.Error,
    KeyError,
    ValueError,
    TypeError,
    AttributeError,
    IndexError,
    ArithmeticError,
    RecursionError,
)


@dataclass
class Check:
    """One kind of recomputed number: how many were compared, and the first mismatches."""

    name: str
    compared: int = 0
    mismatches: list[str] = field(default_factory=list)
    mismatch_count: int = 0
    notes: list[str] = field(default_factory=list)

    def expect(self, what: str, published: Any, recomputed: Any) -> bool:
        """Compare one published value with its recomputation; record a mismatch."""
        self.compared += 1
        if _same(published, recomputed):
            return True
        self.mismatch_count += 1
        if len(self.mismatches) < MAX_SHOWN:
            self.mismatches.append(f"{what}: published {published!r}, recomputed {recomputed!r}")
        return False

    def note(self, what: str) -> None:
        """Something not compared, and why (shown beside the table, never a mismatch)."""
        self.notes.append(what)

    def fail(self, what: str) -> None:
        """A mismatch with no single value to show (a row missing or unexpected)."""
        self.compared += 1
        self.mismatch_count += 1
        if len(self.mismatches) < MAX_SHOWN:
            self.mismatches.append(what)

    @property
    def ok(self) -> bool:
        return self.mismatch_count == 0


@dataclass
class Report:
    """What `verify` found: the files against the manifest, then each recomputed number."""

    bundle_hash: str
    cohort: int | None
    files: list[FileCheck]
    checks: list[Check]

    @property
    def tampered(self) -> list[FileCheck]:
        return [f for f in self.files if f.status != "ok"]

    @property
    def ok(self) -> bool:
        return not self.tampered and all(check.ok for check in self.checks)


def _same(published: Any, recomputed: Any) -> bool:
    """Equal as published: Decimals by value (`50` is `50.000000`), floats within 1e-9."""
    if isinstance(recomputed, Decimal) and published is not None:
        try:
            return Decimal(str(published)) == recomputed
        except ArithmeticError:
            return False
    published, recomputed = plain(published), plain(recomputed)
    if isinstance(published, float) or isinstance(recomputed, float):
        if published is None or recomputed is None:
            return published is None and recomputed is None
        a, b = float(published), float(recomputed)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=FLOAT_TOLERANCE, abs_tol=FLOAT_TOLERANCE)
    return bool(published == recomputed)


def verify_bundle(bundle: BundleFiles, published_hash: str | None = None) -> Report:
    """Check the files against the manifest (and the manifest against `published_hash`, the
    hash the project published), then recompute every number from them.

    When a file was tampered with, its numbers are still recomputed: the report then says
    both which file changed and which numbers no longer agree.
    """
    files = check_files(bundle)
    wanted = (published_hash or "").strip().lower()
    if wanted and wanted != bundle.hash:
        files.insert(0, FileCheck(MANIFEST, "changed", wanted, bundle.hash))
    try:
        cohort = bundle.manifest.get("cohort")
    except InputError:
        cohort = None
    try:
        checks = Replay(bundle).run()
    except DAMAGED as exc:  # a file too damaged to read
        broken = Check("bundle readable")
        broken.fail(f"{type(exc).__name__}: {exc}")
        checks = [broken]
    return Report(bundle.hash, cohort, files, checks)


# --------------------------------------------------------------------------------------------
# The replay


@dataclass
class _Book:
    """One agent's books as the replay rebuilds them."""

    cash: Decimal
    holdings: dict[int, HeldPosition] = field(default_factory=dict)  # open, by position id
    closed: dict[int, tuple[HeldPosition, str, Decimal | None]] = field(default_factory=dict)
    avg_entry: dict[int, Decimal] = field(default_factory=dict)
    opened: set[int] = field(default_factory=set)


class Replay:
    """Recompute a bundle's numbers: parsing, execution, settlement, Brier, values, ranks."""

    def __init__(self, bundle: BundleFiles) -> None:
        files = bundle.files
        self.cohort: dict[str, Any] = _json(files["cohort.json"])
        constants = self.cohort["constants"]
        self.limits = BetLimits(
            min_bet=Decimal(str(constants["min_bet"])),
            max_bet_fraction=Decimal(str(constants["max_bet_fraction"])),
        )
        self.stated = STATED_PROBABILITY in stamped_extensions(constants)
        self.model = decision_model(self.stated)
        self.lineup = read_jsonl(files["lineup.jsonl"])
        self.snapshots = {s["id"]: s for s in read_jsonl(files["market_snapshots.jsonl"])}
        self.decisions = read_jsonl(files["decisions.jsonl"])
        self.attempts: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for attempt in read_jsonl(files["attempts.jsonl"]):
            self.attempts[attempt["decision_id"]].append(attempt)
        self.trades = read_jsonl(files["trades.jsonl"])
        self.positions = {p["id"]: p for p in read_jsonl(files["positions.jsonl"])}
        self.markets = {m["id"]: m for m in read_jsonl(files["markets.jsonl"])}
        self.briers = read_jsonl(files["brier_scores.jsonl"])
        header, self.curve = read_csv(files["portfolio_snapshots.csv"])
        self.at = {name: header.index(name) for name in PORTFOLIO_COLUMNS}
        self.board = read_jsonl(files["leaderboard.jsonl"])
        self.parsed: dict[int, ParsedDecision] = {}
        self.books: dict[int, _Book] = {}
        self._final_books: dict[int, dict[str, Any]] | None = None

    def run(self) -> list[Check]:
        return [
            self.check_parsing(),
            *self.check_books(),
            self.check_brier(),
            self.check_agents(),
            self.check_curve(),
            self.check_leaderboard(),
        ]

    # -- parsing ------------------------------------------------------------------------------

    def check_parsing(self) -> Check:
        """Every raw answer re-parsed; each decision's action, errors and totals re-derived."""
        check = Check("answers parsed, decisions re-derived")
        for decision in self.decisions:
            did = decision["id"]
            attempts = self.attempts.get(did, [])
            answered = [a for a in attempts if a["raw_response"] is not None]
            results = {}
            for attempt in answered:
                result = parse_decision(attempt["raw_response"], stated_probability=self.stated)
                results[attempt["attempt_no"]] = result
                where = f"decision {did} attempt {attempt['attempt_no']}"
                check.expect(
                    f"{where} outcome",
                    attempt["outcome"],
                    "valid" if result.ok is not None else "malformed",
                )
                if result.ok is None:
                    check.expect(f"{where} parse error", attempt["error"], result.error)
            for column in ("tokens_in", "tokens_out", "latency_ms"):
                total = sum(int(a[column]) for a in attempts)
                check.expect(f"decision {did} {column}", decision[column], total)
            check.expect(
                f"decision {did} cost_usd",
                decision["cost_usd"],
                sum(a["cost_usd"] for a in attempts),
            )
            if decision["status"] not in EXECUTED:
                continue
            final_run = answered[-decision["attempts"] :] if decision["attempts"] else []
            errors = [results[a["attempt_no"]].error for a in final_run]
            if decision["status"] == "fallback_hold":
                check.expect(f"decision {did} parsed", decision["parsed_response"], None)
                check.expect(f"decision {did} all answers malformed", all(errors), True)
                check.expect(
                    f"decision {did} validation errors", decision["validation_errors"], errors
                )
                self.parsed[did] = FALLBACK
                continue
            last = results[final_run[-1]["attempt_no"]] if final_run else None
            if last is None or last.ok is None:
                check.fail(f"decision {did}: status {decision['status']} but no valid answer")
                published = decision["parsed_response"]
                self.parsed[did] = self.model.model_validate(published) if published else FALLBACK
                continue
            check.expect(
                f"decision {did} parsed",
                decision["parsed_response"],
                last.ok.model_dump(mode="json"),
            )
            check.expect(
                f"decision {did} raw response",
                decision["raw_response"],
                final_run[-1]["raw_response"],
            )
            check.expect(
                f"decision {did} validation errors", decision["validation_errors"], errors[:-1]
            )
            self.parsed[did] = last.ok
        return check

    # -- execution and settlement -------------------------------------------------------------

    def check_books(self) -> list[Check]:
        """Replay every agent's decisions and settlements in order; compare trades and positions."""
        legs, trades_check, settles = (
            Check("decision legs planned"),
            Check("BUY / SELL trades recomputed"),
            Check("settlements and refunds recomputed"),
        )
        trades_by_decision: dict[tuple[int, int], dict[str, Any]] = {}
        events: dict[int, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        first_trade: dict[int, int] = {}
        for trade in self.trades:
            if trade["decision_id"] is not None:
                trades_by_decision[(trade["decision_id"], trade["leg_index"])] = trade
                first_trade.setdefault(trade["decision_id"], trade["id"])
            else:
                events[trade["agent_id"]].append(("settle", trade))
        for agent in self.lineup:
            self.books[agent["agent_id"]] = _Book(Decimal(agent["starting_balance"]))
        for agent_id, ordered in self._ordered_events(events, first_trade).items():
            book = self.books[agent_id]
            for kind, row in ordered:
                if kind == "decide":
                    self._replay_decision(book, row, trades_by_decision, legs, trades_check)
                else:
                    self._replay_settlement(book, row, settles)
        positions = self._check_positions()
        return [legs, trades_check, settles, positions]

    def _ordered_events(
        self,
        settlements: Mapping[int, list[tuple[str, dict[str, Any]]]],
        first_trade: dict[int, int],
    ) -> dict[int, list[tuple[str, dict[str, Any]]]]:
        """Per agent: events with trades in trade-id order; decisions without trades by time."""
        timed: dict[int, list[tuple[int, str, dict[str, Any]]]] = defaultdict(list)
        quiet: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for agent_id, rows in settlements.items():
            timed[agent_id] += [(row["id"], "settle", row) for _, row in rows]
        for decision in self.decisions:
            if decision["status"] not in EXECUTED:
                continue
            if decision["id"] in first_trade:
                timed[decision["agent_id"]].append(
                    (first_trade[decision["id"]], "decide", decision)
                )
            else:
                quiet[decision["agent_id"]].append(decision)
        out: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        for agent_id in set(timed) | set(quiet):
            ordered = [(kind, row) for _, kind, row in sorted(timed[agent_id], key=lambda e: e[0])]
            for decision in sorted(
                quiet[agent_id], key=lambda d: (_instant(d["decided_at"]), d["id"])
            ):
                at = _instant(decision["decided_at"])
                place = next(
                    (i for i, (kind, row) in enumerate(ordered) if _event_time(kind, row) > at),
                    len(ordered),
                )
                ordered.insert(place, ("decide", decision))
            out[agent_id] = ordered
        return out

    def _replay_decision(
        self,
        book: _Book,
        decision: dict[str, Any],
        trades: Mapping[tuple[int, int], dict[str, Any]],
        legs_check: Check,
        trades_check: Check,
    ) -> None:
        did = decision["id"]
        parsed = self.parsed.get(did)
        if parsed is None:
            parsed = (
                self.model.model_validate(decision["parsed_response"])
                if decision["parsed_response"]
                else FALLBACK
            )
        held = [book.holdings[pid] for pid in sorted(book.holdings)]
        snapshot = self._snapshot(decision["market_snapshot_id"], _closed(decision, book))
        plan = plan_execution(parsed, book.cash, held, snapshot, self.limits)
        self._compare_plan(book, decision, plan, trades, legs_check, trades_check)

    def _snapshot(self, snapshot_id: int | None, closed: set[str]) -> dict[str, SnapshotMarket]:
        """The frozen prices the decision executed at; `closed` markets were not trading."""
        items = self.snapshots[snapshot_id]["items"] if snapshot_id in self.snapshots else []
        return {
            item["market_id"]: SnapshotMarket(
                item["market_id"],
                item["market_type"],
                list(item["outcomes"]),
                list(item["prices"]),
                item["market_id"] not in closed and bool(item["prices"]),
            )
            for item in items
        }

    def _compare_plan(
        self,
        book: _Book,
        decision: dict[str, Any],
        plan: ExecutionPlan,
        trades: Mapping[tuple[int, int], dict[str, Any]],
        legs_check: Check,
        trades_check: Check,
    ) -> None:
        did = decision["id"]
        legs_check.expect(f"decision {did} leg count", len(decision["legs"]), len(plan.legs))
        for leg in plan.legs:
            where = f"decision {did} leg {leg.index}"
            trade = trades.get((did, leg.index))
            if leg.executed:
                if trade is None:
                    trades_check.fail(f"{where}: executes on replay, but no trade was published")
                    continue
                if leg.position_id is None:
                    leg.position_id = trade["position_id"]
                kind = "BUY" if leg.kind == "BET" else "SELL"
                stated = float(leg.probability) if leg.probability is not None else None
                extended = [("probability", stated)] if self.stated else []
                for column, value in (
                    ("trade_type", kind),
                    ("position_id", leg.position_id),
                    ("market_id", leg.market_id),
                    ("side", leg.side),
                    ("amount", leg.amount),
                    ("price", leg.price),
                    ("shares", leg.shares),
                    ("cash_before", leg.cash_before),
                    ("implied_confidence", leg.implied_confidence),
                    ("realized_pnl", leg.realized_pnl),
                    *extended,
                ):
                    trades_check.expect(
                        f"{where} (trade {trade['id']}) {column}", trade[column], value
                    )
                self._apply_leg(
                    book, leg.position_id, leg.market_id, leg.side, leg.holding_after, leg.price
                )
            elif trade is not None:
                trades_check.fail(
                    f"{where}: refused on replay ({leg.reason}), yet trade {trade['id']} published"
                )
            published = decision["legs"][leg.index] if leg.index < len(decision["legs"]) else None
            legs_check.expect(f"{where}", published, leg.record())
        planned = {leg.index for leg in plan.legs}
        for (decision_id, index), trade in trades.items():
            if decision_id == did and index not in planned:
                trades_check.fail(f"trade {trade['id']}: decision {did} has no leg {index}")
        book.cash = plan.cash_after
        for column, value in plan.tallies().items():
            legs_check.expect(f"decision {did} {column}", decision[column], value)

    def _apply_leg(
        self,
        book: _Book,
        position_id: int | None,
        market_id: str | None,
        side: str | None,
        holding: Holding | None,
        price: Decimal | None,
    ) -> None:
        assert position_id is not None and market_id and side and holding is not None
        book.opened.add(position_id)
        held = HeldPosition(position_id, market_id, side, holding)
        if holding.shares > 0:
            book.holdings[position_id] = held
            book.avg_entry[position_id] = holding.avg_entry_price
        else:
            book.holdings.pop(position_id, None)
            book.closed[position_id] = (held, "sold", None)

    def _verdict(self, market_id: str) -> Verdict | None:
        market = self.markets.get(market_id)
        if market is None:
            return None
        parsed = ParsedMarket(
            id=market["id"],
            question=market["question"],
            market_type=market["market_type"],
            outcomes=list(market["outcomes"]),
            prices=[Decimal(str(p)) for p in market["prices"]] if market["prices"] else None,
            closed=bool(market["closed"]),
            uma_resolution_status=market["uma_resolution_status"],
        )
        return resolution_verdict(parsed)

    def _replay_settlement(self, book: _Book, trade: dict[str, Any], check: Check) -> None:
        where = f"trade {trade['id']} ({trade['trade_type']}, market {trade['market_id']})"
        held = book.holdings.get(trade["position_id"])
        verdict = self._verdict(trade["market_id"])
        if held is None or verdict is None or verdict.state == "unresolved":
            state = "no open position" if held is None else f"verdict {verdict and verdict.state}"
            check.fail(f"{where}: published, but the replay has {state}")
            return
        market = self.markets[trade["market_id"]]
        if verdict.state == "cancelled" or verdict.winner is None:
            fill, kind, status = refund(book.cash, held.holding), "REFUND", "cancelled"
            mark = held.holding.avg_entry_price
        else:
            won = side_won(held.side, verdict.winner, market["market_type"])
            fill, kind = settle(book.cash, held.holding, won), "SETTLE"
            status, mark = ("won", Decimal(1)) if won else ("lost", Decimal(0))
        for column, value in (
            ("trade_type", kind),
            ("side", held.side),
            ("amount", fill.amount),
            ("price", fill.price),
            ("shares", fill.shares),
            ("cash_before", book.cash),
            ("realized_pnl", fill.realized_pnl),
        ):
            check.expect(f"{where} {column}", trade[column], value)
        winner = verdict.winner if verdict.state == "resolved" else "CANCELLED"
        check.expect(f"market {market['id']} resolution", market["resolution_outcome"], winner)
        book.cash = fill.cash_after
        assert held.position_id is not None
        book.holdings.pop(held.position_id)
        closed = HeldPosition(held.position_id, held.market_id, held.side, fill.holding)
        book.closed[held.position_id] = (closed, status, mark)

    def _check_positions(self) -> Check:
        check = Check("positions' final state")
        replayed: dict[int, tuple[int, HeldPosition, str, Decimal | None]] = {}
        for agent_id, book in self.books.items():
            for pid, held in book.holdings.items():
                replayed[pid] = (agent_id, held, "open", None)
            for pid, (held, status, mark) in book.closed.items():
                replayed[pid] = (agent_id, held, status, mark)
        for pid in sorted(set(self.positions) | set(replayed)):
            published = self.positions.get(pid)
            if published is None or pid not in replayed:
                side = "published only" if published else "replayed only"
                check.fail(f"position {pid}: {side}")
                continue
            agent_id, held, status, mark = replayed[pid]
            where = f"position {pid}"
            for column, value in (
                ("agent_id", agent_id),
                ("market_id", held.market_id),
                ("side", held.side),
                ("status", status),
                ("shares", held.holding.shares),
                ("cost_basis", held.holding.cost_basis),
                ("realized_pnl", held.holding.realized_pnl),
                ("avg_entry_price", self.books[agent_id].avg_entry.get(pid)),
            ):
                check.expect(f"{where} {column}", published[column], value)
            if status in ("won", "lost", "cancelled"):
                check.expect(f"{where} final mark", published["mark_price"], mark)
        return check

    # -- Brier, agents, curve, leaderboard ----------------------------------------------------

    def check_brier(self) -> Check:
        """One Brier row per BUY in a resolved market: implied confidence vs the outcome."""
        check = Check("Brier rows recomputed")
        published = {row["trade_id"]: row for row in self.briers}
        expected: set[int] = set()
        for trade in self.trades:
            if trade["trade_type"] != "BUY":
                continue
            verdict = self._verdict(trade["market_id"])
            market = self.markets.get(trade["market_id"])
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

    def _final(self) -> dict[int, dict[str, Any]]:
        """Each agent's recomputed books at the bundle's instant: cash, value (open positions
        at their latest published marks), Brier and resolved bets, and its last snapshot.
        Computed once the books are replayed (three checks read it)."""
        if self._final_books is None:
            self._final_books = self._compute_final()
        return self._final_books

    def _compute_final(self) -> dict[int, dict[str, Any]]:
        scores: dict[int, list[float]] = defaultdict(list)
        for row in self.briers:
            scores[row["agent_id"]].append(float(row["brier_score"]))
        agent_at = self.at["agent_id"]
        last_rows = {row[agent_at]: row for row in self.curve}  # by agent, then slot: last wins
        last = {
            int(agent): {column: row[self.at[column]] for column in PORTFOLIO_COLUMNS}
            for agent, row in last_rows.items()
        }
        latest_event: dict[int, datetime] = {}
        for event in (*self.trades, *self.briers):
            at = _instant(event["created_at"])
            latest_event[event["agent_id"]] = max(at, latest_event.get(event["agent_id"], at))
        out: dict[int, dict[str, Any]] = {}
        for agent in self.lineup:
            agent_id = agent["agent_id"]
            book = self.books[agent_id]
            marks = (
                mark_value(held.holding.shares, Decimal(self.positions[pid]["mark_price"] or 0))
                for pid, held in book.holdings.items()
                if pid in self.positions
            )
            snapshot = last.get(agent_id)
            moved = snapshot is not None and agent_id in latest_event
            if moved and snapshot is not None:
                moved = latest_event[agent_id] > _instant(snapshot["snapshot_timestamp"])
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

    def check_agents(self) -> Check:
        check = Check("agents' final cash and value")
        final = self._final()
        completed = self.cohort["status"] == "completed"
        for agent in self.lineup:
            mine = final[agent["agent_id"]]
            where = f"agent {agent['agent_id']} ({agent['family_id']})"
            check.expect(f"{where} cash", agent["cash_balance"], mine["cash"])
            if completed:
                check.expect(f"{where} open positions of a completed cohort", 0, mine["open"])
        return check

    def check_curve(self) -> Check:
        """Every snapshot adds up; each agent's last one equals its recomputed books."""
        check = Check("portfolio snapshots")
        starts = {str(a["agent_id"]): Decimal(a["starting_balance"]) for a in self.lineup}
        at = self.at
        agent, slot, cash_at, positions_at, total_at, pnl_at = (
            at["agent_id"],
            at["slot"],
            at["cash_balance"],
            at["positions_value"],
            at["total_value"],
            at["total_pnl"],
        )
        for row in self.curve:  # one tight loop: ~190,000 rows for a year's cohort
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
        for agent_id, mine in self._final().items():
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

    def check_leaderboard(self) -> Check:
        """The cohort leaderboard's point estimates, from the recomputed books and Brier rows."""
        check = Check("leaderboard point estimates")
        final = self._final()
        recomputed = self._family_points(final)
        published = {row["family_id"]: row for row in self.board}
        for family_id in sorted(set(published) | set(recomputed)):
            row, mine = published.get(family_id), recomputed.get(family_id)
            if row is None or mine is None:
                check.fail(f"family {family_id}: {'published' if row else 'recomputed'} only")
                continue
            for column, value in mine.items():
                check.expect(f"{family_id} {column}", row[column], value)
        return check

    def _family_points(self, final: Mapping[int, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        family_of = {a["agent_id"]: a["family_id"] for a in self.lineup}
        points: dict[str, dict[str, Any]] = {}
        rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in self.briers:
            rows[family_of[row["agent_id"]]].append(row)
        buys: dict[str, int] = defaultdict(int)
        for trade in self.trades:
            if trade["trade_type"] == "BUY":
                buys[family_of[trade["agent_id"]]] += 1
        decided: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for decision in self.decisions:
            decided[family_of[decision["agent_id"]]].append(decision)
        # Replicates of a family (several agents) pool: values and starts summed.
        values: dict[str, Decimal] = defaultdict(Decimal)
        starts: dict[str, Decimal] = defaultdict(Decimal)
        for agent in self.lineup:
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
        families = sorted(points)
        ranks = competition_ranks(np.array([points[f]["return_pct"] for f in families]))
        for family, rank in zip(families, ranks, strict=True):
            points[family]["rank"] = int(rank)
        return points


def _mean(values: Iterable[float]) -> float | None:
    listed = [float(v) for v in values]
    return sum(listed) / len(listed) if listed else None


def _event_time(kind: str, row: Mapping[str, Any]) -> datetime:
    return _instant(row["decided_at"] if kind == "decide" else row["created_at"])


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _closed(decision: Mapping[str, Any], book: _Book) -> set[str]:
    """Markets found closed when the decision executed: its legs refused `market_closed`."""
    closed: set[str] = set()
    for leg in decision["legs"]:
        if leg.get("reason") != "market_closed":
            continue
        request = leg.get("request", {})
        if "market_id" in request:
            closed.add(str(request["market_id"]))
        elif (held := book.holdings.get(int(request.get("position_id", 0)))) is not None:
            closed.add(held.market_id)
    return closed


def _json(data: bytes) -> Any:
    import json

    return json.loads(data)


# --------------------------------------------------------------------------------------------
# Presentation


def report_table(report: Report) -> Any:
    """A rich Table: each file's hash, then each recomputed kind of number, matched or not.

    Every cell is a `Text` of `printable` text: a name from the bundle can neither drive the
    terminal (escape sequences) nor style itself (Rich markup such as `[bold red]`)."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=_cell(f"Replay bundle of cohort {report.cohort}: {report.bundle_hash}"),
        box=box.SIMPLE_HEAD,
    )
    table.add_column("check")
    table.add_column("compared", justify="right")
    table.add_column("mismatched", justify="right")
    table.add_column("result")
    changed = report.tampered
    table.add_row(
        _cell("files against MANIFEST.json"),
        _cell(str(len(report.files))),
        _cell(str(len(changed))),
        _cell("ok" if not changed else "; ".join(f"{f.path} {f.status}" for f in changed)),
    )
    for check in report.checks:
        table.add_row(
            _cell(check.name),
            _cell(f"{check.compared:,}"),
            _cell(f"{check.mismatch_count:,}"),
            _cell("ok" if check.ok else "MISMATCH"),
        )
    return table


def _cell(text: str) -> Any:
    from rich.text import Text

    return Text(printable(text))


def mismatch_lines(report: Report, shown: Callable[[str], None]) -> None:
    """The first mismatches of each failed check, one per line, each `printable`: names and
    values come from the bundle's files."""
    for line in _mismatch_lines(report):
        shown(printable(line))


def _mismatch_lines(report: Report) -> Iterable[str]:
    for file in report.tampered:
        yield f"file {file.path}: {file.status} (expected {file.expected}, found {file.actual})"
    for check in report.checks:
        for line in check.mismatches:
            yield f"{check.name}: {line}"
        if check.mismatch_count > len(check.mismatches):
            yield f"{check.name}: … and {check.mismatch_count - len(check.mismatches)} more"
        for line in check.notes:
            yield f"{check.name} (not compared): {line}"
