"""Every deep-link key of every page, set to a phishing link and a tracking pixel, is named as
a bad link, one key after another (AppTest over the hostile season copy, `tests.hostile`).

Why AppTest: which keys a page checks, and what its warning says, is what the script writes;
AppTest sees it in a fraction of a browser load. That the warning renders inert in Chromium is
`tests/e2e/test_hostile.py` (every page, all keys at once).
"""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from arena.dashboard import fmt
from tests.analytics.season import Season
from tests.dashboard_caches import clear_dashboard_caches
from tests.hostile import BAD_LINK, KEYS, PAGES, hostile_copy

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboard.py"
NAMED = re.compile(r"This link's (\w+)=")


@pytest.fixture(scope="module")
def hostile_url(season: Season, tmp_path_factory: pytest.TempPathFactory) -> str:
    return hostile_copy(season, tmp_path_factory.mktemp("hostile-links"))


@pytest.fixture
def hostile(hostile_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD", raising=False)
    monkeypatch.setenv("ARENA_DATABASE_URL", hostile_url)
    clear_dashboard_caches()
    yield hostile_url
    clear_dashboard_caches()


def warnings_of(path: str, keys: list[str]) -> list[str]:
    """The warnings `path` shows with every key in `keys` set to the bad link, as read."""
    at = AppTest.from_file(str(DASHBOARD), default_timeout=60)
    for key in keys:
        at.query_params[key] = BAD_LINK
    if path:
        at.switch_page(f"app_pages/{path}.py")
    at.run()
    assert not at.exception, (path, keys, [e.value for e in at.exception])
    texts = [str(w.value) for w in at.warning]
    return [re.sub(r"\\(.)", r"\1", t).replace(fmt.WORD_JOINER, "") for t in texts]


def test_every_key_a_page_reads_is_named_as_a_bad_link(hostile: str) -> None:
    flagged: dict[str, list[str]] = {}
    for path in PAGES:
        keys = list(KEYS)
        while True:
            warnings = warnings_of(path, keys)
            named = [m.group(1) for text in warnings if (m := NAMED.search(text))]
            if not named:
                break
            key = named[0]
            said = [text for text in warnings if f"This link's {key}=" in text]
            assert f"This link's {key}='{BAD_LINK}' names no" in said[0], said
            assert key not in flagged.get(path, []), (path, key)  # each key named once
            flagged.setdefault(path, []).append(key)
            keys.remove(key)
    assert flagged["leaderboard"][0] == "cohort", flagged
    assert "decision" in flagged.get("decisions", []), flagged
    assert "market" in flagged.get("markets", []), flagged
