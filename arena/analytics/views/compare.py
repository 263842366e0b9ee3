"""The Compare page's read model beyond the shared-market test (`stats.paired.family_comparison`):
the pair's paired portfolio-return difference, its headline figures, the default pair and the
shared markets with both sides' positions.

Why the portfolio figure is read from the detectability frame: the Leaderboard and "When will
we know?" judge a pair on whole portfolios (return on capital, from the leaderboard's paired
cluster bootstrap, on the cohorts both entered); Compare shows that same number — taken from
the same frame, never recomputed — so its verdict agrees with theirs, and the shared-market
difference beneath it is labelled as the narrower question it answers.
"""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from arena.analytics.stats.leaderboard import ranked
from arena.analytics.views.agents import positions
from arena.core.detectability import z_test

# When and why the two figures can disagree: what a person reads between them (pinned by tests).
BRIDGE = (
    "The two figures answer different questions, so they can disagree, even in sign. The "
    "portfolio difference (what the Leaderboard and “When will we know?” judge) covers whole "
    "portfolios: markets only one of the two traded, how much each staked, and the cash each "
    "left idle. The shared-market difference isolates the same bets: only the markets both "
    "traded in the same cohort, so how hard a market was cancels out."
)


@dataclass(frozen=True)
class PortfolioDifference:
    """A − B in return on capital (percentage points), as "When will we know?" judges it."""

    return_a: float  # %
    return_b: float  # %
    difference: float  # pp, A − B
    se: float  # pp
    low: float  # 95% normal interval: difference ∓ z × SE (NaN without an SE)
    high: float
    p_value: float
    verdict: str  # separable | not_yet | no_gap | unknown
    more_cohorts: float
    cohorts: int


def portfolio_difference(
    detectability: pd.DataFrame, family_a: str, family_b: str
) -> PortfolioDifference | None:
    """The pair's return row of a `detectability_frame` (either order: the frame puts the
    better return first), as A − B; None when the frame has no such pair (a late entrant)."""
    pairs = detectability[
        (detectability["comparison"] == "pair") & (detectability["metric"] == "return")
    ]
    forward = pairs[(pairs["family_a"] == family_a) & (pairs["family_b"] == family_b)]
    backward = pairs[(pairs["family_a"] == family_b) & (pairs["family_b"] == family_a)]
    if len(forward):
        row, sign = forward.iloc[0], 1.0
    elif len(backward):
        row, sign = backward.iloc[0], -1.0
    else:
        return None
    difference, se = sign * float(row["difference"]), float(row["se"])
    half = z_test() * se if math.isfinite(se) else math.nan
    values = (float(row["value_a"]), float(row["value_b"]))
    return PortfolioDifference(
        return_a=values[0] if sign > 0 else values[1],
        return_b=values[1] if sign > 0 else values[0],
        difference=difference,
        se=se,
        low=difference - half,
        high=difference + half,
        p_value=float(row["p_value"]),
        verdict=str(row["verdict"]),
        more_cohorts=float(row["more_cohorts"]),
        cohorts=int(row["cohorts"]),
    )


def default_pair(board: pd.DataFrame, rule: str) -> tuple[str, str] | None:
    """The two contenders the leaderboard ranks first (`ranked` under protocol key `rule`):
    language models not too early to rank; failing two, any language models; else None."""
    if board.empty:
        return None
    order = ranked(board.reset_index(drop=True), rule)
    models = order[order["kind"] == "llm"]
    contenders = models[~models["too_early"].astype(bool)]
    chosen = contenders if len(contenders) >= 2 else models
    if len(chosen) < 2:
        return None
    return str(chosen["family_id"].iloc[0]), str(chosen["family_id"].iloc[1])


HEADLINE_COLUMNS: tuple[str, ...] = (
    "family_id",
    "display_name",
    "return_pct",
    "return_ci_low",
    "return_ci_high",
    "brier",
    "brier_ci_low",
    "brier_ci_high",
    "total_pnl",
    "bets",
    "cohorts",
)


def headline(board: pd.DataFrame, family_a: str, family_b: str) -> pd.DataFrame:
    """The pair's leaderboard rows, A then B, columns `HEADLINE_COLUMNS` (a family not on the
    board: no row)."""
    rows = [board[board["family_id"] == f] for f in (family_a, family_b)]
    found = pd.concat(rows, ignore_index=True)
    return found[[c for c in HEADLINE_COLUMNS if c in found]]


SHARED_COLUMNS: tuple[str, ...] = (
    "cohort_number",
    "market_id",
    "question",
    "side_a",
    "stake_a",
    "price_a",
    "pnl_a",
    "side_b",
    "stake_b",
    "price_b",
    "pnl_b",
)


def _per_market(frame: pd.DataFrame) -> pd.DataFrame:
    """One family's positions folded per cohort × market: its sides, stake, stake-weighted
    entry price and P/L (realised plus unrealised)."""
    keys = ["cohort_number", "market_id"]
    if frame.empty:
        return pd.DataFrame(columns=[*keys, "question", "side", "stake", "price", "pnl"])
    work = frame.assign(
        stake=frame["stake"].astype(float),
        paid=frame["stake"].astype(float) * frame["avg_entry_price"].astype(float),
        pnl=frame["realized_pnl"].astype(float) + frame["unrealized_pnl"].astype(float),
    )
    grouped = work.groupby(keys, sort=False)
    out = grouped.agg(
        question=("question", "first"),
        side=("side", lambda s: "/".join(sorted(set(map(str, s))))),
        stake=("stake", "sum"),
        paid=("paid", "sum"),
        pnl=("pnl", "sum"),
    ).reset_index()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["price"] = np.where(out["stake"] > 0, out["paid"] / out["stake"], np.nan)
    return out.drop(columns="paid")


def shared_positions(
    engine: Engine, family_a: str, family_b: str, cohorts: list[int]
) -> pd.DataFrame:
    """The markets both families held a position in within the same cohort (of `cohorts`),
    each side's sides, stake ($), stake-weighted entry price and P/L ($), columns
    `SHARED_COLUMNS`, newest cohort first then by question."""
    sides = []
    for family in (family_a, family_b):
        held = positions(engine, family=family)
        sides.append(_per_market(held[held["cohort_number"].isin(cohorts)]))
    keys = ["cohort_number", "market_id"]
    both = sides[0].merge(sides[1].drop(columns="question"), on=keys, suffixes=("_a", "_b"))
    both = both.sort_values(["cohort_number", "question"], ascending=[False, True])
    return both[list(SHARED_COLUMNS)].reset_index(drop=True)
