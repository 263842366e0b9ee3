"""`arena verify BUNDLE`: recompute a cohort's every published number from its bundle alone.

No database, no network: the bundle's files and the engine's own pure functions. Parsing is
`agents.parsing.parse_decision` on every raw answer; execution is `core.execution
.plan_execution` with the cohort's stamped constants, at the frozen snapshot's prices (or, below,
the quotes re-read at execution, or the stored books);
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

A cohort of methodology v2 is replayed under v2's rules: an answer that parsed but breaks the
total bet cap (under the original's rule set, or has a bet below the minimum) was answered
again, which `replay.prices.check_total_caps` recomputes on the replayed cash; and its recorded
prices are checked and used (`replay.prices`: the frozen quotes by the validation rule, the
trades' quotes, every valuation row at its recorded marks). Under the original's rule set the
legs fill at the quotes each recorded when it executed, and a BET batch is all or nothing
(`replay.execution_quotes`).

A cohort stamped `book_execution` is replayed with the books its bundle carries
(`replay.books`): the same planner walks them (`plan_execution(..., books=...)`), its buys
paying the fee as the bundled stamp's `fee_charged` says, so every fill
(VWAP, shares, fee, partial fills) and refusal is recomputed, each trade's `book_fill` is
compared, and its valuation rows are checked at their bid marks (`replay.bid_marks`).

This module rebuilds what happened (parsing, execution, settlement: the books); the figures
read from the rebuilt books are `replay.figures`, the report and its display `replay.report`.
"""

import csv
from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from arena.agents.parsing import FALLBACK, decision_model, parse_decision
from arena.agents.parsing import Decision as ParsedDecision
from arena.analytics.replay.bid_marks import check_bid_values
from arena.analytics.replay.books import BOOKS, check_fills, read_books
from arena.analytics.replay.execution_quotes import check_execution_quotes, execution_quotes
from arena.analytics.replay.figures import (
    Book,
    check_agents,
    check_brier,
    check_curve,
    check_leaderboard,
    final_books,
)
from arena.analytics.replay.format import (
    MANIFEST,
    BundleFiles,
    FileCheck,
    check_files,
)
from arena.analytics.replay.late_marks import check_late_values
from arena.analytics.replay.marks import MARKS, runs_by_agent
from arena.analytics.replay.prices import (
    BookState,
    check_quotes,
    check_total_caps,
    check_trade_quotes,
    check_values,
)
from arena.analytics.replay.report import Check, Report
from arena.analytics.replay.rows import (
    JSONL,
    PORTFOLIO_CELLS,
    DamagedFile,
    Members,
    read_document,
    read_rows,
    read_table,
)
from arena.config import (
    BOOK_EXECUTION,
    STATED_PROBABILITY,
    is_v2,
    runs_source_rules,
    stamped_extensions,
    stamped_fee_charged,
)
from arena.core.accounting import (
    BetLimits,
    Holding,
    refund,
    settle,
    side_won,
)
from arena.core.book_legs import charging
from arena.core.errors import InputError
from arena.core.execution import (
    ExecutionPlan,
    HeldPosition,
    LegRequests,
    SnapshotMarket,
    plan_execution,
)
from arena.core.late_entry import stamped_late_entry
from arena.markets.resolution import Verdict, resolution_verdict
from arena.markets.types import ParsedMarket

EXECUTED = ("ok", "zero_trade", "fallback_hold")  # decisions whose plan was applied
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
        cohort, late = bundle.manifest.get("cohort"), bundle.manifest.get("late_entry")
    except InputError:
        cohort = late = None
    try:
        checks = Replay(bundle).run()
    except DAMAGED as exc:  # a file too damaged to read: named when the reader found it
        broken = Check("bundle readable")
        broken.fail(str(exc) if isinstance(exc, DamagedFile) else f"{type(exc).__name__}: {exc}")
        checks = [broken]
    return Report(bundle.hash, cohort, files, checks, late)


# --------------------------------------------------------------------------------------------
# The replay


class Replay:
    """Recompute a bundle's numbers: parsing, execution, settlement, Brier, values, ranks."""

    def __init__(self, bundle: BundleFiles) -> None:
        files = Members(bundle.files)
        self.cohort: dict[str, Any] = read_document("cohort.json", files["cohort.json"])
        constants = self.cohort["constants"]
        self.limits = BetLimits(
            min_bet=Decimal(str(constants["min_bet"])),
            max_bet_fraction=Decimal(str(constants["max_bet_fraction"])),
        )
        self.stated = STATED_PROBABILITY in stamped_extensions(constants)
        self.model = decision_model(self.stated)
        # methodology v2: the total bet cap, the recorded prices (`replay.prices`)
        self.v2 = is_v2(self.cohort["methodology_version"])
        # v2's original rule set: legs fill at the quotes they met at execution
        self.source_rules = runs_source_rules(self.cohort["methodology_version"], constants)
        # extension book_execution: the books its legs walked (`replay.books`), its bid marks
        self.walks = BOOK_EXECUTION in stamped_extensions(constants)
        self.fee_charged = stamped_fee_charged(constants)  # how its buys paid the fee
        # a late entrant's shadow: its marks' sources (`replay.late_marks`), any version
        self.late = stamped_late_entry(constants) is not None
        valued = self.valued = self.v2 or self.walks or self.late  # rows with marks' records
        self.marks = runs_by_agent(read_rows(MARKS, files[MARKS])) if valued else {}
        self.open_values: dict[int, Decimal] = {}  # walks: open positions at their bid value
        self.run_books = read_books(read_rows(BOOKS, files.get(BOOKS, b"")))
        if self.walks and BOOKS not in files:
            self.run_books.check.fail(f"a book_execution cohort's bundle without {BOOKS}")
        self.fills: dict[tuple[int, int], dict[str, Any] | None] = {}  # by (decision, leg)
        self.states: dict[int, list[BookState]] = {}
        self.capped: list[tuple[dict[str, Any], LegRequests]] = []  # answers the cap judges
        self.cash_before: dict[int, Decimal] = {}  # by decision: the replayed cash it met
        rows = {name: read_rows(name, files[name]) for name in JSONL}
        self.lineup, self.decisions = rows["lineup.jsonl"], rows["decisions.jsonl"]
        self.snapshots = {s["id"]: s for s in rows["market_snapshots.jsonl"]}
        self.attempts: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for attempt in rows["attempts.jsonl"]:
            self.attempts[attempt["decision_id"]].append(attempt)
        self.trades, self.briers = rows["trades.jsonl"], rows["brier_scores.jsonl"]
        self.positions = {p["id"]: p for p in rows["positions.jsonl"]}
        self.markets = {m["id"]: m for m in rows["markets.jsonl"]}
        _, self.curve, self.at = read_table(
            "portfolio_snapshots.csv", files["portfolio_snapshots.csv"], PORTFOLIO_CELLS
        )
        self.board = rows["leaderboard.jsonl"]
        self.parsed: dict[int, ParsedDecision] = {}
        self.books: dict[int, Book] = {}

    def run(self) -> list[Check]:
        parsing, books = self.check_parsing(), self.check_books()
        if self.walks and not self.late:  # valued at the bid: the last row's bid values
            bid_values, self.open_values = check_bid_values(self, self.marks)
            books.append(bid_values)
        final = final_books(self)
        checks = [
            parsing,
            *books,
            check_brier(self),
            check_agents(self, final),
            check_curve(self, final),
            check_leaderboard(self, final),
        ]
        if self.late:  # a late entrant is valued at its recorded marks' sources
            checks.append(check_late_values(self, self.marks))
        if self.walks:
            checks += [self.run_books.check, check_fills(self.trades, self.fills)]
        if not self.v2:
            return checks
        check_total_caps(self, parsing, self.capped)
        if self.source_rules:
            checks.append(check_execution_quotes(self.decisions, self.snapshots))
        return [
            *checks,
            check_quotes(self),
            check_trade_quotes(self),
            *([] if self.walks or self.late else [check_values(self, self.marks)]),
        ]

    def _answer_error(self, attempt: dict[str, Any], result: Any) -> str | None:
        """Why an answer was answered again: its parse error; in v2 an answer that parsed
        may still break the total cap, whose recorded error `check_total_caps` recomputes."""
        if result.ok is None:
            return str(result.error)
        return attempt["error"] if self.v2 else None

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
                if result.ok is not None and self.v2:
                    self.capped.append((attempt, result.ok))  # judged once the cash is known
                    continue
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
            errors = [self._answer_error(a, results[a["attempt_no"]]) for a in final_run]
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
            self.books[agent["agent_id"]] = Book(Decimal(agent["starting_balance"]))
            if self.valued:
                self.states[agent["agent_id"]] = [
                    BookState(None, self.books[agent["agent_id"]].cash, {})
                ]
        for agent_id, ordered in self._ordered_events(events, first_trade).items():
            book = self.books[agent_id]
            for kind, row in ordered:
                if kind == "decide":
                    self._replay_decision(book, row, trades_by_decision, legs, trades_check)
                else:
                    self._replay_settlement(book, row, settles)
                if agent_id in self.states:  # v2, walks: each valuation row is at a state
                    held = {pid: p.holding for pid, p in book.holdings.items()}
                    state = BookState(_event_time(kind, row), book.cash, held)
                    self.states[agent_id].append(state)
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
                quiet[agent_id], key=lambda d: (datetime.fromisoformat(d["decided_at"]), d["id"])
            ):
                at = datetime.fromisoformat(decision["decided_at"])
                place = next(
                    (i for i, (kind, row) in enumerate(ordered) if _event_time(kind, row) > at),
                    len(ordered),
                )
                ordered.insert(place, ("decide", decision))
            out[agent_id] = ordered
        return out

    def _replay_decision(
        self,
        book: Book,
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
        self.cash_before[did] = book.cash
        snapshot = self._snapshot(decision["market_snapshot_id"], _closed(decision, book))
        walked = None
        if self.walks and self.fee_charged is not None:
            walked = charging(self.run_books.of(decision["market_snapshot_id"]), self.fee_charged)
        # the original's v2 rules: the quotes each leg met (none where it walked the books)
        quotes = execution_quotes(decision) if self.source_rules and not self.walks else None
        atomic = self.source_rules
        plan = plan_execution(
            parsed, book.cash, held, snapshot, self.limits, walked, quotes, all_or_nothing=atomic
        )
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
        book: Book,
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
                self.fills[(did, leg.index)] = leg.fill
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
        book: Book,
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

    def verdict(self, market_id: str) -> Verdict | None:
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

    def _replay_settlement(self, book: Book, trade: dict[str, Any], check: Check) -> None:
        where = f"trade {trade['id']} ({trade['trade_type']}, market {trade['market_id']})"
        held = book.holdings.get(trade["position_id"])
        verdict = self.verdict(trade["market_id"])
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


def _event_time(kind: str, row: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(row["decided_at"] if kind == "decide" else row["created_at"])


def _closed(decision: Mapping[str, Any], book: Book) -> set[str]:
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
