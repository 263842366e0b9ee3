"""Documents: `document` turns one of the project's own docs/ Markdown files into a title and
a body for `st.markdown` (the Methodology page), with its links made to work inside the
dashboard."""

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

DOCS_PAGE = "methodology"  # the url path of the page that shows docs/*.md


_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


_CODE = re.compile(r"^```.*?^```[^\n]*$|`[^`\n]+`", re.MULTILINE | re.DOTALL)


def doc_link(name: str, anchor: str = "") -> str:
    """The dashboard URL (relative, so it works under any base path) of docs/`name`.md at
    `anchor` (a heading's slug, without "#"): e.g. ``methodology#12-snapshot-methodology``."""
    query = "" if name == DOCS_PAGE else f"?doc={name}"
    return f"{DOCS_PAGE}{query}" + (f"#{anchor}" if anchor else "")


def document(text: str, shown: Sequence[str]) -> tuple[str, str]:
    """(title, body) of a docs/ Markdown file for the Methodology page.

    The title is the file's first ``# `` heading; the body is the rest. Links are rewritten
    for the dashboard: one to a document the page shows (`shown`: names without ``.md``)
    opens it there (`doc_link`); an in-page anchor stays; any other relative link (a source
    file, the README) cannot open in the dashboard, so its text is kept with the file's
    repository path after it. A dollar sign outside code is escaped: st.markdown would read
    text between two of them ("$50 … $100") as LaTeX.
    """
    title, body = "", text
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith("# "):
            title = line[2:].strip()
            body = "".join(lines[:index] + lines[index + 1 :]).lstrip("\n")
            break

    def rewrite(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        if target.startswith("#") or _SCHEME.match(target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        name = posixpath.basename(path).removesuffix(".md")
        if posixpath.dirname(path) == "" and path.endswith(".md") and name in shown:
            return f"[{label}]({doc_link(name, anchor)})"
        where = posixpath.normpath(posixpath.join("docs", path))
        if label.strip("`") in (where, posixpath.basename(where)):
            return f"`{where}`"
        return f"{label} (`{where}`)"

    body = _MD_LINK.sub(rewrite, body)
    parts, at = [], 0
    for code in _CODE.finditer(body):
        parts += [body[at : code.start()].replace("$", "\\$"), code.group(0)]
        at = code.end()
    return title, "".join([*parts, body[at:].replace("$", "\\$")])


@dataclass(frozen=True)
class Section:
    """One ``## `` section of a document: what the Methodology page draws on its own."""

    key: str  # its number ("12"), or its anchor when unnumbered: the page's ``section`` link
    title: str  # the heading's text, "12. Snapshot Methodology"
    text: str  # its Markdown, the heading included
    anchors: tuple[str, ...]  # the anchor of every heading in it (`anchor`)


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$")
_NUMBER = re.compile(r"^(\d+)\.?\s")


def anchor(heading: str) -> str:
    """The id Streamlit gives a Markdown heading: "11.1 Brier score" → "11-1-brier-score"
    (lower case, each run of other characters one hyphen)."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def sections(body: str) -> tuple[str, list[Section]]:
    """`body`'s preamble (before its first ``## `` heading) and its ``## `` sections, in order.

    Why: the whole of docs/methodology.md (65 KB) as one Markdown element costs the browser
    seconds per page load; the page draws one section at a time. Headings inside code fences
    do not count."""
    preamble: list[str] = []
    found: list[tuple[str, list[str], list[str]]] = []  # (title, lines, anchors)
    fenced = False
    for line in body.splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line.rstrip("\n"))
        if heading is not None and len(heading.group(1)) == 2:
            found.append((heading.group(2), [], []))
        if heading is not None and found:
            found[-1][2].append(anchor(heading.group(2)))
        (found[-1][1] if found else preamble).append(line)
    parts = []
    for title, lines, anchors in found:
        number = _NUMBER.match(title)
        key = number.group(1) if number else anchor(title)
        parts.append(Section(key, title, "".join(lines), tuple(anchors)))
    return "".join(preamble), parts
