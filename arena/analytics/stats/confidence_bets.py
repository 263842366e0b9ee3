"""What the Calibration page's over/under-confidence table and its leader line read.

Why apart from `calibration`: these are live reads beside the stored frames (per-bet rows for
`calibration.overconfidence`, and the leaderboard's return and Brier side by side); the stored
analyses stay as they are.
"""

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.analytics.query.scope import cohort_id_of, in_scope
from arena.analytics.stats.calibration import OVERCONFIDENCE_COLUMNS, overconfidence
from arena.analytics.stats.leaderboard_inputs import cluster_label, float_values
from arena.analytics.stats.stated import extended_cohorts, stated_bets
from arena.config import METHODOLOGY_VERSION
from arena.core import stats
from arena.storage.tables import AGENTS, MARKETS
from arena.storage.tables import BRIER_SCORES as BRIERS


def implied_bets(
    engine: Engine, *, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """The resolved bets in scope as `overconfidence` reads them: ``forecast`` = v1 implied
    confidence, ``price`` = the BUY's recorded price for the side bought."""
    query = (
        select(
            AGENTS.c.family_id,
            AGENTS.c.cohort_id,
            BRIERS.c.market_id,
            MARKETS.c.event_id,
            BRIERS.c.forecast_probability,
            BRIERS.c.actual_outcome,
            BRIERS.c.market_price,
        )
        .join(AGENTS, AGENTS.c.id == BRIERS.c.agent_id)
        .join(MARKETS, MARKETS.c.id == BRIERS.c.market_id)
        .order_by(BRIERS.c.id)
    )
    with engine.connect() as conn:
        rows = conn.execute(in_scope(query, cohort_id_of(conn, cohort, methodology))).all()
    frame = pd.DataFrame(
        rows, columns=["family_id", "cohort_id", "market", "event", "forecast", "outcome", "price"]
    )
    return pd.DataFrame(
        {
            "family_id": frame["family_id"].astype("string"),
            "cohort_id": frame["cohort_id"].astype("int64"),
            "cluster": [
                cluster_label(e, m) for e, m in zip(frame["event"], frame["market"], strict=True)
            ],
            "forecast": float_values(frame["forecast"]),
            "outcome": float_values(frame["outcome"]),
            "price": float_values(frame["price"]),
        }
    )


def stated_overconfidence_bets(bets: pd.DataFrame, cohorts: Sequence[int]) -> pd.DataFrame:
    """`stated_bets` rows of the cohort ids `cohorts` as `overconfidence` reads them:
    ``forecast`` = the stated probability (bets without one, or unresolved, drop out there)."""
    rows = bets[bets["cohort_id"].isin(list(cohorts))]
    return pd.DataFrame(
        {
            "family_id": rows["family_id"].astype("string"),
            "cohort_id": rows["cohort_id"].astype("int64"),
            "cluster": rows["cluster"].astype("string"),
            "forecast": rows["probability"].astype("float64"),
            "outcome": rows["outcome"].astype("float64"),
            "price": rows["price"].astype("float64"),
        }
    )


def return_vs_brier(board: pd.DataFrame) -> tuple[str, int, int] | None:
    """(leader by return, its Brier rank, families ranked) when the LLM family with the
    highest ``return_pct`` of a `leaderboard` frame is not the one with the lowest ``brier``;
    else None. Ranked: the LLM families with a Brier (competition ranks, ties share the
    better); baselines are references, not contenders."""
    scored = board[(board["kind"] == "llm") & board["brier"].notna() & board["return_pct"].notna()]
    if len(scored) < 2:
        return None
    by_return = scored.sort_values(["return_pct", "family_id"], ascending=[False, True])
    leader = str(by_return["family_id"].iloc[0])
    brier = scored["brier"].to_numpy(dtype=np.float64)
    ranks = stats.competition_ranks(brier, higher_is_better=False)
    rank = int(ranks[list(scored["family_id"]).index(leader)])
    return None if rank == 1 else (leader, rank, len(scored))


def implied_overconfidence(
    engine: Engine, *, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """`overconfidence` of v1 implied confidence over the resolved bets in scope."""
    return overconfidence(implied_bets(engine, cohort=cohort, methodology=methodology))


def stated_overconfidence(
    engine: Engine, *, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """`overconfidence` of the stated probabilities on the scope's cohorts stamped with
    `stated_probability` (empty when the scope has none: a v1 all-cohort scope never does)."""
    in_scope_cohorts = set(
        implied_bets(engine, cohort=cohort, methodology=methodology)["cohort_id"]
    )
    if not in_scope_cohorts or not extended_cohorts(engine):
        return pd.DataFrame(columns=list(OVERCONFIDENCE_COLUMNS))
    bets = stated_bets(engine, cohort=cohort)
    return overconfidence(stated_overconfidence_bets(bets, sorted(in_scope_cohorts)))


__all__ = [
    "implied_bets",
    "implied_overconfidence",
    "return_vs_brier",
    "stated_overconfidence",
    "stated_overconfidence_bets",
]
