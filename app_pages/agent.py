"""Agent: one family in one cohort — its place in the cohort, its numbers and curve, positions
with their outcome, trades and decisions. Opens on the newest cohort's best-ranked LLM agent (on
a database of several methodology versions, the newest cohort of the sidebar's version), and
says which version its cohort ran: an agent's figures are its cohort's version's."""

import pandas as pd
import streamlit as st

from arena.analytics.stats.risk import agent_risk
from arena.analytics.views.agents import OUTCOMES, agent_index, agent_summary, positions, trades
from arena.analytics.views.cohorts import best_llm, cohort_field, cohort_standings
from arena.analytics.views.decisions import decisions
from arena.dashboard import documents, fmt, links, notices, picks, portfolio, reads, tables
from arena.dashboard.risk_section import agent_figures, show_risk

NO_AGENT = "No agent yet: run `arena start-cohort` (one agent per enabled family) or `make demo`."
SNAPSHOTS = documents.doc_link("methodology", "12-snapshot-methodology")
# Columns a person reads, in the order shown (the CSVs keep every column under its stable name,
# in the read model's order); None: not shown.
POSITION_COLUMNS = {
    "position_id": st.column_config.NumberColumn("Position", width="small"),
    "question": st.column_config.TextColumn("Question", width="large"),
    "side": st.column_config.TextColumn("Side", width="small"),
    "outcome": st.column_config.TextColumn("Outcome", width="small"),
    "stake": st.column_config.Column("Stake", help="What was paid into the position (its buys)"),
    "cost_basis": st.column_config.Column("Open cost"),
    "current_value": st.column_config.Column("Value"),
    "unrealized_pnl": st.column_config.Column("Unrealized P/L"),
    "realized_pnl": st.column_config.Column("Realized P/L"),
    "shares": st.column_config.Column("Shares"),
    "avg_entry_price": st.column_config.Column("Entry price"),
    "mark_price": st.column_config.Column("Mark"),
    "market_id": st.column_config.TextColumn("Market", width="small"),
    "opened_at": st.column_config.Column("Opened (UTC)"),
    "closed_at": st.column_config.Column("Closed (UTC)"),
    "cohort_number": None,
    "family_id": None,
    "status": None,
}
POSITION_FORMATS = {
    "avg_entry_price": fmt.price,
    "mark_price": fmt.price,
    "shares": "{:,.2f}",
    "stake": fmt.money,
    "cost_basis": fmt.money,
    "current_value": fmt.money,
    "unrealized_pnl": fmt.signed_money,
    "realized_pnl": fmt.signed_money,
}
TRADE_COLUMNS = {
    "created_at": st.column_config.Column("Time (UTC)"),
    "trade_type": st.column_config.TextColumn("Type", width="small"),
    "question": st.column_config.TextColumn("Question", width="large"),
    "side": st.column_config.TextColumn("Side", width="small"),
    "amount": st.column_config.Column("Amount"),
    "price": st.column_config.Column("Price"),
    "shares": st.column_config.Column("Shares"),
    "implied_confidence": st.column_config.Column("Implied confidence"),
    "realized_pnl": st.column_config.Column("Realized P/L"),
    "cash_before": st.column_config.Column("Cash before"),
    "decision_id": st.column_config.Column("Decision"),
    "position_id": st.column_config.Column("Position"),
    "market_id": st.column_config.TextColumn("Market", width="small"),
    "trade_id": st.column_config.NumberColumn("Trade", width="small"),
    "cohort_number": None,
    "family_id": None,
}
TRADE_FORMATS = {
    "amount": fmt.money,
    "realized_pnl": fmt.signed_money,
    "cash_before": fmt.money,
    "price": fmt.price,
    "shares": "{:,.2f}",
    "implied_confidence": fmt.prob,
    "decision_id": fmt.reference_id,
}
DECISION_COLUMNS = {
    "decision_id": st.column_config.NumberColumn("Decision", width="small"),
    "decision_week": st.column_config.NumberColumn("Week", width="small"),
    "decided_at": st.column_config.Column("Decided (UTC)"),
    "action": st.column_config.TextColumn("Action", width="small"),
    "status": st.column_config.TextColumn("Status"),
    "bets": st.column_config.NumberColumn("Bets", width="small"),
    "sells": st.column_config.NumberColumn("Sells", width="small"),
    "rejected": st.column_config.NumberColumn("Rejected legs"),
    "amount": st.column_config.Column("Bet"),
    "attempts": st.column_config.NumberColumn("Attempts", width="small"),
    "cost_usd": st.column_config.Column("API cost"),
    "tokens_in": st.column_config.Column("Tokens in"),
    "tokens_out": st.column_config.Column("Tokens out"),
    "latency_ms": st.column_config.Column("Latency"),
    "served_model": st.column_config.TextColumn("Served model"),
    "market_snapshot_id": st.column_config.Column("Market snapshot"),
    "cohort_number": None,
    "family_id": None,
    "display_name": None,
}
DECISION_FORMATS = {
    "amount": fmt.money,
    "tokens_in": fmt.count,
    "tokens_out": fmt.count,
    "cost_usd": fmt.cost,
    "latency_ms": fmt.milliseconds,
    "market_snapshot_id": fmt.reference_id,
}

st.title("Agent")
index: pd.DataFrame = reads.read(agent_index)
if index.empty:
    notices.nothing_yet(NO_AGENT)

left, right = st.columns(2)
numbers = sorted({int(n) for n in index["cohort_number"]}, reverse=True)
versions = picks.cohort_versions()  # None: one version only, no labels (as before v2)
methodology = picks.methodology_link()  # in the sidebar: the default cohort is its newest
cohort = picks.cohort_link(
    numbers,
    all_label=None,
    container=left,
    default=picks.newest_of(numbers, methodology),
    versions=versions,
)
standings: pd.DataFrame = reads.read(cohort_standings, cohort)
families = list(dict.fromkeys(str(f) for f in standings["family_id"]))  # best return first
names = dict(zip(index["family_id"], index["display_name"], strict=True))  # without replicate
best = best_llm(standings) or families[0]
linked = links.get_link("family") is not None
family = links.select_link(
    "Family",
    "family",
    families,
    default=best,
    format_func=lambda f: f"{names.get(f, f)} ({f})",
    container=right,
)
# A replicated cohort (ARENA_REPLICATES): the family's agents are its replicates; pick one.
replicates = sorted(int(r) for r in standings.loc[standings["family_id"] == family, "replicate"])
replicate = None
if len(replicates) > 1:
    replicate = links.select_link(
        "Replicate",
        "replicate",
        replicates,
        default=replicates[0],
        format_func=lambda r: f"Replicate {r} of {len(replicates)}",
        container=right,
    )
# The view shown is the view linked: a default choice goes into the address bar too.
links.set_link("cohort", cohort)
links.set_link("family", family)
if replicate is not None:
    links.set_link("replicate", replicate)
# Table keys and CSV names: one agent (its replicate too, in a replicated cohort).
agent_key = f"{cohort}-{family}" + (f"-r{replicate}" if replicate is not None else "")
if not linked:
    st.caption(
        f"Opened on cohort {cohort}'s best-ranked LLM agent by return, "
        f"{fmt.escaped(names.get(family, family))}: pick another cohort or family above."
    )

own_version = picks.cohort_version_caption(cohort)  # None: a database of one version
notices.simulated_notice([family])
summary: pd.DataFrame = reads.read(agent_summary, cohort, family, replicate)
me = summary.iloc[0]
st.text(f"{me['display_name']} — cohort {cohort} — model {me['model_id']} ({me['kind']})")
nav = st.columns([1, 1, 2])
nav[0].page_link(
    "app_pages/family.py",
    label=f"{fmt.escaped(names.get(family, family))} across its cohorts",
    icon=":material/groups:",
    query_params={"family": family},
)
nav[1].page_link(
    "app_pages/decisions.py",
    label=f"Audit its decisions in cohort {cohort}",
    icon=":material/receipt_long:",
    query_params={"cohort": str(cohort), "family": family},
)

field = cohort_field(standings, family, replicate)
place = st.columns(5)
place[0].metric(
    "Rank in cohort",
    fmt.rank_of(field["rank"], field["agents"]),
    help="Competition rank by return among the cohort's agents, baselines included.",
)
place[1].metric("Return", fmt.signed_pct(field["return_pct"]))
place[2].metric(
    "vs cohort average",
    fmt.signed_points(field["vs_mean"]),
    help=f"Average return of the cohort's agents: {fmt.signed_pct(field['cohort_mean_return'])}.",
)
place[3].metric(
    "vs cohort best",
    fmt.signed_points(field["vs_best"]),
    help=(
        f"Best: {fmt.escaped(field['cohort_best'])}, {fmt.signed_pct(field['cohort_best_return'])}."
    ),
)
place[4].metric(
    "vs cohort worst",
    fmt.signed_points(field["vs_worst"]),
    help=(
        f"Worst: {fmt.escaped(field['cohort_worst'])}, "
        f"{fmt.signed_pct(field['cohort_worst_return'])}."
    ),
)
st.caption(
    f"Cohort {cohort}'s {field['agents']} agents, baselines included: average return "
    f"{fmt.signed_pct(field['cohort_mean_return'])}, best "
    f"{fmt.signed_pct(field['cohort_best_return'])} ({fmt.escaped(field['cohort_best'])}), "
    f"worst {fmt.signed_pct(field['cohort_worst_return'])} "
    f"({fmt.escaped(field['cohort_worst'])}). Differences are in percentage points (pp)."
)
book_numbers = st.columns(4)
book_numbers[0].metric("Portfolio value", fmt.money(me["total_value"]))
book_numbers[1].metric("P/L", fmt.signed_money(me["total_pnl"]))
book_numbers[2].metric("Cash", fmt.money(me["cash_balance"]))
book_numbers[3].metric("Open positions", fmt.count(me["open_positions"]))
scores = st.columns(4)
scores[0].metric(
    "Brier" if own_version in (None, "v1") else "Brier (diagnostic)",
    fmt.prob(me["brier"]),
    help="Mean of (implied confidence − outcome)² over its resolved bets; lower is better.",
)
scores[1].metric("Resolved bets", fmt.count(me["resolved_bets"]))
scores[2].metric(
    "Decisions (fallback HOLDs)",
    f"{fmt.count(me['decisions'])} ({fmt.count(me['fallback_holds'])})",
)
scores[3].metric("API cost", fmt.cost(me["api_cost_usd"]))
tables.download_csv(summary, f"agent-{agent_key}-summary", label="Download summary CSV")

st.subheader("Portfolio over time")
portfolio.curve_section(f"agent-{cohort}-{family}", cohort=cohort, family=family)

st.subheader("Risk")
statistics = documents.doc_link("methodology", "19-statistics-honest-uncertainty")
risk: pd.DataFrame = reads.read(agent_risk, cohort=cohort, family=family, replicate=replicate)
show_risk(
    agent_figures(risk.iloc[0] if len(risk) else pd.Series(dtype="float64")),
    drawdown_on="its 10-minute portfolio curve",
    caption=(
        "Its own book: drawdown on every 10-minute snapshot, Sharpe of its daily returns "
        "(end-of-day values); paper figures, risk-free rate 0 "
        f"([methodology: statistics]({statistics}))."
    ),
)

st.subheader("Positions")
book: pd.DataFrame = reads.read(positions, cohort=cohort, family=family, replicate=replicate)
if book.empty:
    notices.empty("No position yet: this agent has not bet (or every leg was rejected).")
else:
    counts = book["outcome"].value_counts()
    st.caption(
        "Outcome: "
        + ", ".join(f"{name} {int(counts.get(name, 0))}" for name in OUTCOMES.values())
        + ". Open positions are valued at their latest mark, as in `arena export positions` "
        f"([methodology: snapshots]({SNAPSHOTS}))."
    )
    tables.table(
        book[list(POSITION_COLUMNS)],
        key=f"agent-positions:{agent_key}",
        formats=POSITION_FORMATS,
        column_config=POSITION_COLUMNS,
    )
    tables.download_csv(book, f"agent-{agent_key}-positions")

st.subheader("Trades")
ledger: pd.DataFrame = reads.read(trades, cohort=cohort, family=family, replicate=replicate)
if ledger.empty:
    notices.empty("No trade yet.")
else:
    tables.table(
        ledger[list(TRADE_COLUMNS)],
        key=f"agent-trades:{agent_key}",
        formats=TRADE_FORMATS,
        column_config=TRADE_COLUMNS,
    )
    tables.download_csv(ledger, f"agent-{agent_key}-trades")

st.subheader("Decisions")
made: pd.DataFrame = reads.read(decisions, cohort=cohort, family=family, replicate=replicate)
if made.empty:
    notices.empty("No decision yet: `arena decide` runs Sundays at :05 UTC.")
else:
    st.caption("Select a row to audit that decision.")
    rows = tables.table(
        made[list(DECISION_COLUMNS)],
        key=f"agent-decisions:{agent_key}",
        formats=DECISION_FORMATS,
        column_config=DECISION_COLUMNS,
        select=True,
    )
    tables.download_csv(made, f"agent-{agent_key}-decisions")
    if rows:
        decision_id = int(made.iloc[rows[0]]["decision_id"])
        st.page_link(
            "app_pages/decisions.py",
            label=f"Audit decision {decision_id} (prompts, raw answers, legs)",
            icon=":material/receipt_long:",
            query_params={"cohort": str(cohort), "family": family, "decision": str(decision_id)},
        )
