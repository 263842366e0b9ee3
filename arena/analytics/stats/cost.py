"""Cost-aware ranking: what each family's API calls cost, and what that money bought.

Why: two families with the same skill are not equally good if one costs ten times as much to
ask. This puts each family's spend beside its v1 scores (cost per decision, per resolved bet,
return and skill against the market per dollar) and marks the Pareto front of skill against
cost per decision. It changes no v1 number: every statistic is copied from a leaderboard frame
and only divided by a cost.

Why composed from the leaderboard frame, not read anew: the frame already carries the spend
(``api_cost_usd``), the decision and resolved-bet counts and the intervals, and the hourly
`analyses` job stores it, so the page derives this table from the frame it already shows at no
cost (no bootstrap, no query). The spend is the per-attempt cost as stored: the engine writes
each decision's ``cost_usd`` as the sum of its attempts' ``decision_attempts.cost_usd`` when
the decision finishes (`arena.engine.decisions`), and the leaderboard sums those; a test holds
the family sums equal to the attempt sums. A decision still in progress counts neither its
attempts' cost nor itself among the decisions, so cost per decision stays a ratio of like to
like.

Intervals: the spend is a fixed number, not an estimate, so a per-dollar figure's 95%
interval is its statistic's bootstrap interval divided by the spend (dividing every replicate
by the same positive number moves each percentile with it).
"""

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from arena.analytics.stats.leaderboard import EDGE_COLUMNS, leaderboard, with_edge
from arena.config import METHODOLOGY_VERSION

COST_COLUMNS: tuple[str, ...] = (
    "family_id",
    "display_name",
    "kind",
    "decisions",
    "resolved_bets",
    "api_cost_usd",
    "cost_per_decision",
    "cost_per_resolved_bet",
    "return_pct",
    "return_ci_low",
    "return_ci_high",
    "return_per_dollar",
    "return_per_dollar_ci_low",
    "return_per_dollar_ci_high",
    "skill_vs_market",
    "skill_vs_market_ci_low",
    "skill_vs_market_ci_high",
    "skill_per_dollar",
    "skill_per_dollar_ci_low",
    "skill_per_dollar_ci_high",
    "too_early",
    "paid",
    "pareto",
    # Better-is-up readings of the skill (new columns go last; the raw ones stay).
    "edge_over_market",
    "edge_over_market_ci_low",
    "edge_over_market_ci_high",
    "edge_per_dollar",
    "edge_per_dollar_ci_low",
    "edge_per_dollar_ci_high",
)
# (the interval columns' prefix, the statistic, its per-dollar column); both intervals are
# `{prefix}_ci_low` / `_ci_high` and `{per-dollar column}_ci_low` / `_ci_high`.
PER_DOLLAR = (
    ("return", "return_pct", "return_per_dollar"),
    ("skill_vs_market", "skill_vs_market", "skill_per_dollar"),
    ("edge_over_market", "edge_over_market", "edge_per_dollar"),
)


def cost_ranking(
    engine: Engine, *, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """`cost_frame` of the leaderboard of the same scope (all cohorts, or cohort `cohort`),
    computed now: the bootstrap runs. A page passes the stored leaderboard to `cost_frame`."""
    return cost_frame(leaderboard(engine, cohort=cohort, methodology=methodology))


def cost_frame(board: pd.DataFrame) -> pd.DataFrame:
    """One row per family of `board` (a `leaderboard` frame, stored or live; left unchanged):
    families that spent first, cheapest per decision first, then the rest (the baselines) in
    the board's order. Columns (`COST_COLUMNS`):

    - ``family_id``, ``display_name``, ``kind``, ``decisions`` (finished), ``resolved_bets``,
      ``too_early``: copied from the board
    - ``api_cost_usd`` (float $): the API spend, the stored per-attempt cost summed over the
      family's finished decisions in scope; 0 for baselines, which call no model
    - ``cost_per_decision`` (float $): spend / decisions (NaN without a decision)
    - ``cost_per_resolved_bet`` (float $): spend / resolved bets (NaN without one)
    - ``return_pct`` (+ ``return_ci_low`` / ``_high``), ``skill_vs_market`` (+ CI): copied
    - ``return_per_dollar`` (percentage points per $, + ``_ci_low`` / ``_ci_high``):
      return_pct / spend; NaN when nothing was spent (a baseline: undefined, not infinite)
    - ``skill_per_dollar`` (Brier difference per $, + CI): skill_vs_market / spend; negative is
      better, as for the skill; NaN when nothing was spent or there is no skill
    - ``edge_over_market`` (+ CI) = −skill_vs_market (`leaderboard.with_edge`): up is better;
      ``edge_per_dollar`` (+ CI): edge_over_market / spend, positive beats the market
    - ``paid`` (bool): spend > 0
    - ``pareto`` (bool): on the Pareto front of (skill_vs_market, cost_per_decision) among the
      paid families with a skill (`pareto_front`); never a baseline
    """
    if board.empty:
        return pd.DataFrame({c: pd.Series(dtype=_dtype(c)) for c in COST_COLUMNS})
    frame = with_edge(board.reset_index(drop=True))
    spend = frame["api_cost_usd"].to_numpy(dtype=np.float64)
    paid = spend > 0
    out = frame[
        [
            "family_id",
            "display_name",
            "kind",
            "decisions",
            "resolved_bets",
            "api_cost_usd",
            "return_pct",
            "return_ci_low",
            "return_ci_high",
            "skill_vs_market",
            "skill_vs_market_ci_low",
            "skill_vs_market_ci_high",
            "too_early",
            *EDGE_COLUMNS,
        ]
    ].copy()
    out["cost_per_decision"] = _per(spend, frame["decisions"].to_numpy(dtype=np.float64))
    out["cost_per_resolved_bet"] = _per(spend, frame["resolved_bets"].to_numpy(dtype=np.float64))
    divisor = np.where(paid, spend, np.nan)  # nothing spent: per dollar is undefined
    for prefix, value, per_dollar in PER_DOLLAR:
        for source, target in (
            (value, per_dollar),
            (f"{prefix}_ci_low", f"{per_dollar}_ci_low"),
            (f"{prefix}_ci_high", f"{per_dollar}_ci_high"),
        ):
            out[target] = frame[source].to_numpy(dtype=np.float64) / divisor
    out["paid"] = paid
    out["pareto"] = pareto_front(
        out["cost_per_decision"].to_numpy(dtype=np.float64),
        out["skill_vs_market"].to_numpy(dtype=np.float64),
        eligible=paid,
    )
    order = np.lexsort((np.arange(len(out)), out["cost_per_decision"].to_numpy(), ~paid))
    return out.iloc[order].reset_index(drop=True)[list(COST_COLUMNS)]


def pareto_front(cost: np.ndarray, skill: np.ndarray, *, eligible: np.ndarray) -> np.ndarray:
    """Which points are on the Pareto front of (lower `cost`, lower `skill`: more negative
    beats the market by more), among the `eligible` ones with both numbers.

    A point is dominated when another eligible point is no worse on both and better on one;
    every point not dominated is on the front. Two points equal on both dominate neither
    other, so a tie is on the front together. Ineligible points (a baseline, which spends
    nothing) and points missing either number are never on it and dominate nothing.
    """
    cost = np.asarray(cost, dtype=np.float64)
    skill = np.asarray(skill, dtype=np.float64)
    usable = np.asarray(eligible, dtype=bool) & ~np.isnan(cost) & ~np.isnan(skill)
    front = usable.copy()
    for i in np.flatnonzero(usable):
        others = usable & (cost <= cost[i]) & (skill <= skill[i])
        strictly = (cost < cost[i]) | (skill < skill[i])
        front[i] = not bool(np.any(others & strictly))
    return front


def _per(amount: np.ndarray, count: np.ndarray) -> np.ndarray:
    """amount / count where count is positive, else NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, amount / np.where(count > 0, count, 1), np.nan)


def scope_spend(cost: pd.DataFrame) -> float:
    """The scope's API spend: every family's summed (the baselines spend $0)."""
    return float(cost["api_cost_usd"].sum()) if len(cost) else 0.0


def _dtype(column: str) -> str:
    """A column's dtype in the empty frame (the same as a filled one's)."""
    if column in ("family_id", "display_name", "kind"):
        return "object"
    if column in ("decisions", "resolved_bets"):
        return "int64"
    if column in ("too_early", "paid", "pareto"):
        return "bool"
    return "float64"
