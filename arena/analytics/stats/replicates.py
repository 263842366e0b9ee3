"""Replicates: how much of what separates agents is the luck of one run.

Why its own read model: a cohort started with `ARENA_REPLICATES=N` (N > 1; its stamp holds
``"replicates": N``) fields N independent agents per family, same prompt, own portfolios. The
leaderboard pools them (one row per family); this view asks how far a family's replicates
differ from one another, against how far families differ, and whether the leaderboard's
order would survive picking a different replicate. Only cohorts stamped with replicates > 1
are in scope: a v1 cohort never enters.

One database read at the edge (`replicate_agents`: per agent its P/L and Brier); everything
else is a pure function of that frame, so the hand-computed tests call it on a few rows.

Definitions (x = an agent's return %, its P/L over its capital; "cell" = one family in one
cohort, its n replicates):

- *Pooled* return % of a family: Σ P/L / Σ capital over its agents in scope (the leaderboard's
  rule); pooled Brier: the mean over all of its agents' Brier rows.
- *Within-family spread* (`family_spread`): the pooled standard deviation across replicates,
  computed within each cohort and pooled over cohorts, √(Σ_cells Σ (x − x̄_cell)² /
  Σ_cells (n − 1)): the root of the mean within-cohort variance when every cohort has the
  same N (weighted by degrees of freedom otherwise); and the range, max − min within a cell,
  averaged over the family's cohorts. Replicates are never matched across cohorts (r1 of one
  cohort and r1 of the next are unrelated draws). The same for Brier, with x = an agent's
  mean Brier (agents without a resolved bet left out). Deterministic baselines have
  identical replicates: spread 0, which is the correct figure, not a missing one.
- *Between-family gap*: a family's pooled return minus the next family's down the pooled
  ranking, in percentage points (the last family has none); for Brier, the next worse family's
  pooled Brier minus its own. Spread beside gap says whether replicate noise could reorder
  neighbours.
- *Noise share* and *rank stability*: `arena.analytics.stats.replicate_figures` (pure
  functions of the rows read here) has their definitions.
"""

import functools
import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.query.frames import FLOAT, INT, MONEY, TEXT, query_frame
from arena.analytics.query.scope import cohort_id_of
from arena.analytics.query.selects import agent_book, agent_pnl, ratio
from arena.analytics.stats.replicate_figures import MAX_PICKS, noise_share, rank_stability
from arena.config import stamped_replicates
from arena.core import stats
from arena.storage.db import consistent_read
from arena.storage.tables import AGENTS, COHORTS, FAMILIES

# One row per agent of a replicated cohort in scope (`replicate_agents`).
AGENT_KINDS: dict[str, str] = {
    "agent_id": INT,
    "cohort_number": INT,
    "family_id": TEXT,
    "display_name": TEXT,
    "kind": TEXT,
    "replicate": INT,
    "capital": MONEY,
    "pnl": MONEY,
    "return_pct": FLOAT,
    "brier": FLOAT,
    "resolved_bets": INT,
}
AGENT_COLUMNS: tuple[str, ...] = tuple(AGENT_KINDS)

# One row per family, best pooled return first (`ReplicateFigures.families`).
FAMILY_COLUMNS: tuple[str, ...] = (
    "family_id",
    "display_name",
    "kind",
    "cohorts",
    "agents",
    "replicates",
    "capital",
    "pnl",
    "pooled_return_pct",
    "return_sd",
    "return_range",
    "return_min",
    "return_max",
    "return_gap",
    "pooled_brier",
    "brier_sd",
    "brier_range",
    "brier_gap",
    "resolved_bets",
    "pooled_rank",
    "keeps_rank",
    "rank_best",
    "rank_worst",
)

# One row for the scope (`ReplicateFigures.summary`).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "scope_cohorts",
    "scope_families",
    "scope_agents",
    "noise_share",
    "noise_share_ci_low",
    "noise_share_ci_high",
    "llm_noise_share",
    "llm_noise_share_ci_low",
    "llm_noise_share_ci_high",
    "possible_picks",
    "picks",
    "enumerated",
    "full_agreement",
    "pairwise_agreement",
)

FIGURES_COLUMNS: tuple[str, ...] = (*FAMILY_COLUMNS, *SUMMARY_COLUMNS)


# --------------------------------------------------------------------------------------------
# The read


def _replicated(conn: Connection) -> list[tuple[int, int]]:
    """(id, number) of the cohorts stamped with more than one agent per family, oldest first."""
    rows = conn.execute(
        select(COHORTS.c.id, COHORTS.c.number, COHORTS.c.constants).order_by(COHORTS.c.number)
    )
    return [(int(cid), int(n)) for cid, n, constants in rows if stamped_replicates(constants) > 1]


def replicated_cohorts(engine: Engine) -> list[int]:
    """The numbers of the cohorts stamped with more than one agent per family, oldest first."""
    with engine.connect() as conn:
        return [number for _, number in _replicated(conn)]


def replicate_agents(engine: Engine, *, cohort: int | None = None) -> pd.DataFrame:
    """Every agent of the replicated cohorts in scope (all, or cohort number `cohort`; a v1
    cohort gives no rows; an unknown one → InputError), in one consistent read.

    Columns (`AGENT_COLUMNS`): ``agent_id``, ``cohort_number``, ``family_id``,
    ``display_name`` (the family's, without the replicate label), ``kind`` (llm | baseline),
    ``replicate`` (1…N), ``capital`` (starting balance, $), ``pnl`` ($: the latest portfolio
    snapshot's total P/L, else cash + open positions at cost − capital, as the leaderboard),
    ``return_pct`` (pnl / capital × 100), ``brier`` (mean of its Brier rows, NaN before one)
    and ``resolved_bets`` (its Brier rows). Ordered by cohort, family id, replicate.
    """
    with consistent_read(engine) as conn:
        cohort_id = cohort_id_of(conn, cohort)
        ids = [cid for cid, _ in _replicated(conn) if cohort_id is None or cid == cohort_id]
        if not ids:
            return pd.DataFrame({c: pd.Series(dtype=_dtype(k)) for c, k in AGENT_KINDS.items()})
        scope = select(AGENTS.c.id).where(AGENTS.c.cohort_id.in_(ids))
        book = agent_book(scope)
        query = (
            select(
                AGENTS.c.id.label("agent_id"),
                COHORTS.c.number.label("cohort_number"),
                AGENTS.c.family_id,
                func.coalesce(FAMILIES.c.display_name, AGENTS.c.family_id).label("display_name"),
                func.coalesce(FAMILIES.c.kind, "llm").label("kind"),
                AGENTS.c.replicate,
                book.c.capital,
                book.c.cash,
                book.c.open_cost,
                book.c.total_pnl,
                book.c.brier_sum,
                book.c.resolved_bets,
            )
            .select_from(AGENTS)
            .join(COHORTS, COHORTS.c.id == AGENTS.c.cohort_id)
            .outerjoin(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
            .join(book, book.c.agent_id == AGENTS.c.id)
        )
        kinds = {
            **{c: k for c, k in AGENT_KINDS.items() if c not in ("pnl", "return_pct", "brier")},
            "cash": MONEY,
            "open_cost": MONEY,
            "total_pnl": MONEY,
            "brier_sum": FLOAT,
        }
        rows = query_frame(conn, query, kinds)
    # query_frame reads money as float64 already (NaN for NULL): no per-value conversion.
    capital = rows["capital"].to_numpy(dtype=np.float64)
    rows["pnl"] = agent_pnl(
        capital,
        rows["cash"].to_numpy(dtype=np.float64),
        rows["open_cost"].to_numpy(dtype=np.float64),
        rows["total_pnl"].to_numpy(dtype=np.float64),
    )
    rows["return_pct"] = ratio(rows["pnl"].to_numpy(), capital) * 100.0
    bets = rows["resolved_bets"].to_numpy()
    rows["brier"] = ratio(rows["brier_sum"].fillna(0.0).to_numpy(), bets.astype(np.float64))
    order = rows.sort_values(["cohort_number", "family_id", "replicate"], kind="stable")
    return order[list(AGENT_COLUMNS)].reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Pure figures


@dataclass(frozen=True)
class ReplicateFigures:
    """Everything the Replicates page shows: per agent, per family, and the scope's summary."""

    agents: pd.DataFrame  # `AGENT_COLUMNS`
    families: pd.DataFrame  # `FAMILY_COLUMNS`
    summary: pd.DataFrame  # `SUMMARY_COLUMNS`, one row


def family_spread(agents: pd.DataFrame) -> pd.DataFrame:
    """Per family (`replicate_agents` rows): pooled return and Brier, the within-family spread
    of each (pooled SD and mean within-cohort range) and the gap to the next family. Columns
    ``family_id``, ``display_name``, ``kind``, ``cohorts``, ``agents``, ``replicates`` (agents
    per cohort: their mean, N when every cohort has N), ``capital``, ``pnl``,
    ``pooled_return_pct``, ``return_sd`` and ``return_range`` (pp; NaN without a cohort of two
    replicates), ``return_min`` / ``return_max`` (its lowest and highest agent's return, %),
    ``return_gap`` (pp to the next family down; NaN for the last), ``pooled_brier``,
    ``brier_sd``, ``brier_range``, ``brier_gap`` (to the next worse family), ``resolved_bets``;
    best pooled return first (ties by display name)."""
    frame = agents.assign(
        brier_sum=agents["brier"].fillna(0.0) * agents["resolved_bets"],
        brier_n=agents["resolved_bets"],
    )
    grouped = frame.groupby("family_id", sort=True)
    out = grouped.agg(
        display_name=("display_name", "first"),
        kind=("kind", "first"),
        cohorts=("cohort_number", "nunique"),
        agents=("agent_id", "size"),
        capital=("capital", "sum"),
        pnl=("pnl", "sum"),
        return_min=("return_pct", "min"),
        return_max=("return_pct", "max"),
        brier_sum=("brier_sum", "sum"),
        resolved_bets=("brier_n", "sum"),
    )
    out["replicates"] = out["agents"] / out["cohorts"]
    out["pooled_return_pct"] = ratio(out["pnl"].to_numpy(), out["capital"].to_numpy()) * 100.0
    out["pooled_brier"] = ratio(
        out["brier_sum"].to_numpy(), out["resolved_bets"].to_numpy(dtype=np.float64)
    )
    for name, column in (("return", "return_pct"), ("brier", "brier")):
        sd, width = _within_spread(agents, column)
        out[f"{name}_sd"] = sd.reindex(out.index)
        out[f"{name}_range"] = width.reindex(out.index)
    out = out.reset_index()
    out = out.sort_values(
        ["pooled_return_pct", "display_name", "family_id"],
        ascending=[False, True, True],
        kind="stable",
    ).reset_index(drop=True)
    pooled = out["pooled_return_pct"].to_numpy()
    out["return_gap"] = np.append(pooled[:-1] - pooled[1:], np.nan) if len(out) else []
    out["brier_gap"] = _next_worse_gap(out["pooled_brier"].to_numpy())
    return out


def replicate_figures(
    agents: pd.DataFrame,
    *,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
    max_picks: int = MAX_PICKS,
) -> ReplicateFigures:
    """Every figure of the Replicates page from `replicate_agents` rows (pure)."""
    spread = family_spread(agents)
    noise = noise_share(agents, replicates=replicates, seed=seed, level=level)
    llms = agents[agents["kind"] != "baseline"]
    llm_noise = noise_share(llms, replicates=replicates, seed=seed, level=level)
    stability = rank_stability(agents, max_picks=max_picks, seed=seed)
    families = spread.merge(stability.families, on="family_id", how="left")
    summary = pd.DataFrame(
        {
            "scope_cohorts": [int(agents["cohort_number"].nunique())],
            "scope_families": [int(agents["family_id"].nunique())],
            "scope_agents": [len(agents)],
            "noise_share": [noise.share],
            "noise_share_ci_low": [noise.low],
            "noise_share_ci_high": [noise.high],
            "llm_noise_share": [llm_noise.share],
            "llm_noise_share_ci_low": [llm_noise.low],
            "llm_noise_share_ci_high": [llm_noise.high],
            "possible_picks": [stability.possible],
            "picks": [stability.picks],
            "enumerated": [stability.enumerated],
            "full_agreement": [stability.full_agreement],
            "pairwise_agreement": [stability.pairwise_agreement],
        }
    )
    return ReplicateFigures(
        agents.reset_index(drop=True), _typed_families(families), summary[list(SUMMARY_COLUMNS)]
    )


def replicate_analysis(
    engine: Engine,
    *,
    cohort: int | None = None,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
) -> pd.DataFrame:
    """The per-family figures and the scope's summary of the replicated cohorts in scope (all,
    or cohort number `cohort`; a v1 cohort gives an empty frame) as one frame: one row per
    family (`FAMILY_COLUMNS`), the summary's `SUMMARY_COLUMNS` repeated on every row
    (`split_figures` takes them apart). Stored by the hourly `analyses` job
    (`arena.analytics.stored`), beside `replicate_agents`: the bootstrap and the 20,000 picks
    take most of a second at eight cohorts and grow with every cohort."""
    agents = replicate_agents(engine, cohort=cohort)
    if agents.empty:  # every v1 deployment, every hour: the figures of no agents, made once
        return _no_figures(replicates, seed).copy()
    return joined_figures(replicate_figures(agents, replicates=replicates, seed=seed))


@functools.cache
def _no_figures(replicates: int, seed: int) -> pd.DataFrame:
    """`replicate_analysis` of a scope without replicated agents: an empty frame of the right
    columns and dtypes (pandas' empty group-bys and merges cost ~0.2 s a scope)."""
    empty = pd.DataFrame({c: pd.Series(dtype=_dtype(k)) for c, k in AGENT_KINDS.items()})
    return joined_figures(replicate_figures(empty, replicates=replicates, seed=seed))


def joined_figures(figures: ReplicateFigures) -> pd.DataFrame:
    """`figures.families` with the summary's columns on every row (`FIGURES_COLUMNS`)."""
    families = figures.families.reset_index(drop=True)
    summary = figures.summary.iloc[[0] * len(families)].reset_index(drop=True)
    return pd.concat([families, summary], axis=1)[list(FIGURES_COLUMNS)]


def split_figures(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series | None]:
    """A `replicate_analysis` frame as (per-family rows, the summary; None when empty)."""
    families = frame[list(FAMILY_COLUMNS)].reset_index(drop=True)
    summary = None if frame.empty else frame.iloc[0][list(SUMMARY_COLUMNS)]
    return families, summary


# --------------------------------------------------------------------------------------------
# Helpers


def _dtype(kind: str) -> str:
    return {INT: "int64", TEXT: "string"}.get(kind, "float64")


def _within_spread(agents: pd.DataFrame, column: str) -> tuple[pd.Series, pd.Series]:
    """Per family: the pooled within-cohort SD of `column` across replicates, and the mean
    within-cohort range (max − min), over the cohorts where it has two values or more."""
    known = agents.loc[agents[column].notna(), ["family_id", "cohort_number", column]]
    keys = [known["family_id"], known["cohort_number"]]
    deviations = (known[column] - known.groupby(keys)[column].transform("mean")) ** 2
    cells = known.groupby(keys)[column]
    per_cell = pd.DataFrame(
        {
            "ss": deviations.groupby(keys).sum(),
            "df": cells.size() - 1,
            "width": cells.max() - cells.min(),
        }
    )
    # Identical replicates have no spread at all, not a rounding error's worth of one.
    per_cell.loc[per_cell["width"] == 0, "ss"] = 0.0
    per_cell = per_cell[per_cell["df"] > 0]
    per_family = per_cell.groupby(level=0)
    sd = np.sqrt(per_family["ss"].sum() / per_family["df"].sum())
    return sd, per_family["width"].mean()


def _next_worse_gap(briers: np.ndarray) -> np.ndarray:
    """Per family, the next worse (higher) pooled Brier minus its own; NaN for the worst and
    for a family without Brier."""
    gaps = np.full(len(briers), np.nan)
    known = np.flatnonzero(~np.isnan(briers))
    order = known[np.argsort(briers[known], kind="stable")]
    for here, below in itertools.pairwise(order):
        gaps[here] = briers[below] - briers[here]
    return gaps


def _typed_families(frame: pd.DataFrame) -> pd.DataFrame:
    """`FAMILY_COLUMNS` with stable dtypes (an empty frame too)."""
    dtypes: Mapping[str, str] = {
        **dict.fromkeys(FAMILY_COLUMNS, "float64"),
        **dict.fromkeys(("family_id", "display_name", "kind"), "string"),
        **dict.fromkeys(("cohorts", "agents", "resolved_bets"), "int64"),
    }
    if frame.empty:
        return pd.DataFrame({c: pd.Series(dtype=dtypes[c]) for c in FAMILY_COLUMNS})
    return frame[list(FAMILY_COLUMNS)].astype(dict(dtypes)).reset_index(drop=True)


__all__ = [
    "AGENT_COLUMNS",
    "FAMILY_COLUMNS",
    "FIGURES_COLUMNS",
    "SUMMARY_COLUMNS",
    "ReplicateFigures",
    "family_spread",
    "joined_figures",
    "replicate_agents",
    "replicate_analysis",
    "replicate_figures",
    "replicated_cohorts",
    "split_figures",
]
