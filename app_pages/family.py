"""Family: one family across its cohorts — its headline numbers with their intervals, its place
in each cohort (each row opens that agent), and its P/L curve over every cohort it ran in.
Opens on the best-ranked LLM family. The numbers across cohorts are the sidebar's methodology
version's (v1 on a database without a selector): its extended cohorts and its other version's
are listed with the others but left out of them (methodology §18; v1 and v2 never pooled)."""

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.query.scope import key_version, protocol_label
from arena.analytics.stats.leaderboard import CONTENDER_KIND, with_edge
from arena.analytics.stats.risk import leaderboard_risk
from arena.analytics.views.agents import (
    best_llm_family,
    family_cohorts,
    family_returns,
    pooled_brier,
)
from arena.analytics.views.protocol import number_ranges
from arena.analytics.views.versions import VersionScope, version_scope
from arena.dashboard import documents, fmt, links, notices, picks, portfolio, reads, tables
from arena.dashboard.risk_section import show_risk

NO_FAMILY = "No family has an agent yet: run `arena start-cohort` or `make demo`."
INTERVAL = "95% interval"
STATISTICS = documents.doc_link("methodology", "19-statistics-honest-uncertainty")
# The per-cohort table: what a person reads (the CSV keeps every column, raw).
COHORT_COLUMNS = {
    "cohort_number": st.column_config.NumberColumn("Cohort", width="small"),
    "status": st.column_config.TextColumn("Status", width="small"),
    "week_start": st.column_config.Column("Week start"),
    "rank_of": st.column_config.TextColumn(
        "Rank", help="Rank by return among the cohort's agents, baselines included."
    ),
    "return_pct": st.column_config.Column("Return"),
    "vs_mean": st.column_config.Column(
        "vs average", help="Return minus the cohort's average return, in percentage points."
    ),
    "vs_best": st.column_config.Column(
        "vs best", help="Return minus the cohort's best agent's, in percentage points."
    ),
    "vs_worst": st.column_config.Column(
        "vs worst", help="Return minus the cohort's worst agent's, in percentage points."
    ),
    "brier": st.column_config.Column("Brier", help="Lower is better."),
    "resolved_bets": st.column_config.NumberColumn("Resolved bets"),
    "decisions": st.column_config.NumberColumn("Decisions"),
    "api_cost_usd": st.column_config.Column("API cost"),
}
COHORT_FORMATS = {
    "week_start": fmt.day,
    "return_pct": fmt.signed_pct,
    "vs_mean": fmt.signed_points,
    "vs_best": fmt.signed_points,
    "vs_worst": fmt.signed_points,
    "brier": fmt.prob,
    "api_cost_usd": fmt.cost,
}


RANK_HELP = (
    "Rank among all families, baselines included: by return (v2 under the original's rules: "
    "by dollar P/L summed over its cohorts)."
)
# v2 shows Brier as a diagnostic only (docs/methodology-v2.md).
BRIER = {"v1": "Brier", "v2": "Brier (diagnostic)"}
NEEDS_BOARD = "needs the leaderboard"
FIRST_HELP = (
    "Share of bootstrap replicates in which it has the best return among the model families "
    "(the Leaderboard's figure). Baselines and the oracle, which sees the simulated world's "
    "hidden truth, are reference rows: they never contend for rank #1."
)
REFERENCE_NOTE = "a baseline: not a contender"
EDGE = "Edge over market ↑"
EDGE_HELP = (
    "The market price's Brier − its Brier on the same bets: positive beats the market, up is "
    "better (the CSVs keep skill_vs_market, its negative)."
)
LISTED_BELOW = ("it is listed in the table below", "they are listed in the table below")


def interval(row: pd.Series, prefix: str, write: Callable[[Any], str]) -> str | None:
    """A metric's interval line, "95% interval [a, b]" (None without the value)."""
    point = {"pnl": "total_pnl", "return": "return_pct"}.get(prefix, prefix)
    low, high = row[f"{prefix}_ci_low"], row[f"{prefix}_ci_high"]
    if fmt.missing(row[point]) or fmt.missing(low):
        return None
    return f"{INTERVAL} [{write(low)}, {write(high)}]"


def metric(where: Any, label: str, value: str, note: str | None = None, **kwargs: Any) -> None:
    """A metric with an optional grey note under it (an interval, a caveat)."""
    where.metric(label, value, note, delta_color="off", delta_arrow="off", **kwargs)


st.title("Family")
# The sidebar's version (None on a v1-only database, read exactly as before): whose cohorts the
# figures across cohorts cover.
methodology = picks.methodology_link()
key = methodology or "v1"  # a version, or a protocol group (`scope.protocol_key`)
version = protocol_label(key)  # as the text names it ("v1 + horizon 14d")
rules = key_version(key)  # whose rules (Brier's name) the figures are read under
scoped = picks.scoped(methodology)
returns: pd.DataFrame = reads.read(family_returns, **scoped)
if returns.empty:
    notices.nothing_yet(NO_FAMILY)

# Models first (best return first), then the baselines.
ordered = pd.concat(
    [returns[returns["kind"] != "baseline"], returns[returns["kind"] == "baseline"]]
)
families = [str(f) for f in ordered["family_id"]]
names = dict(zip(ordered["family_id"], ordered["display_name"], strict=True))
best = best_llm_family(returns) or families[0]
linked = links.get_link("family") is not None
family = links.select_link(
    "Family",
    "family",
    families,
    default=best,
    format_func=lambda f: f"{names.get(f, f)} ({f})",
)
links.set_link("family", family)  # a default choice goes into the address bar too
name = names.get(family, family)
if not linked:
    st.caption(
        f"Opened on the best-ranked LLM family by return across its cohorts, "
        f"{fmt.escaped(name)}: pick another above (models first, then baselines)."
    )
picks.version_caption(methodology)
notices.simulated_notice([family])

mine = returns.set_index("family_id").loc[family]
per_cohort: pd.DataFrame = reads.read(family_cohorts, family)
# Its extended cohorts and its other version's are listed in the table, never counted in the
# figures across cohorts.
scope: VersionScope = reads.read(version_scope, key)
in_scope = per_cohort["cohort_number"].isin(scope.pooled)  # in the version's figures
pooled = per_cohort[in_scope]
resolved = int(pooled["resolved_bets"].sum())

st.subheader("Across its cohorts")
st.caption(
    "Return is the P/L summed over the family's cohorts over the capital it was given "
    "($10,000 per cohort); Brier is the mean of (implied confidence − outcome)² over every "
    "resolved bet (lower is better); P(rank #1) is the share of bootstrap replicates in which "
    "it has the highest return among the model families, as on the Leaderboard (baselines, "
    "the oracle among them, are reference rows that never contend); edge over market is the "
    "market price's Brier minus its own on the same bets (up is better: positive beats the "
    "market); the "
    "random-null percentile is where its return falls among random traders on the same "
    "markets. Intervals are 95% cluster-bootstrap intervals "
    f"([methodology: statistics]({STATISTICS}))."
)
# The family's own left-out cohorts are named (not every one of the arena): extended ones
# apart from another version's.
left_out = sorted(int(n) for n in per_cohort.loc[~in_scope, "cohort_number"])
own_extended = [n for n in left_out if n in scope.extended]
own_other = {
    theirs: [n for n in numbers if n in left_out] for theirs, numbers in scope.other.items()
}
notices.left_out_caption(own_extended, LISTED_BELOW, other=own_other, version=key)
offered = reads.stored_or_offer("leaderboard", "leaderboard", cohort=None, methodology=methodology)
row = None
if offered is not None:
    board, stored = offered
    board = with_edge(board)
    found = board[board["family_id"] == family]
    row = found.iloc[0] if not found.empty else None
    reads.stored_caption(stored)

top, more = st.columns(4), st.columns(4)
if row is not None:
    metric(
        top[0], "Return", fmt.signed_pct(row["return_pct"]), interval(row, "return", fmt.signed_pct)
    )
    metric(
        top[1],
        BRIER.get(rules, "Brier"),
        fmt.prob(row["brier"]),
        interval(row, "brier", fmt.prob),
    )
    if row["kind"] == CONTENDER_KIND:
        metric(top[2], "P(rank #1)", fmt.share(row["p_rank_1_contenders"], 1), help=FIRST_HELP)
    else:
        metric(top[2], "P(rank #1)", "reference", REFERENCE_NOTE, help=FIRST_HELP)
    metric(
        top[3],
        "Rank",
        fmt.rank_of(row["rank"], len(board)),
        f"{INTERVAL} [{int(row['rank_low'])}, {int(row['rank_high'])}]",
        help=RANK_HELP,
    )
    metric(
        more[0],
        "P/L (summed)",
        fmt.signed_money(row["total_pnl"]),
        interval(row, "pnl", fmt.signed_money),
    )
    metric(
        more[1],
        EDGE,
        fmt.signed_prob(row["edge_over_market"]),
        interval(row, "edge_over_market", fmt.signed_prob),
        help=EDGE_HELP,
    )
    metric(more[2], "Random-null percentile", fmt.percentile(row["random_null_percentile"]))
    metric(
        more[3],
        "Resolved bets",
        fmt.count(row["resolved_bets"]),
        "too early to rank" if bool(row["too_early"]) else None,
    )
else:  # no stored leaderboard yet (or no v1 cohort): the point numbers, without intervals
    why = f"no {version} cohort" if pooled.empty and left_out else NEEDS_BOARD
    metric(top[0], "Return", fmt.signed_pct(mine["return_pct"]))
    metric(top[1], BRIER.get(rules, "Brier"), fmt.prob(pooled_brier(pooled)))
    metric(top[2], "P(rank #1)", fmt.DASH, why)
    ranked = int((returns["rank"] > 0).sum())
    metric(top[3], "Rank", fmt.rank_of(mine["rank"], ranked), help=RANK_HELP)
    metric(
        more[0], "P/L (summed)", fmt.signed_money(mine["total_pnl"] if mine["cohorts"] else None)
    )
    metric(more[1], EDGE, fmt.DASH, why, help=EDGE_HELP)
    metric(more[2], "Random-null percentile", fmt.DASH, why)
    metric(more[3], "Resolved bets", fmt.count(resolved))
st.caption(
    f"Over {fmt.count(mine['cohorts'])} {f'{version} ' if left_out else ''}"
    f"cohort{'' if mine['cohorts'] == 1 else 's'}: "
    f"{fmt.count(pooled['decisions'].sum())} decisions "
    f"({fmt.count(pooled['fallback_holds'].sum())} fallback HOLDs), API cost "
    f"{fmt.cost(pooled['api_cost_usd'].sum())} in total."
)

st.subheader("Risk")
# The leaderboard row carries them (stored hourly); without one (or a frame stored before the
# risk columns), the same figures read live: daily values, no bootstrap.
if row is not None and "sharpe" in row.index:
    risk = row
else:
    every = reads.read(leaderboard_risk, **scoped)
    risk = every.loc[family] if family in every.index else pd.Series(dtype="float64")
show_risk(
    risk,
    drawdown_on="its combined book's end-of-day values",
    caption=(
        f"Of its combined book across its {f'{version} ' if left_out else ''}cohorts (every agent, "
        "replicates included, as one portfolio): each day's return is their P/L that day "
        "over their value the evening before; paper figures, risk-free rate 0 "
        f"([methodology: statistics]({STATISTICS}))."
    ),
)

st.subheader("In each cohort")
if per_cohort.empty:
    notices.empty(f"{fmt.escaped(name)} has no agent yet.")
else:
    st.caption(
        "Its agent in each cohort, newest first, against the cohort's other agents. "
        "Select a row to open that agent."
        + (
            f" Extended: {', '.join(f'#{n}' for n in own_extended)} (listed here with the "
            "cohort's own numbers, left out of the figures across cohorts)."
            if own_extended
            else ""
        )
        + "".join(
            f" Methodology {theirs}: {number_ranges(numbers)} (listed here with the cohort's "
            f"own numbers, never pooled with {version})."
            for theirs, numbers in sorted(own_other.items())
            if numbers
        )
    )
    shown = per_cohort.assign(
        rank_of=[
            fmt.rank_of(r, n) for r, n in zip(per_cohort["rank"], per_cohort["agents"], strict=True)
        ]
    )[list(COHORT_COLUMNS)]
    rows = tables.table(
        shown,
        key=f"family-cohorts:{family}",
        formats=COHORT_FORMATS,
        column_config=COHORT_COLUMNS,
        select=True,
    )
    tables.download_csv(per_cohort, f"family-{family}-cohorts")
    if rows:
        number = int(shown.iloc[rows[0]]["cohort_number"])
        st.page_link(
            "app_pages/agent.py",
            label=f"Open {fmt.escaped(name)} in cohort {number}",
            icon=":material/smart_toy:",
            query_params={"cohort": str(number), "family": family},
        )

st.subheader(f"P/L over time, all its {f'{version} ' if left_out else ''}cohorts")
if pooled.empty and left_out:
    ran = "extended cohorts only" if not any(own_other.values()) else f"no plain {version} cohort"
    notices.empty(
        f"{fmt.escaped(name)} ran in {ran}: their curves are on each cohort's view "
        "(select its row above to open the agent)."
    )
else:
    # v2's summed curve is its own: never v1's agents with v2's.
    curve = f"family-{family}" + ("" if methodology in (None, "v1") else f"-{methodology}")
    portfolio.curve_section(curve, family=family, methodology=methodology)
