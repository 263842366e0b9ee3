"""Methodology: the project's own documents, rendered from docs/ each time the page runs.

docs/methodology.md (and docs/contract.md, `?doc=contract`) is read as the file is now, so the
page and the file never disagree. docs/ sits beside dashboard.py and pages/ in the checkout,
which is where `arena serve` runs the dashboard from.
"""

from pathlib import Path

import streamlit as st

from arena.dashboard import ui

ui.entry_guard()

DOCS = Path(__file__).resolve().parents[1] / "docs"
DOCUMENTS = {"methodology": "Methodology", "contract": "Contract"}

heading = st.container()
name = ui.choice_link(
    "Document", "doc", list(DOCUMENTS), default="methodology", format_func=DOCUMENTS.__getitem__
)
path = DOCS / f"{name}.md"
if not path.is_file():
    heading.title(DOCUMENTS[name])
    ui.empty(f"docs/{name}.md is not here: this page reads the docs/ folder of the checkout.")
    st.stop()
title, body = ui.document(path.read_text(encoding="utf-8"), list(DOCUMENTS))
heading.title(title)
heading.caption(f"`docs/{name}.md`, as the file reads now.")
st.markdown(body)
