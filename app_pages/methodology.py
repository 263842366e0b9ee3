"""Methodology: the protocol and constants in force and the version history
(`arena.analytics.views.protocol`), then the project's own documents, rendered from docs/ each time
the page runs.

docs/methodology.md (and docs/contract.md, `?doc=contract`) is read as the file is now, so the
page and the file never disagree. docs/ sits beside dashboard.py and app_pages/ in the checkout,
which is where `arena serve` runs the dashboard from.
"""

from pathlib import Path

import pandas as pd
import streamlit as st

from arena.analytics.views.protocol import latest_stamp, methodology_versions, protocol_constants
from arena.config import get_settings
from arena.dashboard import documents, fmt, links, notices, reads, tables

DOCS = Path(__file__).resolve().parents[1] / "docs"
DOCUMENTS = {"methodology": "Methodology", "contract": "Contract"}
VERSION_LABELS = {
    "methodology_version": st.column_config.TextColumn("Version", width="small"),
    "title": st.column_config.TextColumn("Title"),
    "constants": st.column_config.TextColumn("Constants"),
    "cohort_numbers": st.column_config.TextColumn("Cohorts"),
    "cohorts": st.column_config.NumberColumn("Count", width="small"),
    "first_week_start": st.column_config.Column("First week"),
    "last_week_start": st.column_config.Column("Last week"),
}


def protocol_section() -> None:
    """The constants the newest cohort runs under, and which cohorts ran under which."""
    st.subheader("The protocol in force")
    found = reads.read(latest_stamp)
    if found is not None:
        number, methodology = found
        source = (
            f"As stamped on cohort {number}, the newest: every cohort records the constants it "
            "ran under."
        )
    else:
        methodology = get_settings().methodology
        source = (
            "As configured (no cohort yet: each cohort will record the constants it ran under)."
        )
    constants: pd.DataFrame = protocol_constants(methodology)
    lines = ["| | Value | What it means |", "|---|---|---|"]
    for row in constants.itertuples():
        lines.append(
            f"| [{fmt.escaped(row.label)}](#{row.anchor}) | {fmt.escaped(row.value)} "
            f"| {fmt.escaped(row.meaning)} |"
        )
    st.markdown("\n".join(lines))
    st.caption(f"{source} Each name links to its section of the document below.")
    tables.download_csv(constants[["constant", "raw", "label", "meaning"]], "protocol")

    st.subheader("Methodology versions")
    versions: pd.DataFrame = reads.read(methodology_versions)
    if versions.empty:
        notices.empty("No methodology version is recorded yet: run `arena init-db`.")
        return
    shown = versions.assign(
        constants=[
            f"{version} as specified" if stock else f"overridden: {overrides}"
            for version, stock, overrides in zip(
                versions["methodology_version"],
                versions["is_default"],
                versions["overrides"],
                strict=True,
            )
        ],
        cohort_numbers=[text or "none yet" for text in versions["cohort_numbers"]],
    )[list(VERSION_LABELS)]
    tables.table(
        shown,
        key="methodology-versions",
        column_config=VERSION_LABELS,
        formats={"first_week_start": fmt.day, "last_week_start": fmt.day},
    )
    st.caption(
        "Which cohorts ran under which version and constants, read from the cohorts table. "
        "A research run that overrides a constant is stamped so and never mixed with the stock "
        "version. What changed in this implementation of each version: "
        "[version history](#20-version-history) below."
    )
    tables.download_csv(versions, "methodology-versions")
    st.divider()


heading = st.container()
name = links.choice_link(
    "Document", "doc", list(DOCUMENTS), default="methodology", format_func=DOCUMENTS.__getitem__
)
path = DOCS / f"{name}.md"
if not path.is_file():
    heading.title(DOCUMENTS[name])
    notices.nothing_yet(
        f"docs/{name}.md is not here: this page reads the docs/ folder of the checkout."
    )
title, body = documents.document(path.read_text(encoding="utf-8"), list(DOCUMENTS))
heading.title(title)
if name == "methodology":
    protocol_section()
st.caption(f"`docs/{name}.md`, as the file reads now.")
st.markdown(body)
