"""Compare: two families on the markets both traded — the difference in P/L and in Brier, with
its 95% interval and p-value (`arena.analytics.stats.paired`). Across cohorts, over the sidebar's
methodology version's cohorts (v1 and v2 never pooled); a chosen cohort as it is."""

import pandas as pd
import streamlit as st

from arena.analytics.stats.paired import MIN_EVENTS, family_comparison
from arena.analytics.views.agents import agent_index
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


st.title("Compare")
st.caption(
    "Two families on the markets both traded in the same cohort, so how hard a market was "
    "cancels out: per shared market the difference A − B in P/L (where both bought; positive: "
    "A earned more) and in mean Brier (where both have resolved bets; negative: A forecast "
    "better), averaged. Brackets are a 95% cluster-bootstrap interval over events, the p-value "
    "a two-sided sign-flip test over events "
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
scope = (
    index[~index["cohort_number"].isin(left_out)]
    if cohort is None
    else index[index["cohort_number"] == cohort]
)
# Language models first, then the baselines; each by display name.
ordered = scope.drop_duplicates("family_id").sort_values(
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
# No pair until the person picks one: at a year a comparison reads every shared bet of both
# families (~1 s), which no visitor should wait on before saying which two.
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
        "Pick two families above: the difference in P/L and in Brier on the markets both "
        "traded, with its interval and p-value. From the Leaderboard, or a link like "
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
