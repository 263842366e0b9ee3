"""Methodology: the protocol and constants in force and the version history
(`arena.analytics.views.protocol`), then the project's own documents, rendered from docs/ each time
the page runs.

docs/methodology.md (and docs/methodology-v2.md, `?doc=methodology-v2`, and docs/contract.md,
`?doc=contract`) is read as the file is now, so the
page and the file never disagree. The methodology is drawn one section at a time
(`?section=12`; "all" for the whole document): a link to any of its headings still opens there.
docs/ sits beside dashboard.py and app_pages/ in the checkout,
which is where `arena serve` runs the dashboard from.
"""

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from arena.analytics.views.protocol import latest_stamp, methodology_versions, protocol_constants
from arena.config import get_settings
from arena.dashboard import documents, fmt, links, notices, reads, tables

DOCS = Path(__file__).resolve().parents[1] / "docs"
DOCUMENTS = {
    "methodology": "Methodology",
    "methodology-v2": "Methodology v2",
    "contract": "Contract",
}
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
    constants = protocol_constants(methodology)
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
        "[version history](#21-version-history) below; v2's protocol as implemented and what "
        f"changed from v1: [Methodology v2]({documents.doc_link('methodology-v2')}). A version "
        "with no cohort yet is listed with none: v1 and v2 cohorts are never pooled."
    )
    tables.download_csv(versions, "methodology-versions")
    st.divider()


WHOLE = "all"  # the `section` link's value for the whole document
# Runs in the page (st.html with JavaScript): a heading link opens the section holding it.
SECTION_SCRIPT = """<script>
(() => {
  const sections = %s;
  const norm = (text) => decodeURIComponent(text).toLowerCase().replace(/[^a-z0-9]/g, "");
  window.arenaSections = Object.fromEntries(Object.entries(sections).map(([a, k]) => [norm(a), k]));
  const follow = () => {
    if (!/\\/methodology$/.test(location.pathname) || !location.hash) return;
    const key = window.arenaSections[norm(location.hash.slice(1))];
    const query = new URLSearchParams(location.search);
    const shown = query.get("section");
    if (key === undefined || shown === key || shown === "%s" || query.get("doc") === "contract"
        || (!shown && key === "%s")) return;
    query.set("section", key);
    location.replace(`${location.pathname}?${query}${location.hash}`);
  };
  if (!window.arenaSectionsFollowed) {
    window.arenaSectionsFollowed = true;
    window.addEventListener("hashchange", follow);
  }
  follow();
})();
</script>"""


def section_links(parts: list[documents.Section]) -> None:
    """Keep every ``methodology#anchor`` link working while the page draws one section: a
    link's anchor is in the address bar's fragment, which the server never sees, so a script
    in the page reloads it with the section that holds the anchor (``?section=12``), whose
    heading the browser then scrolls to. Only the document's own heading ids are embedded."""
    where = {anchor: part.key for part in parts for anchor in part.anchors}
    script = SECTION_SCRIPT % (json.dumps(where), WHOLE, parts[0].key)
    st.html(script, unsafe_allow_javascript=True)


def methodology_document(body: str) -> None:
    """docs/methodology.md a section at a time: a section picker bound to the ``section``
    link (the first section by default; "The whole document" too), then the document's
    preamble (its contents) with that section, as one Markdown element."""
    preamble, parts = documents.sections(body)
    titles = {part.key: part.title for part in parts} | {WHOLE: "The whole document"}
    chosen = links.select_link(
        "Section",
        "section",
        list(titles),
        default=parts[0].key,
        format_func=lambda key: titles.get(key, key),
    )
    section_links(parts)
    st.caption(
        "One section at a time (the whole document is 65 KB: drawing it all costs the "
        "browser seconds); a link to any heading opens its section."
    )
    shown = [part.text for part in parts if part.key == chosen]
    st.markdown(body if chosen == WHOLE else preamble + "".join(shown))


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
if name == "methodology":
    methodology_document(body)
else:
    links.set_link("section", None)
    st.markdown(body)
