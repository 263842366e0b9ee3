"""Execution: how much of each ranking is an execution artifact. Every leg re-executed at the
display price, the mid and the stored book (the marks the cohort recorded carried to the end),
each family's return under each rule with its 95% cluster-bootstrap interval, rank and
P(rank #1), the legs a rule could not execute, and the flag the leaderboard shows."""

import streamlit as st

from arena.analytics.query.scope import is_group
from arena.analytics.stats.execution import RULES
from arena.analytics.stats.execution_inputs import book_coverage
from arena.analytics.views.execution import (
    CSV_COLUMNS,
    RULE_NAMES,
    books_note,
    coverage,
    display,
)
from arena.dashboard import fmt, notices, picks, reads, tables

SHORT = {"display": "display", "mid": "mid", "book": "book"}
NO_LEGS = "No executed leg in this scope yet: the figures appear once agents have traded."


def _columns() -> dict[str, object]:
    config: dict[str, object] = {
        "family": st.column_config.Column("Family", width=170, pinned=True)
    }
    for rule in RULES:
        name = RULE_NAMES[rule]
        config[f"return_{rule}_text"] = st.column_config.Column(
            f"{name} return [95% CI]", width=175
        )
        short = SHORT[rule]
        config[f"rank_{rule}_text"] = st.column_config.Column(f"Rank, {short}", width=105)
        config[f"p_rank_1_{rule}"] = st.column_config.Column(f"P(#1), {short}", width=110)
    config["legs"] = st.column_config.Column("Legs", width=60)
    config["refused_text"] = st.column_config.Column(
        "Not executed", width=200, help="Legs each rule left as cash (reasons in the CSV)."
    )
    config["flag"] = st.column_config.Column(
        "Flag",
        width=130,
        help="Its rank under some rule differs from its rank under the rule "
        "the cohort executed by.",
    )
    return config


st.title("Execution")
st.caption(
    "Each executed leg filled again three ways with the stake the model chose: at Gamma's "
    "**display price** (v1's fill), at the **mid** (v2's), and by **walking the order book** "
    "stored when the run decided (Polymarket's taker fee included). The value per share at the "
    "end is the one the cohort recorded (settlement, else its latest mark), so only the fill "
    "differs. Brackets: 95% cluster-bootstrap intervals over events, the leaderboard's; "
    "**P(#1)** from the same draws. A family is flagged when its rank under some rule differs "
    "from its rank under the cohort's own rule (docs/book-execution.md, \"Execution "
    'sensitivity").'
)

numbers = picks.cohorts_or_stop()
left, _ = st.columns([1, 3])
cohort = picks.cohort_link(numbers, container=left)
selected = picks.methodology_link()
methodology = selected if cohort is None else None
picks.version_caption(methodology, cohort)
if methodology in (None, "v1") or is_group(methodology):  # v1's, or a protocol group's
    notices.left_out_note(cohort, methodology=methodology)
version = picks.scoped(methodology)
note = books_note(reads.read(book_coverage, cohort, **version))
if note:
    st.info(note)
found = reads.stored_or_offer(
    "execution_sensitivity", "execution sensitivity", cohort=cohort, methodology=methodology
)
if found is None:
    st.stop()
frame, stored = found
if frame.empty or int(frame["legs"].sum()) == 0:
    notices.nothing_yet(NO_LEGS)
reads.stored_caption(stored)
notices.simulated_notice([str(f) for f in frame["family_id"]])
own = str(frame["own_rule"].iloc[0])
st.caption(f"This scope executed by **{RULE_NAMES[own]}**: ranks are compared with that rule's.")
shown, formats = fmt.readable(
    display(frame, fmt.pct_interval),
    {f"p_rank_1_{rule}": (lambda p: fmt.share(p, 1)) for rule in RULES} | {"legs": fmt.count},
)
tables.table(
    shown,
    key="execution-table",
    reference=frame["kind"] == "baseline",
    formats=formats,
    column_config=_columns(),
)
legs = coverage(frame)
st.caption(
    "Legs each rule executed: "
    + "; ".join(
        f"{RULE_NAMES[r]} {e:,} of {n:,}" + ("" if has else " (no figures)")
        for r, e, n, has in zip(
            legs["rule"], legs["executed"], legs["legs"], legs["figures"], strict=True
        )
    )
    + ". A leg a rule cannot execute (no stored book, an empty or crossed book, depth below "
    "$50, no mid) stays cash under that rule, never guessed."
)
scope = f"cohort-{cohort}" if cohort is not None else (methodology or "all")
tables.download_csv(frame[list(CSV_COLUMNS)], f"execution-{scope}")
