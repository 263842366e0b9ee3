"""Replicates: for the cohorts started with several independent agents per family
(`ARENA_REPLICATES=N`), how far a family's replicates differ beside how far families differ,
how much of the spread of returns is replicate noise, and whether the leaderboard's order
survives picking another replicate — from the hourly job's stored frames."""

import math
from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.stats.replicates import AGENT_COLUMNS, replicate_agents, replicated_cohorts
from arena.analytics.stats.replicates import split_figures as split
from arena.analytics.stored import current_stored
from arena.dashboard import documents, fmt, notices, picks, reads, tables
from arena.dashboard.charts import replicates as replicate_charts

NO_REPLICATES = (
    "No cohort here has replicates, so this page has nothing to show (`make demo` plays one "
    "agent per family). To see it filled, run `make demo-extensions`: a demo season with 3 "
    "replicates per family (and stated probabilities), in data/demo-extensions.db, served "
    "like `make demo`. Or by hand: `arena demo --replicates 3` into a new database; on a live "
    "deployment, start cohorts with `ARENA_REPLICATES=3` (three independent agents per "
    "family in every cohort it starts)."
)
NOTES = documents.doc_link("methodology", "18-methodology-notes-every-interpretation-we-made")
# Column widths (px): both tables fit 1440 px with the sidebar open.
FAMILY, NUMBER, WIDE = 160, 92, 112
SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def picks_count(value: float) -> str:
    """1,234 / 3.1 × 10¹⁰: how many ways of picking one replicate there are."""
    if fmt.missing(value):
        return fmt.DASH
    if value < 1e6:
        return fmt.count(value)
    exponent = math.floor(math.log10(value))
    return f"{value / 10**exponent:.1f} × 10{str(exponent).translate(SUPERSCRIPT)}"


def replicates_text(value: float) -> str:
    """3 (agents per cohort), or 2.5 when the family's cohorts have different numbers."""
    if fmt.missing(value):
        return fmt.DASH
    return fmt.count(value) if float(value).is_integer() else f"{value:.1f}"


def spread_rows(families: pd.DataFrame) -> pd.DataFrame:
    """Per family, as text: pooled return and Brier, their spread within the family, and the
    gap to the next family."""
    return pd.DataFrame(
        {
            "family": families["display_name"],
            "replicates": [replicates_text(v) for v in families["replicates"]],
            "pooled_return": [fmt.signed_pct(v) for v in families["pooled_return_pct"]],
            "return_sd": [fmt.points(v) for v in families["return_sd"]],
            "return_range": [fmt.points(v) for v in families["return_range"]],
            "return_gap": [fmt.points(v) for v in families["return_gap"]],
            "pooled_brier": [fmt.prob(v) for v in families["pooled_brier"]],
            "brier_sd": [fmt.prob(v) for v in families["brier_sd"]],
            "brier_gap": [fmt.prob(v) for v in families["brier_gap"]],
            "resolved": [fmt.count(v) for v in families["resolved_bets"]],
        }
    )


def rank_range(best: float, worst: float) -> str:
    if fmt.missing(best) or fmt.missing(worst):
        return fmt.DASH
    return f"{int(best)}" if best == worst else f"{int(best)}–{int(worst)}"


def stability_rows(families: pd.DataFrame) -> pd.DataFrame:
    """Per family, as text: its pooled rank, how often a pick keeps it, its rank range."""
    total = len(families)
    return pd.DataFrame(
        {
            "family": families["display_name"],
            "pooled_rank": [fmt.rank_of(r, total) for r in families["pooled_rank"]],
            "keeps_rank": [fmt.share(v) for v in families["keeps_rank"]],
            "rank_range": [
                rank_range(b, w)
                for b, w in zip(families["rank_best"], families["rank_worst"], strict=True)
            ],
            "return_sd": [fmt.points(v) for v in families["return_sd"]],
            "return_gap": [fmt.points(v) for v in families["return_gap"]],
        }
    )


def table(rows: pd.DataFrame, key: str, reference: pd.Series, config: dict[str, Any]) -> None:
    """A text table with every family in view (no inner scrolling), baselines tinted."""
    st.dataframe(
        tables.style_rows(rows, reference=reference),
        hide_index=True,
        key=key,
        column_config=config,
        height="content",
        placeholder=fmt.DASH,
    )


def zoom_domain(agents: pd.DataFrame) -> tuple[float, float] | None:
    """The return range (%) of the LLM families' agents and break-even, padded: the chart's
    zoom past outliers such as the oracle (None without an LLM agent)."""
    llm = agents.loc[agents["kind"] != "baseline", "return_pct"].dropna()
    if llm.empty:
        return None
    low, high = min(float(llm.min()), 0.0), max(float(llm.max()), 0.0)
    pad = max((high - low) * 0.08, 1.0)
    return low - pad, high + pad


def beyond(agents: pd.DataFrame, families: pd.DataFrame, domain: tuple[float, float]) -> list[str]:
    """The families with an agent or their pooled return outside `domain`, as text."""
    low, high = domain
    out = []
    for _, family in families.iterrows():
        mine = agents.loc[agents["family_id"] == family["family_id"], "return_pct"]
        values = [*mine, family["pooled_return_pct"]]
        if any(v < low or v > high for v in values):
            pooled = fmt.signed_pct(family["pooled_return_pct"])
            out.append(
                f"{fmt.escaped(family['display_name'])} ({fmt.signed_pct(mine.min())} to "
                f"{fmt.signed_pct(mine.max())}, pooled {pooled})"
            )
    return out


st.title("Replicates")
st.caption(
    "A protocol extension, not v1: a cohort started with `ARENA_REPLICATES=N` fields N "
    "independent agents per family (same prompt, own $10,000, own decisions and positions, "
    "labelled r1…rN). The leaderboard pools them; this page asks how much the replicates of "
    "one family differ against how much families differ, and whether the ranking survives "
    f"picking another replicate ([methodology: replicates]({NOTES}))."
)

numbers: list[int] = sorted(reads.read(replicated_cohorts), reverse=True)
if not numbers:
    notices.nothing_yet(NO_REPLICATES)
cohort = picks.extension_cohort_link(numbers, "All replicated cohorts")
found = reads.stored_or_offer("replicates", "replicate figures", cohort=cohort)
if found is None:
    st.stop()
frame, stored = found
families, summary = split(frame)
stored_agents = reads.read(current_stored, "replicate_agents", cohort) if stored else None
agents = (
    stored_agents.frame
    if stored_agents is not None
    else reads.read(replicate_agents, cohort=cohort)
)
if families.empty or summary is None:
    notices.nothing_yet("No agent in this scope yet (`arena start-cohort` starts them on Sundays).")
notices.simulated_notice([str(f) for f in families["family_id"]])
reference = families["kind"] == "baseline"
scope = "all replicated cohorts" if cohort is None else f"cohort {cohort}"

st.subheader("How much of the spread of returns is replicate noise")
reads.stored_caption(stored)
noise, llm_noise, whole, pairs = st.columns(4)
noise.metric(
    "Noise share [95%]",
    fmt.share_interval(
        summary["noise_share"], summary["noise_share_ci_low"], summary["noise_share_ci_high"]
    ),
    help=(
        "Share of the variance of agent returns (around each cohort's mean) that is replicate "
        "noise: the variance between replicates of one family over the total. 0%: replicates "
        "agree exactly; 100%: families differ no more than their replicates do."
    ),
)
llm_noise.metric(
    "Among LLM families [95%]",
    fmt.share_interval(
        summary["llm_noise_share"],
        summary["llm_noise_share_ci_low"],
        summary["llm_noise_share_ci_high"],
    ),
    help=(
        "The same share without the baselines and the oracle, whose distance from the models "
        "can dwarf every difference between models."
    ),
)
whole.metric(
    "Ranking unchanged",
    fmt.share(summary["full_agreement"]),
    help="Share of picks (one replicate per family and cohort) ranking every family as pooled.",
)
pairs.metric(
    "Pairs in pooled order",
    fmt.share(summary["pairwise_agreement"]),
    help="Mean share of family pairs a pick orders as the pooled ranking does.",
)
ways = (
    f"all {fmt.count(summary['picks'])} ways"
    if bool(summary["enumerated"])
    else f"{fmt.count(summary['picks'])} seeded random ways, of "
    f"{picks_count(summary['possible_picks'])}"
)
st.caption(
    f"Over {scope}: {fmt.count(summary['scope_agents'])} agents of "
    f"{fmt.count(summary['scope_families'])} families in {fmt.count(summary['scope_cohorts'])} "
    f"cohort{'s' if summary['scope_cohorts'] != 1 else ''}. Noise share: the variance of "
    "returns within families (replicate noise) over their variance around each cohort's "
    "mean, each on its degrees of freedom, capped at 100%. Its interval: 2,000 seeded "
    "bootstrap draws of the replicates within each family and cohort (a guide: three "
    "replicates say little about a family's tails). "
    f"Rank stability: the families ranked by their picked agents' return, for {ways} of "
    "picking one replicate per family and cohort."
)

st.subheader("Each family's replicates")
domain = zoom_domain(agents)
off_scale = beyond(agents, families, domain) if domain is not None else []
zoomed = bool(off_scale) and st.toggle(
    "Zoom to the LLM families' returns", value=True, key="replicates-zoom"
)
tables.chart(replicate_charts.replicate_returns, agents, families, domain if zoomed else None)
st.caption(
    "One dot per agent at its return (P/L over its $10,000), a sub-row per cohort, the thin "
    "line spanning that cohort's replicates (the spread the tables measure); the bar is the "
    "family's pooled return, Σ P/L / Σ capital; families in order of it. "
    "Identical dots of a deterministic baseline (cash, favourite, oracle) sit on top of each "
    "other: zero spread is its correct figure."
    + (f" Off the zoomed scale: {'; '.join(off_scale)}." if zoomed else "")
)

st.subheader("Spread within families beside the gaps between them")
table(
    spread_rows(families),
    "replicate-spread",
    reference,
    {
        "family": tables.column("Family", FAMILY),
        "replicates": tables.column("Replicates", 84, "Agents per cohort"),
        "pooled_return": tables.column("Pooled return", NUMBER, "Σ P/L / Σ capital of its agents"),
        "return_sd": tables.column(
            "Return SD",
            NUMBER,
            "SD of its replicates' returns within a cohort, pooled over cohorts",
        ),
        "return_range": tables.column(
            "Return range", NUMBER, "Highest − lowest replicate in a cohort, averaged"
        ),
        "return_gap": tables.column(
            "Gap to next", NUMBER, "Its pooled return − the next family's down the list"
        ),
        "pooled_brier": tables.column("Pooled Brier", NUMBER, "Mean over all its Brier rows"),
        "brier_sd": tables.column(
            "Brier SD", 84, "SD of its replicates' mean Brier within a cohort"
        ),
        "brier_gap": tables.column(
            "Brier gap", 84, "The next worse family's pooled Brier − its own"
        ),
        "resolved": tables.column("Resolved bets", WIDE),
    },
)
close = families[(families["return_sd"] >= families["return_gap"])]
st.caption(
    "Percentage points (pp) for returns. Spread is the standard deviation between a family's "
    "replicates within one cohort (never across cohorts: r1 of one cohort and r1 of the next "
    "are unrelated), pooled over cohorts; Brier's from each agent's mean Brier, agents "
    "without a resolved bet left out. "
    + (
        f"{len(close)} of {len(families)} families have a return spread at least as large "
        "as their gap to the next family: replicate noise alone could swap those neighbours."
        if len(families) > 1
        else ""
    )
)

st.subheader("Rank stability: does the order survive another replicate?")
table(
    stability_rows(families),
    "replicate-ranks",
    reference,
    {
        "family": tables.column("Family", FAMILY),
        "pooled_rank": tables.column("Pooled rank", NUMBER, "By pooled return; ties share a rank"),
        "keeps_rank": tables.column(
            "Keeps its rank", WIDE, "Share of picks giving it its pooled rank"
        ),
        "rank_range": tables.column(
            "Ranks over picks", WIDE, "Its best – worst rank over the picks"
        ),
        "return_sd": tables.column("Return SD", NUMBER),
        "return_gap": tables.column("Gap to next", NUMBER),
    },
)
st.caption(
    "A pick takes one replicate of every family in every cohort in scope and ranks the "
    "families by the return of the picked agents; a family keeps its rank when the pick gives "
    "it the rank the pooled returns give it. Baselines are ranked like any family (tinted "
    "rows). A ranking that survives most picks rests on more than one lucky replicate."
)

name = "all" if cohort is None else f"cohort-{cohort}"
agents_csv, families_csv, _ = st.columns([1, 1, 2])
with agents_csv:
    tables.download_csv(
        agents[list(AGENT_COLUMNS)], f"replicate-agents-{name}", label="Download agents CSV"
    )
with families_csv:
    tables.download_csv(frame, f"replicate-families-{name}", label="Download family figures CSV")
