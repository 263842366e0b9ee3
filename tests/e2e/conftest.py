"""End-to-end fixtures: a real `streamlit run dashboard.py` server and Debian's chromium.

The server reads a season built through the real jobs (`tests.analytics.season`: two cohorts,
baselines, the oracle and two loopback LLM families with retries, rejected legs and a fallback
HOLD, settlements, job runs with one failure), so every page shows real data. `arena demo` is
not used: a season of it takes minutes, this one seconds. Browser tests never skip: a missing
chromium fails loudly, because CI installs it.
"""

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    ViewportSize,
    expect,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError

from tests.analytics.season import Season
from tests.hostile import PAGES

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Offline: Chromium resolves no host name but the dashboard's loopback address.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
SERVER_START_TIMEOUT_S = 60.0
# How long an `expect(...)` waits, like every other browser wait here (the context's default and
# `settle`). Playwright's own 5 s is too short for a script run on a loaded two-core CI machine:
# a fresh server's first visit imports pandas, altair and the analytics before it draws a heading
# (CI once saw the Agent heading arrive after the 5 s had run out). A longer wait only slows a
# failing assertion; a passing one returns as soon as it holds.
EXPECT_TIMEOUT_MS = 30_000
expect.set_options(timeout=EXPECT_TIMEOUT_MS)
# Environment keys the server must not inherit: it gets exactly the test database, no secrets.
SCRUBBED_ENV = ("OPENROUTER_API_KEY", "ARENA_LLM_API_KEY", "ARENA_LINEUP", "ARENA_ADMIN_PASSWORD")
ADMIN_PASSWORD = "e2e-admin-password"  # the server's ARENA_ADMIN_PASSWORD, for Operations


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _health(base_url: str) -> str | None:
    """The body of /_stcore/health, or None while the server is not answering."""
    try:
        with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as response:
            return response.read().decode().strip()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate the server's whole process group; kill it if it lingers."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


@contextmanager
def dashboard_server(database_url: str, workdir: Path) -> Iterator[str]:
    """A fresh `streamlit run dashboard.py` over `database_url`: its base URL, once healthy."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = {key: value for key, value in os.environ.items() if key not in SCRUBBED_ENV}
    env["ARENA_DATABASE_URL"] = database_url
    env["ARENA_ADMIN_PASSWORD"] = ADMIN_PASSWORD
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "dashboard.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    log_path = workdir / "streamlit.log"
    with log_path.open("wb") as log:
        # Own session = own process group, so teardown reaches any child streamlit starts.
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while (body := _health(base_url)) != "ok":
            if process.poll() is not None or time.monotonic() > deadline:
                reason = (
                    f"exited with code {process.returncode}"
                    if process.poll() is not None
                    else f"did not answer ok on /_stcore/health within {SERVER_START_TIMEOUT_S}s"
                    f" (last answer {body!r})"
                )
                output = log_path.read_text(errors="replace")[-4000:]
                pytest.fail(
                    f"streamlit server {reason}: {' '.join(command)}\n--- server output ---\n"
                    f"{output}",
                    pytrace=False,
                )
            time.sleep(0.2)
        yield base_url
    finally:
        _stop(process)


@pytest.fixture(scope="session")
def streamlit_server(analysed_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a dashboard server over the analysed season, stopped after the session."""
    with dashboard_server(analysed_url, tmp_path_factory.mktemp("e2e-server")) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def mixed_server(mixed_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard over the season with cohort 2 re-stamped as extended (`mixed_url`)."""
    with dashboard_server(mixed_url, tmp_path_factory.mktemp("e2e-mixed")) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def unanalysed_server(season: Season, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard over the season before any `analyses` run (a fresh or imported database)."""
    with dashboard_server(season.url, tmp_path_factory.mktemp("e2e-raw")) as base_url:
        yield base_url


@pytest.fixture
def fresh_server(season: Season, tmp_path: Path) -> Iterator[str]:
    """A server of its own that no browser has visited yet (the first visit is the test's)."""
    with dashboard_server(season.url, tmp_path) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Playwright]:
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    """Debian's chromium driven by Playwright (no downloaded browsers on this machine)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} not found: install Debian's chromium (`apt-get install chromium`); "
            "browser tests are never skipped",
            pytrace=False,
        )
    browser = playwright_instance.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )
    try:
        yield browser
    finally:
        browser.close()


VIEWPORT: ViewportSize = {"width": 1280, "height": 900}


@pytest.fixture(scope="session")
def _context(browser: Browser) -> Iterator[BrowserContext]:
    """The worker's one browser context (downloads allowed), shared by its tests' tab."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(30_000)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture(scope="session")
def _tab(_context: BrowserContext) -> list[Page]:
    """The worker's reused tab (a one-item list, so a crashed tab can be replaced)."""
    return [_context.new_page()]


@pytest.fixture
def page(_context: BrowserContext, _tab: list[Page]) -> Iterator[Page]:
    """The worker's tab, blank, at 1280×900, with no cookies or storage from another test.

    Why one tab and not a context per test: a new context or tab costs Chromium a renderer and
    the Streamlit bundle compiled again, 2.4x the CPU of a load in a reused tab (6.4 s against
    2.6 s a page on 2 cores, measured). Every `goto` is still a new Streamlit session: the
    test's first visit is a first visit to the server's session, as before."""
    if _tab[0].is_closed():
        _tab[0] = _context.new_page()
    tab = _tab[0]
    tab.set_viewport_size(VIEWPORT)
    try:
        yield tab
    finally:
        for other in _context.pages:  # tabs the test opened (a link's new tab)
            if other is not tab:
                other.close()
        if not tab.is_closed():
            with contextlib.suppress(PlaywrightError):  # the server's origin's storage, if any
                tab.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
            tab.goto("about:blank")
        _context.clear_cookies()


def settle(page: Page, timeout_ms: float = 30_000) -> None:
    """Wait until the app has finished its script run and painted (no loading skeletons)."""
    page.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid=stApp]');
            return app && app.getAttribute('data-test-script-state') === 'notRunning'
                && !document.querySelector('[data-testid=stSkeleton]');
        }""",
        timeout=timeout_ms,
    )


# Each page's link in the sidebar, by its address: its heading (`tests.hostile.PAGES`), but
# Home's (headed "Forecaster Arena").
NAV_TITLES = {**PAGES, "": "Home"}


def navigate(page: Page, path: str, heading: str) -> None:
    """Open the page at `path` from the sidebar, in the session already open, as a reader
    browses: about half a new load's CPU in Chromium (no new session, no bundle run again).

    Waits for the address first, then `heading` (an old page's heading may match the new's,
    as Agent's "Decisions" section does), then the run's end."""
    nav = page.get_by_test_id("stSidebarNav")
    link = nav.get_by_role("link", name=NAV_TITLES[path], exact=True)
    if not link.is_visible():  # a long sidebar folds its last pages under "View more"
        nav.get_by_role("button", name=re.compile("View")).click()
    link.click()
    expect(page).to_have_url(re.compile(rf"/{re.escape(path)}(\?|#|$)"))
    expect(page.get_by_role("heading", name=heading, exact=True).first).to_be_visible()
    settle(page)


@pytest.fixture(scope="session")
def screenshots_dir() -> Path:
    """Where screenshots are saved for humans to look at (gitignored, never committed)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
