"""Agent: one family in one cohort — its numbers, curve, positions with their outcome, trades
and decisions."""

import pandas as pd
import streamlit as st

from arena.analytics.agents import OUTCOMES, agent_index, agent_summary, positions, trades
from arena.analytics.decisions import decisions
from arena.dashboard import fmt, ui

ui.entry_guard()

NO_AGENT = "No agent yet: run `arena start-cohort` (one agent per enabled family) or `make demo`."
POSITION_FORMATS = {
    "avg_entry_price": "{:.4f}",
    "mark_price": "{:.4f}",
    "shares": "{:,.2f}",
    "cost_basis": fmt.money,
    "current_value": fmt.money,
    "unrealized_pnl": fmt.money,
    "realized_pnl": fmt.money,
}
TRADE_FORMATS = {
    "amount": fmt.money,
    "realized_pnl": fmt.money,
    "cash_before": fmt.money,
    "price": "{:.4f}",
    "shares": "{:,.2f}",
    "implied_confidence": "{:.3f}",
}

st.title("Agent")
index: pd.DataFrame = ui.read(agent_index)
if index.empty:
    ui.empty(NO_AGENT)
    st.stop()

left, right = st.columns(2)
numbers = sorted({int(n) for n in index["cohort_number"]}, reverse=True)
cohort = ui.select_link(
    "Cohort",
    "cohort",
    numbers,
    default=numbers[0],
    format_func=lambda n: f"Cohort {n}",
    container=left,
)
in_cohort = index[index["cohort_number"] == cohort]
families = [str(f) for f in in_cohort["family_id"]]
names = dict(zip(in_cohort["family_id"], in_cohort["display_name"], strict=True))
family = ui.select_link(
    "Family",
    "family",
    families,
    default=families[0],
    format_func=lambda f: f"{names.get(f, f)} ({f})",
    container=right,
)

ui.simulated_notice([family])
summary: pd.DataFrame = ui.read(agent_summary, cohort, family)
if summary.empty:
    ui.empty(f"Family {family} has no agent in cohort {cohort}: pick another family.")
    st.stop()
me = summary.iloc[0]
st.text(f"{me['display_name']} — cohort {cohort} — model {me['model_id']} ({me['kind']})")
top = st.columns(4)
top[0].metric("Portfolio value", fmt.money(me["total_value"]))
top[1].metric("P/L", fmt.money(me["total_pnl"]))
top[2].metric("Return", fmt.signed_pct(me["return_pct"]))
top[3].metric("Cash", fmt.money(me["cash_balance"]))
more = st.columns(4)
more[0].metric(f"Brier ({int(me['resolved_bets'])} resolved)", fmt.prob(me["brier"]))
more[1].metric("Open positions", int(me["open_positions"]))
more[2].metric("Decisions (fallback HOLDs)", f"{me['decisions']} ({me['fallback_holds']})")
more[3].metric("API cost", f"${me['api_cost_usd']:,.4f}")
ui.download_csv(summary, f"agent-{cohort}-{family}-summary", label="Download summary CSV")

st.subheader("Portfolio over time")
ui.curve_section(f"agent-{cohort}-{family}", cohort=cohort, family=family)

st.subheader("Positions")
book: pd.DataFrame = ui.read(positions, cohort=cohort, family=family)
if book.empty:
    ui.empty("No position yet: this agent has not bet (or every leg was rejected).")
else:
    counts = book["outcome"].value_counts()
    st.caption(
        "Outcome: "
        + ", ".join(f"{name} {int(counts.get(name, 0))}" for name in OUTCOMES.values())
        + ". Open positions are valued at their latest mark "
        f"([methodology §12.4]({ui.doc_link('methodology', '12-snapshot-methodology')})), as in "
        "`arena export positions`."
    )
    ui.table(book, key=f"agent-positions:{cohort}:{family}", formats=POSITION_FORMATS)
    ui.download_csv(book, f"agent-{cohort}-{family}-positions")

st.subheader("Trades")
ledger: pd.DataFrame = ui.read(trades, cohort=cohort, family=family)
if ledger.empty:
    ui.empty("No trade yet.")
else:
    ui.table(ledger, key=f"agent-trades:{cohort}:{family}", formats=TRADE_FORMATS)
    ui.download_csv(ledger, f"agent-{cohort}-{family}-trades")

st.subheader("Decisions")
made: pd.DataFrame = ui.read(decisions, cohort=cohort, family=family)
if made.empty:
    ui.empty("No decision yet: `arena decide` runs Sundays at :05 UTC.")
else:
    st.caption("Select a row to audit that decision.")
    rows = ui.table(made, key=f"agent-decisions:{cohort}:{family}", select=True)
    ui.download_csv(made, f"agent-{cohort}-{family}-decisions")
    if rows:
        decision_id = int(made.iloc[rows[0]]["decision_id"])
        st.page_link(
            "pages/decisions.py",
            label=f"Audit decision {decision_id} (prompts, raw answers, legs)",
            icon=":material/receipt_long:",
            query_params={"cohort": str(cohort), "family": family, "decision": str(decision_id)},
        )
