"""Stated probability beside each bet: the protocol extension `stated_probability`'s view.

Why its own read model: v1 reads a bet's *size* as its confidence; a cohort stamped with this
extension also asked each BET leg for the model's *stated* probability that its side wins
(stored on the BUY trade, `trades.probability`). These figures compare what a model says with
what it does and with the market, on the same bets, per family. Only cohorts stamped with the
extension are in scope (a v1 cohort's bets never enter), and nothing here changes a v1 number.

Per bet (one BUY trade; p = stated probability, q = execution price of the side bought,
y = 1 if that side won, s = stake, C = cash just before the leg, cap = the cohort's stamped
max_bet_fraction; definitions in methodology §18, "Protocol extensions"):

- forecast quality, on resolved bets with a stated p: Brier (p − y)² beside v1's implied
  confidence Brier (the bet's own Brier row) and the market's (q − y)² on the same bets;
- consistency, on bets with a stated p: the side agrees with the stated p when p > q (buying
  it is worth it at that price); the edge p − q;
- Kelly, on bets with a stated p > q: the Kelly stake k = min(f*, cap)·C with
  f* = (p − q)/(1 − q) (`arena.core.kelly`); stake efficiency Σs / Σk (1 = Kelly, below:
  under-bet); on resolved bets, the realised log-growth ln(1 + (s/C)(y/q − 1)) beside the
  Kelly counterfactual's ln(1 + (k/C)(y/q − 1)), each bet on its own bankroll C;
- skill when deviating, on resolved bets with |p − q| > `DEVIATION` (0.1): Brier of p minus
  Brier of q (negative: the model beat the market where it disagreed with it).

Every figure is a ratio of sums over bets, so its 95% interval comes from the leaderboard's
cluster bootstrap (`arena.core.stats.ClusterBootstrap`): Polymarket events (`cluster_label`)
resampled within their cohort, jointly for all families, 2,000 seeded replicates.
"""

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.query.scope import cohort_id_of
from arena.analytics.query.selects import ratio
from arena.analytics.stats.leaderboard_inputs import cluster_label, float_values
from arena.config import STATED_PROBABILITY, Methodology, stamped_extensions
from arena.core import stats
from arena.core.kelly import kelly_fraction, log_growth
from arena.storage.db import consistent_read
from arena.storage.tables import AGENTS, COHORTS, FAMILIES, MARKETS, TRADES
from arena.storage.tables import BRIER_SCORES as BRIERS

DEVIATION = 0.1  # |p − q| above which a stated probability "deviates" from the market

# One row per BUY trade of an extended cohort in scope (`stated_bets`).
BET_COLUMNS: tuple[str, ...] = (
    "trade_id",
    "family_id",
    "cohort_id",
    "cluster",
    "amount",
    "price",
    "cash_before",
    "cap",
    "probability",
    "outcome",
    "implied_brier",
)

# Per bet, the terms summed per cluster × family (`bet_terms`).
TERMS: tuple[str, ...] = (
    "bets",
    "stated",
    "resolved",
    "stated_sq",
    "implied_sq",
    "market_sq",
    "consistent",
    "edge",
    "kelly_bets",
    "kelly_amount",
    "kelly_stake",
    "growth",
    "kelly_growth",
    "deviating",
    "deviating_stated_sq",
    "deviating_market_sq",
)

# (figure, numerator, denominator): each figure and its interval is Σ numerator / Σ denominator.
FIGURES: tuple[tuple[str, str | tuple[str, str], str], ...] = (
    ("stated_brier", "stated_sq", "resolved"),
    ("implied_brier", "implied_sq", "resolved"),
    ("brier_gap", ("stated_sq", "implied_sq"), "resolved"),
    ("market_brier", "market_sq", "resolved"),
    ("skill_vs_market", ("stated_sq", "market_sq"), "resolved"),
    ("consistent_share", "consistent", "stated"),
    ("mean_edge", "edge", "stated"),
    ("stake_efficiency", "kelly_amount", "kelly_stake"),
    ("log_growth", "growth", "resolved"),
    ("kelly_log_growth", "kelly_growth", "resolved"),
    ("growth_gap", ("growth", "kelly_growth"), "resolved"),
    ("deviating_brier", "deviating_stated_sq", "deviating"),
    ("deviating_market_brier", "deviating_market_sq", "deviating"),
    ("deviating_skill", ("deviating_stated_sq", "deviating_market_sq"), "deviating"),
)

_COUNTS = (  # per family: the bets each figure rests on
    "cohorts",
    "bets",
    "stated_bets",
    "missing_bets",
    "resolved_bets",
    "kelly_bets",
    "deviating_bets",
)
STATED_COLUMNS: tuple[str, ...] = (
    "family_id",
    "display_name",
    "kind",
    *_COUNTS,
    *(
        column
        for figure, _, _ in FIGURES
        for column in (figure, f"{figure}_ci_low", f"{figure}_ci_high")
    ),
)


def extended_cohorts(engine: Engine) -> list[int]:
    """The numbers of the cohorts stamped with `stated_probability`, oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(COHORTS.c.number, COHORTS.c.constants).order_by(COHORTS.c.number)
        )
        return [
            int(number)
            for number, constants in rows
            if STATED_PROBABILITY in stamped_extensions(constants)
        ]


def stated_bets(engine: Engine, *, cohort: int | None = None) -> pd.DataFrame:
    """Every BUY trade of the extended cohorts in scope, with what the figures need.

    Columns (`BET_COLUMNS`): ``trade_id``, ``family_id``, ``cohort_id``, ``cluster`` (its
    Polymarket event, else the market: `cluster_label`), ``amount`` (s, $), ``price`` (q),
    ``cash_before`` (C, $), ``cap`` (the cohort's stamped max_bet_fraction), ``probability``
    (p; NaN when the model stated none), ``outcome`` (y: 1 won, 0 lost, NaN until its market
    resolves with a winner), ``implied_brier`` (v1's Brier row of the bet, NaN until then).
    Unknown `cohort` → InputError; a v1 cohort gives no rows.
    """
    with consistent_read(engine) as conn:
        cohort_id = cohort_id_of(conn, cohort)
        caps: dict[int, float] = {}
        for cid, constants in conn.execute(select(COHORTS.c.id, COHORTS.c.constants)):
            if STATED_PROBABILITY in stamped_extensions(constants):
                default = Methodology().max_bet_fraction
                caps[int(cid)] = float((constants or {}).get("max_bet_fraction", default))
        ids = [cid for cid in caps if cohort_id is None or cid == cohort_id]
        query = (
            select(
                TRADES.c.id.label("trade_id"),
                AGENTS.c.family_id,
                AGENTS.c.cohort_id,
                TRADES.c.market_id,
                MARKETS.c.event_id,
                TRADES.c.amount,
                TRADES.c.price,
                TRADES.c.cash_before,
                TRADES.c.probability,
                BRIERS.c.actual_outcome,
                BRIERS.c.brier_score,
            )
            .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
            .join(MARKETS, MARKETS.c.id == TRADES.c.market_id)
            .outerjoin(BRIERS, BRIERS.c.trade_id == TRADES.c.id)
            .where(TRADES.c.trade_type == "BUY", AGENTS.c.cohort_id.in_(ids))
            .order_by(TRADES.c.id)
        )
        rows = conn.execute(query).all() if ids else []
    frame = pd.DataFrame(
        rows,
        columns=[
            "trade_id",
            "family_id",
            "cohort_id",
            "market_id",
            "event_id",
            "amount",
            "price",
            "cash_before",
            "probability",
            "outcome",
            "implied_brier",
        ],
    )
    out = pd.DataFrame(
        {
            "trade_id": frame["trade_id"].astype("int64"),
            "family_id": frame["family_id"].astype("string"),
            "cohort_id": frame["cohort_id"].astype("int64"),
            "cluster": pd.Series(
                [
                    cluster_label(event, market)
                    for event, market in zip(frame["event_id"], frame["market_id"], strict=True)
                ],
                dtype="string",
            ),
        }
    )
    for column in ("amount", "price", "cash_before", "probability", "outcome", "implied_brier"):
        out[column] = float_values(frame[column])
    out["cap"] = np.asarray([caps[int(c)] for c in frame["cohort_id"]], dtype=np.float64)
    return out[list(BET_COLUMNS)]


def bet_terms(bets: pd.DataFrame) -> pd.DataFrame:
    """Each bet's terms (`TERMS`): counts as 0/1 and the summands of every figure, 0 where a
    term does not apply to the bet (so per-cluster sums are plain sums)."""
    p = bets["probability"].to_numpy(dtype=np.float64)
    q = bets["price"].to_numpy(dtype=np.float64)
    y = bets["outcome"].to_numpy(dtype=np.float64)
    s = bets["amount"].to_numpy(dtype=np.float64)
    cash = bets["cash_before"].to_numpy(dtype=np.float64)
    cap = bets["cap"].to_numpy(dtype=np.float64)
    stated = ~np.isnan(p)
    resolved = stated & ~np.isnan(y)
    f_star = np.nan_to_num(kelly_fraction(p, q))
    kelly_on = stated & (f_star > 0)
    f_kelly = np.minimum(f_star, cap)
    with np.errstate(divide="ignore", invalid="ignore"):
        f_actual = np.where(cash > 0, s / cash, np.nan)
    deviating = resolved & (np.abs(p - q) > DEVIATION)

    def where(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
        return np.where(mask, values, 0.0)

    stated_sq = (p - y) ** 2
    market_sq = (q - y) ** 2
    return pd.DataFrame(
        {
            "bets": np.ones(len(bets)),
            "stated": stated.astype(np.float64),
            "resolved": resolved.astype(np.float64),
            "stated_sq": where(resolved, stated_sq),
            "implied_sq": where(resolved, bets["implied_brier"].to_numpy(dtype=np.float64)),
            "market_sq": where(resolved, market_sq),
            "consistent": (stated & (p > q)).astype(np.float64),
            "edge": where(stated, p - q),
            "kelly_bets": kelly_on.astype(np.float64),
            "kelly_amount": where(kelly_on, s),
            "kelly_stake": where(kelly_on, f_kelly * cash),
            "growth": where(resolved, log_growth(f_actual, q, y)),
            "kelly_growth": where(resolved, log_growth(f_kelly, q, y)),
            "deviating": deviating.astype(np.float64),
            "deviating_stated_sq": where(deviating, stated_sq),
            "deviating_market_sq": where(deviating, market_sq),
        },
        index=bets.index,
    )[list(TERMS)]


def stated_figures(
    bets: pd.DataFrame,
    names: Mapping[str, tuple[str, str]] | None = None,
    *,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """The per-family figures of `stated_bets` rows, with cluster-bootstrap intervals.

    Pure (no database): the hand-computed tests call it on a few bets. `names`: family id →
    (display name, kind). Columns `STATED_COLUMNS`, one row per family with a BUY in scope,
    ordered LLM families first, then by name: ``cohorts`` (extended cohorts it bet in),
    ``bets`` (BUYs), ``stated_bets`` (with a stated p), ``missing_bets`` (without),
    ``resolved_bets`` (stated and resolved with a winner), ``kelly_bets`` (stated p > q),
    ``deviating_bets`` (resolved, |p − q| > 0.1), then each figure of `FIGURES` with
    ``_ci_low`` / ``_ci_high`` (NaN where it has no bet to stand on):
    ``stated_brier``, ``implied_brier``, ``brier_gap`` (stated − implied),
    ``market_brier``, ``skill_vs_market`` (stated − market), ``consistent_share`` (0-1),
    ``mean_edge`` (mean p − q), ``stake_efficiency`` (Σ stake / Σ Kelly stake),
    ``log_growth`` / ``kelly_log_growth`` (mean per resolved bet) and ``growth_gap``
    (actual − Kelly), ``deviating_brier``, ``deviating_market_brier``, ``deviating_skill``.
    """
    names = names or {}
    if bets.empty:
        return _typed(pd.DataFrame(columns=list(STATED_COLUMNS)))
    families = _ordered(sorted(set(bets["family_id"].astype(str))), names)
    terms = bet_terms(bets)
    sums, strata = _cluster_sums(bets, terms, families)
    boot = stats.ClusterBootstrap(strata, replicates, seed)
    totals = {name: matrix.sum(axis=0) for name, matrix in sums.items()}
    cohorts = bets.groupby("family_id")["cohort_id"].nunique()
    frame = pd.DataFrame(
        {
            "family_id": families,
            "display_name": [names.get(f, (f, "llm"))[0] for f in families],
            "kind": [names.get(f, (f, "llm"))[1] for f in families],
            "cohorts": [int(cohorts.get(f, 0)) for f in families],
            "bets": totals["bets"],
            "stated_bets": totals["stated"],
            "missing_bets": totals["bets"] - totals["stated"],
            "resolved_bets": totals["resolved"],
            "kelly_bets": totals["kelly_bets"],
            "deviating_bets": totals["deviating"],
        }
    )
    for figure, numerator, denominator in FIGURES:
        top = _numerator(sums, numerator)
        frame[figure] = ratio(top.sum(axis=0), totals[denominator])
        reps = boot.ratio(top, sums[denominator])
        frame[f"{figure}_ci_low"], frame[f"{figure}_ci_high"] = stats.percentile_interval(
            reps, level
        )
    return _typed(frame)


def stated_probability(
    engine: Engine,
    *,
    cohort: int | None = None,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """The extension's figures per family over the extended cohorts in scope (all, or cohort
    number `cohort`; a v1 cohort gives an empty frame): `stated_figures` of `stated_bets`.
    Stored by the hourly `analyses` job (`arena.analytics.stored`)."""
    bets = stated_bets(engine, cohort=cohort)
    with engine.connect() as conn:
        names = {
            str(fid): (str(name), str(kind))
            for fid, name, kind in conn.execute(
                select(FAMILIES.c.id, FAMILIES.c.display_name, FAMILIES.c.kind)
            )
        }
    return stated_figures(bets, names, replicates=replicates, seed=seed, level=level)


def _ordered(families: Sequence[str], names: Mapping[str, tuple[str, str]]) -> list[str]:
    """LLM families first, then baselines; each by display name (then id)."""

    def key(family: str) -> tuple[bool, str, str]:
        name, kind = names.get(family, (family, "llm"))
        return (kind == "baseline", name.casefold(), family)

    return sorted(families, key=key)


def _cluster_sums(
    bets: pd.DataFrame, terms: pd.DataFrame, families: Sequence[str]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per cluster × family sums of every term, and each cluster's stratum (its cohort)."""
    keys = bets["cohort_id"].astype(str) + "|" + bets["cluster"].astype(str)
    labels, cluster = np.unique(keys.to_numpy(dtype=str), return_inverse=True)
    index = {family: i for i, family in enumerate(families)}
    column = bets["family_id"].astype(str).map(index).to_numpy(dtype=np.int64)
    sums = {}
    for name in TERMS:
        matrix = np.zeros((labels.size, len(families)))
        np.add.at(matrix, (cluster, column), terms[name].to_numpy(dtype=np.float64))
        sums[name] = matrix
    strata = np.zeros(labels.size, dtype=np.int64)
    strata[cluster] = bets["cohort_id"].to_numpy(dtype=np.int64)
    return sums, strata


def _numerator(sums: Mapping[str, np.ndarray], numerator: str | tuple[str, str]) -> np.ndarray:
    if isinstance(numerator, tuple):
        return sums[numerator[0]] - sums[numerator[1]]
    return sums[numerator]


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """`STATED_COLUMNS` with stable dtypes (an empty frame too, so stored frames agree)."""
    dtypes = {column: "float64" for column in STATED_COLUMNS}
    dtypes.update(dict.fromkeys(("family_id", "display_name", "kind"), "string"))
    dtypes.update(dict.fromkeys(_COUNTS, "int64"))
    return frame[list(STATED_COLUMNS)].astype(dtypes).reset_index(drop=True)


__all__ = [
    "BET_COLUMNS",
    "DEVIATION",
    "FIGURES",
    "STATED_COLUMNS",
    "TERMS",
    "bet_terms",
    "extended_cohorts",
    "stated_bets",
    "stated_figures",
    "stated_probability",
]
