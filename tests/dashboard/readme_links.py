"""The dashboard deep links of the README and docs/dashboard.md, mapped onto the test season,
and what each page must show for one: shared by the AppTest checks of every link
(tests/dashboard/test_readme_links.py) and the Chromium checks of what needs a browser
(tests/e2e/test_readme_links.py: a fragment scrolled into view, the address bar).

The links are written for the `make demo` database (8 cohorts, the bundled lineup); the test
season has cohorts 1–2 and the families `llm-a` ("Model A"), `llm-b` ("Model B"), the baselines
and the oracle. `SEASON` maps the demo's names onto it explicitly, and a link that names
something without a mapping (or a page without an expectation in `EXPECTED`) fails, so a new
link in the documents needs its check written.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[2]
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


@dataclass(frozen=True)
class Expected:
    """What a page opened by a link shows: its headings, each select box's shown name (by
    label) and the names its multiselect holds."""

    headings: tuple[str, ...]
    boxes: dict[str, str] = field(default_factory=dict)
    picked: tuple[str, ...] = ()


def _decisions(q: dict[str, str]) -> Expected:
    boxes = {"Cohort": f"Cohort {q['cohort']}"} if "cohort" in q else {}
    if "family" in q:
        boxes["Family"] = NAMES[q["family"]]
    return Expected((f"Decision {q['decision']}" if "decision" in q else "Decisions",), boxes)


EXPECTED: dict[str, Callable[[dict[str, str]], Expected]] = {
    "leaderboard": lambda q: Expected(("Leaderboard",), {"Cohort": f"Cohort {q['cohort']}"}),
    "family": lambda q: Expected(("Family",), {"Family": NAMES[q["family"]]}),
    "agent": lambda q: Expected(
        ("Agent",), {"Cohort": f"Cohort {q['cohort']}", "Family": NAMES[q["family"]]}
    ),
    "cohorts": lambda q: Expected((f"Cohort {q['cohort']}",)),
    "compare": lambda q: Expected(
        ("Compare", f"{NAMES[q['family']]} − {NAMES[q['versus']]}"),
        {"Family": NAMES[q["family"]], "Versus": NAMES[q["versus"]]},
    ),
    "calibration": lambda q: Expected(
        ("Calibration",), picked=tuple(NAMES[f] for f in q["family"].split(","))
    ),
    "decisions": _decisions,
    "markets": lambda q: Expected((f"Market {q['market']}",)),
    "detectability": lambda q: Expected(
        ("When will we know?",), {"Cohort": f"Cohort {q['cohort']}"}
    ),
    "methodology": lambda q: Expected(
        ("The outside contract" if q.get("doc") == "contract" else "Methodology",)
    ),
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


def spoiled(link: str) -> tuple[str, dict[str, str], str]:
    """(page, query, key) of a demo link on the season with its first `SPOILED` key naming
    nothing."""
    page_path, query, _ = on_season(link)
    key = next((k for k in SPOILED if k in query), None)
    assert key is not None, f"{link}: nothing in it to spoil"
    return page_path, {**query, key: SPOILED[key]}, key


def shows(name: str) -> re.Pattern[str]:
    """A widget's shown text holds `name` as words (a select box may add the id after it)."""
    return re.compile(rf"(^|\b){re.escape(name)}(\b|$)")


def url(base: str, page_path: str, query: dict[str, str], fragment: str = "") -> str:
    """The address of `page_path` with `query` (commas kept) and `fragment` on `base`."""
    text = f"{base}/{page_path}"
    if query:
        text += "?" + urlencode(query, safe=",")
    return text + (f"#{fragment}" if fragment else "")
