"""The project's documents hold: links resolve, named files exist, the figures are the code's.

README.md and docs/*.md are checked as a reader on GitHub follows them: every relative link
opens a file of the repository, every anchor is a heading of that file (GitHub's slug), every
file path named in backticks exists (and a `file.py::test_name` names a test in it), and the
names a document gives for a file (`path.py` (`name`)) are defined there. The constants and
export columns the documents list are compared with the code. Nothing in the repository points
outside it. The dashboard's Methodology page renders docs/ as the files read now, and every
link a page makes into it lands on a heading there (Streamlit's slug).
"""

import ast
import re
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from arena.analytics.export.tables import EXPORTS
from arena.analytics.stats import leaderboard
from arena.config import Methodology, get_settings
from arena.dashboard import documents
from arena.storage.db import create_db_engine, dispose_engines
from arena.storage.migrate import init_db

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DOCUMENTS = sorted([ROOT / "README.md", *DOCS.glob("*.md")])
# app_pages/methodology.py's documents
SHOWN_IN_DASHBOARD = ("methodology", "methodology-v2", "contract")
# Built, not written out, so that this file does not contain what it looks for.
OUTSIDE = "/".join(["..", "shared"])

LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.MULTILINE)
REPO_PATH = re.compile(
    r"^(?:(?:arena|tests|pages|bench|scripts|docs|\.ci)/[\w./-]*|dashboard\.py|scheduler\.py"
    r"|Makefile|pyproject\.toml)(?:::\w+)?$"
)
NAMED_IN = re.compile(r"`([\w/.-]+\.py)` \(([^)]*)\)")


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose(text: str) -> str:
    """`text` without fenced code blocks (their brackets are code, not links)."""
    return FENCE.sub("", text)


def heading_texts(text: str) -> list[str]:
    """Each heading as rendered text: inline code and link markup dropped, emphasis removed."""
    texts = []
    for raw in HEADING.findall(prose(text)):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", raw)
        texts.append(plain.replace("`", "").replace("*", ""))
    return texts


def github_slugs(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, and a
    repeated slug numbered -1, -2, …"""
    seen: dict[str, int] = {}
    slugs = set()
    for heading in heading_texts(text):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        slugs.add(slug if count == 0 else f"{slug}-{count}")
    return slugs


def streamlit_slug(heading: str) -> str:
    """Streamlit's anchor for a heading rendered by st.markdown (checked in a browser:
    "12.4 Closed-but-unresolved handling" becomes 12-4-closed-but-unresolved-handling)."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def streamlit_slugs(text: str) -> set[str]:
    return {streamlit_slug(heading) for heading in heading_texts(text)}


def links(path: Path) -> Iterator[str]:
    """Every relative link target (and image) of a Markdown file."""
    for target in LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if not SCHEME.match(target):
            yield target


def repository_files() -> list[Path]:
    """The files of the repository: git's tracked and untracked-but-not-ignored files, or,
    without git, every file but .git, .venv and what is built or cached."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        files = [ROOT / name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        skipped = {".git", ".venv", "__pycache__", "test-artifacts", "data", "build", "dist"}
        files = [
            path
            for path in ROOT.rglob("*")
            if not any(
                part in skipped or part.endswith((".egg-info", "_cache")) or part == ".hypothesis"
                for part in path.relative_to(ROOT).parts
            )
        ]
    return [path for path in files if path.is_file()]


# --------------------------------------------------------------------------------------------
# Links, anchors, paths


def test_the_documents_are_there() -> None:
    names = {relative(path) for path in DOCUMENTS}
    for name in ("README.md", "docs/methodology.md", "docs/contract.md", "docs/architecture.md"):
        assert name in names


@pytest.mark.parametrize("document", DOCUMENTS, ids=relative)
def test_every_relative_link_opens_a_file_and_its_anchor_is_a_heading(document: Path) -> None:
    broken = []
    for target in links(document):
        path, _, anchor = target.partition("#")
        file = (document.parent / path).resolve() if path else document
        if not file.exists() or ROOT not in (file, *file.parents):
            broken.append(f"{target}: no such file in the repository")
        elif anchor and anchor not in github_slugs(file.read_text(encoding="utf-8")):
            broken.append(f"{target}: no heading #{anchor} in {relative(file)}")
    assert not broken, f"{relative(document)}: " + "; ".join(broken)


@pytest.mark.parametrize("document", DOCUMENTS, ids=relative)
def test_every_file_path_named_exists(document: Path) -> None:
    missing = []
    for span in CODE_SPAN.findall(document.read_text(encoding="utf-8")):
        if not REPO_PATH.match(span):
            continue
        name, _, test = span.partition("::")
        path = ROOT / name
        if not path.exists():
            missing.append(span)
        elif test and not re.search(rf"^def {test}\(", path.read_text(), re.MULTILINE):
            missing.append(f"{span} (no such test)")
    assert not missing, f"{relative(document)} names what is not there: {missing}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=relative)
def test_names_given_for_a_file_are_defined_in_it(document: Path) -> None:
    """`arena/core/scoring.py` (`implied_confidence`, `brier`): each name before a colon in
    the parentheses is a def, class or module-level assignment of that file."""
    undefined = []
    for path, inside in NAMED_IN.findall(document.read_text(encoding="utf-8")):
        file = ROOT / path
        if not file.is_file():
            continue  # reported by test_every_file_path_named_exists
        source = file.read_text()
        for name in re.findall(r"`(\w+)`", inside.split(":")[0]):
            defined = rf"^\s*(?:async )?(?:def|class) {name}\b|^{name}\s*[:=]"
            if not re.search(defined, source, re.MULTILINE):
                undefined.append(f"{name} in {path}")
    assert not undefined, f"{relative(document)}: not defined: {undefined}"


def test_nothing_in_the_repository_points_outside_it() -> None:
    needle = OUTSIDE.encode()
    pointing = [relative(path) for path in repository_files() if needle in path.read_bytes()]
    assert not pointing, f"these files refer to {OUTSIDE}: {pointing}"


def test_the_readme_shows_the_leaderboard_screenshot() -> None:
    """Taken by tests/e2e (test_the_readme_screenshot_of_the_leaderboard) on every run."""
    assert "docs/img/leaderboard.png" in set(links(ROOT / "README.md"))
    assert (DOCS / "img" / "leaderboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------------------------
# The figures the documents give are the code's


def _table_rows(text: str, after: str) -> list[list[str]]:
    """The cells of the first Markdown table after the line `after` (header row dropped)."""
    lines = text[text.index(after) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_the_methodology_constants_table_is_the_code() -> None:
    text = (DOCS / "methodology.md").read_text(encoding="utf-8")
    rows = _table_rows(text, "### 17.1 The methodology constants")
    documented = {row[0].strip("`"): row[1] for row in rows}
    defaults = Methodology().model_dump()
    assert set(documented) == set(defaults)
    for name, value in defaults.items():
        if isinstance(value, Decimal | int):
            assert Decimal(documented[name]) == value, name
        else:
            assert documented[name] == value, name


def test_the_contract_export_columns_are_the_code() -> None:
    text = (DOCS / "contract.md").read_text(encoding="utf-8")
    required = {
        row[0].split(" ")[0]: row[1].split(", ") for row in _table_rows(text, "## 6. Export")
    }
    extra = {row[0]: row[1].split(", ") for row in _table_rows(text, "### Extra columns")}
    assert set(required) == {*EXPORTS, "leaderboard"} == set(extra)
    for table, spec in EXPORTS.items():
        assert list(spec.columns) == required[table] + extra[table], table
    assert required["leaderboard"] == list(leaderboard.LEADERBOARD_CONTRACT_COLUMNS)
    assert required["leaderboard"] + extra["leaderboard"] == list(leaderboard.LEADERBOARD_COLUMNS)


# --------------------------------------------------------------------------------------------
# The dashboard: the Methodology page and the links into it


def _doc_links_in_pages() -> Iterator[tuple[str, str, str]]:
    """(page, document, anchor) of every `documents.doc_link(...)` call in app_pages/ and
    dashboard.py."""
    for path in [ROOT / "dashboard.py", *sorted((ROOT / "app_pages").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "doc_link"
            ):
                args = [ast.literal_eval(arg) for arg in node.args]
                yield relative(path), args[0], args[1] if len(args) > 1 else ""


def test_every_link_a_page_makes_into_the_documents_lands_on_a_heading() -> None:
    found = list(_doc_links_in_pages())
    assert {page for page, _, _ in found} >= {"app_pages/agent.py", "app_pages/exports.py"}
    for page, name, anchor in found:
        assert name in SHOWN_IN_DASHBOARD, (page, name)
        text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
        assert not anchor or anchor in streamlit_slugs(text), (page, name, anchor)


@pytest.mark.parametrize("name", SHOWN_IN_DASHBOARD)
def test_anchors_in_a_shown_document_work_on_github_and_in_the_dashboard(name: str) -> None:
    """Streamlit slugs headings differently from GitHub ("12.4" → 12-4 vs 124): a document
    the dashboard shows links only to headings whose two slugs agree."""
    for target in links(DOCS / f"{name}.md"):
        path, _, anchor = target.partition("#")
        if not anchor or not (path == "" or path.removesuffix(".md") in SHOWN_IN_DASHBOARD):
            continue
        text = (DOCS / (path or f"{name}.md")).read_text(encoding="utf-8")
        assert anchor in streamlit_slugs(text) and anchor in github_slugs(text), target


def test_document_rewrites_links_for_the_dashboard() -> None:
    text = (
        "# The title\n\nSee [contract §6](contract.md#6-export-columns), [§12](#12-snapshots),\n"
        "[arch](architecture.md), [architecture.md](architecture.md), "
        "[Configuration](../README.md#configuration), [site](https://example.org/a.md) and "
        "![img](img/x.png).\n$50 to $100, not `$x`:\n```\n$ make demo\n```\n"
    )

    title, body = documents.document(text, SHOWN_IN_DASHBOARD)

    assert title == "The title"
    assert body == (
        "See [contract §6](methodology?doc=contract#6-export-columns), [§12](#12-snapshots),\n"
        "arch (`docs/architecture.md`), `docs/architecture.md`, "
        "Configuration (`README.md`), [site](https://example.org/a.md) and "
        "![img](img/x.png).\n\\$50 to \\$100, not `$x`:\n```\n$ make demo\n```\n"
    )
    assert documents.doc_link("methodology", "11-scoring") == "methodology#11-scoring"
    assert documents.doc_link("contract") == "methodology?doc=contract"


@pytest.fixture
def migrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The dashboard pointed at an empty migrated database (its gate wants a schema)."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    engine = create_db_engine(url)
    try:
        init_db(engine)
    finally:
        engine.dispose()
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    get_settings.cache_clear()
    dispose_engines()
    yield
    get_settings.cache_clear()
    dispose_engines()


@pytest.mark.parametrize(
    ("name", "heading"),
    [("methodology", "12. Snapshot Methodology"), ("contract", "6. Export columns")],
)
def test_the_methodology_page_renders_the_file(migrated: None, name: str, heading: str) -> None:
    text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    title = heading_texts(text)[0]
    at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=60)
    at.query_params["doc"] = name
    at.query_params["section"] = "all"  # the methodology is drawn a section at a time
    at.switch_page("app_pages/methodology.py")
    at.run()

    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == [title]
    shown = "\n".join(str(m.value) for m in at.markdown)
    assert f"\n## {heading}\n" in shown
    _, body = documents.document(text, SHOWN_IN_DASHBOARD)
    assert body in shown  # the whole file, as it reads now
