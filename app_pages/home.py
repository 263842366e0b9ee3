"""Home: is the arena running (`arena.analytics.views.status`), who leads (the hourly job's stored
leaderboard of the sidebar's methodology version, never computed here), how the benchmark
works, and where to look next."""

from datetime import UTC, datetime
from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.query.scope import key_version, protocol_label, rule_key
from arena.analytics.stats.leaderboard import DEFAULT_MIN_RESOLVED, with_edge
from arena.analytics.stored import current_stored
from arena.analytics.views.protocol import DECISION_SCHEDULE
from arena.analytics.views.status import ArenaStatus, Leaders, arena_status, leaders
from arena.dashboard import documents, fmt, notices, picks, reads

STATISTICS = documents.doc_link("methodology", "19-statistics-honest-uncertainty")
ON_THE_LEADERBOARD = (
    "the Leaderboard shows it when it is chosen in its cohort filter",
    "the Leaderboard shows each when it is chosen in its cohort filter",
)
STATE_ICONS = {
    "no_cohort": ":material/hourglass_empty:",
    "live": ":material/radio_button_checked:",
    "catching_up": ":material/sync:",
    "finished": ":material/flag:",
    "stopped": ":material/pause_circle:",
    "playing": ":material/play_circle:",
}

st.title("Forecaster Arena")
st.caption(
    "Language models paper-trade Polymarket prediction markets in weekly cohorts, with the "
    "same cash, the same frozen markets and the same rules, scored on return and on the Brier "
    "score of their bets."
)


def status_sentence(status: ArenaStatus) -> str:
    """What the state means for what the pages show (the rules: `arena.analytics.views.status`)."""
    last = fmt.instant(status.last_data)
    if status.state == "live":
        return (
            f"The scheduler is running: the newest snapshot is from {last}. The pages read the "
            f"database as it is now (refreshed every {reads.CACHE_TTL_S} s)."
        )
    if status.state == "catching_up":
        return (
            f"Jobs are running, but the newest snapshot ({fmt.instant(status.latest_snapshot)})"
            f" is behind the newest job run ({fmt.instant(status.last_job_run)}): the "
            "scheduler is catching up on missed slots, or its snapshot job fails (Operations "
            "says which)."
        )
    if status.state == "finished" and status.demo:
        return (
            f"Season finished, last data {last}: the offline demo (`arena demo`) played this "
            "season on a simulated clock and stopped. No more runs are due."
        )
    if status.state == "finished":
        return f"Season finished, last data {last}: every cohort is completed."
    if status.state == "playing":
        return playing_sentence(status)
    if status.state == "stopped":
        return (
            f"No job has run since {fmt.instant(status.last_job_run)}: the scheduler "
            f"(`python scheduler.py`) is not running. The pages show the data as of {last}."
        )
    return notices.NO_COHORT


def playing_sentence(status: ArenaStatus) -> str:
    """The demo's progress while `make demo` plays the season behind the dashboard."""
    return (
        f"The offline demo is still playing this season: simulated date "
        f"{fmt.instant(status.latest_snapshot)}, {fmt.count(status.cohorts)} cohort(s), "
        f"{fmt.count(status.decisions or 0)} decisions so far. The pages fill in as it plays "
        f"(reread every {reads.CACHE_TTL_S} s); the leaderboard is stored when it ends. (No `make "
        "demo` running? Then the season was stopped half-way: `make demo` rebuilds it.)"
    )


NOT_DUE = {
    "finished": "none: the season is over",
    "stopped": "none while stopped",
    "playing": "on the demo's simulated clock",
}
STATE_COLORS: dict[str, Any] = {  # st.badge's colours
    "no_cohort": "gray",
    "live": "green",
    "catching_up": "blue",
    "finished": "gray",
    "stopped": "orange",
    "playing": "blue",
}


def cell(where: Any, label: str, value: str, help: str | None = None) -> None:
    """One figure of a strip: its label small, its value bold (text, never Markdown)."""
    where.caption(label, help=help)
    where.markdown(f"**{fmt.escaped(value)}**")


# The judgement's instant, to the minute: cached reads then hold for the minute.
now = datetime.now(UTC).replace(second=0, microsecond=0)
status: ArenaStatus = reads.read(arena_status, now)

strip = st.container(border=True)
cells = strip.columns(4)
cells[0].caption("Status")
cells[0].badge(status.label, icon=STATE_ICONS[status.state], color=STATE_COLORS[status.state])
cell(cells[1], "Latest snapshot", fmt.instant(status.latest_snapshot))
cell(
    cells[2],
    "Next decision run",
    NOT_DUE.get(status.state) or fmt.instant(status.next_decision),
    help=f"Agents decide weekly, {DECISION_SCHEDULE}, while the scheduler runs.",
)
statuses = ", ".join(f"{n:,} {name}" for name, n in status.by_status.items())
cell(cells[3], "Cohorts", f"{status.cohorts:,} ({statuses})" if statuses else "none yet")
if status.state == "no_cohort":
    notices.empty(notices.NO_COHORT)
else:
    strip.markdown(status_sentence(status))

notices.simulated_notice()
# The sidebar's version (None on a v1-only database, read as v1 always was): whose cohorts the
# leader is read over. v1 ranks by return, v2 by summed dollar P/L (its frozen-quotes cohorts
# by return); never pooled.
methodology = picks.methodology_link() if status.cohorts else None
version = key_version(methodology or "v1")  # a protocol group's rules: its version's
named = protocol_label(methodology or version)  # the scope as the text names it

st.subheader("Current leader")
picks.version_caption(methodology)
# Across cohorts the leaderboard is one version's: extended cohorts are left out (methodology
# §18), and another version's cohorts are never pooled in.
left_out = notices.left_out_note(None, ON_THE_LEADERBOARD, methodology) if status.cohorts else []
scoped = picks.scoped(methodology)
stored = reads.read(current_stored, "leaderboard", None, **scoped) if status.cohorts else None
lead: Leaders = leaders(with_edge(stored.frame) if stored is not None else pd.DataFrame())
if status.state == "playing" and stored is None:
    st.caption(
        "The leader appears when the demo season has finished: its final analyses run stores "
        "the leaderboard. The Leaderboard can compute one over the season so far."
    )
elif status.cohorts and stored is None:
    st.caption(
        f"The leader appears after the hourly analyses: the scheduler's `arena analyses` job "
        f"computes the leaderboard at {reads.ANALYSES_AT} (a database built by `make demo` or "
        "imported has it after `arena analyses`). The Leaderboard can compute it now."
    )
elif stored is not None:
    if lead.model is not None:
        row = lead.model
        board = st.container(border=True)
        figures = board.columns([1.2, 1.3, 0.8, 1.3, 0.9])
        cell(figures[0], "Leading model", str(row["display_name"]))
        cell(
            figures[1],
            "Return [95% interval]",
            fmt.pct_interval(row["return_pct"], row["return_ci_low"], row["return_ci_high"]),
            help="Total P/L over the capital it was given, summed over its cohorts.",
        )
        cell(
            figures[2],
            "P(rank #1)",
            fmt.share(row["p_rank_1_contenders"], 1),
            help="Share of bootstrap replicates in which it ranks first among the model "
            "families, as on the Leaderboard; the baselines and the oracle (which sees the "
            "simulated world's hidden truth) are reference rows, never contenders.",
        )
        cell(
            figures[3],
            "Brier [95% interval]" if version == "v1" else "Brier (diagnostic) [95% interval]",
            fmt.prob_interval(row["brier"], row["brier_ci_low"], row["brier_ci_high"]),
            help="Mean of (implied confidence − outcome)² over resolved bets; lower is better.",
        )
        cell(
            figures[4],
            f"Rank of {lead.families}",
            fmt.rank_interval(row["rank"], row["rank_low"], row["rank_high"]),
        )
        early = (
            f"Too early to rank: {fmt.count(row['resolved_bets'])} resolved bets, fewer than "
            f"{DEFAULT_MIN_RESOLVED}. "
            if bool(row["too_early"])
            else f"{fmt.count(row['resolved_bets'])} resolved bets. "
        )
        ranked_by = {
            "v1": "by return",
            "v2": "by dollar P/L summed over its cohorts",
        }.get(
            rule_key(methodology or "v1"),
            "by portfolio value per dollar of capital (its return)",
        )
        board.caption(
            f"The best-ranked model over all {f'{named} ' if left_out else ''}cohorts, "
            f"{ranked_by}. {early}Intervals are 95% "
            "cluster-bootstrap intervals over Polymarket events "
            f"([how they are computed]({STATISTICS}))."
        )
    if lead.top is not None:
        top = lead.top
        above = "" if lead.model is None else ", ranks above every model"
        top_return = fmt.pct_interval(
            top["return_pct"], top["return_ci_low"], top["return_ci_high"]
        )
        st.caption(
            f"Top of the table: {fmt.escaped(top['display_name'])}, a reference row{above}: "
            f"return {top_return}."
        )
    reads.stored_caption(stored)
else:
    st.caption("No leader before the first cohort.")

st.subheader("How it works")
st.markdown(
    "- Every Sunday a new **cohort** starts: each model family gets one agent with $10,000 of "
    "virtual cash, and the baselines (cash, favourite, random) play alongside.\n"
    f"- Each week ({DECISION_SCHEDULE}) every agent sees the same frozen list of Polymarket "
    "markets and its portfolio, and answers BET, SELL or HOLD.\n"
    "- A bet's size is its confidence: implied confidence = amount ÷ 25% of cash, so the "
    "**Brier score** of its bets measures calibration with money on it.\n"
    "- Every portfolio is valued every 10 minutes; markets settle as Polymarket resolves them.\n"
    "- The leaderboard adds 95% intervals, P(rank #1) and a random-trader null, so it says "
    "whether a difference is real. Every prompt, answer and trade is kept and exportable.\n"
    f"- The full protocol and its constants: [Methodology]({documents.doc_link('methodology')})."
    + (
        "\n- **Methodology v2** (the sidebar's selector; never pooled with v1): prices are "
        "order-book midpoints, the 25% cap bounds a decision's total bets, and agents are "
        "ranked by dollar P/L summed over cohorts, Brier a diagnostic only "
        f"([methodology v2]({documents.doc_link('methodology-v2')}))."
        if methodology is not None
        else ""
    )
)

st.subheader("Where to look")
family_link = {"family": str(lead.model["family_id"])} if lead.model is not None else {}
for where, (page, label, icon, about, params) in zip(
    st.columns(4),
    [
        ("leaderboard", "Leaderboard", "leaderboard", "every family ranked, with intervals", {}),
        ("family", "Family", "groups", "one model across its cohorts", family_link),
        ("decisions", "Decisions", "receipt_long", "every prompt, answer and trade", {}),
        ("methodology", "Methodology", "menu_book", "the rules and constants in force", {}),
    ],
    strict=True,
):
    where.page_link(
        f"app_pages/{page}.py", label=label, icon=f":material/{icon}:", query_params=params or None
    )
    where.caption(about)
