"""The leaderboard read model: v1 scores per family with honest uncertainty.

Why: a ranking by point estimates alone rewards luck. Each family keeps its v1 numbers exactly
(total P/L summed over cohorts from the latest snapshots, return % on the capital it was given,
the mean Brier of its implied confidence), and gets 95% intervals from a cluster bootstrap over
Polymarket events within cohorts (`arena.core.stats`), its probability of ranking first, where its
return falls among skill-free random traders on the same markets, and the market's own price
as a reference forecaster on the same bets.

How a family's P/L decomposes (what the bootstrap resamples): every position's P/L is its
realized P/L (sells, settlements, refunds) plus, while open, its marked value minus its
remaining cost basis (mark = the position's last mark, else its entry price: the snapshot's
rule). Summed per agent × market these are the *market contributions*; they sum to the agent's
P/L as of its positions' last marks. The headline P/L comes from the latest snapshot instead;
the small difference (prices or settlements newer than that snapshot) is kept as a fixed
per-family offset, so replicates are centred on the headline number.

Where the parts live: the units read from the database (`leaderboard_inputs`), the shared
cluster draw and P/L replicates (`bootstrap`), the random null (`random_null`, replaying
`null_replay`); paired family-vs-family tests are `paired`. Here: their assembly into one
row per family (`leaderboard`, columns `LEADERBOARD_COLUMNS`) and its CLI presentation.
"""

from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from arena.analytics.query.scope import SEPARATOR, key_version, rule_key, scope_key
from arena.analytics.query.selects import ratio
from arena.analytics.stats.bootstrap import family_bootstrap
from arena.analytics.stats.late_entry import late_risk, late_scope
from arena.analytics.stats.random_null import DEFAULT_NULL_SEEDS, null_percentiles
from arena.analytics.stats.risk import LEADERBOARD_RISK_COLUMNS, leaderboard_risk
from arena.config import METHODOLOGY_V2, METHODOLOGY_VERSION, V2_FROZEN_RULES
from arena.core import stats

DEFAULT_MIN_RESOLVED = 30

# What each protocol's rules rank on (`rule_key` of its protocol key; `leaderboard`'s rank,
# rank interval and P(rank #1), and `ranked`). v1: return on the capital given. v2 under the
# original's rules (`V2_SOURCE_RULES`): dollar P/L summed over cohorts, as the original's
# aggregate leaderboard orders it (`getAggregateLeaderboard`, ``ORDER BY total_pnl DESC``),
# return a column beside it; within one cohort every agent starts with the same capital, so
# the two orders agree, and over cohorts a family in more cohorts can rank higher on dollars.
# v2 cohorts stamped before the rule set was (`V2_FROZEN_RULES`) keep ranking by return
# (portfolio value per dollar of capital), and are never pooled with the others.
RANKED_BY: dict[str, str] = {
    METHODOLOGY_VERSION: "return_pct",
    METHODOLOGY_V2: "total_pnl",
    f"{METHODOLOGY_V2}{SEPARATOR}{V2_FROZEN_RULES}": "return_pct",
}


def ranked_on(key: str) -> str:
    """The column protocol key `key`'s rules rank on (`RANKED_BY`; unknown → KeyError)."""
    return RANKED_BY[rule_key(key)]


def portfolio_value(frame: pd.DataFrame) -> pd.Series:
    """A leaderboard frame's portfolio value per family: its capital plus its P/L (cash plus
    positions marked to market, summed over its cohorts)."""
    return frame["capital"] + frame["total_pnl"]


def ranked(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """`frame` (a `leaderboard` frame) in the order protocol key `key`'s rules rank it, best
    first (`ranked_on`): v1 by ``rank`` (return); v2 by summed P/L; v2 frozen-quotes by
    portfolio value per dollar of capital (its return); ties by family id. A pure reordering:
    no column changes (unknown version → KeyError)."""
    column = ranked_on(key)
    if key_version(key) == METHODOLOGY_VERSION:
        return frame.sort_values(["rank", "family_id"], kind="stable").reset_index(drop=True)
    objective = (
        frame["total_pnl"] if column == "total_pnl" else frame["total_pnl"] / frame["capital"]
    )
    order = frame.assign(_objective=objective.to_numpy()).sort_values(
        ["_objective", "family_id"], ascending=[False, True], kind="stable"
    )
    return order.drop(columns="_objective").reset_index(drop=True)


LEADERBOARD_CONTRACT_COLUMNS: tuple[str, ...] = (
    "family_id",
    "kind",
    "cohorts",
    "total_pnl",
    "return_pct",
    "return_ci_low",
    "return_ci_high",
    "brier",
    "brier_ci_low",
    "brier_ci_high",
    "resolved_bets",
    "p_rank_1",
)
LEADERBOARD_COLUMNS: tuple[str, ...] = (
    *LEADERBOARD_CONTRACT_COLUMNS,
    "display_name",
    "rank",
    "rank_low",
    "rank_high",
    "too_early",
    "capital",
    "pnl_ci_low",
    "pnl_ci_high",
    "resolved_only_return_pct",
    "mtm_return_pct",
    "unresolved_share",
    "win_rate",
    "win_rate_ci_low",
    "win_rate_ci_high",
    "market_brier",
    "market_brier_ci_low",
    "market_brier_ci_high",
    "skill_vs_market",
    "skill_vs_market_ci_low",
    "skill_vs_market_ci_high",
    "skill_bets",
    "bets",
    "against_favourite_share",
    "against_favourite_ci_low",
    "against_favourite_ci_high",
    "against_favourite_win_rate",
    "against_favourite_resolved",
    "random_null_percentile",
    "decisions",
    "fallback_holds",
    "api_cost_usd",
    "agent_replicates",
    "replicate_return_low",
    "replicate_return_high",
    *LEADERBOARD_RISK_COLUMNS,
    "p_rank_1_contenders",
)
# The kind that contends for rank #1: the model families. The baselines (cash, favourite,
# random, the oracle that sees the simulated world's hidden truth) are reference rows.
CONTENDER_KIND = "llm"
# Skill vs market read better-is-up: −(skill_vs_market), its interval flipped (`with_edge`).
EDGE_COLUMNS: tuple[str, ...] = (
    "edge_over_market",
    "edge_over_market_ci_low",
    "edge_over_market_ci_high",
)


def leaderboard(
    engine: Engine,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    min_resolved: int = DEFAULT_MIN_RESOLVED,
    null_seeds: int = DEFAULT_NULL_SEEDS,
    level: float = stats.CONFIDENCE,
    late_entry: bool = False,
) -> pd.DataFrame:
    """One row per family (across cohorts, or within cohort number `cohort`), best first.

    `late_entry`: rank the late entrants on the same cohorts instead (methodology §20): the
    cohorts of protocol `methodology` that have late entrants, their incumbents' agents and
    each late entrant as its own row (``family_id`` its entrant id ``late:<family>``), paired
    with the incumbents by its original cohort (`arena.analytics.stats.late_entry`).

    Baselines are included (``kind`` = ``baseline``). Intervals are `level` (95%) percentile
    intervals of a stratified cluster bootstrap (`replicates` draws from `seed`): clusters are
    Polymarket events (or lone markets) traded by any agent in scope, resampled within their
    cohort, jointly for all families. Unknown `cohort` → InputError. Columns:

    - ``family_id`` (str), ``display_name`` (str), ``kind`` (``llm`` | ``baseline``)
    - ``cohorts`` (int): cohorts the family has an agent in; ``capital`` (float): the sum of
      their starting balances ($10,000 × cohorts in v1)
    - ``total_pnl`` (float $): P/L SUMMED over cohorts (not averaged), each agent's from its
      latest portfolio snapshot (mark-to-market), else cash + open cost basis − start
    - ``return_pct`` (float %): total_pnl / capital × 100 (v1 §11.3 over the family's cohorts)
      with ``return_ci_low`` / ``return_ci_high``; ``pnl_ci_low`` / ``pnl_ci_high`` the same in $
      (each cohort's replicate P/L floored at −its capital: no agent can lose more than it had)
    - ``mtm_return_pct``: the same as return_pct (marked to market), shown beside
      ``resolved_only_return_pct``: realized P/L only (sold, settled, refunded; open positions
      at cost) / capital × 100; ``unresolved_share`` (0-1): share of the family's current value
      held in positions not yet resolved (latest snapshot positions value / total value)
    - ``brier`` (float, lower is better): v1 cumulative Brier = mean of all the family's Brier
      rows (pooled over cohorts), with ``brier_ci_low`` / ``brier_ci_high``; NaN before any
      resolution. ``resolved_bets`` (int): its Brier rows (BUYs in markets with a winner)
    - ``win_rate`` (0-1, + CI): share of resolved bets whose side won
    - ``market_brier`` (+ CI): Brier of the market's own price for the side bought (the BUY's
      execution price) on the same bets; ``skill_vs_market`` (+ CI) = family Brier − market
      Brier on those bets (negative: the family's implied confidence beat the market price);
      ``skill_bets``: the bets with a recorded market price
    - ``bets`` (int): BUY legs; ``against_favourite_share`` (0-1, + CI): share of them that
      backed an outcome other than the favourite of the universe shown (`against_favourite`);
      ``against_favourite_win_rate``: win rate of those that resolved
      (``against_favourite_resolved`` of them)
    - ``rank`` (int): competition rank by the scope's objective (`ranked_on`: return_pct;
      total_pnl for v2 under the original's rules), 1 = best, ties share; ``rank_low`` /
      ``rank_high``: 95% rank interval over the replicates; ``p_rank_1`` (0-1): share of
      replicates in which the family has the best objective (ties split), over every row,
      baselines included. ``p_rank_1_contenders`` (0-1): the same among the model families
      alone (kind ``llm``; NaN for a baseline, a reference row that never contends): what
      "P(rank #1)" means on the pages (`contender_p_rank_1`). The scope's rules are the chosen
      cohort's own, else `methodology`'s (`scope.scope_key`)
    - ``too_early`` (bool): resolved_bets < `min_resolved` — "too early to rank"; its numbers are
      still shown (greyed), never hidden
    - ``random_null_percentile`` (0-100): where return_pct falls among `null_seeds` random
      traders re-simulated on the same cohorts' universes (`database_random_null`), each one
      agent on one agent's capital per cohort (`null_percentiles`); NaN when `null_seeds` is
      0 or no decision run saw a universe
    - ``decisions`` (int, finished decisions), ``fallback_holds`` (int), ``api_cost_usd`` (float)
    - ``agent_replicates`` (int): the most agents the family fields in one cohort of the scope
      (1 in v1; N in a cohort started with ``ARENA_REPLICATES=N``). Replicates are pooled like
      cohorts: their P/L summed, their capital summed, their Brier rows pooled, so a family's
      return is the capital-weighted mean of its replicates' returns.
      ``replicate_return_low`` / ``replicate_return_high`` (%): the lowest and highest return of
      one replicate (replicate k's P/L over its capital, pooled over the scope's cohorts): the
      replicate spread; NaN with one agent per cohort
    - ``max_drawdown_pct`` (%, ≥ 0), ``sharpe``, ``sharpe_se`` (its Mertens standard error),
      ``sharpe_days`` (int): the risk of the family's combined book over the same cohorts and
      replicates (`arena.analytics.stats.risk.leaderboard_risk`: daily end-of-day values,
      annualised with √365, r_f = 0, paper); NaN without two daily returns
    """
    fb = family_bootstrap(
        engine,
        cohort=cohort,
        replicates=replicates,
        seed=seed,
        methodology=methodology,
        late_entry=late_entry,
    )
    if not fb.families:
        return pd.DataFrame(columns=list(LEADERBOARD_COLUMNS))
    head, families, s, boot, names = fb.head, fb.families, fb.sums, fb.boot, fb.names
    capital = head["capital"].to_numpy()
    pnl_reps = fb.pnl_replicates()
    return_reps = pnl_reps / capital * 100.0
    return_pct = head["pnl"].to_numpy() / capital * 100.0
    with engine.connect() as conn:
        by_pnl = ranked_on(scope_key(conn, cohort, methodology)) == "total_pnl"
    # The scope's objective: its rank, rank interval and P(rank #1) follow it.
    objective, objective_reps = (
        (head["pnl"].to_numpy(), pnl_reps) if by_pnl else (return_pct, return_reps)
    )

    brier_reps = boot.ratio(s["brier_sum"], s["brier_n"])
    win_reps = boot.ratio(s["wins"], s["brier_n"])
    market_reps = boot.ratio(s["skill_market_sum"], s["skill_n"])
    skill_reps = boot.ratio(s["skill_family_sum"] - s["skill_market_sum"], s["skill_n"])
    against_reps = boot.ratio(s["against"], s["buys"])
    ranks = stats.competition_ranks(objective_reps)
    rank_low, rank_high = stats.rank_interval(ranks, level)

    totals = {name: matrix.sum(axis=0) for name, matrix in s.items()}
    frame = pd.DataFrame(
        {
            "family_id": families,
            "kind": [names.get(f, (f, "llm"))[1] for f in families],
            "cohorts": head["cohorts"].astype("int64").to_numpy(),
            "total_pnl": head["pnl"].to_numpy(),
            "return_pct": return_pct,
            "brier": ratio(totals["brier_sum"], totals["brier_n"]),
            "resolved_bets": totals["brier_n"].astype("int64"),
            "p_rank_1": stats.p_rank_first(objective_reps),
            "display_name": [names.get(f, (f, "llm"))[0] for f in families],
            "rank": stats.competition_ranks(objective),
            "rank_low": rank_low,
            "rank_high": rank_high,
            "capital": capital,
            "resolved_only_return_pct": head["realized"].to_numpy() / capital * 100.0,
            "mtm_return_pct": return_pct,
            "unresolved_share": ratio(
                head["unresolved_value"].to_numpy(), head["total_value"].to_numpy()
            ),
            "win_rate": ratio(totals["wins"], totals["brier_n"]),
            "market_brier": ratio(totals["skill_market_sum"], totals["skill_n"]),
            "skill_vs_market": ratio(
                totals["skill_family_sum"] - totals["skill_market_sum"], totals["skill_n"]
            ),
            "skill_bets": totals["skill_n"].astype("int64"),
            "bets": totals["buys"].astype("int64"),
            "against_favourite_share": ratio(totals["against"], totals["buys"]),
            "against_favourite_win_rate": ratio(totals["against_won"], totals["against_resolved"]),
            "against_favourite_resolved": totals["against_resolved"].astype("int64"),
        }
    )
    for prefix, reps in (
        ("return", return_reps),
        ("pnl", pnl_reps),
        ("brier", brier_reps),
        ("win_rate", win_reps),
        ("market_brier", market_reps),
        ("skill_vs_market", skill_reps),
        ("against_favourite", against_reps),
    ):
        frame[f"{prefix}_ci_low"], frame[f"{prefix}_ci_high"] = stats.percentile_interval(
            reps, level
        )
    frame["too_early"] = frame["resolved_bets"] < min_resolved
    frame["random_null_percentile"] = null_percentiles(
        engine, cohort, fb.data.agents, head, null_seeds, methodology
    )
    counts = fb.data.decisions.set_index("family_id") if len(fb.data.decisions) else None
    for column, dtype in (
        ("decisions", "int64"),
        ("fallback_holds", "int64"),
        ("api_cost_usd", "float64"),
    ):
        values = counts[column].reindex(families).fillna(0).to_numpy() if counts is not None else 0
        frame[column] = pd.Series(values, index=frame.index).astype(dtype)
    spread = replicate_spread(fb.books).reindex(families)
    frame["agent_replicates"] = spread["agent_replicates"].fillna(1).astype("int64").to_numpy()
    frame["replicate_return_low"] = spread["low"].to_numpy()
    frame["replicate_return_high"] = spread["high"].to_numpy()
    risk = _risk(engine, cohort, methodology, late_entry).reindex(families)
    for column in LEADERBOARD_RISK_COLUMNS:
        frame[column] = risk[column].to_numpy()
    frame["sharpe_days"] = frame["sharpe_days"].fillna(0).astype("int64")
    frame["p_rank_1_contenders"] = contender_p_rank_1(
        objective_reps, frame["kind"].to_numpy() == CONTENDER_KIND
    )
    frame = frame.sort_values(["rank", "family_id"], kind="stable").reset_index(drop=True)
    return frame[list(LEADERBOARD_COLUMNS)]


def contender_p_rank_1(objective_reps: np.ndarray, contenders: np.ndarray) -> np.ndarray:
    """Per family, the share of replicates in which it has the best objective among the
    `contenders` alone (ties split); NaN for the others. Why: the oracle, a reference row that
    sees hidden truth, would otherwise take nearly every replicate's first place."""
    shares = np.full(len(contenders), np.nan)
    if contenders.any() and objective_reps.shape[0]:
        shares[contenders] = stats.p_rank_first(objective_reps[:, contenders])
    return shares


def with_edge(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (a leaderboard frame) with `EDGE_COLUMNS` added last: the edge over the market,
    −(skill_vs_market), so that up is better (positive: its implied confidence beat the
    market price's Brier on the same bets), its interval's bounds swapped and negated; and
    ``p_rank_1_contenders`` as NaN where a frame stored before it has none (the hourly job
    recomputes such frames). The frame itself is left unchanged."""
    out = frame.copy()
    if "p_rank_1_contenders" not in out:
        out["p_rank_1_contenders"] = np.nan
    return with_edge_over_market(out)


def with_edge_over_market(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (any frame with ``skill_vs_market`` and its interval: the leaderboard's, the
    calibration summary) with the edge over the market added last, −(skill_vs_market), up is
    better, its interval's bounds swapped and negated. The frame itself is left unchanged."""
    out = frame.copy()
    out["edge_over_market"] = -out["skill_vs_market"].astype("float64")
    out["edge_over_market_ci_low"] = -out["skill_vs_market_ci_high"].astype("float64")
    out["edge_over_market_ci_high"] = -out["skill_vs_market_ci_low"].astype("float64")
    return out


def _risk(engine: Engine, cohort: int | None, methodology: str, late_entry: bool) -> pd.DataFrame:
    """The risk columns per family: the live scope's, or the late-entry scope's."""
    if not late_entry:
        return leaderboard_risk(engine, cohort=cohort, methodology=methodology)
    with engine.connect() as conn:
        scope = late_scope(conn, methodology, cohort)
    return late_risk(engine, scope)


def replicate_spread(books: pd.DataFrame) -> pd.DataFrame:
    """Per family: its most agents in one cohort, and the lowest / highest return (%) of one
    replicate (replicate k pooled over the cohorts: P/L summed over capital summed); NaN where
    the family fields one agent per cohort. `books`: per agent family, cohort, replicate,
    capital and P/L (`FamilyBootstrap.books`)."""
    columns = ["agent_replicates", "low", "high"]
    if books.empty:
        return pd.DataFrame(columns=columns, index=pd.Index([], name="family_id"))
    per_cohort = books.groupby(["family_id", "cohort_id"]).size().groupby("family_id").max()
    runs = books.groupby(["family_id", "replicate"])[["pnl", "capital"]].sum()
    returns = (runs["pnl"] / runs["capital"] * 100.0).groupby("family_id")
    frame = pd.DataFrame(
        {"agent_replicates": per_cohort, "low": returns.min(), "high": returns.max()}
    )
    single = frame["agent_replicates"] <= 1
    frame.loc[single, ["low", "high"]] = np.nan
    return frame[columns]


# --------------------------------------------------------------------------------------------
# Presentation for the CLI (`arena leaderboard`)


def csv_columns(frame: pd.DataFrame) -> list[str]:
    """The contract's columns first (contract §6), then every other column in order."""
    first = [c for c in LEADERBOARD_CONTRACT_COLUMNS if c in frame.columns]
    return first + [c for c in frame.columns if c not in first]


def _csv_cell(value: Any) -> Any:
    from arena.core.csvsafe import cell

    if isinstance(value, float | np.floating):
        return "" if np.isnan(value) else f"{float(value):.6f}"
    if isinstance(value, np.bool_):
        value = bool(value)
    if isinstance(value, np.integer):
        value = int(value)
    return cell(value)


def write_leaderboard_csv(frame: pd.DataFrame, handle: Any) -> None:
    """The leaderboard as CSV: a header row, contract columns first; floats with 6 decimals,
    NaN as an empty cell, booleans as true/false, text cells formula-safe."""
    import csv

    columns = csv_columns(frame)
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(columns)
    for row in frame[columns].itertuples(index=False, name=None):
        writer.writerow([_csv_cell(v) for v in row])


def _interval(value: float, low: float, high: float, fmt: str) -> str:
    if np.isnan(value):
        return "—"
    if np.isnan(low) or np.isnan(high):
        return format(value, fmt)
    return f"{format(value, fmt)} [{format(low, fmt)}, {format(high, fmt)}]"


def sharpe_text(sharpe: float, se: float) -> str:
    """A Sharpe ratio with its standard error, "0.42 ± 0.18" ("—" without one)."""
    if np.isnan(sharpe):
        return "—"
    return f"{sharpe:.2f}" if np.isnan(se) else f"{sharpe:.2f} ± {se:.2f}"


def leaderboard_table(frame: pd.DataFrame, title: str = "Leaderboard") -> Any:
    """A rich Table of the leaderboard: intervals as "x [lo, hi]" (95%), baselines in
    italics, families with too few resolved bets greyed and marked "too early to rank"."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=title,
        caption=(
            "95% intervals: cluster bootstrap over events within cohorts; paper returns. "
            "P(#1): among the model families (baselines are reference rows: ref). Edge vs "
            "market: market Brier − family Brier, up is better. Max DD: largest fall from a "
            "peak of the family's daily book; Sharpe: annualised "
            "daily Sharpe ± its standard error (Mertens), r_f = 0"
        ),
        box=box.SIMPLE_HEAD,
    )
    for name, justify in (
        ("#", "right"),
        ("family", "left"),
        ("kind", "left"),
        ("cohorts", "right"),
        ("P/L $", "right"),
        ("return %", "right"),
        ("Brier", "right"),
        ("bets", "right"),
        ("P(#1)", "right"),
        ("rank CI", "right"),
        ("edge vs market ↑", "right"),
        ("win rate", "right"),
        ("null pct", "right"),
        ("max DD %", "right"),
        ("Sharpe", "right"),
        ("note", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for row in with_edge(frame).itertuples(index=False):
        style = "dim" if row.too_early else ("italic" if row.kind == "baseline" else None)
        table.add_row(
            str(row.rank),
            str(row.family_id),
            str(row.kind),
            str(row.cohorts),
            _interval(row.total_pnl, row.pnl_ci_low, row.pnl_ci_high, ",.0f"),
            _interval(row.return_pct, row.return_ci_low, row.return_ci_high, ".2f"),
            _interval(row.brier, row.brier_ci_low, row.brier_ci_high, ".3f"),
            str(row.resolved_bets),
            "ref" if row.kind != CONTENDER_KIND else _share(row.p_rank_1_contenders),
            f"{row.rank_low}–{row.rank_high}",
            _interval(
                row.edge_over_market,
                row.edge_over_market_ci_low,
                row.edge_over_market_ci_high,
                "+.3f",
            ),
            "—" if np.isnan(row.win_rate) else f"{row.win_rate:.0%}",
            "—" if np.isnan(row.random_null_percentile) else f"{row.random_null_percentile:.0f}",
            "—" if np.isnan(row.max_drawdown_pct) else f"{row.max_drawdown_pct:.1f}",
            sharpe_text(row.sharpe, row.sharpe_se),
            _note(row),
            style=style,
        )
    return table


def _share(value: float) -> str:
    return "—" if np.isnan(value) else f"{value:.3f}"


def _note(row: Any) -> str:
    """The table's note: too early to rank; the rank not robust to the execution rule (the
    `execution_not_robust` column, when the caller merged it: `views.execution.with_flags`)."""
    notes = ["too early to rank"] if row.too_early else []
    if getattr(row, "execution_not_robust", None) is True:
        notes.append("rank not robust to execution")
    return "; ".join(notes)
