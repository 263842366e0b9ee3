"""Methodology v2 in `arena verify`: the recorded prices checked, and the books valued at them.

A v2 bundle records where every price came from (docs/methodology-v2.md, "Replay bundles"):
each frozen outcome's quote, each BUY and SELL trade's quote, each valuation row's marks
(`marks.jsonl`). The execution itself is replayed by `verify`; these checks add, from the same
files alone:

- `check_quotes`: each frozen outcome's quote recomputed by the original's validation rule
  (`markets.price_source.price_market`) from the Gamma and CLOB prices it records (the
  fallback reason when the CLOB gave none), and the prices shown and executed at are the
  quotes' prices (Gamma's list when an outcome has no price at all);
- `check_trade_quotes`: each BUY and SELL carries the quote of the outcome it traded, from the
  universe its decision executed on; settlements carry none;
- `check_values`: each valuation row's cash and open positions are a state of the replayed
  books, its positions value is Σ shares × the recorded mark, and each mark follows v2's rule
  (a CLOB mark is its quote's price; a prior value is the position's last CLOB mark, or its
  entry price before it had one);
- `check_total_caps`: the total bet cap on every answer that parsed, against the replayed cash
  before it, and under the original's rule set the minimum of each bet
  (`core.execution.answer_error`).

Under the original's rule set the execution is replayed at the quotes each leg met when it
executed (`replay.execution_quotes`); `check_trade_quotes` then expects those on the trades.

Taken as recorded: the CLOB's and Gamma's prices themselves (the books are not in the bundle)
and a mark's validation status (a NO mark carries its market's YES status).
"""

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from arena.analytics.replay.figures import Book
from arena.analytics.replay.marks import MarkRuns
from arena.analytics.replay.report import Check
from arena.config import BET_CAP_TOTAL, PRICES_CLOB_MID
from arena.core.accounting import BetLimits, Holding, mark_value, outcome_index
from arena.core.book_legs import PRICE_SOURCE as BOOK_WALK
from arena.core.execution import LegRequests, SnapshotMarket, answer_error, trade_quote
from arena.core.money import money, price
from arena.markets.clob_wire import ClobQuote
from arena.markets.price_source import (
    CLOB_STATUSES,
    PRIOR_VALUE,
    PriceQuote,
    price_market,
    tokens_to_read,
)
from arena.markets.types import ParsedMarket

QUOTE_NUMBERS = ("price", "gamma_price", "clob_price", "disagreement")
QUOTE_WORDS = ("source", "status", "fallback_reason")


@dataclass(frozen=True)
class BookState:
    """An agent's replayed books after one event (`at` its instant; None: the start)."""

    at: datetime | None
    cash: Decimal
    holdings: dict[int, Holding]


class PricedReplay(Protocol):
    """What these checks read of a replay (`verify.Replay`)."""

    cohort: dict[str, Any]
    snapshots: dict[int, dict[str, Any]]
    decisions: list[dict[str, Any]]
    trades: list[dict[str, Any]]
    curve: list[list[str]]
    at: dict[str, int]
    books: dict[int, Book]
    states: dict[int, list[BookState]]
    cash_before: dict[int, Decimal]
    limits: BetLimits
    walks: bool  # extension book_execution: trades fill by walking books, not at the quote
    source_rules: bool  # v2's original rule set: fills at the quotes re-read at execution


def _decimal(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


# --------------------------------------------------------------------------------------------
# The frozen universe's quotes


def check_quotes(replay: PricedReplay) -> Check:
    """The stamp says v2; every frozen outcome's quote follows the rule and gives its price."""
    check = Check("frozen prices follow their quotes")
    constants = replay.cohort["constants"]
    check.expect("cohort stamp prices", constants.get("prices"), PRICES_CLOB_MID)
    check.expect("cohort stamp bet_cap", constants.get("bet_cap"), BET_CAP_TOTAL)
    for snapshot in replay.snapshots.values():
        for item in snapshot["items"]:
            where = f"snapshot {snapshot['id']} market {item['market_id']}"
            recomputed = compare_quotes(check, where, item)
            if recomputed is not None:
                _check_shown(check, where, item["prices"], recomputed)
    return check


def compare_quotes(check: Check, where: str, item: Mapping[str, Any]) -> list[PriceQuote] | None:
    """A market's recorded quotes (`item`: its id, type, outcomes and `quotes`) against the
    validation rule; the recomputed quotes, or None (a failure recorded) when unreadable."""
    quotes = item.get("quotes")
    if not quotes or len(quotes) != len(item["outcomes"]):
        check.fail(f"{where}: no quote for each outcome")
        return None
    try:
        recomputed = recompute_quotes(item)
    except (ValueError, TypeError, ArithmeticError, KeyError, AttributeError) as exc:
        check.fail(f"{where}: its quotes cannot be read ({type(exc).__name__})")
        return None
    for index, (quote, mine) in enumerate(zip(quotes, recomputed, strict=True)):
        _compare_quote(check, f"{where} outcome {index}", quote, mine)
    return recomputed


def recompute_quotes(item: Mapping[str, Any]) -> list[PriceQuote]:
    """An item's quotes by the validation rule, from the Gamma and CLOB prices they record:
    the CLOB's answer for each token read is the recorded CLOB price, or the recorded reason."""
    quotes: list[dict[str, Any]] = list(item["quotes"])
    outcomes = [str(o) for o in item["outcomes"]]
    gamma = [_decimal(q.get("gamma_price")) for q in quotes]
    no_token = any(q.get("fallback_reason") == "no_token" for q in quotes)
    tokens = None if no_token else [f"outcome-{i}" for i in range(len(outcomes))]
    market = ParsedMarket(
        id=str(item["market_id"]),
        question="",
        market_type="binary" if item["market_type"] == "binary" else "named",
        outcomes=outcomes,
        prices=None if any(g is None for g in gamma) else [g for g in gamma if g is not None],
        clob_token_ids=tokens,
    )
    clob: dict[str, ClobQuote] = {}
    for token in tokens_to_read(market):
        quote = quotes[int(token.rsplit("-", 1)[1])]
        mid = _decimal(quote.get("clob_price"))
        clob[token] = (
            ClobQuote(token, mid=mid)
            if mid is not None
            else ClobQuote(token, reason=quote.get("fallback_reason") or "clob_unavailable")
        )
    return price_market(market, clob)


def _compare_quote(check: Check, where: str, quote: Mapping[str, Any], mine: PriceQuote) -> None:
    for key in QUOTE_NUMBERS:
        value = getattr(mine, key)
        if value is None:
            check.expect(f"{where} {key}", quote.get(key), None)
        else:
            check.expect(f"{where} {key}", quote.get(key), value)
    for key in QUOTE_WORDS:
        check.expect(f"{where} {key}", quote.get(key), getattr(mine, key))


def _check_shown(
    check: Check, where: str, shown: Sequence[Any], quotes: Sequence[PriceQuote]
) -> None:
    """The prices shown (and executed at) are the quotes' prices; with an outcome unpriced,
    Gamma's stored list (never an invented price)."""
    if any(q.price is None for q in quotes):
        expected = [q.gamma_price for q in quotes if q.gamma_price is not None]
    else:
        expected = [q.price for q in quotes if q.price is not None]
    if len(shown) != len(expected):
        check.fail(f"{where}: {len(shown)} prices shown, {len(expected)} from its quotes")
        return
    for index, (published, value) in enumerate(zip(shown, expected, strict=True)):
        check.expect(f"{where} price shown {index}", published, value)


# --------------------------------------------------------------------------------------------
# The trades' quotes


def check_trade_quotes(replay: PricedReplay) -> Check:
    """Each BUY and SELL carries the quote of the outcome it traded: its decision's frozen one,
    or under the original's rule set the one its leg met at execution with the frozen price
    beside it (`core.execution.trade_quote`, the engine's rule); settlements carry none."""
    check = Check("trades carry their quotes")
    snapshot_of = {d["id"]: d["market_snapshot_id"] for d in replay.decisions}
    legs = {(d["id"], leg["index"]): leg for d in replay.decisions for leg in d["legs"] or []}
    for trade in replay.trades:
        where = f"trade {trade['id']}"
        if trade["trade_type"] not in ("BUY", "SELL"):
            check.expect(f"{where} price_source", trade.get("price_source"), None)
            check.expect(f"{where} price_quote", trade.get("price_quote"), None)
            continue
        snapshot = replay.snapshots.get(snapshot_of.get(trade["decision_id"], -1))
        items = {i["market_id"]: i for i in snapshot["items"]} if snapshot else {}
        item = items.get(trade["market_id"])
        index = (
            outcome_index(item["market_type"], [str(o) for o in item["outcomes"]], trade["side"])
            if item
            else None
        )
        quotes = item.get("quotes") if item else None
        if item is None or index is None or not quotes or index >= len(quotes):
            check.fail(f"{where}: no frozen quote of its side in its decision's universe")
            continue
        executed = legs.get((trade["decision_id"], trade["leg_index"]), {}).get("quotes")
        if replay.source_rules and executed is None and not replay.walks:
            check.fail(f"{where}: its leg records no quotes read at execution")
            continue
        market = SnapshotMarket(
            item["market_id"],
            item["market_type"],
            [str(o) for o in item["outcomes"]],
            [],
            quotes=quotes,
        )
        quote = trade_quote(market, trade["side"], executed) or {}
        check.expect(f"{where} price_quote", trade.get("price_quote"), quote)
        if replay.walks:  # its price is the walk's VWAP (`replay.books`), the quote beside
            check.expect(f"{where} price_source", trade.get("price_source"), BOOK_WALK)
            continue
        check.expect(f"{where} price_source", trade.get("price_source"), quote.get("source"))
        check.expect(f"{where} price", trade["price"], _decimal(quote.get("price")))
    return check


# --------------------------------------------------------------------------------------------
# The total bet cap


def cash_at(states: Sequence[BookState], instant: datetime) -> Decimal:
    """The replayed cash just before `instant`: after every event of an earlier instant."""
    cash = states[0].cash
    for state in states[1:]:
        if state.at is None or state.at >= instant:
            break
        cash = state.cash
    return cash


def check_total_caps(
    replay: PricedReplay, check: Check, answers: Sequence[tuple[dict[str, Any], LegRequests]]
) -> None:
    """Each answer that parsed (its attempt, its plan) against the total cap on the cash
    before it: over the cap it was answered again (`malformed`, the error naming the total, the
    cap and the cash). The cash is the replayed books' where the decision executed, or (a
    decision that did not, an answer of an earlier run) just before the attempt's instant."""
    agent_of = {d["id"]: d["agent_id"] for d in replay.decisions}
    for attempt, plan in answers:
        decision_id = attempt["decision_id"]
        where = f"decision {decision_id} attempt {attempt['attempt_no']}"
        states = replay.states.get(agent_of.get(decision_id, -1))
        if not states:
            check.fail(f"{where}: no agent to cap it against")
            continue
        cashes = [cash_at(states, datetime.fromisoformat(attempt["created_at"]))]
        if decision_id in replay.cash_before:
            cashes.insert(0, replay.cash_before[decision_id])
        errors = [
            answer_error(plan, cash, replay.limits, leg_minimum=replay.source_rules)
            for cash in cashes
        ]
        error = next((e for e in errors if e == attempt["error"]), errors[0])
        outcome = "valid" if error is None else "malformed"
        check.expect(f"{where} outcome", attempt["outcome"], outcome)
        check.expect(f"{where} total cap", attempt["error"], error)


# --------------------------------------------------------------------------------------------
# Values at the recorded marks


@dataclass
class _Walk:
    """One agent's valuation rows walked in slot order against its replayed states."""

    states: list[BookState]
    runs: MarkRuns
    index: int = 0  # the state the last row matched
    last_clob: dict[int, Decimal] = field(default_factory=dict)
    _worth: dict[tuple[int, int], Decimal] = field(default_factory=dict)

    def worth(self, k: int, marks: Mapping[int, Mapping[str, Any]]) -> Decimal:
        """State `k`'s positions at the marks read (once per state and set of records: a
        long cohort has ~18,000 rows per agent, most of them unchanged)."""
        key = (k, self.runs.version)
        found = self._worth.get(key)
        if found is None:
            holdings = self.states[k].holdings
            values = (
                mark_value(holdings[pid].shares, Decimal(str(record["mark"])))
                for pid, record in marks.items()
            )
            found = self._worth[key] = money(sum(values, Decimal(0)))
        return found

    def match(
        self, cash: Decimal, marks: Mapping[int, Mapping[str, Any]], value: Decimal
    ) -> tuple[int, Decimal] | None:
        """The first state from the last matched one with this cash and these positions open
        whose value at the marks is `value`; else the first with this cash and positions."""
        first: tuple[int, Decimal] | None = None
        for k in range(self.index, len(self.states)):
            state = self.states[k]
            if state.cash != cash or state.holdings.keys() != marks.keys():
                continue
            worth = self.worth(k, marks)
            if worth == value:
                return k, worth
            first = first or (k, worth)
        return first


def rows_by_agent(
    replay: PricedReplay, runs: Mapping[int, MarkRuns], check: Check
) -> dict[int, list[list[str]]]:
    """The valuation rows by agent; marks of an agent not in the lineup fail `check`."""
    rows: dict[int, list[list[str]]] = defaultdict(list)
    for row in replay.curve:
        rows[int(row[replay.at["agent_id"]])].append(row)
    for agent_id in sorted(set(runs) - set(replay.states)):
        check.fail(f"marks of agent {agent_id}, who is not in the lineup")
    return rows


def check_values(replay: PricedReplay, runs: Mapping[int, MarkRuns]) -> Check:
    """Every valuation row at the recorded marks, and every mark by v2's rule."""
    check = Check("snapshot values at the recorded marks")
    at = replay.at
    rows = rows_by_agent(replay, runs, check)
    for agent_id, states in replay.states.items():
        walk = _Walk(states, runs.get(agent_id) or MarkRuns([]))
        for row in rows.get(agent_id, []):
            _value_row(check, walk, agent_id, row, at)
        for problem in walk.runs.finish():
            check.fail(f"marks of agent {agent_id}: {problem}")
    return check


def matched_row(
    check: Check, walk: _Walk, agent_id: int, row: list[str], at: Mapping[str, int]
) -> tuple[str, dict[int, Any]] | None:
    """One valuation row matched to a replayed state (`walk` moved to it) and its positions
    value checked: where it is, and its marks by position; None (failed) when no replayed
    state has its cash and open positions."""
    slot = row[at["slot"]]
    where = f"agent {agent_id} snapshot {slot}"
    marks = walk.runs.at(slot)
    cash, value = Decimal(row[at["cash_balance"]]), Decimal(row[at["positions_value"]])
    found = walk.match(cash, marks, value)
    if found is None:
        open_ids = ", ".join(map(str, sorted(marks))) or "none"
        check.fail(f"{where}: cash {cash} with positions {open_ids} open is no replayed state")
        return None
    walk.index, worth = found
    check.expect(f"{where} positions value", value, worth)
    return where, marks


def _value_row(
    check: Check, walk: _Walk, agent_id: int, row: list[str], at: Mapping[str, int]
) -> None:
    matched = matched_row(check, walk, agent_id, row, at)
    if matched is None:
        return
    where, marks = matched
    state = walk.states[walk.index]
    for pid in walk.runs.started:
        _check_mark(check, walk, f"{where} position {pid}", pid, marks[pid], state)


def _check_mark(
    check: Check, walk: _Walk, where: str, pid: int, record: Mapping[str, Any], state: BookState
) -> None:
    """A mark's rule, checked where its run starts: a CLOB mark is its quote's price; a prior
    value is the position's last CLOB mark, or its entry price before it had one."""
    mark = _decimal(record.get("mark"))
    status = record.get("status")
    if status in CLOB_STATUSES:
        check.expect(f"{where} source", record.get("source"), PRICES_CLOB_MID)
        check.expect(f"{where} CLOB price", record.get("price"), _decimal(record.get("clob_price")))
        quoted = _decimal(record.get("price"))
        check.expect(f"{where} mark", mark, None if quoted is None else price(quoted))
        if mark is not None:
            walk.last_clob[pid] = mark
    elif status == PRIOR_VALUE:
        prior = walk.last_clob.get(pid, state.holdings[pid].avg_entry_price)
        check.expect(f"{where} source", record.get("source"), PRIOR_VALUE)
        check.expect(f"{where} prior value", mark, prior)
        check.expect(f"{where} price", record.get("price"), mark)
    else:
        check.fail(f"{where}: mark status {status!r} is not one v2 marks with")
