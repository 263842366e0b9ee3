"""Naive baselines for `bench/run.py`: whole tables loaded with pandas, computed in memory.

Why: a read model's speed means little alone; the ratio to "what anyone would write first"
(`pd.read_sql` of the tables, then merges, groupbys and resamples in pandas) shows what the
SQL aggregation buys. Each baseline loads, per page run, every table the page needs — whole
tables, no WHERE, no GROUP BY, only the columns used — and computes the page's frames. The
domain rules (side prices, the §12.4 mark, the bootstrap and the random null's replay) come
from the same pure functions the read models use, so both sides compute the same numbers:
`check_page` compares a handful of them against the read models' output and reports any
mismatch. Money is read raw (integer micro-units) and converted here.
"""

import json
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import text
from sqlalchemy.engine import Engine

from arena.analytics.curves import RANGES, bucket_width
from arena.analytics.decisions import DEFAULT_LIMIT as DECISION_LIST_CAP
from arena.analytics.leaderboard import (
    DEFAULT_NULL_SEEDS,
    UNIT_SUMS,
    NullCohort,
    NullMarket,
    NullRun,
    against_favourite,
    candidate,
    cluster_label,
    simulate_random_pnl,
    stamped_limits,
)
from arena.analytics.operations import levels_at_least
from arena.analytics.overview import OVERVIEW_TABLES
from arena.core import stats
from arena.core.accounting import BetLimits, TradeRejected, choose_mark, side_price

try:
    from bench.pages_catalog import Selection
except ModuleNotFoundError:  # run as a script: bench/ is on sys.path
    from pages_catalog import Selection  # type: ignore[no-redef]

EPOCH = pd.Timestamp(0, tz="UTC")
SNAPSHOT_COLUMNS = (
    "agent_id slot cash_balance positions_value total_value total_pnl total_pnl_percent"
)
Checks = dict[str, float]


# --------------------------------------------------------------------------------------------
# Loading and raw-value conversion


class Tables:
    """Whole-table loads for ONE page run (a table is read once per page, like a page would)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._frames: dict[tuple[str, str], pd.DataFrame] = {}
        self.load_ms = 0.0  # time spent in pd.read_sql (the rest of a run is compute)

    def get(self, table: str, columns: str) -> pd.DataFrame:
        """Whole `table`, only `columns` (space-separated names), loaded once per page run."""
        key = (table, columns)
        if key not in self._frames:
            names = ", ".join(f'"{c}"' for c in columns.split())
            began = time.perf_counter()
            with self.engine.connect() as conn:
                self._frames[key] = pd.read_sql(text(f'SELECT {names} FROM "{table}"'), conn)
            self.load_ms += (time.perf_counter() - began) * 1000.0
        return self._frames[key]


def money(values: pd.Series) -> pd.Series:
    """Raw Fixed(6) integers (None → NaN) as float dollars."""
    return pd.to_numeric(values).astype("float64") / 1e6


def times(values: pd.Series) -> pd.Series:
    """SQLite text or PostgreSQL timestamptz as aware UTC timestamps."""
    if values.dtype == object or pd.api.types.is_string_dtype(values):
        return pd.to_datetime(values, utc=True, format="ISO8601")
    return pd.to_datetime(values, utc=True)


def js(value: Any) -> Any:
    """A JSON column value (SQLite hands back text, PostgreSQL the decoded object)."""
    if isinstance(value, str):
        return json.loads(value)
    return value


def epoch_seconds(values: pd.Series) -> pd.Series:
    return ((values - EPOCH) // pd.Timedelta(seconds=1)).astype("int64")


# --------------------------------------------------------------------------------------------
# Shared pieces


def agents_frame(t: Tables) -> pd.DataFrame:
    """Agents with their cohort number and family name/kind, money as floats."""
    agents = t.get(
        "agents", "id cohort_id family_id display_name model_id starting_balance cash_balance"
    ).rename(columns={"id": "agent_id", "display_name": "agent_name"})
    cohorts = t.get("cohorts", "id number").rename(
        columns={"id": "cohort_id", "number": "cohort_number"}
    )
    families = t.get("families", "id display_name kind").rename(
        columns={"id": "family_id", "display_name": "family_name"}
    )
    out = agents.merge(cohorts, on="cohort_id").merge(families, on="family_id", how="left")
    out["display_name"] = out["family_name"].fillna(out["agent_name"])
    out["kind"] = out["kind"].fillna("llm")
    out["starting_balance"] = money(out["starting_balance"])
    out["cash_balance"] = money(out["cash_balance"])
    return out


def agent_index(t: Tables) -> pd.DataFrame:
    frame = agents_frame(t)
    return frame.sort_values(["cohort_number", "family_id"], ascending=[False, True])


def latest_snapshots(t: Tables) -> pd.DataFrame:
    """Each agent's latest portfolio snapshot: groupby idxmax over the whole table."""
    snaps = t.get("portfolio_snapshots", SNAPSHOT_COLUMNS)
    snaps = snaps.assign(slot=times(snaps["slot"]))
    last = snaps.loc[snaps.groupby("agent_id")["slot"].idxmax()].copy()
    for column in ("cash_balance", "positions_value", "total_value", "total_pnl"):
        last[column] = money(last[column])
    return last


def leg_numbers(legs: Any) -> tuple[int, int, int, float]:
    """(executed BETs, executed SELLs, rejected legs, dollars bet) of a decision's legs."""
    items = js(legs) or []
    bets = [leg for leg in items if leg.get("executed") and leg.get("kind") == "BET"]
    sells = sum(1 for leg in items if leg.get("executed") and leg.get("kind") == "SELL")
    rejected = sum(1 for leg in items if not leg.get("executed"))
    return len(bets), sells, rejected, sum(float(leg.get("amount") or 0) for leg in bets)


def decisions_list(
    t: Tables,
    *,
    cohort: int | None = None,
    family: str | None = None,
    limit: int = DECISION_LIST_CAP,
) -> pd.DataFrame:
    decisions = t.get(
        "decisions",
        "id agent_id decision_week action status attempts legs tokens_in tokens_out cost_usd "
        "latency_ms served_model market_snapshot_id decided_at created_at",
    )
    frame = decisions.merge(agents_frame(t), on="agent_id")
    if cohort is not None:
        frame = frame[frame["cohort_number"] == cohort]
    if family is not None:
        frame = frame[frame["family_id"] == family]
    frame = frame.sort_values("id", ascending=False).head(limit).copy()
    numbers = [leg_numbers(legs) for legs in frame["legs"]]
    frame["bets"] = [n[0] for n in numbers]
    frame["sells"] = [n[1] for n in numbers]
    frame["rejected"] = [n[2] for n in numbers]
    frame["amount"] = [n[3] for n in numbers]
    frame["decided_at"] = times(frame["decided_at"].fillna(frame["created_at"]))
    return frame


def market_prices(t: Tables) -> pd.DataFrame:
    markets = t.get("markets", "id question market_type outcomes prices status closed")
    return markets.rename(columns={"id": "market_id"})


def marked_positions(positions: pd.DataFrame, markets: pd.DataFrame) -> pd.DataFrame:
    """Positions with the export's §12.4 marks (open: live if usable, else last mark/entry)."""
    frame = positions.merge(markets, on="market_id", how="left")
    values, marks = [], []
    for row in frame.itertuples(index=False):
        if row.status != "open":
            values.append(0.0)
            marks.append(np.nan)
            continue
        try:
            live: Decimal | None = side_price(
                row.market_type, js(row.outcomes) or [], js(row.prices) or [], row.side
            )
        except TradeRejected:
            live = None
        last = None if pd.isna(row.mark_price) else Decimal(int(row.mark_price)).scaleb(-6)
        entry = Decimal(int(row.avg_entry_price)).scaleb(-6)
        mark = choose_mark(row.market_status == "open", live, last, entry)
        marks.append(float(mark))
        values.append(float(mark) * int(row.shares) / 1e6)
    frame["mark"] = marks
    frame["current_value"] = values
    return frame


def positions_frame(t: Tables) -> pd.DataFrame:
    positions = t.get(
        "positions",
        "id agent_id market_id side status shares avg_entry_price cost_basis realized_pnl "
        "mark_price opened_at closed_at",
    )
    markets = t.get("markets", "id question market_type outcomes prices status").rename(
        columns={"id": "market_id", "status": "market_status"}
    )
    return marked_positions(positions, markets)


def trades_frame(t: Tables) -> pd.DataFrame:
    trades = t.get(
        "trades",
        "id agent_id decision_id market_id position_id trade_type side amount price shares "
        "implied_confidence realized_pnl cash_before created_at",
    )
    questions = t.get("markets", "id question").rename(columns={"id": "market_id"})
    frame = trades.merge(questions, on="market_id", how="left")
    frame["amount"] = money(frame["amount"])
    frame["created_at"] = times(frame["created_at"])
    return frame.sort_values(["created_at", "id"], ascending=False)


# --------------------------------------------------------------------------------------------
# Curves


def curves(
    t: Tables, range_key: str, *, cohort: int | None = None, family: str | None = None
) -> pd.DataFrame:
    """Per family × bucket: each agent's last snapshot per bucket, carried forward, summed."""
    agents = agents_frame(t)
    if cohort is not None:
        agents = agents[agents["cohort_number"] == cohort]
    if family is not None:
        agents = agents[agents["family_id"] == family]
    snaps = t.get("portfolio_snapshots", SNAPSHOT_COLUMNS)  # one load per page
    snaps = snaps[snaps["agent_id"].isin(agents["agent_id"])]
    if snaps.empty:
        return pd.DataFrame()
    slot = times(snaps["slot"])
    first, last = slot.min(), slot.max()
    back = RANGES[range_key][0]
    start = first if back is None else max(last - back, first)
    width = bucket_width(range_key, last - start)
    seconds = epoch_seconds(slot)
    frame = pd.DataFrame(
        {
            "agent_id": snaps["agent_id"].to_numpy(),
            "sec": seconds.to_numpy(),
            "total_value": money(snaps["total_value"]).to_numpy(),
            "total_pnl": money(snaps["total_pnl"]).to_numpy(),
        }
    )
    start_sec = int((start - EPOCH) // pd.Timedelta(seconds=1))
    first_bucket = start_sec // width * width
    inside = frame[frame["sec"] >= start_sec].assign(bucket=lambda f: f["sec"] // width * width)
    inside = inside.loc[inside.groupby(["agent_id", "bucket"])["sec"].idxmax()]
    before = frame[frame["sec"] < start_sec]
    seeds = before.loc[before.groupby("agent_id")["sec"].idxmax()].assign(
        bucket=first_bucket - width
    )
    points = pd.concat([inside, seeds], ignore_index=True)
    buckets = np.arange(first_bucket - width, int(points["bucket"].max()) + width, width)
    values = points.pivot_table(index="bucket", columns="agent_id", values="total_value")
    pnls = points.pivot_table(index="bucket", columns="agent_id", values="total_pnl")
    values, pnls = values.reindex(buckets).ffill(), pnls.reindex(buckets).ffill()
    info = agents.set_index("agent_id")
    out = []
    for family_id, group in info[info.index.isin(values.columns)].groupby("family_id"):
        ids = list(group.index)
        present = values[ids].notna()
        part = pd.DataFrame(
            {
                "family_id": family_id,
                "bucket": buckets,
                "total_value": values[ids].sum(axis=1, min_count=1).to_numpy(),
                "total_pnl": pnls[ids].sum(axis=1, min_count=1).to_numpy(),
                "capital": (present * group["starting_balance"].to_numpy()).sum(axis=1).to_numpy(),
                "agents": present.sum(axis=1).to_numpy(),
            }
        )
        out.append(part[(part["bucket"] >= first_bucket) & (part["agents"] > 0)])
    result = pd.concat(out, ignore_index=True)
    result["return_pct"] = result["total_pnl"] / result["capital"] * 100.0
    return result


def curve_checks(frame: pd.DataFrame, prefix: str = "curve") -> Checks:
    """Rows and the last bucket's P/L summed over families (both sides of a check)."""
    if frame.empty:
        return {f"{prefix}.rows": 0.0}
    column = "bucket" if "bucket" in frame else "at"
    last = frame[frame[column] == frame[column].max()]
    return {
        f"{prefix}.rows": float(len(frame)),
        f"{prefix}.last_pnl": float(last["total_pnl"].sum()),
    }


# --------------------------------------------------------------------------------------------
# The leaderboard's bootstrap and random null


_SUMS = UNIT_SUMS  # the per agent × market sums the bootstrap resamples


def _units(t: Tables, agents: pd.DataFrame) -> pd.DataFrame:
    """Per agent × market sums (P/L contribution, Brier, BUY legs against the favourite)."""
    scope = set(agents["agent_id"])
    pos = t.get(
        "positions",
        "agent_id market_id status shares cost_basis avg_entry_price realized_pnl mark_price",
    )
    pos = pos[pos["agent_id"].isin(scope)]
    mark = pos["mark_price"].fillna(pos["avg_entry_price"])
    unrealized = (money(pos["shares"]) * money(mark) - money(pos["cost_basis"])).where(
        pos["status"] == "open", 0.0
    )
    pnl = pos.assign(pnl=money(pos["realized_pnl"]) + unrealized)
    units = pnl.groupby(["agent_id", "market_id"], as_index=False)["pnl"].sum()

    briers = t.get(
        "brier_scores", "agent_id market_id trade_id brier_score actual_outcome market_price"
    )
    briers = briers[briers["agent_id"].isin(scope)]
    priced = briers["market_price"].notna()
    error = (briers["market_price"] - briers["actual_outcome"]) ** 2
    b = briers.assign(
        brier_n=1,
        wins=briers["actual_outcome"],
        skill_family_sum=briers["brier_score"].where(priced, 0.0),
        skill_market_sum=error.where(priced, 0.0),
        skill_n=priced.astype("int64"),
        brier_sum=briers["brier_score"],
    )
    brier_units = b.groupby(["agent_id", "market_id"], as_index=False)[
        ["brier_sum", "brier_n", "wins", "skill_family_sum", "skill_market_sum", "skill_n"]
    ].sum()

    trades = t.get("trades", "id agent_id market_id price decision_id trade_type")
    buys = trades[(trades["trade_type"] == "BUY") & trades["agent_id"].isin(scope)]
    snapshot_of = t.get("decisions", "id market_snapshot_id").rename(columns={"id": "decision_id"})
    shown = t.get("market_snapshot_items", "snapshot_id market_id market_type prices")
    buys = (
        buys.merge(snapshot_of, on="decision_id", how="left")
        .merge(
            shown.rename(columns={"snapshot_id": "market_snapshot_id"}),
            on=["market_snapshot_id", "market_id"],
            how="left",
        )
        .merge(
            briers[["trade_id", "actual_outcome"]].rename(columns={"trade_id": "id"}),
            on="id",
            how="left",
        )
    )
    against = np.array(
        [
            against_favourite(float(p) / 1e6, None if pd.isna(mt) else mt, js(sp))
            for p, mt, sp in zip(buys["price"], buys["market_type"], buys["prices"], strict=True)
        ],
        dtype=bool,
    )
    resolved = buys["actual_outcome"].notna().to_numpy()
    won = (buys["actual_outcome"].fillna(0) == 1).to_numpy()
    buy_units = (
        pd.DataFrame(
            {
                "agent_id": buys["agent_id"].to_numpy(),
                "market_id": buys["market_id"].to_numpy(),
                "buys": 1,
                "against": against.astype(int),
                "against_resolved": (against & resolved).astype(int),
                "against_won": (against & resolved & won).astype(int),
            }
        )
        .groupby(["agent_id", "market_id"], as_index=False)
        .sum()
    )
    merged = units.merge(brier_units, on=["agent_id", "market_id"], how="outer").merge(
        buy_units, on=["agent_id", "market_id"], how="outer"
    )
    for column in _SUMS:
        merged[column] = merged[column].astype("float64").fillna(0.0)
    events = t.get("markets", "id event_id").set_index("id")["event_id"]
    owner = agents.set_index("agent_id")
    merged["family_id"] = owner.loc[merged["agent_id"], "family_id"].to_numpy()
    merged["cohort_id"] = owner.loc[merged["agent_id"], "cohort_id"].to_numpy()
    merged["cluster"] = [cluster_label(events.get(m), m) for m in merged["market_id"]]
    return merged


class NaiveBootstrap:
    """The leaderboard's per-family headline and cluster bootstrap, from pandas frames."""

    def __init__(self, t: Tables, cohort: int | None, replicates: int, seed: int) -> None:
        agents = agents_frame(t)
        if cohort is not None:
            agents = agents[agents["cohort_number"] == cohort]
        latest = latest_snapshots(t)[["agent_id", "total_value", "total_pnl", "positions_value"]]
        pos = t.get("positions", "agent_id status cost_basis realized_pnl")
        books = (
            pos.assign(
                realized=money(pos["realized_pnl"]),
                open_cost=money(pos["cost_basis"]).where(pos["status"] == "open", 0.0),
            )
            .groupby("agent_id", as_index=False)[["realized", "open_cost"]]
            .sum()
        )
        frame = agents.merge(latest, on="agent_id", how="left").merge(
            books, on="agent_id", how="left"
        )
        frame = frame.sort_values("agent_id")
        open_cost = frame["open_cost"].fillna(0.0)
        has = frame["total_pnl"].notna()
        book_total = frame["cash_balance"] + open_cost
        self.agents = frame
        self.books = pd.DataFrame(
            {
                "family_id": frame["family_id"],
                "cohort_id": frame["cohort_id"],
                "cohort_number": frame["cohort_number"],
                "capital": frame["starting_balance"],
                "pnl": frame["total_pnl"].where(has, book_total - frame["starting_balance"]),
                "realized": frame["realized"].fillna(0.0),
            }
        )
        self.head = self.books.groupby("family_id", as_index=False).agg(
            cohorts=("cohort_id", "nunique"), capital=("capital", "sum"), pnl=("pnl", "sum")
        )
        self.families = list(self.head["family_id"])
        self.kinds = dict(zip(frame["family_id"], frame["kind"], strict=False))
        units = _units(t, frame)
        keys = units["cohort_id"].astype(str) + "|" + units["cluster"]
        labels, cluster = np.unique(keys.to_numpy(dtype=str), return_inverse=True)
        column = units["family_id"].map({f: i for i, f in enumerate(self.families)}).to_numpy()
        self.sums: dict[str, np.ndarray] = {}
        for name in _SUMS:
            matrix = np.zeros((labels.size, len(self.families)))
            np.add.at(matrix, (cluster, column), units[name].to_numpy(dtype=np.float64))
            self.sums[name] = matrix
        stratum_of = np.zeros(labels.size, dtype=np.int64)
        stratum_of[cluster] = units["cohort_id"].to_numpy(dtype=np.int64)
        self.boot = stats.ClusterBootstrap(stratum_of, replicates, seed)

    def pnl_replicates(self) -> np.ndarray:
        strata = sorted({int(c) for c in self.books["cohort_id"]})
        row = {c: i for i, c in enumerate(strata)}
        col = {f: j for j, f in enumerate(self.families)}
        offsets = np.zeros((len(strata), len(self.families)))
        floors = np.zeros_like(offsets)
        for cohort_id, family_id, capital, pnl in zip(
            self.books["cohort_id"],
            self.books["family_id"],
            self.books["capital"],
            self.books["pnl"],
            strict=True,
        ):
            offsets[row[int(cohort_id)], col[family_id]] += pnl
            floors[row[int(cohort_id)], col[family_id]] -= capital
        for label, i in row.items():
            offsets[i] -= self.sums["pnl"][self.boot.stratum_of == label].sum(axis=0)
        return self.boot.floored_total(self.sums["pnl"], strata, offsets, floors)


def _limits(raw: Any) -> tuple[Decimal, BetLimits]:
    """The read model's own reading of a cohort's stamped constants, from raw JSON text."""
    return stamped_limits(js(raw) if raw is not None else None)


def random_null(t: Tables, cohort: int | None, seeds: Iterable[int]) -> pd.DataFrame:
    """P/L of skill-free random traders per seed × cohort, on the frozen universes seen."""
    cohorts = t.get("cohorts", "id number constants")
    decisions = t.get("decisions", "id cohort_id decision_week market_snapshot_id")
    if cohort is not None:
        ids = set(cohorts.loc[cohorts["number"] == cohort, "id"])
        decisions = decisions[decisions["cohort_id"].isin(ids)]
    runs = (
        decisions[decisions["market_snapshot_id"].notna()]
        .groupby(["cohort_id", "decision_week", "market_snapshot_id"], as_index=False)
        .size()
        .sort_values(
            ["cohort_id", "decision_week", "size", "market_snapshot_id"],
            ascending=[True, True, False, True],
        )
        .drop_duplicates(["cohort_id", "decision_week"])
    )
    if runs.empty:
        return pd.DataFrame(columns=["seed", "cohort_number", "pnl"])
    chosen = set(runs["market_snapshot_id"].astype("int64"))
    items = t.get("market_snapshot_items", "snapshot_id market_id rank market_type outcomes prices")
    items = items[items["snapshot_id"].isin(chosen)]
    heads = t.get("market_snapshots", "id taken_at market_count").rename(
        columns={"id": "snapshot_id"}
    )
    listed = items.merge(heads, on="snapshot_id")
    listed = listed[listed["rank"] <= listed["market_count"]].sort_values(["snapshot_id", "rank"])
    listed = listed.assign(taken_at=times(listed["taken_at"]))
    rows = t.get("markets", "id market_type outcomes prices status resolution_outcome resolved_at")
    rows = rows[rows["id"].isin(set(items["market_id"]))]
    settled = times(rows["resolved_at"])
    markets = {
        mid: NullMarket(
            market_type=mtype,
            outcomes=tuple(js(outcomes) or ()),
            prices=tuple(js(prices) or ()),
            settled_at=at if status in ("resolved", "cancelled") and not pd.isna(at) else None,
            winner=winner if status == "resolved" else None,
        )
        for mid, mtype, outcomes, prices, status, winner, at in zip(
            rows["id"],
            rows["market_type"],
            rows["outcomes"],
            rows["prices"],
            rows["status"],
            rows["resolution_outcome"],
            settled,
            strict=True,
        )
    }
    universes: dict[int, tuple[Any, tuple[Any, ...]]] = {}
    for sid, group in listed.groupby("snapshot_id", sort=True):
        found = [
            candidate(mid, mtype, list(js(o) or ()), list(js(p) or ()))
            for mid, mtype, o, p in zip(
                group["market_id"],
                group["market_type"],
                group["outcomes"],
                group["prices"],
                strict=True,
            )
        ]
        universes[int(sid)] = (
            group["taken_at"].iloc[0],
            tuple(c for c in found if c is not None),
        )
    replay = []
    used = cohorts[cohorts["id"].isin(set(runs["cohort_id"]))].sort_values("number")
    for cid, number, constants in zip(used["id"], used["number"], used["constants"], strict=True):
        balance, limits = _limits(constants)
        mine = runs[runs["cohort_id"] == cid].sort_values("decision_week")
        legs = tuple(
            NullRun(int(week), *universes.get(int(sid), (datetime.min.replace(tzinfo=UTC), ())))
            for week, sid in zip(mine["decision_week"], mine["market_snapshot_id"], strict=True)
        )
        replay.append(NullCohort(int(number), balance, limits, legs))
    chosen_seeds = list(seeds)
    pnl = simulate_random_pnl(replay, markets, chosen_seeds)
    return pd.DataFrame(
        {
            "seed": np.repeat(chosen_seeds, len(replay)),
            "cohort_number": np.tile([c.number for c in replay], len(chosen_seeds)),
            "pnl": pnl.ravel(),
        }
    )


def leaderboard(t: Tables, cohort: int | None = None) -> pd.DataFrame:
    """The leaderboard's point numbers, intervals, P(rank 1) and random-null percentile."""
    fb = NaiveBootstrap(t, cohort, stats.DEFAULT_REPLICATES, 0)
    capital = fb.head["capital"].to_numpy()
    return_reps = fb.pnl_replicates() / capital * 100.0
    s = fb.sums
    totals = {name: matrix.sum(axis=0) for name, matrix in s.items()}
    frame = pd.DataFrame(
        {
            "family_id": fb.families,
            "total_pnl": fb.head["pnl"].to_numpy(),
            "return_pct": fb.head["pnl"].to_numpy() / capital * 100.0,
            "brier": totals["brier_sum"]
            / np.where(totals["brier_n"] > 0, totals["brier_n"], np.nan),
            "resolved_bets": totals["brier_n"],
            "p_rank_1": stats.p_rank_first(return_reps),
        }
    )
    frame["return_ci_low"], frame["return_ci_high"] = stats.percentile_interval(return_reps)
    brier_reps = fb.boot.ratio(s["brier_sum"], s["brier_n"])
    frame["brier_ci_low"], frame["brier_ci_high"] = stats.percentile_interval(brier_reps)
    ranks = stats.competition_ranks(return_reps)
    frame["rank_low"], frame["rank_high"] = stats.rank_interval(ranks)
    null = random_null(t, cohort, range(DEFAULT_NULL_SEEDS))
    percentiles = []
    if not null.empty:
        table = null.pivot(index="seed", columns="cohort_number", values="pnl")
        for fid, pnl, cap in zip(fb.head["family_id"], fb.head["pnl"], capital, strict=True):
            entered = set(fb.books.loc[fb.books["family_id"] == fid, "cohort_number"])
            seen = sorted(n for n in entered if n in table.columns)
            returns = table[seen].sum(axis=1).to_numpy() / cap * 100.0
            percentiles.append(stats.percentile_of(pnl / cap * 100.0, returns) if seen else np.nan)
    frame["random_null_percentile"] = percentiles or np.nan
    return frame


def leaderboard_checks(frame: pd.DataFrame) -> Checks:
    out: Checks = {}
    for row in frame.itertuples(index=False):
        for column in ("total_pnl", "brier", "p_rank_1", "return_ci_low", "random_null_percentile"):
            out[f"{row.family_id}.{column}"] = float(getattr(row, column))
    return out


# --------------------------------------------------------------------------------------------
# Pages: each returns the numbers its check compares


def overview_page(t: Tables, _sel: Selection) -> Checks:
    key = {"families": "id"}
    return {
        f"rows.{table.name}": float(len(t.get(table.name, key.get(table.name, "id"))))
        for table in OVERVIEW_TABLES
    }


def leaderboard_page(t: Tables, _sel: Selection) -> Checks:
    numbers = sorted(set(t.get("cohorts", "number")["number"]), reverse=True)
    if not numbers:
        return {}
    return {**leaderboard_checks(leaderboard(t, None)), **curve_checks(curves(t, "ALL"))}


def _standings(t: Tables, cohort: int) -> pd.DataFrame:
    agents = agents_frame(t)
    agents = agents[agents["cohort_number"] == cohort]
    latest = latest_snapshots(t)
    pos = t.get("positions", "agent_id status cost_basis")
    open_cost = (
        pos[pos["status"] == "open"]
        .assign(open_cost=lambda p: money(p["cost_basis"]))
        .groupby("agent_id")["open_cost"]
        .sum()
    )
    frame = agents.merge(latest, on="agent_id", how="left", suffixes=("_agent", ""))
    total = frame["total_value"].fillna(
        frame["cash_balance_agent"] + frame["agent_id"].map(open_cost).fillna(0.0)
    )
    pnl = total - frame["starting_balance"]
    frame["return_pct"] = frame["total_pnl"].fillna(pnl) / frame["starting_balance"] * 100.0
    return frame


def cohorts_page(t: Tables, _sel: Selection) -> Checks:
    agents = agents_frame(t)
    if agents.empty:
        return {}
    latest = latest_snapshots(t)
    decisions = t.get("decisions", "cohort_id decision_week status legs action cost_usd")
    pos = t.get("positions", "agent_id status")
    joined = agents.merge(latest, on="agent_id", how="left", suffixes=("_agent", ""))
    per = joined.groupby("cohort_number").agg(
        capital=("starting_balance", "sum"), total_pnl=("total_pnl", lambda s: s.sum(min_count=1))
    )
    done = decisions[decisions["status"] != "in_progress"]
    weeks = done.groupby("cohort_id")["decision_week"].max()
    open_count = (
        pos[pos["status"] == "open"].merge(agents, on="agent_id").groupby("cohort_number").size()
    )
    newest = int(per.index.max())
    standings = _standings(t, newest)
    best = standings.sort_values(["return_pct", "family_id"], ascending=[False, True]).iloc[0]
    cohort_id = int(agents.loc[agents["cohort_number"] == newest, "cohort_id"].iloc[0])
    mine = decisions[decisions["cohort_id"] == cohort_id]
    amount = sum(leg_numbers(legs)[3] for legs in mine["legs"])
    return {
        "cohorts.rows": float(len(per)),
        "cohorts.newest_pnl": float(per.loc[newest, "total_pnl"]),
        "cohorts.newest_weeks": float(weeks.get(cohort_id, 0)),
        "cohorts.open_positions": float(open_count.sum()),
        "standings.best_return": float(best["return_pct"]),
        "weeks.rows": float(len(mine)),
        "weeks.amount": float(amount),
        **curve_checks(curves(t, "ALL", cohort=newest)),
    }


def agent_page(t: Tables, _sel: Selection) -> Checks:
    index = agent_index(t)
    if index.empty:
        return {}
    cohort = int(index["cohort_number"].max())
    family = str(index.loc[index["cohort_number"] == cohort, "family_id"].iloc[0])
    me = index[(index["cohort_number"] == cohort) & (index["family_id"] == family)]
    agent_id = int(me["agent_id"].iloc[0])
    latest = latest_snapshots(t)
    mine = latest[latest["agent_id"] == agent_id]
    briers = t.get("brier_scores", "agent_id brier_score")
    positions = positions_frame(t)
    positions = positions[positions["agent_id"] == agent_id]
    trades = trades_frame(t)
    trades = trades[trades["agent_id"] == agent_id]
    decisions = decisions_list(t, cohort=cohort, family=family)
    return {
        "summary.total_value": float(mine["total_value"].iloc[0]) if len(mine) else np.nan,
        "summary.resolved_bets": float((briers["agent_id"] == agent_id).sum()),
        "positions.rows": float(len(positions)),
        "positions.value": float(positions["current_value"].sum()),
        "trades.rows": float(len(trades)),
        "trades.amount": float(trades["amount"].sum()),
        "decisions.rows": float(len(decisions)),
        **curve_checks(curves(t, "ALL", cohort=cohort, family=family)),
    }


def _brier_rows(t: Tables) -> pd.DataFrame:
    rows = t.get(
        "brier_scores",
        "id agent_id forecast_probability actual_outcome brier_score market_price created_at",
    ).sort_values("id")
    return rows.merge(agents_frame(t)[["agent_id", "family_id"]], on="agent_id")


def _calibration_summary(t: Tables, rows: pd.DataFrame) -> Checks:
    """Per family: Brier (Murphy), its bootstrap interval's low end, the market's Brier."""
    fb = NaiveBootstrap(t, None, stats.DEFAULT_REPLICATES, 0)
    low, _ = stats.percentile_interval(fb.boot.ratio(fb.sums["brier_sum"], fb.sums["brier_n"]))
    column = {fid: i for i, fid in enumerate(fb.families)}
    out: Checks = {}
    for family_id, group in rows.groupby("family_id", sort=True):
        f, o = group["forecast_probability"].to_numpy(), group["actual_outcome"].to_numpy()
        priced = group[group["market_price"].notna()]
        market = stats.murphy_decomposition(
            priced["market_price"].to_numpy(),
            priced["actual_outcome"].to_numpy(),
            stats.DEFAULT_BINS,
        )
        out[f"{family_id}.brier"] = stats.murphy_decomposition(f, o, stats.DEFAULT_BINS).brier
        out[f"{family_id}.brier_ci_low"] = float(low[column[family_id]])
        out[f"{family_id}.market_brier"] = market.brier
    return out


def calibration_live(t: Tables, _sel: Selection) -> Checks:
    rows = _brier_rows(t)
    return _calibration_summary(t, rows) if len(rows) else {}


def calibration_page(t: Tables, _sel: Selection) -> Checks:
    if t.get("cohorts", "number").empty:
        return {}
    rows = _brier_rows(t)
    if rows.empty:
        return {}
    out = _calibration_summary(t, rows)
    for family_id, group in rows.groupby("family_id", sort=True):
        f, o = group["forecast_probability"].to_numpy(), group["actual_outcome"].to_numpy()
        bins = stats.reliability_bins(f, o, stats.DEFAULT_BINS)
        out[f"{family_id}.reliability_count"] = float(bins.count.sum())
    day = times(rows["created_at"]).dt.date
    by_day = (
        rows.assign(date=day).groupby(["family_id", "date"])["brier_score"].agg(["sum", "count"])
    )
    for family_id, group in by_day.groupby(level="family_id"):
        out[f"{family_id}.cumulative_brier"] = float(group["sum"].sum() / group["count"].sum())
    return out


def leaderboard_live(t: Tables, _sel: Selection) -> Checks:
    return leaderboard_checks(leaderboard(t, None))


def decisions_page(t: Tables, _sel: Selection) -> Checks:
    if agent_index(t).empty:
        return {}
    weeks = sorted(set(t.get("decisions", "decision_week")["decision_week"]))
    listing = decisions_list(t)
    return {
        **filter_choices(t),
        "weeks": float(len(weeks)),
        "decisions.rows": float(len(listing)),
        "decisions.amount": float(listing["amount"].sum()),
        "decisions.first_id": float(listing["id"].iloc[0]) if len(listing) else np.nan,
    }


def decision_click(t: Tables, sel: Selection) -> Checks:
    if sel.decision_id is None:
        return {}
    decisions = t.get(
        "decisions",
        "id agent_id cohort_id decision_week status action attempts prompt_system prompt_user "
        "raw_response parsed_response validation_errors legs error tokens_in tokens_out "
        "cost_usd latency_ms served_model provider decided_at created_at market_snapshot_id",
    )
    attempts = t.get(
        "decision_attempts",
        "id decision_id attempt_no outcome raw_response error tokens_in tokens_out cost_usd "
        "latency_ms served_model provider created_at",
    )
    agents = agents_frame(t)
    heads = t.get("market_snapshots", "id taken_at market_count")
    row = decisions[decisions["id"] == sel.decision_id].merge(agents, on="agent_id")
    row = row.merge(heads, left_on="market_snapshot_id", right_on="id", how="left")
    mine = attempts[attempts["decision_id"] == sel.decision_id]
    return {
        "detail.attempt_log": float(len(mine)),
        "detail.prompt_chars": float(len(row["prompt_user"].iloc[0] or "")),
        "detail.legs": float(len(js(row["legs"].iloc[0]) or [])),
    }


def markets_page(t: Tables, _sel: Selection) -> Checks:
    markets = t.get(
        "markets",
        "id question event_title category market_type status outcomes prices volume end_date "
        "resolution_outcome updated_at",
    )
    categories = sorted(set(markets["category"].dropna()))
    pos = t.get("positions", "id market_id agent_id status")
    held = pos.groupby("market_id").agg(
        positions=("id", "count"),
        open_positions=("status", lambda s: int((s == "open").sum())),
        agents=("agent_id", "nunique"),
    )
    frame = markets.merge(held, left_on="id", right_index=True, how="left")
    frame = frame.assign(_held=frame["positions"].fillna(0)).sort_values(
        ["_held", "volume", "id"], ascending=[False, False, True]
    )
    frame = frame.head(1000)
    return {
        "categories": float(len(categories)),
        "markets.rows": float(len(frame)),
        "markets.positions": float(frame["positions"].fillna(0).sum()),
    }


def market_click(t: Tables, sel: Selection) -> Checks:
    if sel.market_id is None:
        return {}
    markets = t.get(
        "markets",
        "id question event_title category market_type status outcomes prices volume end_date "
        "resolution_outcome updated_at description event_id slug neg_risk uma_resolution_status "
        "resolved_at source",
    )
    market = markets[markets["id"] == sel.market_id]
    items = t.get("market_snapshot_items", "snapshot_id market_id outcomes prices")
    heads = t.get("market_snapshots", "id taken_at")
    shown = items[items["market_id"] == sel.market_id].merge(
        heads, left_on="snapshot_id", right_on="id"
    )
    points = [*zip(shown["outcomes"], shown["prices"], strict=True)]
    points += [*zip(market["outcomes"], market["prices"], strict=True)]
    prices = sum(min(len(js(o) or []), len(js(p) or [])) for o, p in points)
    positions = positions_frame(t)
    positions = positions[positions["market_id"] == sel.market_id]
    trades = trades_frame(t)
    trades = trades[trades["market_id"] == sel.market_id]
    briers = t.get("brier_scores", "id market_id agent_id trade_id brier_score")
    agents_frame(t)  # the Brier rows' cohort and family
    return {
        "price_path.rows": float(prices),
        "positions.rows": float(len(positions)),
        "trades.rows": float(len(trades)),
        "brier.rows": float((briers["market_id"] == sel.market_id).sum()),
        "detail.agents": float(positions["agent_id"].nunique()),
    }


def snapshot_click(t: Tables, sel: Selection) -> Checks:
    if sel.snapshot_id is None:
        return {}
    heads = t.get("market_snapshots", "id taken_at market_count")
    items = t.get(
        "market_snapshot_items",
        "snapshot_id rank market_id question market_type outcomes prices volume end_date",
    )
    mine = items[items["snapshot_id"] == sel.snapshot_id].sort_values("rank")
    return {
        "snapshot.count": float(heads.loc[heads["id"] == sel.snapshot_id, "market_count"].iloc[0]),
        "snapshot.rows": float(len(mine)),
    }


def operations_page(t: Tables, _sel: Selection) -> Checks:
    runs = t.get("job_runs", "id job slot status started_at finished_at owner error counts")
    runs = runs.assign(slot=times(runs["slot"]))
    health = runs.groupby("job").agg(runs=("id", "count"), last_run=("slot", "max"))
    ordered = runs.sort_values(["slot", "id"], ascending=False)
    failures = ordered[ordered["status"] == "failed"].head(20)
    listing = ordered.head(1000)
    logs = t.get("system_logs", "id at level source message context")
    sources = sorted(set(logs["source"]))
    logs = logs[logs["level"].isin(levels_at_least("INFO"))].assign(at=lambda f: times(f["at"]))
    logs = logs.sort_values(["at", "id"], ascending=False).head(1000)
    decisions = t.get(
        "decisions", "agent_id cohort_id decision_week attempts tokens_in tokens_out cost_usd"
    ).merge(agents_frame(t), on=["agent_id", "cohort_id"])
    weeks = t.get("cohorts", "id week_start").rename(columns={"id": "cohort_id"})
    decisions = decisions.merge(weeks, on="cohort_id")
    decisions["week"] = times(decisions["week_start"]) + pd.to_timedelta(
        decisions["decision_week"] - 1, unit="W"
    )
    by_family = decisions.groupby("family_id")["cost_usd"].sum()
    by_week = decisions.groupby(["week", "family_id"]).size()
    return {
        "health.runs": float(health["runs"].sum()),
        "failures.rows": float(len(failures)),
        "runs.rows": float(len(listing)),
        "sources": float(len(sources)),
        "log.rows": float(len(logs)),
        "log.first_id": float(logs["id"].iloc[0]) if len(logs) else np.nan,
        "spend.cost": float(by_family.sum()),
        "spend_week.rows": float(len(by_week)),
    }


def filter_choices(t: Tables) -> Checks:
    """How many cohorts and families the filters offer (from the whole agent index)."""
    index = agent_index(t)
    return {
        "filters.cohorts": float(index["cohort_number"].nunique()),
        "filters.families": float(index["family_id"].nunique()),
    }


def exports_page(t: Tables, _sel: Selection) -> Checks:
    return filter_choices(t)


def curve_page(range_key: str) -> Callable[[Tables, Selection], Checks]:
    def run(t: Tables, _sel: Selection) -> Checks:
        return curve_checks(curves(t, range_key))

    return run


# --------------------------------------------------------------------------------------------
# The read models' side of each check


def summary_checks(summary: pd.DataFrame) -> Checks:
    """Brier, its interval's low end and the market's Brier per family (both sides)."""
    out: Checks = {}
    for row in summary.itertuples(index=False):
        out[f"{row.family_id}.brier"] = float(row.brier)
        out[f"{row.family_id}.brier_ci_low"] = float(row.brier_ci_low)
        out[f"{row.family_id}.market_brier"] = float(row.market_brier)
    return out


def _curve_expect(results: dict[str, Any]) -> Checks:
    frame = results.get("portfolio_curves")
    return curve_checks(frame) if frame is not None else {}


def _filter_expect(r: dict[str, Any]) -> Checks:
    options = r["filter_options"]
    return {
        "filters.cohorts": float(len(options.cohorts)),
        "filters.families": float(len(options.families)),
    }


def expect(page: str, results: dict[str, Any]) -> Checks:
    """The numbers of `page`'s naive check, taken from the read models' results."""
    r = results
    if page.startswith("overview"):
        counts = r["current_or_live"][0] if page == "overview" else r["overview"]
        return {f"rows.{t}": float(n) for t, n in zip(counts["table"], counts["rows"], strict=True)}
    if page == "leaderboard":
        return {**leaderboard_checks(r["current_or_live"][0]), **_curve_expect(r)}
    if page.startswith("leaderboard()"):
        return leaderboard_checks(r["leaderboard"])
    if page == "cohorts":
        listing, standings, weeks = r["cohorts"], r["cohort_standings"], r["decisions_by_week"]
        return {
            "cohorts.rows": float(len(listing)),
            "cohorts.newest_pnl": float(listing["total_pnl"].iloc[0]),
            "cohorts.newest_weeks": float(listing["decision_weeks"].iloc[0]),
            "cohorts.open_positions": float(listing["open_positions"].sum()),
            "standings.best_return": float(standings["return_pct"].iloc[0]),
            "weeks.rows": float(len(weeks)),
            "weeks.amount": float(weeks["amount"].sum()),
            **_curve_expect(r),
        }
    if page == "agent":
        summary = r["agent_summary"]
        return {
            "summary.total_value": float(summary["total_value"].iloc[0]),
            "summary.resolved_bets": float(summary["resolved_bets"].iloc[0]),
            "positions.rows": float(len(r["positions"])),
            "positions.value": float(r["positions"]["current_value"].sum()),
            "trades.rows": float(len(r["trades"])),
            "trades.amount": float(r["trades"]["amount"].sum()),
            "decisions.rows": float(len(r["decisions"])),
            **_curve_expect(r),
        }
    if page.startswith("calibration_summary()"):
        return summary_checks(r["calibration_summary"])
    if page == "calibration":
        out: Checks = summary_checks(r["current_or_live"][0])
        summary = r["current_or_live"][0]
        reliability = r["current_or_live#2"][0]  # the stored "reliability" frame
        for row in summary.itertuples(index=False):
            out[f"{row.family_id}.reliability_count"] = float(
                reliability.loc[reliability["family_id"] == row.family_id, "count"].sum()
            )
        over = r["current_or_live#4"][0]  # the stored "brier_over_time" frame
        for family_id, group in over.groupby("family_id"):
            out[f"{family_id}.cumulative_brier"] = float(group["cumulative_brier"].iloc[-1])
        return out
    if page == "decisions":
        listing = r["decisions"]
        return {
            **_filter_expect(r),
            "weeks": float(len(r["decision_weeks"])),
            "decisions.rows": float(len(listing)),
            "decisions.amount": float(listing["amount"].sum()),
            "decisions.first_id": float(listing["decision_id"].iloc[0]) if len(listing) else np.nan,
        }
    if page.startswith("decisions: one decision"):
        detail = r.get("decision_detail")
        if detail is None:
            return {}
        return {
            "detail.attempt_log": float(len(detail.attempt_log)),
            "detail.prompt_chars": float(len(detail.prompt_user or "")),
            "detail.legs": float(len(detail.legs)),
        }
    if page == "markets":
        listing = r["markets"]
        return {
            "categories": float(len(r["categories"])),
            "markets.rows": float(len(listing)),
            "markets.positions": float(listing["positions"].sum()),
        }
    if page.startswith("markets: one market"):
        if "market_detail" not in r:
            return {}
        return {
            "price_path.rows": float(len(r["price_path"])),
            "positions.rows": float(len(r["market_positions"])),
            "trades.rows": float(len(r["market_trades"])),
            "brier.rows": float(len(r["market_brier"])),
            "detail.agents": float(r["market_detail"]["agents"].iloc[0]),
        }
    if page.startswith("markets: frozen snapshot"):
        if "snapshot_markets" not in r:
            return {}
        return {
            "snapshot.count": float(r["snapshot_info"]["market_count"]),
            "snapshot.rows": float(len(r["snapshot_markets"])),
        }
    if page == "operations":
        listing = r["job_runs#2"] if "job_runs#2" in r else r["job_runs"]
        failures = r["job_runs"] if "job_runs#2" in r else pd.DataFrame()
        log = r["system_log"]
        return {
            "health.runs": float(r["job_health"]["runs"].sum()),
            "failures.rows": float(len(failures)),
            "runs.rows": float(len(listing)),
            "sources": float(len(r["log_sources"])),
            "log.rows": float(len(log)),
            "log.first_id": float(log["log_id"].iloc[0]) if len(log) else np.nan,
            "spend.cost": float(r["api_spend"].by_family["cost_usd"].sum()),
            "spend_week.rows": float(len(r["api_spend"].by_week)),
        }
    if page == "exports":
        return _filter_expect(r)
    if page.startswith("curve "):
        return _curve_expect(r)
    return {}


NAIVE: dict[str, Callable[[Tables, Selection], Checks]] = {
    "leaderboard": leaderboard_page,
    "leaderboard() computed live": leaderboard_live,
    "cohorts": cohorts_page,
    "agent": agent_page,
    "calibration": calibration_page,
    "calibration_summary() computed live": calibration_live,
    "decisions": decisions_page,
    "decisions: one decision (click)": decision_click,
    "markets": markets_page,
    "markets: one market (click)": market_click,
    "markets: frozen snapshot (click)": snapshot_click,
    "exports": exports_page,
    "overview": overview_page,
    "overview() computed live": overview_page,
    "operations": operations_page,
    **{f"curve {key} all cohorts": curve_page(key) for key in RANGES},
}


def compare(naive: Checks, read: Checks, *, rel: float = 1e-6, abs_tol: float = 1e-3) -> list[str]:
    """The checks that differ (NaN equals NaN); a check missing on one side is a mismatch."""
    bad = []
    for key in sorted(set(naive) | set(read)):
        a, b = naive.get(key), read.get(key)
        if a is None or b is None:
            bad.append(f"{key}: naive {a} vs read model {b}")
            continue
        if np.isnan(a) and np.isnan(b):
            continue
        if not np.isclose(a, b, rtol=rel, atol=abs_tol):
            bad.append(f"{key}: naive {a:.6g} vs read model {b:.6g}")
    return bad
