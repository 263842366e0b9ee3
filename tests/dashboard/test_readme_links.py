"""Every dashboard deep link the README and docs/dashboard.md give opens what it names, and the
same link naming something missing shows a warning with its name (never another view): AppTest
over the analysed season (what the e2e server serves), one run a link and check.

Why AppTest: the heading, the select boxes' shown names, the warning and the query the run
leaves are what the script writes. What needs a browser (a `#fragment` scrolled into view, the
address bar keeping a link's keys) is tests/e2e/test_readme_links.py; the links and their
mapping onto the season are tests/dashboard/readme_links.py.
"""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import headings, ok, read, run_page, widget
from tests.dashboard.readme_links import (
    DEMO_LINK,
    EXPECTED,
    ROOT,
    SPOILED,
    demo_links,
    on_season,
    shows,
    spoiled,
)

MARKDOWN_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)


def all_headings(at: AppTest) -> list[str]:
    """Every heading a reader sees: titles, headers, and Markdown's `#` lines (a document)."""
    found = headings(at)
    for block in at.markdown:
        found += [read(h) for h in MARKDOWN_HEADING.findall(str(block.value))]
    return found


def shown_value(box: object) -> str:
    """A select box's choice as shown (its format_func applied)."""
    options, index = box.options, box.index  # type: ignore[attr-defined]
    assert index is not None, box
    return str(options[index])


def warnings(at: AppTest) -> list[str]:
    """The page's warnings as read."""
    return [read(str(w.value)) for w in at.warning]


def test_the_documents_give_deep_links_to_check() -> None:
    links = demo_links()
    readme = DEMO_LINK.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert readme, "the README gives no dashboard deep link"
    assert len(links) >= 8, links
    for link in links:
        page_path, _, _ = on_season(link)
        assert page_path in EXPECTED, f"{link}: no expectation for page {page_path!r}"


@pytest.mark.parametrize("link", demo_links())
def test_a_documented_link_opens_what_it_names(on_analysed: str, link: str) -> None:
    page_path, query, _ = on_season(link)

    at = ok(run_page(page_path, **query))

    expected = EXPECTED[page_path](query)
    shown = all_headings(at)
    for heading in expected.headings:
        assert heading in shown, (heading, shown)
    for label, name in expected.boxes.items():
        value = shown_value(widget(at, "selectbox", label))
        assert shows(name).search(value), (label, name, value)
    if expected.picked:
        (picked,) = at.multiselect
        for name in expected.picked:
            assert any(shows(name).search(v) for v in picked.values), (name, picked.values)
    assert not [w for w in warnings(at) if "names no" in w], warnings(at)
    for key, value in query.items():  # the page keeps the link's selection in its query
        assert at.query_params.get(key) == value, (key, value, dict(at.query_params))


@pytest.mark.parametrize("link", demo_links())
def test_the_same_link_naming_nothing_warns_with_its_name(on_analysed: str, link: str) -> None:
    page_path, query, key = spoiled(link)

    at = ok(run_page(page_path, **query))

    said = [w for w in warnings(at) if f"{key}='{SPOILED[key]}'" in w]
    assert said, (key, warnings(at))
    # No silent fallback: the run leaves the spoiled key in the query as the link gave it.
    assert at.query_params.get(key) == SPOILED[key], (key, dict(at.query_params))


def test_links_are_read_from_the_files_as_written(tmp_path: Path) -> None:
    """The link pattern stops at Markdown's and an autolink's closing characters."""
    sample = tmp_path / "x.md"
    sample.write_text(
        "[a](http://localhost:8501/agent?cohort=3&family=gpt-5.1), "
        "<http://localhost:8501/markets?market=900020> and `http://localhost:8501/cohorts?cohort=1`"
    )
    assert DEMO_LINK.findall(sample.read_text()) == [
        "/agent?cohort=3&family=gpt-5.1",
        "/markets?market=900020",
        "/cohorts?cohort=1",
    ]
