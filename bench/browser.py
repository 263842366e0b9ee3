"""Browser time to idle: every dashboard page opened in Chromium, navigation start → app idle.

Run:
    .venv/bin/python bench/browser.py --database sqlite:////tmp/benchdemo.db [--repeats 5]
        [--pages leaderboard,agent]

What it does: starts `streamlit run dashboard.py --server.headless true` on a free loopback
port over `--database` (ARENA_DATABASE_URL; a throw-away ARENA_ADMIN_PASSWORD so Operations can
be unlocked), drives Debian's /usr/bin/chromium through Playwright, and prints per page the
time to idle, min / median / max over `--repeats` rounds.

The pages are the ones dashboard.py registers (`st.Page("app_pages/….py", title=…)`), read from
it at each run. Time to idle = from navigation start (the page's `performance` time origin) to
the first animation frame at which Streamlit's app reports its script run over
(`data-test-script-state` = notRunning, the wait of `settle` in tests/e2e/conftest.py), no
loading skeleton is left and a title (h1) is drawn. Each visit is a fresh browser context: a
new Streamlit session, as a new visitor gets. A page that fails (an exception on it, the
dashboard's "no database" screen, a timeout) is reported and the others are still timed.

The dashboard caches its reads for `CACHE_TTL_S` (20) seconds per server (`reads.read`), so each
round opens every page twice:
- first: no read of the previous round is cached (a round starts `CACHE_TTL_S` + 1 s after the
  previous one ended): what a visitor sees when nobody looked at the page lately. Reads a page
  shares with one opened earlier in the same round may be cached, as when one browses.
- cached: the same page again at once: Streamlit, the browser and cache hits only.
- in session: in that same browser session, to another page and back by the sidebar: the
  click → idle a person browsing the dashboard waits (no page reload, reads cached).
A warm-up round before the timed ones (the server's first run of each page imports its
modules) is printed apart. Operations is timed locked, as opened, and as "operations
(unlocked)": the admin password's Enter → the unlocked page's idle.

The floor: bench/floor_page.py, a bare Streamlit app (a title and a 10-row table, two pages in
`st.navigation`), served the same way by a second server in the same run and visited in every
round beside the pages (new session and in session). Each page's median is printed as a
multiple of the floor's: what the dashboard costs beyond Streamlit itself.

The figures include the Playwright driver, Chromium and the server sharing the machine: on 2
cores, a busy neighbour process moves them (the load average is printed).
"""

import argparse
import os
import platform
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # Offline: Chromium resolves no host name but the dashboard's loopback address.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
UNLOCKED = "operations (unlocked)"
FLOOR_SCRIPT = "bench/floor_page.py"
FLOOR_OTHER = "Other"  # the floor's second page (bench/floor_page.py's OTHER)
CACHE_TTL_S = 20  # arena.dashboard.reads.CACHE_TTL_S (not imported: it would start Streamlit here)
SERVER_START_TIMEOUT_S = 60.0
VISIT_TIMEOUT_MS = 180_000.0
# Keys the server must not inherit: it gets exactly the bench's database and password.
SCRUBBED_ENV = ("OPENROUTER_API_KEY", "ARENA_LLM_API_KEY", "ARENA_LINEUP", "ARENA_ADMIN_PASSWORD")

# Idle: the script run is over (not "initial": none has started yet), nothing is still loading,
# and a title is drawn (or the run's exception, reported after). Returns the moment, in ms
# since navigation start.
IDLE = """() => {
    const app = document.querySelector('[data-testid=stApp]');
    const idle = app && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid=stSkeleton]')
        && document.querySelector(
            '[data-testid=stMain] h1, [data-testid=stMain] [data-testid=stException]');
    return idle ? performance.now() : false;
}"""
# In-session navigation (a sidebar click): the new page's run is over and its title is drawn.
HEADING_IDLE = """(heading) => {
    const app = document.querySelector('[data-testid=stApp]');
    const title = document.querySelector('[data-testid=stMain] h1');
    const idle = app && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid=stSkeleton]')
        && title && title.innerText.trim() === heading;
    return idle ? performance.now() : false;
}"""
# Operations unlocked: the run after Enter is over and the password box is gone.
UNLOCKED_IDLE = """() => {
    const app = document.querySelector('[data-testid=stApp]');
    const idle = app && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid=stSkeleton]')
        && !document.querySelector('[data-testid=stMain] input[type=password]');
    return idle ? performance.now() : false;
}"""


IN_SESSION = " (in session)"
NO_PAGE_TITLE = "Forecaster Arena"  # dashboard.py's own screen: no database, a bad URL…
# st.Page("app_pages/leaderboard.py", title="Leaderboard", icon=…, default=True) in dashboard.py
REGISTERED = re.compile(r'st\.Page\(\s*"app_pages/(\w+)\.py",\s*title="([^"]+)"([^)]*)\)')
URL_PATH = re.compile(r'url_path="([^"]*)"')


@dataclass(frozen=True)
class DashboardPage:
    name: str  # the script's file name without .py
    path: str  # its URL path: "" for the default page
    title: str  # its title in the navigation


# The floor's timed page (bench/floor_page.py's FLOOR), at its server's root.
FLOOR = DashboardPage("floor", "", "Floor")


def dashboard_pages(source: str | None = None) -> list[DashboardPage]:
    """Every page dashboard.py registers, in its order (`source`: dashboard.py's text)."""
    text = source if source is not None else (ROOT / "dashboard.py").read_text()
    pages = []
    for name, title, rest in REGISTERED.findall(text):
        custom = URL_PATH.search(rest)
        path = "" if "default=True" in rest else (custom[1] if custom else name)
        pages.append(DashboardPage(name, path, title))
    return pages


def database_url(value: str) -> str:
    """A path or a URL → a SQLAlchemy URL (paths are SQLite files)."""
    return value if "://" in value else f"sqlite:///{Path(value).resolve()}"


# --------------------------------------------------------------------------------------------
# The server


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _health(base_url: str) -> str | None:
    try:
        with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as response:
            return str(response.read().decode().strip())
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


@contextmanager
def dashboard_server(
    database: str, admin_password: str, log_path: Path, script: str = "dashboard.py"
) -> Iterator[str]:
    """`streamlit run <script>` (the dashboard, or the floor) over `database`; yields its base
    URL, stops it on exit."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = {key: value for key, value in os.environ.items() if key not in SCRUBBED_ENV}
    env["ARENA_DATABASE_URL"] = database
    env["ARENA_ADMIN_PASSWORD"] = admin_password
    command = [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        # Own session = own process group, so the stop reaches any child streamlit starts.
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while _health(base_url) != "ok":
            if process.poll() is not None or time.monotonic() > deadline:
                output = log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the streamlit server did not start:\n{output}")
            time.sleep(0.2)
        yield base_url
    finally:
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
            except ProcessLookupError:
                pass


# --------------------------------------------------------------------------------------------
# Visits


class VisitError(RuntimeError):
    """A page that did not render as expected (an exception, another title, a timeout)."""


def _wait_idle(page: Page, script: str) -> float:
    handle = page.wait_for_function(script, polling="raf", timeout=VISIT_TIMEOUT_MS)
    return float(handle.json_value())


def _check(page: Page, name: str) -> None:
    if page.locator("[data-testid=stException]").count():
        text = page.locator("[data-testid=stException]").first.inner_text()
        raise VisitError(f"{name}: exception on the page: {' '.join(text.split())[:300]}")


def _nav_click(page: Page, title: str) -> None:
    """Click the sidebar's link to the page titled `title` (unfolding "View more" if needed)."""
    nav = page.get_by_test_id("stSidebarNav")
    link = nav.get_by_role("link", name=title, exact=True)
    if not link.is_visible():
        nav.get_by_text(re.compile(r"^View \d+ more$")).click()
    link.click()


def in_session(page: Page, target: DashboardPage, heading: str, other: str | None = None) -> float:
    """ms from a sidebar click to `target`'s idle, in a session that already ran the dashboard
    (another page first, so this is a page change as a person browsing makes one). `other`:
    the page left for (the floor's second page), else Operations (Home from Operations)."""
    if other is None:
        other = "Operations" if target.name != "operations" else "Home"
    _nav_click(page, other)
    page.wait_for_function(
        HEADING_IDLE, arg=other if other != "Home" else NO_PAGE_TITLE, polling="raf",
        timeout=VISIT_TIMEOUT_MS,
    )  # fmt: skip
    began = float(page.evaluate("performance.now()"))
    _nav_click(page, target.title)
    handle = page.wait_for_function(
        HEADING_IDLE, arg=heading, polling="raf", timeout=VISIT_TIMEOUT_MS
    )
    return float(handle.json_value()) - began


def visit(
    browser: Browser, base_url: str, target: DashboardPage, password: str, *, again: bool = False
) -> dict[str, float]:
    """Open one page in a fresh context; ms to idle by name (Operations: locked and unlocked).

    `again`: then leave it for another page and come back by the sidebar, timed as
    ``<name> (in session)``."""
    name = target.name
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{base_url}/{target.path}", wait_until="commit", timeout=VISIT_TIMEOUT_MS)
        try:
            times = {name: _wait_idle(page, IDLE)}
        except Exception as exc:
            shown = " ".join(page.locator("body").inner_text(timeout=5_000).split())
            reason = str(exc).splitlines()[0]
            raise VisitError(f"{name}: never idle ({reason}): {shown[:300]}") from exc
        _check(page, name)
        heading = page.locator("[data-testid=stMain] h1").first.inner_text().strip()
        # Home carries the entry's title too: there, the status strip tells the two apart.
        home_ran = target.name == "home" and page.get_by_text("Latest snapshot").count() > 0
        if heading == NO_PAGE_TITLE and not home_ran:
            shown = " ".join(page.locator("[data-testid=stMain]").inner_text().split())
            raise VisitError(f"{name}: the dashboard did not run the page: {shown[:300]}")
        if again:
            other = FLOOR_OTHER if target is FLOOR else None
            times[f"{name}{IN_SESSION}"] = in_session(page, target, heading, other)
        if name == "operations":
            box = page.get_by_label("Admin password (press Enter)")
            box.fill(password)
            began = float(page.evaluate("performance.now()"))
            box.press("Enter")
            times[UNLOCKED] = _wait_idle(page, UNLOCKED_IDLE) - began
            _check(page, UNLOCKED)
        return times
    finally:
        context.close()


@dataclass
class Figures:
    """Time-to-idle samples (ms) per page name, and the first failure of each failing page."""

    samples: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def add(self, times: dict[str, float]) -> None:
        for name, ms in times.items():
            self.samples.setdefault(name, []).append(ms)

    def median(self, name: str) -> float | None:
        values = self.samples.get(name, [])
        return statistics.median(values) if values else None

    def cell(self, name: str) -> str:
        values = self.samples.get(name, [])
        failed = "failed" if name in self.errors else ""
        if not values:
            return failed or "—"
        low, mid, high = min(values), statistics.median(values), max(values)
        return f"{low:,.0f} / {mid:,.0f} / {high:,.0f}" + (f" ({failed})" if failed else "")


@dataclass
class Run:
    """The figures of one bench run: the warm-up round, first visits and cached visits."""

    warmup: Figures = field(default_factory=Figures)
    first: Figures = field(default_factory=Figures)
    cached: Figures = field(default_factory=Figures)

    def errors(self) -> dict[str, str]:
        return {**self.cached.errors, **self.first.errors, **self.warmup.errors}


def _timed(
    figures: Figures, browser: Browser, url: str, page: DashboardPage, pwd: str, again: bool = False
) -> None:
    try:
        figures.add(visit(browser, url, page, pwd, again=again))
    except VisitError as exc:
        figures.errors.setdefault(page.name, str(exc))


def measure(
    browser: Browser,
    urls: tuple[str, str],
    pages: Sequence[DashboardPage],
    repeats: int,
    password: str,
) -> Run:
    """The warm-up round, then `repeats` rounds of (first, cached) visits per page, the floor
    first in each (`urls`: the dashboard's base URL and the floor's)."""
    base_url, floor_url = urls
    run = Run()
    _timed(run.warmup, browser, floor_url, FLOOR, password)
    for page in pages:
        _timed(run.warmup, browser, base_url, page, password)
    for round_number in range(repeats):
        time.sleep(CACHE_TTL_S + 1)  # every read cached by the previous round has expired
        _timed(run.first, browser, floor_url, FLOOR, password)
        _timed(run.cached, browser, floor_url, FLOOR, password, again=True)
        for page in pages:
            _timed(run.first, browser, base_url, page, password)
            _timed(run.cached, browser, base_url, page, password, again=True)
        print(f"  round {round_number + 1}/{repeats} done", file=sys.stderr, flush=True)
    return run


# --------------------------------------------------------------------------------------------
# Main


def multiple(value: float | None, floor: float | None) -> str:
    """`value` as a multiple of the floor's (both medians, ms): "1.4×", or "—"."""
    return f"{value / floor:.2f}×" if value is not None and floor else "—"


def print_figures(names: list[str], run: Run, repeats: int) -> None:
    header = [
        "page",
        "first visit ms min / median / max",
        "cached ms min / median / max",
        "in session ms min / median / max",
        "first ×floor",
        "in session ×floor",
    ]
    floor_first = run.first.median(FLOOR.name)
    floor_session = run.cached.median(FLOOR.name + IN_SESSION)
    rows = [
        [
            name,
            run.first.cell(name),
            run.cached.cell(name),
            run.cached.cell(name + IN_SESSION),
            multiple(run.first.median(name), floor_first),
            multiple(run.cached.median(name + IN_SESSION), floor_session),
        ]
        for name in [FLOOR.name, *names]
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, ["-" * w for w in widths], *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        print("  ".join(cells))
    print(
        f"{repeats} round(s); first = no read cached from the previous round (a round starts "
        f"{CACHE_TTL_S + 1} s after the last); cached = the same page again at once, in a "
        "fresh browser context (a new session); in session = then to another page and back by "
        "the sidebar, click to idle (no reload: what browsing the dashboard waits). floor = "
        f"{FLOOR_SCRIPT}, a bare Streamlit page (a title, a 10-row table) served the same way; "
        "×floor = the page's median over the floor's (first visits; in-session clicks)."
    )
    shown = ", ".join(
        f"{name} {run.warmup.cell(name).split(' / ')[0]}" for name in [FLOOR.name, *names]
    )
    print(f"warm-up round (server's first run of each page, not counted), ms: {shown}")
    for error in run.errors().values():
        print(f"ERROR {error}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", required=True, help="database URL (or SQLite file path)")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds (min/median/max)")
    parser.add_argument("--pages", default=None, help="comma list of page names (default all)")
    args = parser.parse_args(argv)
    pages = dashboard_pages()
    if args.pages:
        wanted = {p.strip() for p in args.pages.split(",") if p.strip()}
        unknown = wanted - {page.name for page in pages}
        if unknown:
            parser.error(f"unknown page(s): {', '.join(sorted(unknown))}")
        pages = [page for page in pages if page.name in wanted]
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} not found: `apt-get install chromium`", file=sys.stderr)
        return 2
    database = database_url(args.database)
    password = secrets.token_urlsafe(12)
    names = [page.name for page in pages]
    names += [UNLOCKED] if "operations" in names else []
    one, five, fifteen = os.getloadavg()
    print(
        f"bench/browser.py — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {os.cpu_count()} CPUs, "
        f"Linux {platform.release().split('-')[0]}, Python {platform.python_version()} — "
        f"load average {one:.2f} {five:.2f} {fifteen:.2f}"
    )
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-browser-{os.getpid()}.log"
    floor_log = log_path.with_suffix(".floor.log")
    with (
        dashboard_server(database, password, log_path) as base_url,
        dashboard_server(database, password, floor_log, FLOOR_SCRIPT) as floor_url,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            print(f"Chromium {browser.version}, database {database.split('://')[0]}", flush=True)
            run = measure(browser, (base_url, floor_url), pages, args.repeats, password)
        finally:
            browser.close()
    print_figures(names, run, args.repeats)
    one, five, fifteen = os.getloadavg()
    print(f"load average at the end: {one:.2f} {five:.2f} {fifteen:.2f}")
    if run.errors():
        print(f"server logs: {log_path}, {floor_log}")
        return 1
    log_path.unlink(missing_ok=True)
    floor_log.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
