"""Cohorts: every weekly competition with its status, and one cohort's replay bundle hash (or why
it has none yet: `replay_status`), standings, curves and decisions week by week."""

import pandas as pd
import streamlit as st

from arena.analytics.query.scope import protocol_label, protocols_present
from arena.analytics.replay.status import BundleStatus, bundle_status
from arena.analytics.views.cohorts import (
    cohort_standings_realised,
    cohorts,
    decision_grid,
    decisions_by_week,
)
from arena.dashboard import documents, fmt, notices, picks, portfolio, reads, tables
from arena.dashboard.horizon_section import cohort_sentence, horizon_rows

NOTES = documents.doc_link("methodology", "18-methodology-notes-every-interpretation-we-made")
# What each protocol extension changed, for the note on an extended cohort (methodology §18).
EXTENDED_BY = {
    "stated_probability": "its prompt asked each bet for the model's probability",
    "replicates": "every family fielded several independent agents",
    "book_execution": "its bets walked the stored order books and paid the taker fee",
    "horizon": "it was shown only markets ending within its horizon of each decision run",
}
STATUS_HELP = {
    "deciding": "agents still decide weekly",
    "tracking": "decision weeks over; positions are valued and settled",
    "completed": "every position settled",
}
# What a person reads, in the order shown (every CSV keeps the read model's stable column names,
# order and raw numbers); None: not shown.
LIST_COLUMNS = {
    "cohort_number": st.column_config.NumberColumn("Cohort", width="small"),
    "week_start": st.column_config.Column("Week start"),
    "status": st.column_config.TextColumn("Status", width="small"),
    "return_pct": st.column_config.Column("Return"),
    "total_pnl": st.column_config.Column("P/L"),
    "total_value": st.column_config.Column("Value (all agents)"),
    "agents": st.column_config.NumberColumn("Agents", width="small"),
    "decision_weeks": st.column_config.NumberColumn("Decision weeks"),
    "decisions": st.column_config.NumberColumn("Decisions", width="small"),
    "open_positions": st.column_config.NumberColumn("Open positions"),
    "last_snapshot": st.column_config.Column("Last snapshot (UTC)"),
    "completed_at": st.column_config.Column("Completed (UTC)"),
    "methodology_version": st.column_config.TextColumn("Methodology"),
    "is_default": st.column_config.CheckboxColumn(
        "v1 constants",
        help="Unticked: a research run with overridden methodology constants, or a protocol "
        "extension.",
    ),
    "extensions": st.column_config.TextColumn(
        "Extensions", help="Protocol extensions stamped on the cohort (none: methodology v1)."
    ),
}
LIST_FORMATS = {
    "week_start": fmt.day,
    "total_value": fmt.money,
    "total_pnl": fmt.signed_money,
    "return_pct": fmt.signed_pct,
}
STANDING_COLUMNS = {
    "rank": st.column_config.NumberColumn("Rank", width="small"),
    "display_name": st.column_config.TextColumn("Family"),
    "return_pct": st.column_config.Column("Return"),
    "total_pnl": st.column_config.Column("P/L"),
    "realised": st.column_config.TextColumn(
        "Realised",
        help="Of the dollars it staked: the share resolved (settled, refunded on a void, or "
        "sold) against the share still in open positions at a mark.",
    ),
    "brier": st.column_config.Column("Brier", help="Lower is better."),
    "resolved_bets": st.column_config.NumberColumn("Resolved bets"),
    "win_rate": st.column_config.Column("Win rate"),
    "total_value": st.column_config.Column("Value"),
    "cash_balance": st.column_config.Column("Cash"),
    "positions_value": st.column_config.Column("Positions"),
    "open_positions": st.column_config.NumberColumn("Open positions"),
    "decisions": st.column_config.NumberColumn("Decisions", width="small"),
    "fallback_holds": st.column_config.NumberColumn("Fallback HOLDs"),
    "api_cost_usd": st.column_config.Column("API cost"),
    "kind": st.column_config.TextColumn("Kind", width="small"),
    "model_id": st.column_config.TextColumn("Model"),
    "last_snapshot": st.column_config.Column("Last snapshot (UTC)"),
    "family_id": None,
}
STANDING_FORMATS = {
    "total_value": fmt.money,
    "cash_balance": fmt.money,
    "positions_value": fmt.money,
    "total_pnl": fmt.signed_money,
    "return_pct": fmt.signed_pct,
    "brier": fmt.prob,
    "win_rate": fmt.share,
    "api_cost_usd": fmt.cost,
}


st.title("Cohorts")
st.caption(
    "A cohort is one week's competition: every enabled family gets an agent with $10,000, "
    "decides once a week for its decision window (5 weeks in v1), then is tracked until every "
    "position settles. Status: "
    + "; ".join(f"**{status}** — {meaning}" for status, meaning in STATUS_HELP.items())
    + ". Select a row to open a cohort."
)

listing: pd.DataFrame = reads.read(cohorts)
if listing.empty:
    notices.nothing_yet(notices.NO_COHORT)


def cohort_list(frame: pd.DataFrame, key: str) -> None:
    """A row-selectable list of cohorts (`frame`, a slice of the listing) opening the one
    picked."""
    tables.pick_link(
        frame[list(LIST_COLUMNS)],
        key=key,
        link="cohort",
        column="cohort_number",
        formats=LIST_FORMATS,
        column_config=LIST_COLUMNS,
    )


archived = listing["methodology_version"] == "v1"
if archived.all():  # a v1-only database: one list, as always
    cohort_list(listing, "cohort-list")
else:  # once v2 runs, v1 cohorts are archived and shown apart, as the original does
    st.subheader("Methodology v2")
    cohort_list(listing[~archived].reset_index(drop=True), "cohort-list")
    if archived.any():
        st.subheader("Archived (v1)")
        st.caption(
            "Cohorts of methodology v1 (Gamma's display prices, a 25% cap per bet): never "
            "pooled with v2's; their figures are under v1 in the sidebar's methodology selector."
        )
        cohort_list(listing[archived].reset_index(drop=True), "cohort-list-v1")
tables.download_csv(listing, "cohorts")

numbers = [int(n) for n in listing["cohort_number"]]
# The sidebar's version (shown once a v2 cohort exists) picks the cohort it opens on.
methodology = picks.methodology_link()
versions = picks.cohort_versions()  # None: one version only, no labels (as before v2)
cohort = picks.cohort_link(
    numbers,
    all_label=None,
    label="Cohort to open",
    default=picks.newest_of(numbers, methodology),
    versions=versions,
)
row = listing.loc[listing["cohort_number"] == cohort].iloc[0]
st.header(f"Cohort {cohort}")
picks.cohort_version_caption(cohort)
cols = st.columns([1, 1.4, 0.8, 1.2, 1.2])
cols[0].metric("Status", fmt.escaped(row["status"]))
cols[1].metric("Week start", f"{row['week_start']:%Y-%m-%d}")
cols[2].metric("Agents", int(row["agents"]))
cols[3].metric("Decision weeks done", int(row["decision_weeks"]))
cols[4].metric("Return (all agents)", fmt.signed_pct(row["return_pct"]))
if str(row["extensions"]):
    groups: dict[str, list[int]] = reads.read(protocols_present)
    own_key = next((k for k, ns in groups.items() if cohort in ns), str(row["extensions"]))
    did = "; ".join(
        EXTENDED_BY.get(name.strip(), name.strip()) for name in str(row["extensions"]).split(",")
    )
    st.warning(
        f"This cohort ran the protocol extension {fmt.escaped(row['extensions'])} "
        f"({fmt.escaped(did)}), so its results are not stock "
        f"{fmt.escaped(row['methodology_version'])} results and the plain "
        f"{fmt.escaped(row['methodology_version'])} all-cohort figures leave it out. Its own "
        f"protocol's pooled figures: the sidebar's Methodology selector, "
        f"{fmt.escaped(protocol_label(own_key))} (protocol groups are never pooled); the "
        "extensions' own figures are on their pages "
        f"([methodology: protocol extensions]({NOTES}))."
    )
    horizon = horizon_rows([int(row["cohort_number"])])
    if not horizon.empty:
        st.markdown(cohort_sentence(horizon.iloc[0]))
elif not bool(row["is_default"]):
    st.warning(
        "This cohort ran with overridden methodology constants (a research run): its results "
        "are not v1 results ([methodology: constants]"
        f"({documents.doc_link('methodology', '17-constants-and-where-they-live')}))."
    )
bundle: BundleStatus | None = reads.read(bundle_status, cohort)
if bundle is not None:
    if bundle.kept_hash is not None:
        st.markdown(f"**Replay bundle** — final, hash `{bundle.kept_hash}`")
        bundle_link = f"Download and check cohort {cohort}'s bundle on Exports"
    else:
        st.markdown(f"**Replay bundle** — no final bundle yet: cohort {cohort} is {bundle.why}.")
        bundle_link = f"Build a provisional bundle of cohort {cohort} on Exports"
    st.page_link(
        "app_pages/exports.py",
        label=bundle_link,
        icon=":material/deployed_code:",
        query_params={"cohort": str(cohort)},
    )

st.subheader("Standings")
standings: pd.DataFrame = reads.read(cohort_standings_realised, cohort)
if standings.empty:
    notices.empty("This cohort has no agents: `arena start-cohort` creates one per enabled family.")
else:
    st.caption(
        "This cohort's own leaderboard (point numbers; the Leaderboard page filtered to this "
        "cohort adds 95% intervals and P(rank #1)). Baselines are reference rows (tinted). "
        "Select a row to open that agent."
    )
    splits = zip(standings["resolved_share"], standings["marked_share"], strict=True)
    shown = standings.assign(realised=[fmt.realised_split(r, m) for r, m in splits])
    rows = tables.table(
        shown[list(STANDING_COLUMNS)],
        key=f"cohort-standings:{cohort}",
        reference=standings["kind"] == "baseline",
        formats=STANDING_FORMATS,
        column_config=STANDING_COLUMNS,
        select=True,
    )
    tables.download_csv(standings, f"cohort-{cohort}-standings")
    if rows:
        picked = standings.iloc[rows[0]]
        family = str(picked["family_id"])
        st.page_link(
            "app_pages/agent.py",
            label=f"Open {fmt.escaped(picked['display_name'])} in cohort {cohort}",
            icon=":material/smart_toy:",
            query_params={"cohort": str(cohort), "family": family},
        )

st.subheader("One curve per agent")
portfolio.curve_section(f"cohort-{cohort}", cohort=cohort)

st.subheader("Decisions by week")
weeks: pd.DataFrame = reads.read(decisions_by_week, cohort)
if weeks.empty:
    notices.empty(
        "No decision yet in this cohort: the scheduler runs `arena decide` on Sundays at "
        ":05 UTC (or run it by hand)."
    )
else:
    grid = decision_grid(weeks)
    labels = {column: st.column_config.TextColumn(column.capitalize()) for column in grid.columns}
    tables.table(grid, key=f"cohort-weeks:{cohort}", column_config=labels)
    tables.download_csv(grid, f"cohort-{cohort}-weeks")
    tables.download_csv(weeks, f"cohort-{cohort}-decisions", label="Download decisions CSV")
    st.page_link(
        "app_pages/decisions.py",
        label=f"Audit cohort {cohort}'s decisions",
        icon=":material/receipt_long:",
        query_params={"cohort": str(cohort)},
    )
