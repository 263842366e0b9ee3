"""Protocol groups in the sidebar's Methodology selector, on every page that reads it:
a horizon deployment reads its own cohorts pooled, never pooled with anything else.

The database is the suite's v1 season (cohorts 1–2) copied once more (cohorts 3–4), cohort 3
re-stamped `horizon` with 14 days: the group ``v1+horizon-14d`` is cohort 3 alone (a copy of
cohort 1) and plain v1 is cohorts 1, 2 and 4, so a page showing v1's figures for the group (or
pooling the two) shows other numbers. The hourly analyses are stored once, as the job would.
A second copy has every cohort stamped `horizon`: it holds no plain v1 cohort, and opens on
its group.
"""

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import update
from streamlit.testing.v1 import AppTest

from arena.analytics.query.scope import key_version, normalised_key
from arena.analytics.stored import stored_result
from arena.config import Methodology, cohort_stamp
from arena.dashboard import notices, picks
from arena.engine.analyses import store_analyses
from arena.storage.db import create_db_engine
from arena.storage.tables import COHORTS
from tests.analytics.season import Season, writable_copy
from tests.dashboard.apptest import all_text, read, run_page, use_database
from tests.test_v2_scope import add_v2_season

GROUP = "v1+horizon-14d"
HORIZON, PLAIN = [3], [1, 2, 4]
# The pages that read the sidebar's selector (the others never pool across cohorts by it).
SCOPED_PAGES = [
    "home",
    "leaderboard",
    "calibration",
    "compare",
    "execution",
    "family",
    "cohorts",
    "agent",
    "detectability",
]


def _horizon_stamp() -> dict[str, Any]:
    stamp = cohort_stamp(Methodology(), ["horizon"])
    return {**stamp, "horizon_days": 14, "is_default": False}


def _restamp(url: str, numbers: list[int]) -> None:
    engine = create_db_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                update(COHORTS)
                .where(COHORTS.c.number.in_(numbers))
                .values(constants=_horizon_stamp())
            )
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def grouped_url(season: Season, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The season, its plain copy, cohort 3 a horizon group, with the analyses stored."""
    url = writable_copy(season, tmp_path_factory.mktemp("groups") / "groups.db")
    engine = create_db_engine(url)
    try:
        assert add_v2_season(engine, "v1", Methodology().stamp()) == [3, 4]
        _restamp(url, HORIZON)
        store_analyses(engine, datetime(2030, 1, 1, tzinfo=UTC))
    finally:
        engine.dispose()
    return url


@pytest.fixture
def on_groups(grouped_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from use_database(monkeypatch, grouped_url)


def _selector(at: AppTest) -> Any:
    boxes = [box for box in at.sidebar.selectbox if box.label == "Methodology"]
    return boxes[0] if boxes else None


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


# --------------------------------------------------------------------------------------------
# Pure: keys, labels, when the selector shows


def test_a_key_its_version_and_its_hand_typed_form() -> None:
    assert [key_version(k) for k in ("v1", "v2", GROUP, "v2+stated_probability")] == [
        "v1",
        "v2",
        "v1",
        "v2",
    ]
    # URLSearchParams decodes a typed "+" as a space; the app's own links send %2B ("+").
    assert normalised_key("v1 horizon-14d") == GROUP
    assert normalised_key(" v1  replicates-3 stated_probability ") == (
        "v1+replicates-3+stated_probability"
    )
    assert normalised_key(GROUP) == GROUP and normalised_key("v2") == "v2"
    # Not a key: shown back as it came in the bad-link warning, spaces and all.
    hostile = "[Session expired - log in](https://evil.example/login)"
    assert normalised_key(hostile) == hostile


def test_when_the_selector_shows_and_how_it_names_a_scope() -> None:
    assert not picks.shows_selector({"v1": [1, 2]})  # plain v1 alone: as before
    assert not picks.shows_selector({})
    assert picks.shows_selector({"v1": [1], GROUP: [2]})
    assert picks.shows_selector({GROUP: [1, 2]})  # no plain v1 cohort: a horizon deployment
    assert picks.scope_name("v1", [1]) == picks.VERSION_NAMES["v1"]
    assert picks.scope_name(GROUP, [1, 2, 3, 5]) == "v1 + horizon 14d (cohorts 1–3, 5)"
    assert picks.scope_name(GROUP, [4]) == "v1 + horizon 14d (cohort 4)"


def test_the_left_out_note_points_to_the_selector() -> None:
    v1 = notices.left_out_text([3], selector=True)
    assert v1.startswith("1 extended cohort (#3) is left out of these v1 figures; choose it")
    assert v1.endswith(notices.SELECTOR)
    group = notices.left_out_text([], other={"v1": PLAIN}, version=GROUP)
    assert group == (
        "v1 cohorts 1–2, 4 are not in these v1 + horizon 14d figures: another protocol, never "
        "pooled with v1 + horizon 14d (the sidebar's Methodology selector shows theirs)."
    )


# --------------------------------------------------------------------------------------------
# AppTest: a group chosen on every page that reads the selector


def test_every_scoped_page_reads_the_group_chosen(on_groups: str) -> None:
    for page in SCOPED_PAGES:
        at = run_page(None if page == "home" else page, methodology=GROUP)
        _ok(at)
        selector = _selector(at)
        assert selector is not None and selector.value == GROUP, page
        assert "v1 + horizon 14d (cohort 3)" in selector.options, page
        if page in ("cohorts", "agent"):  # one cohort at a time: opens on the group's newest
            label = "Cohort to open" if page == "cohorts" else "Cohort"
            assert [b.value for b in at.selectbox if b.label == label] == [3], page


def test_the_leaderboard_of_a_group_is_its_own_and_a_typed_link_works(on_groups: str) -> None:
    # A hand-typed link: "+" arrives as a space, and is read as the key it was.
    at = run_page("leaderboard", methodology="v1 horizon-14d")
    _ok(at)
    assert _selector(at).value == GROUP
    assert at.query_params.get("methodology") in (None, GROUP)
    engine = create_db_engine(on_groups, role="reader")
    try:
        group = stored_result(engine, "leaderboard", methodology=GROUP)
        v1 = stored_result(engine, "leaderboard")
    finally:
        engine.dispose()
    assert group is not None and v1 is not None
    shown: pd.DataFrame = at.dataframe[0].value
    assert set(group.frame["cohorts"]) == {1} and set(v1.frame["cohorts"]) == {3}
    assert list(shown["family"]) == list(group.frame["display_name"])
    text = read(all_text(at))
    assert "**Protocol v1 + horizon 14d** (cohort 3): every cohort run under this protocol" in text
    assert "v1 cohorts 1–2, 4 are not in these v1 + horizon 14d figures" in text
    assert "This cohort has no agents" not in text

    plain = run_page("leaderboard")
    _ok(plain)
    assert _selector(plain).value == "v1"  # v1 cohorts exist: v1 by default
    note = read(all_text(plain))
    assert "1 extended cohort (#3) is left out of these v1 figures" in note
    assert notices.SELECTOR in note


def test_when_will_we_know_uses_the_sidebar_and_reads_old_links(on_groups: str) -> None:
    at = run_page("detectability", protocol=GROUP)  # an old link: an alias of methodology
    _ok(at)
    assert _selector(at).value == GROUP
    assert "Protocol" not in [box.label for box in at.selectbox]
    cohorts = [box for box in at.selectbox if box.label == "Cohort"]
    assert cohorts and cohorts[0].options == ["All its cohorts", "Cohort 3"]
    assert "protocol" not in at.query_params
    assert set(at.dataframe[0].value["cohorts"]) == {1}  # the stored group frame: cohort 3
    # The group's horizon cohorts and how soon they finished (expected against actual).
    text = read(all_text(at))
    assert "How soon these cohorts finish" in text
    completion = at.dataframe[-1].value
    assert list(completion["cohort_text"]) == ["#3"] and list(completion["horizon"]) == ["14 days"]


def test_a_horizon_cohort_says_its_horizon_and_completion(on_groups: str) -> None:
    horizon = read(all_text(run_page("cohorts", cohort="3")))
    assert "**Horizon 14 days**: every market shown ended within 14 days" in horizon
    assert "expected to complete" in horizon and "Overruns:" in horizon
    assert "Horizon 14 days" not in read(all_text(run_page("cohorts", cohort="1")))


def test_a_horizon_only_database_opens_on_its_group(
    season: Season, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = writable_copy(season, tmp_path_factory.mktemp("horizon_only") / "horizon.db")
    _restamp(url, [1, 2])
    for _ in use_database(monkeypatch, url):
        at = run_page("leaderboard")
        _ok(at)
        selector = _selector(at)
        assert selector is not None and selector.value == GROUP
        assert selector.options == ["v1 + horizon 14d (cohorts 1–2)"]
        text = read(all_text(at))
        assert "This cohort has no agents" not in text
        assert "**Protocol v1 + horizon 14d** (cohorts 1–2)" in text
