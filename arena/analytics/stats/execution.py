"""Execution sensitivity: each decision's legs re-executed three ways. Pure.

Why: a ranking can come from the execution rule rather than from forecasting. v1 fills at
Gamma's display price, v2 at the CLOB mid; a $500 order walks the book. Here every executed
leg of a cohort is filled again under each rule, with the stake the model chose and the SAME
value per share carried to the end (the settlement the cohort recorded, or its latest mark
while open), so only the fill differs between the rules:

- ``display``: Gamma's price the snapshot froze (v1's executed price; v2's quote gamma_price);
- ``mid``: the validated CLOB mid (v2's quote clob_price; for v1 the stored book's midpoint
  when both sides exist and do not cross);
- ``book``: the stored book walked (`walk_buy` for the stake with the market's taker fee,
  paid as the cohort's stamp says (`fee_charged`), or as the CLOB charges a new order for a
  cohort that ran no `book_execution`; a SELL sells the same fraction of the counterfactual
  holding through `walk_sell`).

A leg a rule cannot execute stays cash (a BUY) or stays held (a SELL) under that rule and is
counted with its reason, never guessed. Every interpretation: docs/book-execution.md,
"Execution sensitivity".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, Decimal
from typing import Any, Literal

import numpy as np
import pandas as pd

from arena.core import stats
from arena.core.book_walk import Fill, walk_buy, walk_sell
from arena.core.fees import FEE_USDC_ON_TOP, FeeCharged, FeeSchedule
from arena.core.money import ONE, ZERO, money, shares
from arena.core.order_book import Book

Rule = Literal["display", "mid", "book"]
RULES: tuple[Rule, ...] = ("display", "mid", "book")
# The rule a cohort itself executed by: v1 the display price, v2 the mid, the
# `book_execution` extension the book walk (the extension wins over the version).
OWN_RULE: dict[str, Rule] = {"v1": "display", "v2": "mid", "book_execution": "book"}
NO_BOOKS = "no stored books: decided before book recording"


def own_rule(version: str, extensions: Sequence[str] = ()) -> Rule:
    """The rule cohort stamped (`version`, `extensions`) executed by (unknown version → v1's)."""
    if "book_execution" in extensions:
        return "book"
    return OWN_RULE.get(version, "display")


@dataclass(frozen=True)
class Leg:
    """One executed leg as the cohort recorded it, with what each rule would fill it at.

    `stake` is a BUY's dollars; `fraction` a SELL's share of the holding it sold (0-1).
    `display` / `mid` are the side's prices under those rules (None with `*_reason`);
    `book` the side's stored book (None with `book_reason`), walked with the market's `fees`
    paid as `fee_charged` says."""

    agent_id: int
    position_id: int
    market_id: str
    kind: Literal["BUY", "SELL"]
    stake: Decimal = ZERO
    fraction: Decimal = ZERO
    display: Decimal | None = None
    display_reason: str | None = None
    mid: Decimal | None = None
    mid_reason: str | None = None
    book: Book | None = None
    book_reason: str | None = None
    fees: FeeSchedule | None = None
    fee_charged: FeeCharged = FEE_USDC_ON_TOP


@dataclass(frozen=True)
class PositionEnd:
    """What a position's shares were worth at the end, as the cohort recorded it: `per_share`
    (a settlement's payout, else the latest mark), or `refunded` (a cancelled market returns
    the remaining cost basis, whatever the fill was)."""

    position_id: int
    per_share: Decimal = ZERO
    refunded: bool = False


@dataclass
class _Holding:
    shares: Decimal = ZERO
    cost: Decimal = ZERO
    cash: Decimal = ZERO  # proceeds − spent so far


@dataclass(frozen=True)
class Outcome:
    """One rule's re-execution: P/L per (agent, market), legs refused by reason, legs filled."""

    pnl: dict[tuple[int, str], Decimal] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)
    refused_by_agent: Counter[tuple[int, str]] = field(default_factory=Counter)
    executed: int = 0


def _price(leg: Leg, rule: Rule) -> tuple[Decimal | None, str | None]:
    if rule == "display":
        return leg.display, leg.display_reason or (
            "no_display_price" if leg.display is None else None
        )
    return leg.mid, leg.mid_reason or ("no_mid" if leg.mid is None else None)


def _buy(leg: Leg, rule: Rule) -> tuple[Decimal, Decimal] | str:
    """(dollars spent, shares credited) of a BUY under `rule`, or why it cannot execute."""
    if rule == "book":
        if leg.book is None:
            return leg.book_reason or "no_book"
        result = walk_buy(leg.book, leg.stake, leg.fees, charged=leg.fee_charged)
        return (result.amount, result.shares) if isinstance(result, Fill) else result.reason
    at, reason = _price(leg, rule)
    if at is None:
        return reason or "no_price"
    if not ZERO < at < ONE:
        return "untradable_price"
    stake = money(leg.stake)
    bought = shares(stake / at)
    return (stake, bought) if bought > ZERO else "no_shares"


def _sell(leg: Leg, rule: Rule, count: Decimal) -> tuple[Decimal, Decimal] | str:
    """(proceeds, shares sold) of selling `count` shares under `rule`, or why not."""
    if rule == "book":
        if leg.book is None:
            return leg.book_reason or "no_book"
        result = walk_sell(leg.book, count, leg.fees)
        return (result.amount, result.shares) if isinstance(result, Fill) else result.reason
    at, reason = _price(leg, rule)
    if at is None:
        return reason or "no_price"
    if not ZERO <= at <= ONE:
        return "untradable_price"
    return money(count * at, rounding=ROUND_DOWN), count


def _apply(leg: Leg, rule: Rule, held: _Holding) -> str | None:
    """Execute one leg on the counterfactual holding; the refusal reason when it cannot."""
    if leg.kind == "BUY":
        filled = _buy(leg, rule)
        if isinstance(filled, str):
            return filled
        spent, bought = filled
        held.shares += bought
        held.cost += spent
        held.cash -= spent
        return None
    if held.shares <= ZERO:
        return "nothing_held"
    whole = leg.fraction >= ONE
    count = held.shares if whole else shares(held.shares * leg.fraction)
    if count <= ZERO:
        return "no_shares"
    filled = _sell(leg, rule, count)
    if isinstance(filled, str):
        return filled
    proceeds, sold = filled
    removed = (
        held.cost
        if sold == held.shares
        else money(held.cost * sold / held.shares, rounding=ROUND_DOWN)
    )
    held.shares -= sold
    held.cost -= removed
    held.cash += proceeds
    return None


def re_execute(legs: Iterable[Leg], ends: Iterable[PositionEnd], rule: Rule) -> Outcome:
    """Every leg (in the order the cohort executed them) filled under `rule`; each position's
    counterfactual shares valued at the end the cohort recorded for it.

    P/L per (agent, market) = proceeds − spent + remaining shares × value per share (a
    refunded position: + its remaining counterfactual cost basis)."""
    end_of = {end.position_id: end for end in ends}
    holdings: dict[int, _Holding] = {}
    owner: dict[int, tuple[int, str]] = {}
    outcome = Outcome()
    executed = 0
    for leg in legs:
        held = holdings.setdefault(leg.position_id, _Holding())
        owner[leg.position_id] = (leg.agent_id, leg.market_id)
        reason = _apply(leg, rule, held)
        if reason is None:
            executed += 1
        else:
            outcome.refused[reason] += 1
            outcome.refused_by_agent[(leg.agent_id, reason)] += 1
    for position_id, held in holdings.items():
        end = end_of.get(position_id, PositionEnd(position_id))
        value = held.cost if end.refunded else money(held.shares * end.per_share)
        key = owner[position_id]
        outcome.pnl[key] = outcome.pnl.get(key, ZERO) + held.cash + value
    return Outcome(outcome.pnl, outcome.refused, outcome.refused_by_agent, executed)


# --------------------------------------------------------------------------------------------
# Per family, per rule: returns with the leaderboard's cluster bootstrap, ranks, P(rank #1)


def rule_units(
    outcome: Outcome, agents: Sequence[Mapping[str, Any]], clusters: Mapping[str, str]
) -> pd.DataFrame:
    """One rule's P/L per agent × market as bootstrap units: cohort, family, cluster, pnl."""
    of_agent = {int(a["agent_id"]): a for a in agents}
    rows = [
        (
            int(of_agent[agent_id]["cohort_id"]),
            str(of_agent[agent_id]["family_id"]),
            clusters.get(market_id, f"market:{market_id}"),
            float(pnl),
        )
        for (agent_id, market_id), pnl in sorted(outcome.pnl.items())
        if agent_id in of_agent
    ]
    return pd.DataFrame(rows, columns=["cohort_id", "family_id", "cluster", "pnl"])


def cluster_draw(
    units: pd.DataFrame, replicates: int, seed: int
) -> tuple[np.ndarray, stats.ClusterBootstrap]:
    """The clusters (cohort | event) in the order `stats.bootstrap._matrices` labels them, and
    their stratified draw: the same clusters and seed give the leaderboard's draw."""
    keys = units["cohort_id"].astype(str) + "|" + units["cluster"]
    labels, index = np.unique(keys.to_numpy(dtype=str), return_inverse=True)
    stratum_of = np.zeros(labels.size, dtype=np.int64)
    stratum_of[index] = units["cohort_id"].to_numpy(dtype=np.int64)
    return labels, stats.ClusterBootstrap(stratum_of, replicates, seed)


def _replicates(
    units: pd.DataFrame,
    labels: np.ndarray,
    boot: stats.ClusterBootstrap,
    families: Sequence[str],
    capital: pd.DataFrame,
) -> np.ndarray:
    """(B × F) P/L replicates of one rule: clusters resampled within cohorts (the shared
    draw), each cohort's family total floored at −its capital, as the leaderboard does."""
    col = {f: j for j, f in enumerate(families)}
    row = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((labels.size, len(families)))
    keys = (units["cohort_id"].astype(str) + "|" + units["cluster"]).to_numpy(dtype=str)
    for key, family, pnl in zip(keys, units["family_id"], units["pnl"], strict=True):
        matrix[row[key], col[family]] += pnl
    strata = sorted(int(c) for c in capital["cohort_id"].unique())
    srow = {c: i for i, c in enumerate(strata)}
    floors = np.zeros((len(strata), len(families)))
    for cohort_id, family, cap in zip(
        capital["cohort_id"], capital["family_id"], capital["capital"], strict=True
    ):
        floors[srow[int(cohort_id)], col[family]] -= cap
    return boot.floored_total(matrix, strata, np.zeros_like(floors), floors)


def _reasons(counter: Counter[str]) -> str:
    return "; ".join(f"{reason}: {n}" for reason, n in sorted(counter.items()))


def sensitivity_frame(
    outcomes: Mapping[Rule, Outcome],
    agents: Sequence[Mapping[str, Any]],
    clusters: Mapping[str, str],
    names: Mapping[str, tuple[str, str]],
    own: Rule,
    leg_agents: Sequence[int],
    *,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """One row per family (`SENSITIVITY_COLUMNS`), best first under the cohort's own rule.

    A rule that executed no leg in scope (no stored books at all) has NaN figures, no rank,
    and takes no part in the flag. ``not_robust``: the family's rank under some available
    rule differs from its rank under `own`. `leg_agents`: the agent of every leg in scope
    (``legs`` counts them per family; ``refused_<rule>`` the ones the rule left unexecuted)."""
    capital = pd.DataFrame(list(agents), columns=["agent_id", "family_id", "cohort_id", "capital"])
    per_cohort = capital.groupby(["cohort_id", "family_id"], as_index=False)["capital"].sum()
    families = sorted(capital["family_id"].unique())
    if not families:
        return pd.DataFrame(columns=list(SENSITIVITY_COLUMNS))
    cap = per_cohort.groupby("family_id")["capital"].sum().reindex(families).to_numpy()
    units = {rule: rule_units(outcomes[rule], agents, clusters) for rule in RULES}
    every = pd.concat(list(units.values()), ignore_index=True).drop_duplicates(
        ["cohort_id", "cluster"]
    )
    labels, boot = cluster_draw(every, replicates, seed)
    frame = pd.DataFrame({"family_id": families})
    frame["display_name"] = [names.get(f, (f, "llm"))[0] for f in families]
    frame["kind"] = [names.get(f, (f, "llm"))[1] for f in families]
    frame["capital"] = cap
    frame["own_rule"] = own
    fam_of = {int(a["agent_id"]): str(a["family_id"]) for a in agents}
    legs = Counter(fam_of.get(agent_id, "") for agent_id in leg_agents)
    frame["legs"] = [legs.get(f, 0) for f in families]
    for rule in RULES:
        outcome = outcomes[rule]
        available = outcome.executed > 0
        point = units[rule].groupby("family_id")["pnl"].sum().reindex(families).fillna(0.0)
        reps = _replicates(units[rule], labels, boot, families, per_cohort) / cap * 100.0
        returns = point.to_numpy() / cap * 100.0
        low, high = stats.percentile_interval(reps, level)
        nan = np.full(len(families), np.nan)
        frame[f"return_{rule}"] = returns if available else nan
        frame[f"return_{rule}_ci_low"] = low if available else nan
        frame[f"return_{rule}_ci_high"] = high if available else nan
        ranks = stats.competition_ranks(returns).astype(float)
        frame[f"rank_{rule}"] = ranks if available else nan
        frame[f"p_rank_1_{rule}"] = stats.p_rank_first(reps) if available else nan
        refused = Counter()  # type: Counter[tuple[str, str]]
        for (agent_id, reason), n in outcome.refused_by_agent.items():
            refused[(fam_of.get(agent_id, ""), reason)] += n
        frame[f"refused_{rule}"] = [
            sum(n for (f, _), n in refused.items() if f == fid) for fid in families
        ]
        frame[f"refused_{rule}_reasons"] = [
            _reasons(Counter({r: n for (f, r), n in refused.items() if f == fid}))
            for fid in families
        ]
    frame["not_robust"] = _not_robust(frame, own)
    frame = frame.sort_values([f"rank_{own}", "family_id"], kind="stable", na_position="last")
    return frame.reset_index(drop=True)[list(SENSITIVITY_COLUMNS)]


def _not_robust(frame: pd.DataFrame, own: Rule) -> np.ndarray:
    """Rank under some available rule ≠ rank under the cohort's own rule (False when the own
    rule itself is unavailable: nothing to compare with)."""
    flag = np.zeros(len(frame), dtype=bool)
    mine = frame[f"rank_{own}"].to_numpy()
    for rule in RULES:
        other = frame[f"rank_{rule}"].to_numpy()
        flag |= ~np.isnan(other) & ~np.isnan(mine) & (other != mine)
    return flag


SENSITIVITY_COLUMNS: tuple[str, ...] = (
    "family_id",
    "display_name",
    "kind",
    "capital",
    "own_rule",
    "legs",
    *(
        f"{stem}"
        for rule in RULES
        for stem in (
            f"return_{rule}",
            f"return_{rule}_ci_low",
            f"return_{rule}_ci_high",
            f"rank_{rule}",
            f"p_rank_1_{rule}",
            f"refused_{rule}",
            f"refused_{rule}_reasons",
        )
    ),
    "not_robust",
)
