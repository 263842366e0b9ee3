"""A `book_execution` cohort's valuation rows, checked against its bid-side marks.

Why apart from `replay.prices`: a position of a cohort stamped `book_execution` is valued at
what its shares would fetch from the bids (`core.book_legs.bid_mark`: the proceeds of a
bid-side walk net of the taker fee), not at a price times its shares, so v2's rule (a CLOB mark
is its quote's price) does not apply. The bundle carries each row's records as runs
(`marks.jsonl`, `replay.marks`), whatever the cohort's methodology version.

What is recomputed: each valuation row's cash and open positions are a state of the replayed
books; its positions value is Σ the recorded bid values (a `book_bid` record) and shares ×
the prior mark (a `prior_value` record); a bid record's mark is its bid value a share
(`money.price`); a prior value is the position's last bid mark, or its entry price before it
had one. Taken as recorded: the bid value itself, because the books a snapshot pass reads to
mark are not stored (only the decision runs' books are, `decision_books`).
"""

from collections import defaultdict
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from arena.analytics.replay.marks import MarkRuns
from arena.analytics.replay.prices import BookState, PricedReplay
from arena.analytics.replay.report import Check
from arena.core.accounting import mark_value
from arena.core.money import money, price

BID = "book_bid"
PRIOR = "prior_value"


def _worth(record: Mapping[str, Any], shares: Decimal) -> Decimal:
    """One position's recorded value: its bid value, or its shares at the prior mark."""
    if record.get("source") == BID:
        return Decimal(str(record["bid_value"]))
    return mark_value(shares, Decimal(str(record["mark"])))


def _state_value(state: BookState, marks: Mapping[int, Mapping[str, Any]]) -> Decimal:
    worths = (_worth(record, state.holdings[pid].shares) for pid, record in marks.items())
    return money(sum(worths, Decimal(0)))


def check_bid_values(
    replay: PricedReplay, runs: Mapping[int, MarkRuns]
) -> tuple[Check, dict[int, Decimal]]:
    """Every valuation row at its recorded bid marks; and each open position's value at its
    agent's last row (what the final books are valued at)."""
    check = Check("snapshot values at the recorded bid marks")
    at = replay.at
    rows: dict[int, list[list[str]]] = defaultdict(list)
    for row in replay.curve:
        rows[int(row[at["agent_id"]])].append(row)
    last_values: dict[int, Decimal] = {}
    for agent_id in sorted(set(runs) - set(replay.states)):
        check.fail(f"marks of agent {agent_id}, who is not in the lineup")
    for agent_id, states in replay.states.items():
        agent_runs = runs.get(agent_id) or MarkRuns([])
        index, last_mark = 0, dict[int, Decimal]()
        for row in rows.get(agent_id, []):
            where = f"agent {agent_id} snapshot {row[at['slot']]}"
            marks = agent_runs.at(row[at["slot"]])
            cash, value = Decimal(row[at["cash_balance"]]), Decimal(row[at["positions_value"]])
            found = _match(states, index, cash, marks)
            if found is None:
                check.fail(f"{where}: cash {cash} with positions {sorted(marks)} open is no state")
                continue
            index = found
            state = states[index]
            check.expect(f"{where} positions value", value, _state_value(state, marks))
            for pid in agent_runs.started:
                _check_mark(check, f"{where} position {pid}", marks[pid], state, pid, last_mark)
            last_values = {
                **last_values,
                **{pid: _worth(r, state.holdings[pid].shares) for pid, r in marks.items()},
            }
        for problem in agent_runs.finish():
            check.fail(f"marks of agent {agent_id}: {problem}")
    return check, last_values


def _match(
    states: list[BookState], start: int, cash: Decimal, marks: Mapping[int, Any]
) -> int | None:
    """The first replayed state from `start` with this cash and these positions open."""
    for k in range(start, len(states)):
        if states[k].cash == cash and states[k].holdings.keys() == marks.keys():
            return k
    return None


def _check_mark(
    check: Check,
    where: str,
    record: Mapping[str, Any],
    state: BookState,
    pid: int,
    last_mark: dict[int, Decimal],
) -> None:
    """A bid mark is its bid value a share; a prior value is the last bid mark (else the
    entry price)."""
    mark = Decimal(str(record.get("mark")))
    shares = state.holdings[pid].shares
    if record.get("source") == BID:
        bid = Decimal(str(record.get("bid_value")))
        check.expect(f"{where} bid mark", mark, price(bid / shares) if shares else None)
        last_mark[pid] = mark
    elif record.get("source") == PRIOR:
        check.expect(
            f"{where} prior value", mark, last_mark.get(pid, state.holdings[pid].avg_entry_price)
        )
    else:
        check.fail(f"{where}: mark source {record.get('source')!r} is not one the bid marks use")
