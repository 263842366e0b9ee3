"""Leaderboard: every family's v1 scores with 95% intervals, baselines as reference rows,
and the portfolio curve per family."""

import streamlit as st

from arena.analytics.cohorts import cohort_numbers
from arena.analytics.stored import current_or_live
from arena.dashboard import fmt, ui

ui.entry_guard()

NO_COHORT = "No cohort yet: run `arena start-cohort` or `make demo`."
NO_AGENT = "This cohort has no agents: `arena start-cohort` creates one per enabled family."

# What the table shows, in order (the CSV holds exactly these columns).
SHOWN = [
    "rank",
    "display_name",
    "family_id",
    "kind",
    "cohorts",
    "total_pnl",
    "return_pct",
    "return_ci_low",
    "return_ci_high",
    "p_rank_1",
    "rank_low",
    "rank_high",
    "brier",
    "brier_ci_low",
    "brier_ci_high",
    "resolved_bets",
    "win_rate",
    "decisions",
    "fallback_holds",
    "api_cost_usd",
    "too_early",
]
FORMATS = {
    "total_pnl": fmt.money,
    "return_pct": fmt.signed_pct,
    "return_ci_low": fmt.signed_pct,
    "return_ci_high": fmt.signed_pct,
    "p_rank_1": fmt.share,
    "brier": fmt.prob,
    "brier_ci_low": fmt.prob,
    "brier_ci_high": fmt.prob,
    "win_rate": fmt.share,
    "api_cost_usd": "${:,.4f}",
}
LABELS = {
    "display_name": "Family",
    "family_id": "Id",
    "total_pnl": "Total P/L",
    "return_pct": "Return",
    "return_ci_low": "Return 95% low",
    "return_ci_high": "Return 95% high",
    "p_rank_1": "P(rank 1)",
    "rank_low": "Rank 95% low",
    "rank_high": "Rank 95% high",
    "brier": "Brier",
    "brier_ci_low": "Brier 95% low",
    "brier_ci_high": "Brier 95% high",
    "resolved_bets": "Resolved bets",
    "win_rate": "Win rate",
    "fallback_holds": "Fallback HOLDs",
    "api_cost_usd": "API cost",
    "too_early": "Too early to rank",
}

st.title("Leaderboard")
st.caption(
    "Frontier language models paper-trade Polymarket prediction markets in weekly cohorts, "
    "each starting with $10,000. P/L is summed over a family's cohorts (not averaged); return "
    "is that P/L over the capital it was given; Brier is the mean of (implied confidence − "
    "outcome)² over its resolved bets (lower is better). Intervals are 95% cluster-bootstrap "
    "intervals over Polymarket events "
    f"([methodology §19]({ui.doc_link('methodology', '19-statistics-honest-uncertainty')})). "
    "Baselines are reference rows (tinted, italic); families with too few resolved bets to "
    "rank are greyed, not hidden."
)

numbers = ui.read(cohort_numbers)
if not numbers:
    ui.empty(NO_COHORT)
    st.stop()

cohort = ui.select_link(
    "Cohort",
    "cohort",
    numbers,
    format_func=lambda n: "All cohorts" if n == ui.ALL else f"Cohort {n}",
)
board, stored = ui.read(current_or_live, "leaderboard", cohort=cohort)
if board.empty:
    ui.empty(NO_AGENT)
    st.stop()
ui.stored_caption(stored)
ui.simulated_notice([str(f) for f in board["family_id"]])

shown = board[SHOWN].reset_index(drop=True)
ui.table(
    shown,
    key="leaderboard-table",
    reference=shown["kind"] == "baseline",
    grey=shown["too_early"],
    formats=FORMATS,
    column_config={key: st.column_config.Column(label) for key, label in LABELS.items()},
)
ui.download_csv(shown, f"leaderboard-{'all' if cohort is None else f'cohort-{cohort}'}")

st.subheader("Portfolio over time")
ui.curve_section("leaderboard", cohort=cohort)
