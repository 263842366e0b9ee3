"""Read models of the Calibration page: is a family's v1 implied confidence a probability?

Why: the v1 Brier score takes bet size as confidence (amount / 25% of cash). Whether that
"forecast" means anything shows in its reliability (do 70% bets win 70% of the time?), in the
Murphy decomposition of its Brier, and against the market's own price for the side bought,
scored on the very same bets. Brier intervals come from the leaderboard's bootstrap draw
(`family_bootstrap`), so both pages show identical numbers for the same seed.
"""

from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Integer, case, cast, func, literal_column, select
from sqlalchemy.engine import Engine

from arena.analytics.query.frames import result_frame
from arena.analytics.query.scope import as_date, cohort_id_of, in_scope, utc_date
from arena.analytics.stats.bootstrap import family_bootstrap
from arena.config import METHODOLOGY_VERSION
from arena.core import stats
from arena.storage.tables import AGENTS, FAMILIES
from arena.storage.tables import BRIER_SCORES as BRIERS

FORECASTERS = ("implied", "market")

RELIABILITY_COLUMNS: tuple[str, ...] = (
    "family_id",
    "bin",
    "bin_low",
    "bin_high",
    "count",
    "mean_forecast",
    "observed_rate",
)
CALIBRATION_COLUMNS: tuple[str, ...] = (
    "family_id",
    "kind",
    "resolved_bets",
    "brier",
    "brier_ci_low",
    "brier_ci_high",
    "ece",
    "reliability",
    "resolution",
    "uncertainty",
    "residual",
    "market_bets",
    "market_brier",
    "market_brier_ci_low",
    "market_brier_ci_high",
    "skill_vs_market",
    "skill_vs_market_ci_low",
    "skill_vs_market_ci_high",
    "market_ece",
)
BRIER_OVER_TIME_COLUMNS: tuple[str, ...] = (
    "family_id",
    "date",
    "cumulative_brier",
    "resolved_bets",
    "cumulative_market_brier",
)


def brier_rows(
    engine: Engine, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """Every Brier row in scope: ``family_id``, ``forecast_probability`` (v1 implied
    confidence), ``actual_outcome`` (1 = the side bought won), ``brier_score``,
    ``market_price`` (the BUY's price for that side; NaN if not recorded)."""
    query = (
        select(
            AGENTS.c.family_id,
            BRIERS.c.forecast_probability,
            BRIERS.c.actual_outcome,
            BRIERS.c.brier_score,
            BRIERS.c.market_price,
        )
        .join(AGENTS, AGENTS.c.id == BRIERS.c.agent_id)
        .order_by(BRIERS.c.id)
    )
    with engine.connect() as conn:
        result = conn.execute(in_scope(query, cohort_id_of(conn, cohort, methodology)))
        frame = result_frame(result)
    return frame.astype(
        {
            "forecast_probability": "float64",
            "actual_outcome": "int64",
            "brier_score": "float64",
            "market_price": "float64",
        }
    )


def _forecasts(rows: pd.DataFrame, forecaster: str) -> tuple[np.ndarray, np.ndarray]:
    if forecaster not in FORECASTERS:
        raise ValueError(f"forecaster must be one of {FORECASTERS}, not {forecaster!r}")
    if forecaster == "market":
        rows = rows[rows["market_price"].notna()]
        return rows["market_price"].to_numpy(), rows["actual_outcome"].to_numpy()
    return rows["forecast_probability"].to_numpy(), rows["actual_outcome"].to_numpy()


def bin_of(value: Any, bins: int, dialect: str) -> Any:
    """SQL for `stats.bin_index`: ⌊value·bins⌋, with value = 1 in the last bin.

    The product is the same IEEE double numpy computes, so both sides bin a forecast alike.
    `bins` is inlined (GROUP BY-safe). SQLite's CAST truncates (= floor for value ≥ 0);
    PostgreSQL's rounds, hence floor() there.
    """
    n = int(bins)
    scaled = value * literal_column(str(n))
    whole = cast(func.floor(scaled) if dialect == "postgresql" else scaled, Integer)
    return case((whole >= n, n - 1), else_=whole)


def reliability(
    engine: Engine,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    bins: int = stats.DEFAULT_BINS,
    forecaster: str = "implied",
) -> pd.DataFrame:
    """The reliability diagram's table: one row per family × equal-width bin (all `bins`).

    `forecaster` = ``implied`` (v1 implied confidence) or ``market`` (the market's price for
    the side bought, on the same bets: the reference forecaster). Columns: ``family_id``,
    ``bin`` (0 … bins−1), ``bin_low`` / ``bin_high`` (bin k holds forecasts f with
    ⌊f·bins⌋ = k; f = 1 in the last), ``count`` (forecasts in the bin; show it), ``mean_forecast``
    and ``observed_rate`` (share of those bets that won; both NaN for an empty bin).

    Binned and summed in SQL (families × bins rows come back, not every Brier row). Every
    family with a Brier row in scope gets its bins, all empty when it has no forecast of this
    kind (a bet without a recorded market price has no ``market`` forecast).
    """
    if forecaster not in FORECASTERS:
        raise ValueError(f"forecaster must be one of {FORECASTERS}, not {forecaster!r}")
    if bins < 1:
        raise ValueError("bins must be at least 1")
    value = BRIERS.c.market_price if forecaster == "market" else BRIERS.c.forecast_probability
    with engine.connect() as conn:
        k = bin_of(value, bins, engine.dialect.name).label("bin")
        query = (
            select(
                AGENTS.c.family_id,
                k,
                func.count(value).label("n"),
                func.sum(value).label("forecast_sum"),
                func.sum(BRIERS.c.actual_outcome).label("won"),
            )
            .join(AGENTS, AGENTS.c.id == BRIERS.c.agent_id)
            .group_by(AGENTS.c.family_id, k)
        )
        sums = result_frame(conn.execute(in_scope(query, cohort_id_of(conn, cohort, methodology))))
    if sums.empty:
        return pd.DataFrame(columns=list(RELIABILITY_COLUMNS))
    families = sorted(set(sums["family_id"]))
    binned = sums[sums["bin"].notna()].astype({"bin": "int64"})
    grid = pd.MultiIndex.from_product([families, range(bins)], names=["family_id", "bin"])
    table = binned.set_index(["family_id", "bin"]).reindex(grid).reset_index()
    count = table["n"].fillna(0).astype("int64")
    filled = count > 0
    edges = np.arange(bins + 1) / bins
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_f = table["forecast_sum"].astype("float64") / count
        rate = table["won"].astype("float64") / count
    return pd.DataFrame(
        {
            "family_id": table["family_id"],
            "bin": table["bin"].astype("int64"),
            "bin_low": edges[table["bin"]],
            "bin_high": edges[table["bin"] + 1],
            "count": count,
            "mean_forecast": mean_f.where(filled),
            "observed_rate": rate.where(filled),
        }
    )[list(RELIABILITY_COLUMNS)]


def calibration_summary(
    engine: Engine,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    bins: int = stats.DEFAULT_BINS,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """Per family with resolved bets: Brier with its interval, calibration and the market.

    Columns: ``family_id``, ``kind``, ``resolved_bets``, ``brier`` (v1: mean Brier of implied
    confidence) with ``brier_ci_low`` / ``brier_ci_high`` (the leaderboard's bootstrap),
    ``ece``, and the Murphy decomposition over the same bins — ``reliability``,
    ``resolution``, ``uncertainty``, ``residual`` with brier = reliability − resolution +
    uncertainty + residual exactly (`arena.core.stats.Murphy`); ``market_bets`` (bets with a
    recorded market price), ``market_brier`` (+ CI): the market price's Brier on those bets,
    ``skill_vs_market`` (+ CI): family Brier − market Brier on those bets (negative = better
    than the market), ``market_ece``: the market price's ECE on those bets.
    """
    rows = brier_rows(engine, cohort, methodology)
    if rows.empty:
        return pd.DataFrame(columns=list(CALIBRATION_COLUMNS))
    fb = family_bootstrap(
        engine, cohort=cohort, replicates=replicates, seed=seed, methodology=methodology
    )
    column = {fid: i for i, fid in enumerate(fb.families)}
    s = fb.sums
    intervals = {
        "brier": stats.percentile_interval(fb.boot.ratio(s["brier_sum"], s["brier_n"]), level),
        "market_brier": stats.percentile_interval(
            fb.boot.ratio(s["skill_market_sum"], s["skill_n"]), level
        ),
        "skill_vs_market": stats.percentile_interval(
            fb.boot.ratio(s["skill_family_sum"] - s["skill_market_sum"], s["skill_n"]), level
        ),
    }
    records = []
    for family_id, group in rows.groupby("family_id", sort=True):
        murphy = stats.murphy_decomposition(*_forecasts(group, "implied"), bins)
        priced = group[group["market_price"].notna()]
        market = stats.murphy_decomposition(*_forecasts(priced, "market"), bins)
        same_bets_family = float(priced["brier_score"].mean()) if len(priced) else np.nan
        j = column[family_id]
        record = {
            "family_id": family_id,
            "kind": fb.names.get(family_id, (family_id, "llm"))[1],
            "resolved_bets": murphy.n,
            "brier": murphy.brier,
            "ece": murphy.ece,
            "reliability": murphy.reliability,
            "resolution": murphy.resolution,
            "uncertainty": murphy.uncertainty,
            "residual": murphy.residual,
            "market_bets": market.n,
            "market_brier": market.brier,
            "skill_vs_market": same_bets_family - market.brier if market.n else np.nan,
            "market_ece": market.ece,
        }
        for name, (low, high) in intervals.items():
            record[f"{name}_ci_low"], record[f"{name}_ci_high"] = float(low[j]), float(high[j])
        records.append(record)
    return pd.DataFrame(records)[list(CALIBRATION_COLUMNS)]


def brier_over_time(
    engine: Engine, *, cohort: int | None = None, methodology: str = METHODOLOGY_VERSION
) -> pd.DataFrame:
    """The cumulative v1 Brier per family at the end of each UTC date with new resolutions.

    Aggregated in SQL (sum and count per family × date of the Brier row), accumulated here.
    Columns: ``family_id``, ``date`` (datetime.date), ``cumulative_brier`` (mean of all the
    family's Brier rows up to that date), ``resolved_bets`` (their count),
    ``cumulative_market_brier`` (the market price's Brier on the same bets, same dates).
    """
    with engine.connect() as conn:
        day = utc_date(BRIERS.c.created_at, engine.dialect.name)
        error = BRIERS.c.market_price - BRIERS.c.actual_outcome
        query = (
            select(
                AGENTS.c.family_id,
                day.label("date"),
                func.sum(BRIERS.c.brier_score).label("brier_sum"),
                func.count(BRIERS.c.id).label("n"),
                func.sum(error * error).label("market_sum"),
                func.count(BRIERS.c.market_price).label("market_n"),
            )
            .join(AGENTS, AGENTS.c.id == BRIERS.c.agent_id)
            .group_by(AGENTS.c.family_id, day)
        )
        result = conn.execute(in_scope(query, cohort_id_of(conn, cohort, methodology)))
        frame = result_frame(result)
    if frame.empty:
        return pd.DataFrame(columns=list(BRIER_OVER_TIME_COLUMNS))
    frame["date"] = [as_date(d) for d in frame["date"]]
    frame = frame.sort_values(["family_id", "date"]).reset_index(drop=True)
    for name in ("brier_sum", "n", "market_sum", "market_n"):
        frame[name] = frame[name].fillna(0).astype("float64")
    grouped = frame.groupby("family_id", sort=False)
    sums, counts = grouped["brier_sum"].cumsum(), grouped["n"].cumsum()
    market_sums, market_counts = grouped["market_sum"].cumsum(), grouped["market_n"].cumsum()
    frame["cumulative_brier"] = sums / counts
    frame["resolved_bets"] = counts.astype("int64")
    frame["cumulative_market_brier"] = (market_sums / market_counts).where(market_counts > 0)
    return frame[list(BRIER_OVER_TIME_COLUMNS)]


# --------------------------------------------------------------------------------------------
# The reliability diagram as the page draws it: Wilson intervals and a minimum count per bin.
# Pure functions over the stored `reliability` frames (no database): a bin's wins are its
# count × observed rate, so its interval comes from the frame the hourly job already stored.

# A bin with fewer bets than this is listed, not drawn: a 1-bet bin sits at 0 or 1 and its
# interval spans most of the axis, so drawn it dominates the diagram and says nothing.
MIN_BIN_COUNT = 5
MARKET_SERIES = "Market price (same bets)"
DIAGRAM_COLUMNS: tuple[str, ...] = (
    "series",
    "family_id",
    "forecaster",
    "bin",
    "bin_low",
    "bin_high",
    "count",
    "wins",
    "mean_forecast",
    "observed_rate",
    "ci_low",
    "ci_high",
    "drawn",
)


def wilson_interval(
    successes: Any, n: Any, level: float = stats.CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of a binomial proportion, elementwise (NaN where n = 0).

    With p̂ = successes / n and z the two-sided normal quantile of `level` (1.96 at 95%):
    centre = (p̂ + z²/2n) / (1 + z²/n), half-width = z √(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n).
    Unlike p̂ ± z√(p̂(1−p̂)/n) it stays inside [0, 1] and is not zero-width at 0 or n wins,
    which is what a reliability bin of a few bets needs.
    """
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    k = np.asarray(successes, dtype=np.float64)
    count = np.asarray(n, dtype=np.float64)
    if np.any(count < 0) or np.any(k < 0) or np.any(k > count):
        raise ValueError("need 0 <= successes <= n")
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / count
        denominator = 1 + z * z / count
        centre = (p + z * z / (2 * count)) / denominator
        half = z * np.sqrt(p * (1 - p) / count + z * z / (4 * count * count)) / denominator
    # At 0 or n wins the bound is exactly 0 or 1 (centre ∓ half-width cancel in exact
    # arithmetic; in floats they leave ~1e-17).
    low = np.where(k == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    high = np.where(k == count, 1.0, np.clip(centre + half, 0.0, 1.0))
    empty = count == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def pooled_reliability(frame: pd.DataFrame, families: Sequence[str]) -> pd.DataFrame:
    """`families`' bins of a `reliability` frame summed into one row per bin (family_id ""):
    counts and wins add up, the mean forecast is the count-weighted mean. Used for the
    market price as one reference forecaster over the bets of several families."""
    rows = frame[frame["family_id"].isin(list(families))]
    if rows.empty:
        return pd.DataFrame(columns=list(RELIABILITY_COLUMNS))
    count = rows["count"].astype("int64")
    work = pd.DataFrame(
        {
            "bin": rows["bin"].astype("int64"),
            "bin_low": rows["bin_low"],
            "bin_high": rows["bin_high"],
            "count": count,
            "forecast_sum": (rows["mean_forecast"] * count).fillna(0.0),
            "won": _wins(rows),
        }
    )
    summed = (
        work.groupby(["bin", "bin_low", "bin_high"], as_index=False)[
            ["count", "forecast_sum", "won"]
        ]
        .sum()
        .sort_values("bin")
    )
    filled = summed["count"] > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_f = summed["forecast_sum"] / summed["count"]
        rate = summed["won"] / summed["count"]
    return pd.DataFrame(
        {
            "family_id": "",
            "bin": summed["bin"].astype("int64"),
            "bin_low": summed["bin_low"],
            "bin_high": summed["bin_high"],
            "count": summed["count"].astype("int64"),
            "mean_forecast": mean_f.where(filled),
            "observed_rate": rate.where(filled),
        }
    )[list(RELIABILITY_COLUMNS)].reset_index(drop=True)


def _wins(frame: pd.DataFrame) -> pd.Series:
    """Bets won per bin: count × observed rate, an integer up to float rounding."""
    won = (frame["observed_rate"] * frame["count"]).fillna(0.0)
    return won.round().astype("int64")


def reliability_diagram(
    implied: pd.DataFrame,
    market: pd.DataFrame,
    families: Sequence[str],
    *,
    names: dict[str, str] | None = None,
    min_count: int = MIN_BIN_COUNT,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """What the Calibration page's reliability diagram shows, from the stored `reliability`
    and `reliability_market` frames: each of `families`' implied confidence per bin and the
    market's price on those same bets (pooled over `families`) as a reference forecaster.

    One row per non-empty bin. Columns: ``series`` (the family's display name from `names`,
    or `MARKET_SERIES`), ``family_id`` ("" for the pooled market), ``forecaster``
    ("implied confidence" | "market price"), ``bin``, ``bin_low``, ``bin_high``, ``count``,
    ``wins``, ``mean_forecast``, ``observed_rate``, ``ci_low`` / ``ci_high`` (the observed
    rate's Wilson interval at `level`), ``drawn`` (count ≥ `min_count`: bins below are
    listed, not drawn).
    """
    names = names or {}
    parts = []
    for family_id in families:
        rows = implied[implied["family_id"] == family_id]
        parts.append(
            rows.assign(series=names.get(family_id, family_id), forecaster="implied confidence")
        )
    pooled = pooled_reliability(market, families)
    if not pooled.empty:
        parts.append(pooled.assign(series=MARKET_SERIES, forecaster="market price"))
    if not parts:
        return pd.DataFrame(columns=list(DIAGRAM_COLUMNS))
    points = pd.concat(parts, ignore_index=True)
    points = points[points["count"] > 0].reset_index(drop=True)
    if points.empty:
        return pd.DataFrame(columns=list(DIAGRAM_COLUMNS))
    points["count"] = points["count"].astype("int64")
    points["wins"] = _wins(points)
    low, high = wilson_interval(points["wins"], points["count"], level)
    points["ci_low"], points["ci_high"] = low, high
    points["drawn"] = points["count"] >= min_count
    return points[list(DIAGRAM_COLUMNS)]


# --------------------------------------------------------------------------------------------
# Over/under-confidence: the signed gap between a forecaster's mean confidence and its win rate.
# The Brier score and ECE say *how far* a forecast is off; this says *which way*, so "which
# family is most over-confident?" has an answer (positive: its bets won less often than its
# confidence said).

OVERCONFIDENCE_COLUMNS: tuple[str, ...] = (
    "family_id",
    "bets",
    "mean_forecast",
    "win_rate",
    "overconfidence",
    "overconfidence_ci_low",
    "overconfidence_ci_high",
    "market_bets",
    "market_overconfidence",
    "market_overconfidence_ci_low",
    "market_overconfidence_ci_high",
)


def overconfidence(
    bets: pd.DataFrame,
    *,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = stats.CONFIDENCE,
) -> pd.DataFrame:
    """Per family: mean(forecast − outcome) over its resolved bets, with a bootstrap interval.

    Pure (no database). `bets`: one row per bet with ``family_id``, ``cohort_id``, ``cluster``
    (its Polymarket event, `cluster_label`), ``forecast`` (probability that the side bought
    wins: implied confidence or a stated probability), ``outcome`` (1 won, 0 lost) and
    ``price`` (the market's price for that side, NaN if unknown); rows without a forecast or
    an outcome are left out. overconfidence = mean forecast − win rate (positive:
    over-confident); ``market_overconfidence``: the same of the market price on the bets that
    have one. Intervals: percentile, clusters resampled within their cohort, one draw for
    every family (the leaderboard's scheme). Sorted most over-confident first.
    """
    f = bets["forecast"].to_numpy(dtype=np.float64)
    y = bets["outcome"].to_numpy(dtype=np.float64)
    keep = ~np.isnan(f) & ~np.isnan(y)
    rows = bets[keep]
    if rows.empty:
        return pd.DataFrame(columns=list(OVERCONFIDENCE_COLUMNS))
    f, y = f[keep], y[keep]
    q = rows["price"].to_numpy(dtype=np.float64)
    priced = ~np.isnan(q)
    families = sorted(set(rows["family_id"].astype(str)))
    keys = rows["cohort_id"].astype(str) + "|" + rows["cluster"].astype(str)
    labels, cluster = np.unique(keys.to_numpy(dtype=str), return_inverse=True)
    column = rows["family_id"].astype(str).map({x: i for i, x in enumerate(families)})
    at = (cluster, column.to_numpy(dtype=np.int64))
    terms = {
        "n": np.ones_like(f),
        "gap": f - y,
        "forecast": f,
        "market_n": priced.astype(np.float64),
        "market_gap": np.where(priced, q - y, 0.0),
    }
    sums = {}
    for name, values in terms.items():
        sums[name] = np.zeros((labels.size, len(families)))
        np.add.at(sums[name], at, values)
    strata = np.zeros(labels.size, dtype=np.int64)
    strata[cluster] = rows["cohort_id"].to_numpy(dtype=np.int64)
    boot = stats.ClusterBootstrap(strata, replicates, seed)
    total = {name: matrix.sum(axis=0) for name, matrix in sums.items()}
    frame = pd.DataFrame({"family_id": families, "bets": total["n"].astype("int64")})
    frame["mean_forecast"] = total["forecast"] / total["n"]
    frame["win_rate"] = frame["mean_forecast"] - total["gap"] / total["n"]
    for name, gap, n in (
        ("overconfidence", "gap", "n"),
        ("market_overconfidence", "market_gap", "market_n"),
    ):
        with np.errstate(divide="ignore", invalid="ignore"):
            frame[name] = np.where(
                total[n] > 0, total[gap] / np.where(total[n] > 0, total[n], 1), np.nan
            )
        low, high = stats.percentile_interval(boot.ratio(sums[gap], sums[n]), level)
        frame[f"{name}_ci_low"], frame[f"{name}_ci_high"] = low, high
    frame["market_bets"] = total["market_n"].astype("int64")
    order = frame.sort_values(
        ["overconfidence", "family_id"], ascending=[False, True], na_position="last"
    )
    return order[list(OVERCONFIDENCE_COLUMNS)].reset_index(drop=True)


def family_names(engine: Engine) -> dict[str, str]:
    """Each family's display name by id (the id itself when it has none)."""
    query = select(FAMILIES.c.id, func.coalesce(FAMILIES.c.display_name, FAMILIES.c.id))
    with engine.connect() as conn:
        return {str(family_id): str(name) for family_id, name in conn.execute(query)}


__all__ = [
    "BRIER_OVER_TIME_COLUMNS",
    "CALIBRATION_COLUMNS",
    "DIAGRAM_COLUMNS",
    "MARKET_SERIES",
    "MIN_BIN_COUNT",
    "OVERCONFIDENCE_COLUMNS",
    "RELIABILITY_COLUMNS",
    "brier_over_time",
    "brier_rows",
    "calibration_summary",
    "family_names",
    "overconfidence",
    "pooled_reliability",
    "reliability",
    "reliability_diagram",
    "wilson_interval",
]
