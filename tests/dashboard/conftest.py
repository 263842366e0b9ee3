"""Fixtures of the AppTest page tests: the dashboard in-process over the suite's seasons
(`season`, `analysed_url`, `mixed_url` of tests/conftest.py)."""

from collections.abc import Iterator

import pytest

from arena.lineup import load_lineup
from tests.analytics.season import Season
from tests.dashboard.apptest import use_database
from tests.stated_season import DemoSeasons


@pytest.fixture
def on_season(season: Season, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The dashboard over the season before any `analyses` run."""
    yield from use_database(monkeypatch, season.url)


@pytest.fixture
def on_analysed(analysed_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The dashboard over the analysed season (what `streamlit_server` serves in tests/e2e)."""
    yield from use_database(monkeypatch, analysed_url)


@pytest.fixture
def on_mixed(mixed_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The dashboard over the season with cohort 2 extended (what `mixed_server` serves)."""
    yield from use_database(monkeypatch, mixed_url)


@pytest.fixture(scope="module")
def extended_url(demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 15-day demo season stamped `stated_probability` (analyses stored)."""
    return demo_seasons.copy(
        tmp_path_factory.mktemp("apptest-extended"), load_lineup(None), "stated_probability", 15
    )


@pytest.fixture
def on_extended(extended_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The dashboard over the extended demo season."""
    yield from use_database(monkeypatch, extended_url)
