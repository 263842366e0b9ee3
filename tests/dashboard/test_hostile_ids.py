"""An id too large for the database (OverflowError in the driver before) or negative is a bad
link the page names, never a traceback: AppTest over the hostile season copy (`tests.hostile`).

Why AppTest: the warning and the absence of an exception are what the script writes. That the
hostile database's text renders inert in Chromium is tests/e2e/test_hostile.py.
"""

from collections.abc import Iterator

import pytest

from tests.analytics.season import Season
from tests.dashboard.apptest import all_text, read, run_page, use_database
from tests.hostile import HUGE, hostile_copy


@pytest.fixture(scope="module")
def hostile_url(season: Season, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A hostile copy of the season (a module's tests share it)."""
    return hostile_copy(season, tmp_path_factory.mktemp("hostile-ids"))


@pytest.fixture
def on_hostile(hostile_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The dashboard in-process over the hostile copy."""
    yield from use_database(monkeypatch, hostile_url)


@pytest.mark.parametrize(
    ("page", "key", "value", "named"),
    [
        ("decisions", "decision", HUGE, f"This link's decision='{HUGE}' names no decision"),
        ("markets", "snapshot", HUGE, f"This link's snapshot='{HUGE}' names no market snapshot"),
        ("decisions", "decision", "-3", "This link's decision='-3' names no decision"),
    ],
)
def test_an_id_too_large_for_the_database_is_a_bad_link_not_a_traceback(
    on_hostile: str, page: str, key: str, value: str, named: str
) -> None:
    at = run_page(page, **{key: value})

    assert not at.exception, [e.value for e in at.exception]
    said = [read(str(w.value)) for w in at.warning]
    assert any(named in text for text in said), said
    shown = read(all_text(at)) + "\n".join(said)
    for trace in ("Traceback", 'File "/', "OverflowError", "site-packages"):
        assert trace not in shown, trace
