"""bench/browser.py times every dashboard page: the pages it reads from dashboard.py are the
ones in app_pages/, at the URL paths Streamlit serves them under; its server starts offline."""

import urllib.request
from pathlib import Path

import pytest

from arena.dashboard import reads
from bench.browser import CACHE_TTL_S, DashboardPage, dashboard_pages, dashboard_server
from tests import offline_guard
from tests.analytics.season import Season
from tests.offline import netguard

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_opens_every_page_in_app_pages() -> None:
    pages = dashboard_pages()
    files = {path.stem for path in (ROOT / "app_pages").glob("*.py")}
    assert sorted(page.name for page in pages) == sorted(files)
    assert [page.path for page in pages].count("") == 1  # the default page, at the root
    home = next(page for page in pages if page.name == "home")
    assert home == DashboardPage("home", "", "Home")
    others = [page for page in pages if page.path]
    assert all(page.path == page.name for page in others)  # Streamlit's path: the file name


def test_registrations_are_read_with_their_options() -> None:
    source = """
        st.Page(
            "app_pages/a.py", title="A", icon=":material/x:", default=True
        ),
        st.Page("app_pages/b.py", title="Bee", icon=":material/y:"),
        st.Page("app_pages/c.py", title="C", url_path="see"),
    """
    assert dashboard_pages(source) == [
        DashboardPage("a", "", "A"),
        DashboardPage("b", "b", "Bee"),
        DashboardPage("c", "see", "C"),
    ]


def test_rounds_wait_out_the_dashboard_s_read_cache() -> None:
    assert CACHE_TTL_S == reads.CACHE_TTL_S


def test_the_floor_is_a_bare_page_served_beside_the_dashboard() -> None:
    """The floor's script exists, its two pages are the ones the bench clicks between, and a
    page's time is printed as a multiple of the floor's."""
    from bench.browser import FLOOR, FLOOR_OTHER, FLOOR_SCRIPT, multiple

    # Read, not imported: importing it would start a Streamlit run.
    source = (ROOT / FLOOR_SCRIPT).read_text()
    assert f'FLOOR = "{FLOOR.title}"' in source
    assert f'OTHER = "{FLOOR_OTHER}"' in source
    assert FLOOR.path == ""  # the floor's default page, at its server's root
    assert multiple(1_500.0, 1_000.0) == "1.50×"
    assert multiple(None, 1_000.0) == multiple(1_500.0, None) == "—"


def test_the_bench_s_server_starts_offline(
    season: Season, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench/browser.py's `streamlit run dashboard.py` over the suite's season answers on
    loopback, its process guarded by the suite's offline guard, which records no connection
    outside loopback (Streamlit's usage statistics are off, its address is loopback)."""
    guard = tmp_path / "offline-guard.jsonl"
    monkeypatch.setenv(netguard.ENV_LOG, str(guard))
    with dashboard_server(season.url, "bench-password", tmp_path / "server.log") as base_url:
        assert base_url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{base_url}/", timeout=30) as response:
            assert response.status == 200
    offline_guard.guarded_and_offline(guard, "streamlit")
