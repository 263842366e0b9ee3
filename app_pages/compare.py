"""Compare: two families head to head. First the paired portfolio-return difference the
Leaderboard and "When will we know?" judge (`arena.analytics.views.compare`, read from the same
detectability frame), then the difference on the markets both traded (`stats.paired`), the
sentence saying why the two can disagree, both headline rows, both curves and the shared
markets' positions. Across cohorts, over the sidebar's methodology version's cohorts (v1 and v2
never pooled); a chosen cohort as it is. The pair lives in the URL (and this session's memory of
the page); with none given it opens on the leaderboard's two leading contenders."""

from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.query.scope import cohort_protocol, rule_key
from arena.analytics.stats.paired import MIN_EVENTS, family_comparison
from arena.analytics.views.agents import agent_index
from arena.analytics.views.compare import (
    BRIDGE,
    PortfolioDifference,
    default_pair,
    headline,
    portfolio_difference,
    shared_positions,
)
from arena.analytics.views.curves import portfolio_curves
from arena.analytics.views.detectability import verdict_text
from arena.analytics.views.late_entry import late_comparison, late_entries, late_incumbents
from arena.core.late_entry import entrant_family, is_entrant
from arena.dashboard import documents, fmt, links, notices, picks, reads, tables

NO_AGENT = "No agent yet: run `arena start-cohort` (one agent per enabled family) or `make demo`."
MEASURES = {"pnl": "Return (P/L per shared market)", "brier": "Brier (per shared market)"}


def reading(row: pd.Series, names: dict[str, str]) -> str:
    """What one row says, in words: who did better, no clear difference, or too little data."""
    if row["markets"] == 0:
        return "no shared markets" if row["metric"] == "pnl" else "no shared resolved bets"
    if not row["enough"]:
        return f"too few events ({row['clusters']}; needs {MIN_EVENTS})"
    if row["better"] is None or fmt.missing(row["better"]):
        return "no clear difference"
    return f"{names[row['better']]} better"


def display(frame: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """One row per measure: the difference as "value [low, high]" (the value alone when too
    few events), its p-value, what it rests on and what it says."""
    rows = []
    for row in frame.to_dict("records"):
        low, high = (row["ci_low"], row["ci_high"]) if row["enough"] else (None, None)
        writer = fmt.money_interval if row["metric"] == "pnl" else fmt.prob_interval
        kwargs = {} if row["metric"] == "pnl" else {"signed": True}
        rows.append(
            {
                "measure": MEASURES[row["metric"]],
                "difference": writer(row["mean_difference"], low, high, **kwargs),
                "p_value": fmt.p_value(row["p_value"] if row["enough"] else None),
                "markets": row["markets"],
                "events": row["clusters"],
                "bets": f"{row['bets_a']:,} / {row['bets_b']:,}",
                "reading": reading(pd.Series(row), names),
            }
        )
    return pd.DataFrame(rows)


def late_note(entries: pd.DataFrame, pair: list[str]) -> None:
    """Say on which cohorts a late entrant is compared, and label a contaminated one."""
    shown = entries[entries["entrant_id"].isin(pair)]
    numbers = ", ".join(str(n) for n in sorted({int(n) for n in shown["cohort_number"]}))
    st.caption(
        f"A late entrant is compared on its own cohorts ({numbers}): only the markets both "
        "traded in the same original cohort are paired."
    )
    for name in sorted(set(shown.loc[shown["entrant_contaminated"].astype(bool), "display_name"])):
        st.warning(
            f"**Contaminated** — {fmt.escaped(name)}: its cohorts started on or before its "
            "knowledge cutoff, so it may have known how their markets resolved.",
            icon=":material/warning:",
        )


def portfolio_line(found: PortfolioDifference | None, late: bool) -> None:
    """The paired portfolio-return difference, labelled, with its interval, p and verdict."""
    label = (
        "Portfolio return difference (A − B), as the Leaderboard and “When will we know?” judge it"
    )
    if found is None:
        st.markdown(f"**{label}**")
        st.caption(
            "Not available for this pair: "
            + (
                "a late entrant is judged on the Leaderboard's late-entry section, not here."
                if late
                else "no current detectability figures for this scope (compute them above)."
            )
        )
        return
    # "+42.2 pp [+10.1, +74.3]": a difference of two returns, in percentage points.
    interval = fmt.pct_interval(found.difference, found.low, found.high).replace("%", " pp")
    st.metric(
        label,
        interval,
        help="Return on capital, whole portfolios (cash plus positions marked to market); the "
        "bracket is the difference ± 1.96 × the SE of the leaderboard's paired cluster "
        "bootstrap: the 5% test “When will we know?” applies.",
    )
    st.markdown(
        f"{fmt.signed_pct(found.return_a)} vs {fmt.signed_pct(found.return_b)} on the "
        f"{found.cohorts} cohort{'s' if found.cohorts != 1 else ''} both entered · "
        f"p = {fmt.p_value(found.p_value)} · **{verdict_text(found.verdict, found.more_cohorts)}**"
    )


def headline_table(board: pd.DataFrame, pair: tuple[str, str], names: dict[str, str]) -> None:
    """The two families' leaderboard figures side by side (one column each)."""
    rows = headline(board, *pair)
    if len(rows) < 2:
        return
    shown: dict[str, list[str]] = {
        "measure": ["Return [95% CI]", "Brier [95% CI]", "P/L", "Bets", "Cohorts"]
    }
    for position, row in enumerate(rows.to_dict("records")):
        shown["a" if position == 0 else "b"] = [
            fmt.pct_interval(row["return_pct"], row["return_ci_low"], row["return_ci_high"]),
            fmt.prob_interval(row["brier"], row["brier_ci_low"], row["brier_ci_high"]),
            fmt.signed_money(row["total_pnl"]),
            fmt.count(row["bets"]),
            fmt.count(row["cohorts"]),
        ]
    tables.table(
        pd.DataFrame(shown),
        key="compare-headline",
        column_config={
            "measure": st.column_config.Column("Leaderboard", width=150),
            "a": st.column_config.Column(names[pair[0]], width=220),
            "b": st.column_config.Column(names[pair[1]], width=220),
        },
    )


def curves(pair: tuple[str, str], cohort: int | None, scope: dict[str, Any]) -> None:
    """Both families' return curves on one chart (percent: comparable across capitals)."""
    from arena.dashboard.charts import curves as curve_charts

    frame = reads.read(portfolio_curves, "ALL", cohort=cohort, **scope)
    frame = frame[frame["family_id"].isin(pair)]
    if frame.empty:
        st.caption("No portfolio snapshots for this pair yet.")
        return
    tables.chart(curve_charts.portfolio_curves, frame, "return_pct", "Return, %", break_even=0.0)


def positions_table(pair: tuple[str, str], cohorts: list[int], names: dict[str, str]) -> None:
    """The markets both held a position in, each side's side / stake / price / P/L."""
    frame: pd.DataFrame = reads.read(shared_positions, pair[0], pair[1], tuple(cohorts))
    if frame.empty:
        st.caption("No market where both held a position in the same cohort.")
        return
    money = {
        c: fmt.signed_money if c.startswith("pnl") else fmt.money
        for c in ("stake_a", "stake_b", "pnl_a", "pnl_b")
    }
    config = {
        "cohort_number": st.column_config.Column("Cohort", width=64),
        "question": st.column_config.Column("Market", width=300),
    }
    for side, family in (("a", pair[0]), ("b", pair[1])):
        name, letter = names[family], side.upper()
        for column, label, width in (
            ("side", "side", 60),
            ("stake", "stake", 90),
            ("price", "price", 64),
            ("pnl", "P/L", 90),
        ):
            config[f"{column}_{side}"] = st.column_config.Column(
                f"{letter} {label}", width=width, help=f"{letter}: {name}"
            )
    st.caption(
        f"Each market both held a position in, same cohort. A: {fmt.escaped(names[pair[0]])}; "
        f"B: {fmt.escaped(names[pair[1]])}. Side (YES / NO, both when it held both), stake "
        "paid in, stake-weighted entry price, P/L realised plus marked to market."
    )
    tables.table(
        frame.drop(columns="market_id"),
        key="compare-positions",
        formats={**money, "price_a": fmt.price, "price_b": fmt.price},
        column_config=config,
    )
    tables.download_csv(frame, f"compare-positions-{pair[0]}-{pair[1]}", label="Positions CSV")


st.title("Compare")
st.caption(
    "Two families head to head, on two questions. **Portfolio**: the difference in return on "
    "capital of their whole portfolios, the figure the Leaderboard ranks and “When will we "
    "know?” judges. **Shared markets**: per market both traded in the same cohort, so how hard "
    "a market was cancels out, the difference A − B in P/L (where both bought; positive: A "
    "earned more) and in mean Brier (where both have resolved bets; negative: A forecast "
    "better), averaged; brackets a 95% cluster-bootstrap interval over events, the p-value a "
    "two-sided sign-flip test over events "
    f"([statistics]({documents.doc_link('methodology', '19-statistics-honest-uncertainty')}))."
)

index: pd.DataFrame = reads.read(agent_index)
if index.empty:
    notices.nothing_yet(NO_AGENT)

first, second, third = st.columns(3)
numbers = sorted({int(n) for n in index["cohort_number"]}, reverse=True)
cohort = picks.cohort_link(numbers, container=third, versions=picks.cohort_versions())
# The sidebar's version (None on a v1-only database, read as before); a chosen cohort is read
# as it is, under its own version.
methodology = picks.methodology_link()
picks.version_caption(methodology, cohort)
picks.cohort_version_caption(cohort)  # a chosen cohort, on a database of several versions
# Across cohorts the comparison reads one version's plain cohorts only (methodology §18, v1
# and v2 never pooled): so do its choices.
left_out = notices.left_out_note(cohort, methodology=methodology)
scope_rows = (
    index[~index["cohort_number"].isin(left_out)]
    if cohort is None
    else index[index["cohort_number"] == cohort]
)
# Language models first, then the baselines; each by display name.
ordered = scope_rows.drop_duplicates("family_id").sort_values(
    ["kind", "display_name"], key=lambda c: c.ne("llm") if c.name == "kind" else c.str.lower()
)
families = [str(f) for f in ordered["family_id"]]
names = {str(f): str(n) for f, n in zip(ordered["family_id"], ordered["display_name"], strict=True)}
# Late entrants (methodology §20) of the protocol shown (or the chosen cohort), after the
# incumbents: each compared with an incumbent on its own cohorts, by its entrant id.
entries = reads.read(late_entries, None if cohort is not None else (methodology or "v1"))
if cohort is not None:
    entries = entries[entries["cohort_number"] == cohort]
protocol = str(entries["protocol"].iloc[0]) if len(entries) else (methodology or "v1")
late_names = dict(zip(entries["entrant_id"], entries["display_name"], strict=True))
if late_names:  # the incumbents of the entrants' cohorts are choices too
    incumbents = reads.read(late_incumbents, protocol)
    if cohort is None:  # (a chosen cohort's incumbents are the scope's already)
        for fid, name in zip(incumbents["family_id"], incumbents["display_name"], strict=True):
            if fid not in names:
                families.append(str(fid))
                names[str(fid)] = str(name)
families += sorted(late_names, key=lambda f: late_names[f].lower())
names.update(late_names)
if len(families) < 2:
    notices.nothing_yet(
        "This scope has fewer than two families: pick all cohorts, or another cohort."
    )
# The stored leaderboard and detectability frames of this scope, as their own pages read them:
# the default pair and the portfolio figure are theirs, never recomputed here.
chosen = reads.read(cohort_protocol, cohort) if cohort is not None else methodology
board_found = reads.stored_or_offer(
    "leaderboard", "leaderboard", cohort=cohort, methodology=methodology if cohort is None else None
)
board = board_found[0] if board_found is not None else pd.DataFrame()
if links.get_link("family") is None and links.get_link("versus") is None:
    pair = default_pair(board, rule_key(chosen) if chosen else "v1")
    if pair is not None and all(f in families for f in pair):
        links.set_link("family", pair[0])
        links.set_link("versus", pair[1])
family = links.select_link(
    "Family",
    "family",
    families,
    format_func=lambda f: "Pick a family" if f == links.ALL else names.get(f, f),
    container=first,
)
versus = links.select_link(
    "Versus",
    "versus",
    families,
    format_func=lambda f: "Pick a family" if f == links.ALL else names.get(f, f),
    container=second,
)
if family is None or versus is None:
    notices.nothing_yet(
        "Pick two families above: the difference in their portfolio returns, and in P/L and "
        "Brier on the markets both traded. From the Leaderboard, or a link like "
        "`/compare?family=…&versus=…`."
    )
if family == versus:
    notices.nothing_yet("Pick two different families.")
notices.simulated_notice([entrant_family(family), entrant_family(versus)])

late_pair = is_entrant(family) or is_entrant(versus)
if late_pair:
    frame: pd.DataFrame = reads.read(
        late_comparison, family, versus, cohort=cohort, methodology=protocol
    )
    late_note(entries, [family, versus])
else:
    frame = reads.read(
        family_comparison,
        family,
        versus,
        cohort=cohort,
        **picks.scoped(methodology if cohort is None else None),
    )
st.subheader(f"{fmt.escaped(names[family])} − {fmt.escaped(names[versus])}")
key = (methodology or "v1") if cohort is None else None
detect = None
if not late_pair:
    detect = reads.stored_or_offer(
        "detectability",
        "detectability",
        cohort=cohort,
        methodology=None if key in (None, "v1") else key,
    )
portfolio_line(
    portfolio_difference(detect[0], family, versus) if detect is not None else None, late_pair
)
st.page_link(
    "app_pages/detectability.py",
    label="When will we know? for this scope",
    icon=":material/hourglass_top:",
    query_params={"cohort": str(cohort)} if cohort is not None else None,
)
st.markdown("**Shared-market difference (A − B)** — only the markets both traded, same cohort")
tables.table(
    display(frame, names),
    key="compare-table",
    column_config={
        "measure": st.column_config.Column("Measure", width=210),
        "difference": st.column_config.Column("A − B [95% CI]", width=230),
        "p_value": st.column_config.Column("p-value", width=72),
        "markets": st.column_config.Column("Shared markets", width=112),
        "events": st.column_config.Column("Events", width=64),
        "bets": st.column_config.Column(
            "Bets (A / B)", width=100, help="Each one's bets in the shared markets."
        ),
        "reading": st.column_config.Column(
            "Reading",
            width=180,
            help=f"A family is named better when p < 0.05 on at least {MIN_EVENTS} shared events.",
        ),
    },
)
st.info(BRIDGE, icon=":material/compare_arrows:")
shared = int(frame["clusters"].max())
if shared < MIN_EVENTS:
    st.caption(
        f"They share at most {shared} event{'s' if shared != 1 else ''}: with fewer than "
        f"{MIN_EVENTS} the sign-flip test cannot reach p < 0.05 whatever the data, so no "
        "interval or p-value is shown"
        + (": compare across all cohorts, or wait for more resolved bets." if cohort else ".")
    )
scope = "all" if methodology in (None, "v1") else f"all-{methodology}"
tables.download_csv(frame, f"compare-{family}-{versus}-{scope if cohort is None else cohort}")
pair = (family, versus)
if late_pair:
    st.caption(
        "A late entrant's headline figures, curve and positions are on the Leaderboard's "
        "late-entry section and its own pages."
    )
    st.stop()
st.subheader("Headline figures")
headline_table(board, pair, names)
st.subheader("Portfolio return over time")
summed = methodology if cohort is None and methodology not in (None, "v1") else None
curves(pair, cohort, {"methodology": summed} if summed else {})
st.subheader("Shared markets")
positions_table(pair, sorted({int(n) for n in scope_rows["cohort_number"]}), names)
