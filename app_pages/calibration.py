"""Calibration: is a family's v1 implied confidence a probability? Brier per family with 95%
intervals, a reliability diagram comparing two or three families (bets per bin, Wilson
intervals, sparse bins listed rather than drawn) against the market's own price on the same
bets, and Brier over time. Every frame is the hourly `analyses` job's stored one."""

from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.query.scope import is_group
from arena.analytics.stats.calibration import MIN_BIN_COUNT, family_names, reliability_diagram
from arena.analytics.stats.confidence_bets import (
    implied_overconfidence,
    return_vs_brier,
    stated_overconfidence,
)
from arena.analytics.stats.leaderboard import DEFAULT_MIN_RESOLVED, with_edge_over_market
from arena.analytics.stored import current_or_live, current_stored
from arena.dashboard import documents, fmt, links, notices, picks, reads, tables
from arena.dashboard.charts import calibration as calibration_charts

NO_BRIER = (
    "No resolved bet yet: Brier rows appear when a market an agent bought into resolves "
    "(`arena resolve`, hourly in the scheduler). `make demo` builds a season that has them."
)
NO_V1_BRIER = (
    "No resolved bet in a v1 cohort yet: the cohorts named above (extended, or of another "
    "methodology version) are left out of the all-cohort figures. Choose one of them in the "
    "cohort filter, or its version in the sidebar, to see its own."
)
STATISTICS = documents.doc_link("methodology", "19-statistics-honest-uncertainty")
MOST_FAMILIES = 3  # compared in one reliability diagram; more is unreadable
LABELS = {
    "family": st.column_config.Column("Family", width=170),
    "kind": st.column_config.Column("Kind", width=75),
    "resolved_bets": st.column_config.Column("Resolved bets", width=105),
    "brier": st.column_config.Column("Brier [95%]", width=170),
    "edge_over_market": st.column_config.Column(
        "Edge over market ↑ [95%]",
        width=180,
        help="The market price's Brier − the family's on the same bets (positive: better; "
        "the CSV also keeps skill_vs_market, its negative)",
    ),
    "market_brier": st.column_config.Column("Market's Brier [95%]", width=170),
    "market_bets": st.column_config.Column("Bets with a price", width=120),
    "ece": st.column_config.Column("ECE", width=65),
    "market_ece": st.column_config.Column("Market's ECE", width=100),
    "reliability": st.column_config.Column("Reliability", width=85),
    "resolution": st.column_config.Column("Resolution", width=85),
    "uncertainty": st.column_config.Column("Uncertainty", width=90),
}
NUMBERS = dict.fromkeys(("ece", "market_ece", "reliability", "resolution", "uncertainty"), fmt.prob)


def summary_rows(summary: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """The summary as a person reads it: display names, each interval one text column (the
    edge over the market, up is better, where the CSV keeps skill vs market too)."""
    summary = with_edge_over_market(summary)

    def interval(name: str, *, signed: bool = False) -> list[str]:
        return [
            fmt.prob_interval(v, lo, hi, signed=signed)
            for v, lo, hi in zip(
                summary[name], summary[f"{name}_ci_low"], summary[f"{name}_ci_high"], strict=True
            )
        ]

    return pd.DataFrame(
        {
            "family": [names.get(f, f) for f in summary["family_id"]],
            "kind": summary["kind"],
            "resolved_bets": summary["resolved_bets"],
            "brier": interval("brier"),
            "edge_over_market": interval("edge_over_market", signed=True),
            "market_brier": interval("market_brier"),
            "market_bets": summary["market_bets"],
            **{c: summary[c] for c in ("ece", "market_ece", "reliability", "resolution")},
            "uncertainty": summary["uncertainty"],
        }
    )


WHAT_IT_MEASURES = (
    "**What this page measures: bet size, not belief.** v1 reads a bet's *implied confidence* "
    "from its size alone: amount ÷ (25% of the cash before it); neither the price paid nor "
    "what the model believes enters it. A model that stakes 5% of its cash on a side it "
    "thinks 80% likely gets a confidence of 0.2; if such sides win most of the time, its "
    "0.2 forecasts win far more than 20% of the time. So a model that bets less than the "
    "cap plots as *under-confident* (points above the diagonal), and most do: the figures "
    "below describe how models size bets. Where a cohort also asked for a *stated* "
    "probability (protocol extension), the over/under-confidence table puts the belief-based "
    "figure beside it."
)
OVERCONFIDENCE_LABELS = {
    "family": st.column_config.Column("Family", width=170),
    "bets": st.column_config.Column("Resolved bets", width=105),
    "mean_forecast": st.column_config.Column("Mean confidence", width=120),
    "win_rate": st.column_config.Column("Win rate", width=80),
    "overconfidence": st.column_config.Column(
        "Over(+)/under(−) [95%]",
        width=190,
        help="Mean confidence − win rate over the family's resolved bets, in percentage points",
    ),
    "market_overconfidence": st.column_config.Column(
        "Market price, same bets [95%]",
        width=210,
        help="The same for the market's price of the side bought, on the bets that have one",
    ),
}


def pp_interval(value: float, low: float, high: float) -> str:
    """+3.1 pp [−1.0, +7.2]: a probability difference and its interval, in percentage points."""
    if fmt.missing(value):
        return fmt.DASH
    head = fmt.signed_points(100 * value)
    if fmt.missing(low) or fmt.missing(high):
        return head
    bounds = (fmt.signed_points(100 * b).removesuffix(" pp") for b in (low, high))
    return f"{head} [{', '.join(bounds)}]"


def overconfidence_rows(frame: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """An `overconfidence` frame as a person reads it (its order kept: most over-confident
    first)."""

    def interval(name: str) -> list[str]:
        return [
            pp_interval(v, lo, hi)
            for v, lo, hi in zip(
                frame[name], frame[f"{name}_ci_low"], frame[f"{name}_ci_high"], strict=True
            )
        ]

    return pd.DataFrame(
        {
            "family": [names.get(f, f) for f in frame["family_id"]],
            "bets": frame["bets"],
            "mean_forecast": [fmt.prob(v) for v in frame["mean_forecast"]],
            "win_rate": [fmt.prob(v) for v in frame["win_rate"]],
            "overconfidence": interval("overconfidence"),
            "market_overconfidence": interval("market_overconfidence"),
        }
    )


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def leader_line(board: pd.DataFrame | None, names: dict[str, str]) -> str | None:
    """The sentence saying the leader by return is not the leader by Brier (None when it is,
    or when there is no leaderboard to read)."""
    found = None if board is None else return_vs_brier(board)
    if found is None:
        return None
    leader, rank, total = found
    return (
        f"**{fmt.escaped(names.get(leader, leader))}** leads by return but ranks "
        f"{ordinal(rank)} of {total} by Brier among LLM families: return rewards bet sizing "
        "and timing, Brier the confidence of each bet."
    )


def pick_families(options: list[str], names: dict[str, str], default: list[str]) -> list[str]:
    """A multiselect bound to link "family" (comma-separated ids); a link naming a family
    with no resolved bet here warns and stops, never silently drops it."""
    value = links.get_link("family")
    wanted = [f for f in (value or "").split(",") if f]
    unknown = [f for f in wanted if f not in options]
    chosen = [f for f in wanted if f in options][:MOST_FAMILIES] or default
    state = "link-widget:family:calibration"
    st.session_state[state] = chosen

    def changed() -> None:
        links.set_link("family", ",".join(st.session_state.get(state) or []) or None)

    picked = st.multiselect(
        f"Families to compare (up to {MOST_FAMILIES})",
        options,
        key=state,
        on_change=changed,
        max_selections=MOST_FAMILIES,
        format_func=lambda f: names.get(f, f),
        placeholder="Pick families",
    )
    if unknown:
        links.names_nothing(
            "family with resolved bets",
            "family",
            ",".join(unknown),
            hint="it has no resolved bet in this scope, or does not exist.",
        )
    if len([f for f in wanted if f in options]) > MOST_FAMILIES:
        st.caption(f"The link names more than {MOST_FAMILIES} families: the first ones are shown.")
    return list(picked) or default


def frame_of(name: str, what: str, summary_stored: Any) -> pd.DataFrame:
    """One more of the page's stored frames. Once the person asked for the summary live (no
    current stored one), the page's cheaper frames follow it without asking again."""
    if summary_stored is None:
        frame, _ = reads.read(current_or_live, name, cohort=cohort, **version)
        return frame
    found = reads.stored_or_offer(name, what, cohort=cohort, methodology=methodology)
    if found is None:
        st.stop()
    return found[0]


st.title("Calibration")
st.info(WHAT_IT_MEASURES, icon=":material/straighten:")
st.caption(
    "v1 scores a bet's size as its confidence: implied confidence = amount / (25% of cash), "
    "Brier = (confidence − outcome)², lower is better "
    f"([methodology: scoring]({documents.doc_link('methodology', '11-scoring')})). The market's "
    "price for the side bought is scored on the same bets as a reference forecaster; edge "
    "over market = market Brier − family Brier (positive: better than the market; the CSV "
    "also keeps skill_vs_market, its negative). Intervals: "
    "95% cluster bootstrap over Polymarket events "
    f"([methodology: statistics]({STATISTICS}))."
)

numbers = picks.cohorts_or_stop()
left, right = st.columns([1, 3])
cohort = picks.cohort_link(numbers, container=left)
# The sidebar's version (None on a v1-only database) scopes the all-cohort figures; a chosen
# cohort is read as it is.
selected = picks.methodology_link()
methodology = selected if cohort is None else None
version = picks.scoped(methodology)
picks.version_caption(methodology, cohort)
# v1's note (its extended cohorts, pointing to the selector); a protocol group's (the rest).
shows_left_out = methodology in (None, "v1") or is_group(methodology)
left_out = notices.left_out_note(cohort, methodology=methodology) if shows_left_out else []
found = reads.stored_or_offer(
    "calibration_summary", "calibration summary", cohort=cohort, methodology=methodology
)
if found is None:
    st.stop()
summary, stored = found
if summary.empty:
    notices.nothing_yet(NO_V1_BRIER if left_out else NO_BRIER)
names: dict[str, str] = reads.read(family_names)
options = [str(f) for f in summary["family_id"]]
llms = [f for f, kind in zip(options, summary["kind"], strict=True) if kind != "baseline"]
with right:
    families = pick_families(options, names, (llms or options)[:MOST_FAMILIES])
notices.simulated_notice(options)

st.subheader("Brier per family")
reads.stored_caption(stored)
rows, formats = fmt.readable(summary_rows(summary, names), NUMBERS)
tables.table(
    rows,
    key="calibration-summary",
    reference=summary["kind"] == "baseline",
    grey=summary["resolved_bets"] < DEFAULT_MIN_RESOLVED,
    formats=formats,
    column_config=LABELS,
)
st.caption(
    f"Baselines are reference rows (tinted); families with fewer than {DEFAULT_MIN_RESOLVED} "
    "resolved bets are greyed (too early). ECE: the bets' average gap between forecast and "
    "observed win rate over 0.1-wide bins. Brier = reliability − resolution + uncertainty "
    "(+ a within-bin residual, in the CSV): reliability is the calibration error (0 is "
    "perfect), resolution how much outcomes differ between bins (higher is better)."
)
tables.download_csv(with_edge_over_market(summary), "calibration-summary")
tables.chart(
    calibration_charts.brier_intervals, summary.assign(family_id=[names.get(f, f) for f in options])
)

board = reads.read(current_stored, "leaderboard", cohort, **version)
if board is None and stored is None:  # the summary was computed live: so is this
    board_frame: pd.DataFrame | None = reads.read(
        current_or_live, "leaderboard", cohort=cohort, **version
    )[0]
else:
    board_frame = None if board is None else board.frame
line = leader_line(board_frame, names)
if line:
    st.markdown(line)

st.subheader("Reliability diagram")
implied = frame_of("reliability", "reliability diagram", stored)
market = frame_of("reliability_market", "market price's reliability", stored)
diagram = reliability_diagram(implied, market, families, names=names)
drawn = diagram[diagram["drawn"]]
if drawn.empty:
    st.text(f"No bin of these families holds {MIN_BIN_COUNT} bets or more yet.")
else:
    tables.chart(
        calibration_charts.reliability_intervals, drawn, [names.get(f, f) for f in families]
    )
sparse = diagram[~diagram["drawn"]]
st.caption(
    "Each point is a 0.1-wide bin of the forecast: x = the bets' mean forecast, y = the share "
    "that won, with its 95% Wilson interval; the number beside it is the bets in the bin. "
    "Grey diamonds: the market's price on the same bets (the selected families' bets pooled). "
    f"Bins with fewer than {MIN_BIN_COUNT} bets are not drawn (a bet or two sits at 0 or 1 "
    "and says little)" + (": they are listed below." if not sparse.empty else "; none here.")
)
if not sparse.empty:
    listed = pd.DataFrame(
        {
            "series": sparse["series"],
            "bin": [
                f"{lo:.1f}–{hi:.1f}"
                for lo, hi in zip(sparse["bin_low"], sparse["bin_high"], strict=True)
            ],
            "count": sparse["count"],
            "wins": sparse["wins"],
            "interval": [
                fmt.prob_interval(v, lo, hi)
                for v, lo, hi in zip(
                    sparse["observed_rate"], sparse["ci_low"], sparse["ci_high"], strict=True
                )
            ],
        }
    )
    tables.table(
        listed,
        key="calibration-sparse-bins",
        column_config={
            "series": st.column_config.Column("Forecaster", width="medium"),
            "bin": st.column_config.Column("Bin", width="small"),
            "count": st.column_config.NumberColumn("Bets", width="small"),
            "wins": st.column_config.NumberColumn("Won", width="small"),
            "interval": st.column_config.Column("Win rate [95% Wilson]", width="medium"),
        },
    )
tables.download_csv(diagram, "reliability")

st.subheader("Over- or under-confident?")
kinds = dict(zip(summary["family_id"], summary["kind"], strict=True))
implied_over = reads.read(implied_overconfidence, cohort=cohort, **version)
stated_over = reads.read(stated_overconfidence, cohort=cohort, **version)
if implied_over.empty:
    st.text("No resolved bet in this scope yet.")
else:
    tables.table(
        overconfidence_rows(implied_over, names),
        key="calibration-overconfidence",
        reference=implied_over["family_id"].map(kinds).eq("baseline"),
        column_config=OVERCONFIDENCE_LABELS,
    )
    st.caption(
        "Over/under-confidence = mean confidence − win rate over the family's resolved bets "
        "(positive: its bets won less often than their confidence said; negative: "
        "under-confident), most over-confident first. Confidence here is v1's implied "
        "confidence (bet size), so a negative figure says the family bets small, not that it "
        "doubts. Beside it, the market's price for the same sides on the same bets. Intervals: "
        "95% cluster bootstrap over Polymarket events within cohorts."
    )
    tables.download_csv(implied_over, "overconfidence")
if not stated_over.empty:
    st.markdown("**By stated probability (belief)**: the same statistic on what the models said.")
    tables.table(
        overconfidence_rows(stated_over, names),
        key="calibration-overconfidence-stated",
        reference=stated_over["family_id"].map(kinds).eq("baseline"),
        column_config={
            **OVERCONFIDENCE_LABELS,
            "mean_forecast": st.column_config.Column("Mean stated p", width=120),
            "bets": st.column_config.Column("Resolved stated bets", width=140),
        },
    )
    st.caption(
        "Stated probability p of the side bought (protocol extension stated_probability), on "
        "this scope's resolved bets with a stated p: here a positive figure is "
        "over-confidence in the usual sense."
    )
    tables.download_csv(stated_over, "overconfidence-stated")

st.subheader("Brier over time")
over_time = frame_of("brier_over_time", "Brier over time", stored)
shown = over_time[over_time["family_id"].isin(families)]
if shown.empty:
    st.text("No resolved bet of these families yet.")
else:
    tables.chart(
        calibration_charts.brier_over_time,
        shown.assign(family_id=[names.get(f, f) for f in shown["family_id"]]),
        with_market=len(families) == 1,
    )
    st.caption(
        "Cumulative Brier of each family's resolved bets up to each date"
        + (
            "; dashed: the market's price on the same bets."
            if len(families) == 1
            else " (pick one family to see the market's price on its bets beside it)."
        )
    )
    tables.download_csv(shown, "brier-over-time")
