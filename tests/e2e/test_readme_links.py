"""Every dashboard deep link the README and docs/dashboard.md give opens what it names, and the
same link naming something missing shows a warning with its name (never another view).

The links are written for the `make demo` database (8 cohorts, the bundled lineup); the browser
tests' season has cohorts 1–2 and the families `llm-a` ("Model A"), `llm-b` ("Model B"), the
baselines and the oracle. `SEASON` maps the demo's names onto it explicitly, and a link that
names something without a mapping (or a page without an expectation in `EXPECTED`) fails here,
so a new link in the documents needs its check written.
"""

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import ROOT, settle

WIDTH, HEIGHT = 1440, 900
DOCUMENTS = (ROOT / "README.md", ROOT / "docs" / "dashboard.md")
DEMO_LINK = re.compile(r"http://localhost:8501(/[^\s)>\]`]*)")

# The demo's names → the test season's (cohort 3 of 8 → cohort 2 of 2, and two LLM families).
SEASON: dict[str, dict[str, str]] = {
    "cohort": {"1": "1", "2": "2", "3": "2"},
    "family": {"gpt-5.1": "llm-a", "claude-opus-4.5": "llm-b"},
    "versus": {"gpt-5.1": "llm-a", "claude-opus-4.5": "llm-b"},
    "decision": {"1": "1"},  # cohort 1's first decision: gpt-5.1 there, llm-a here
    "market": {"900020": "900020"},  # held in both (the ids of the simulated world)
    "doc": {"contract": "contract", "methodology": "methodology"},
}
# Per page, where the season differs: `llm-b` only ever HOLDs (no resolved bet), so the
# Calibration page, which compares families with resolved bets, gets the oracle in its place.
SEASON_ON_PAGE: dict[str, dict[str, dict[str, str]]] = {
    "calibration": {"family": {"gpt-5.1": "llm-a", "claude-opus-4.5": "oracle"}},
}
NAMES = {"llm-a": "Model A", "llm-b": "Model B", "oracle": "Oracle (simulation only)"}
# What a link naming nothing says, per key (the first of these keys a link has is spoiled).
SPOILED = {
    "decision": "999999",
    "market": "999999",
    "family": "gpt-9",
    "cohort": "99",
    "doc": "nothing",
}


def demo_links() -> list[str]:
    """Every `http://localhost:8501/…` link of the documents, once each, in order."""
    found: list[str] = []
    for document in DOCUMENTS:
        for path in DEMO_LINK.findall(document.read_text(encoding="utf-8")):
            if path not in found:
                found.append(path)
    return found


def on_season(link: str) -> tuple[str, dict[str, str], str]:
    """(page, query, fragment) of a demo link, its names mapped onto the test season."""
    parts = urlsplit(link)
    page_path = parts.path.strip("/")
    query: dict[str, str] = {}
    for key, value in parse_qsl(parts.query):
        mapping = SEASON_ON_PAGE.get(page_path, {}).get(key) or SEASON.get(key)
        assert mapping is not None, f"{link}: no mapping for {key!r} onto the test season"
        values = value.split(",")
        unknown = [v for v in values if v not in mapping]
        assert not unknown, f"{link}: {key}={','.join(unknown)} has no mapping in SEASON"
        query[key] = ",".join(mapping[v] for v in values)
    return page_path, query, parts.fragment


def _combobox(page: Page, label: str, shown: str) -> None:
    expect(page.get_by_role("combobox", name=label)).to_have_value(
        re.compile(rf"(^|\b){re.escape(shown)}(\b|$)")
    )


def _heading(page: Page, name: str) -> None:
    expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible()


def _leaderboard(page: Page, q: dict[str, str]) -> None:
    _heading(page, "Leaderboard")
    _combobox(page, "Cohort", f"Cohort {q['cohort']}")


def _family(page: Page, q: dict[str, str]) -> None:
    _heading(page, "Family")
    _combobox(page, "Family", NAMES[q["family"]])


def _agent(page: Page, q: dict[str, str]) -> None:
    _heading(page, "Agent")
    _combobox(page, "Cohort", f"Cohort {q['cohort']}")
    _combobox(page, "Family", NAMES[q["family"]])


def _cohorts(page: Page, q: dict[str, str]) -> None:
    _heading(page, f"Cohort {q['cohort']}")


def _compare(page: Page, q: dict[str, str]) -> None:
    _heading(page, "Compare")
    _combobox(page, "Family", NAMES[q["family"]])
    _combobox(page, "Versus", NAMES[q["versus"]])
    _heading(page, f"{NAMES[q['family']]} − {NAMES[q['versus']]}")


def _calibration(page: Page, q: dict[str, str]) -> None:
    _heading(page, "Calibration")
    picked = page.get_by_test_id("stMultiSelect")
    for family in q["family"].split(","):
        expect(picked).to_contain_text(NAMES[family])


def _decisions(page: Page, q: dict[str, str]) -> None:
    _heading(page, f"Decision {q['decision']}" if "decision" in q else "Decisions")
    if "cohort" in q:
        _combobox(page, "Cohort", f"Cohort {q['cohort']}")
    if "family" in q:
        _combobox(page, "Family", NAMES[q["family"]])


def _markets(page: Page, q: dict[str, str]) -> None:
    _heading(page, f"Market {q['market']}")


def _methodology(page: Page, q: dict[str, str]) -> None:
    _heading(page, "The outside contract" if q.get("doc") == "contract" else "Methodology")


EXPECTED: dict[str, Callable[[Page, dict[str, str]], None]] = {
    "leaderboard": _leaderboard,
    "family": _family,
    "agent": _agent,
    "cohorts": _cohorts,
    "compare": _compare,
    "calibration": _calibration,
    "decisions": _decisions,
    "markets": _markets,
    "methodology": _methodology,
}


def _url(base: str, page_path: str, query: dict[str, str], fragment: str = "") -> str:
    text = f"{base}/{page_path}"
    if query:
        text += "?" + urlencode(query, safe=",")
    return text + (f"#{fragment}" if fragment else "")


def test_the_documents_give_deep_links_to_check() -> None:
    links = demo_links()
    readme = DEMO_LINK.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert readme, "the README gives no dashboard deep link"
    assert len(links) >= 8, links
    for link in links:
        page_path, _, _ = on_season(link)
        assert page_path in EXPECTED, f"{link}: no expectation for page {page_path!r}"


@pytest.mark.parametrize("link", demo_links())
def test_a_documented_link_opens_what_it_names(
    streamlit_server: str, page: Page, link: str
) -> None:
    page_path, query, fragment = on_season(link)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})

    page.goto(_url(streamlit_server, page_path, query, fragment))

    EXPECTED[page_path](page, query)
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    names_nothing = page.get_by_test_id("stAlertContentWarning").filter(has_text="names no")
    expect(names_nothing).to_have_count(0)
    for key, value in query.items():  # the address bar still names the selection
        expect(page).to_have_url(
            re.compile(rf"[?&]{key}={re.escape(value).replace(',', '(,|%2C)')}")
        )
    if fragment:
        expect(page.locator(f"[id='{fragment}']")).to_be_in_viewport()


@pytest.mark.parametrize("link", demo_links())
def test_the_same_link_naming_nothing_warns_with_its_name(
    streamlit_server: str, page: Page, link: str
) -> None:
    page_path, query, _ = on_season(link)
    key = next((k for k in SPOILED if k in query), None)
    assert key is not None, f"{link}: nothing in it to spoil"
    spoiled = {**query, key: SPOILED[key]}
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})

    page.goto(_url(streamlit_server, page_path, spoiled))

    warning = page.get_by_test_id("stAlertContentWarning")
    expect(warning).to_contain_text(f"{key}='{SPOILED[key]}'")
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(page).to_have_url(re.compile(rf"[?&]{key}={SPOILED[key]}"))  # no silent fallback


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
