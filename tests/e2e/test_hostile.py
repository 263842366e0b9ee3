"""Untrusted text is shown as text in Chromium, and a bad link never shows a traceback.

A hostile database: the e2e season with its free-text columns (market questions, categories,
resolution outcomes, UMA statuses, a family's display name, a decision's served model,
provider, error and reasoning, its attempts' errors) rewritten to Markdown that would make a
working link, an image the viewer's browser fetches, a bare autolinked URL, raw HTML and bold
text. Every page, drilled into the hostile decision and market, must show none of it as a link,
an image or markup, and must show it literally. Then hostile links: every deep-link key of
every page set to a phishing link plus a tracking pixel; the page names the bad link in its
warning as text. (That ids too large for the database are bad links, not tracebacks, is the
AppTest check tests/dashboard/test_hostile_ids.py.)
"""

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.analytics.season import LLM_A, LLM_B, Season
from tests.e2e.conftest import ADMIN_PASSWORD, dashboard_server, navigate, settle
from tests.e2e.shots import shoot
from tests.e2e.test_page_markets import VIEWPORT
from tests.hostile import (
    BAD_LINK,
    DECISION,
    HELD_MARKET,
    HOSTILE,
    KEYS,
    LINK,
    PAGES,
    WORD_JOINER,
    hostile_copy,
)


@pytest.fixture(scope="module")
def hostile_server(season: Season, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard over the hostile copy of the season (`tests.hostile`)."""
    folder = tmp_path_factory.mktemp("e2e-hostile")
    with dashboard_server(hostile_copy(season, folder), folder) as base_url:
        yield base_url


def visit(page: Page, base: str, path: str) -> None:
    """Open `path`, wait for its run to end, and check it shows no exception."""
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{base}/{path}")
    settle(page)
    main = page.get_by_test_id("stMain")
    # A page's heading, or (a bad link stops some pages before it) its warning.
    assert main.get_by_role("heading").count() or main.get_by_test_id("stAlert").count(), path
    # `settle` waited for the run's end: its exception, if any, is on the page by then.
    expect(page.get_by_test_id("stException")).to_have_count(0)


def assert_inert(page: Page, where: str) -> None:
    """No hostile link, image or markup anywhere on the page (sidebar included)."""
    for selector in (
        'a[href*="evil.example"]',
        'img[src*="pixel"]',
        'img[src="x"]',
        'iframe, script[src*="evil"]',
    ):
        found = page.locator(selector)
        assert found.count() == 0, (where, selector, _context(found.first))
    bold = page.get_by_test_id("stMain").locator("strong, b").filter(has_text=re.compile("^bold$"))
    assert bold.count() == 0, where
    body = page.inner_text("body")
    assert "Traceback" not in body and 'File "/' not in body, where


def _context(found: Locator) -> str:
    """The outer HTML of the element holding a hostile find (for the failure message)."""
    return str(
        found.evaluate(
            "e => (e.closest('[data-testid]:not([data-testid=stMarkdownContainer])') || e)"
            ".outerHTML.slice(0, 1500)"
        )
    )


def shown(found: Locator) -> str:
    """What a person reads in `found`: its text without the invisible word joiners that break
    an autolink (`fmt.escaped`)."""
    expect(found).to_be_visible()
    return found.inner_text().replace(WORD_JOINER, "")


def test_every_page_shows_hostile_database_text_as_text(
    hostile_server: str, page: Page, screenshots_dir: Path
) -> None:
    """Every page renders in Chromium (no exception, no "Page not found"), names its backend
    but never the database's address or the admin password, and shows the hostile text inert.
    (Merged with the former every-page screenshot sweep over the same season: each page's
    own journey, tests/e2e/test_page_*.py, screenshots it with the season's plain text.)"""
    # Home by its address, then every other page from the sidebar in that same session.
    for index, (path, heading) in enumerate(PAGES.items()):
        if index == 0:
            visit(page, hostile_server, path)
        else:
            navigate(page, path, heading)  # it settles: the run has ended
            expect(page.get_by_test_id("stException")).to_have_count(0)
        expect(page.get_by_role("heading", name=heading, exact=True).first).to_be_visible()
        expect(page.get_by_text("Page not found")).to_have_count(0)
        expect(page.get_by_test_id("stSidebar")).to_contain_text("Database: sqlite")
        if path == "operations":
            page.get_by_label("Admin password (press Enter)").fill(ADMIN_PASSWORD)
            page.get_by_label("Admin password (press Enter)").press("Enter")
            expect(page.get_by_role("heading", name="System log")).to_be_visible()
            settle(page)
            expect(page.get_by_text("Wrong password.")).to_have_count(0)
        assert_inert(page, path or "home")
        body = page.locator("body").inner_text()  # the backend named, never its address
        assert "sqlite:///" not in body and ADMIN_PASSWORD not in body, path

    # Pages opened on the hostile family, and the comparison naming it in its heading.
    for path in (
        f"family?family={LLM_A}",
        f"agent?cohort=1&family={LLM_A}",
        f"compare?family={LLM_A}&versus={LLM_B}",
        "cohorts?cohort=1",
    ):
        visit(page, hostile_server, path)
        assert_inert(page, path)
        if path.startswith("compare"):
            pair = page.get_by_test_id("stMain").get_by_role("heading", name=re.compile("^Model"))
            assert shown(pair.first) == f"Model A {LINK} − Model B"  # as written


def test_the_hostile_decision_shows_its_served_model_provider_and_errors_as_text(
    hostile_server: str, page: Page, screenshots_dir: Path
) -> None:
    visit(page, hostile_server, f"decisions?cohort=1&family={LLM_A}&decision={DECISION}")
    expect(page.get_by_role("heading", name=f"Decision {DECISION}", exact=True)).to_be_visible()
    main = page.get_by_test_id("stMain")
    caption = main.get_by_test_id("stCaptionContainer").filter(has_text="served by")
    assert f"served by {HOSTILE} · provider {HOSTILE} · decided" in shown(caption)
    expect(main.get_by_test_id("stText").filter(has_text=HOSTILE).first).to_be_visible()
    assert_inert(page, "decision")
    shoot(page, screenshots_dir, "hostile-decision")

    page.get_by_role("tab", name="Attempts").click()
    captions = main.get_by_test_id("stCaptionContainer")
    first = captions.filter(has_text="Attempt 1 — transport_retry")
    assert shown(first) == f"Attempt 1 — transport_retry — HTTP 500 {HOSTILE}"
    malformed = main.get_by_test_id("stExpander").filter(has_text="Attempt 2 — malformed")
    malformed.get_by_text("Attempt 2 — malformed").click()
    rejected = malformed.get_by_test_id("stCaptionContainer").filter(has_text="Rejected:")
    assert shown(rejected) == f"Rejected: HTTP 500 {HOSTILE}"
    final = captions.filter(has_text="Attempt 3 — valid")
    assert shown(final).endswith(f"Rejected: HTTP 500 {HOSTILE}")
    assert_inert(page, "decision attempts")
    shoot(page, screenshots_dir, "hostile-decision-attempts")


def test_the_hostile_market_shows_gamma_text_as_text(
    hostile_server: str, page: Page, screenshots_dir: Path
) -> None:
    market = HELD_MARKET[0]
    visit(page, hostile_server, f"markets?market={market}")
    expect(page.get_by_role("heading", name=f"Market {market}", exact=True)).to_be_visible()
    main = page.get_by_test_id("stMain")
    for label in ("Category", "Resolved as"):
        metric = main.get_by_test_id("stMetric").filter(has_text=label)
        assert shown(metric.get_by_test_id("stMetricValue")) == HOSTILE
    uma = main.get_by_test_id("stCaptionContainer").filter(has_text="UMA status")
    assert f"UMA status {HOSTILE} · source" in shown(uma)
    assert_inert(page, "market")
    shoot(page, screenshots_dir, "hostile-market")
    visit(page, hostile_server, "markets?snapshot=1")
    assert_inert(page, "market snapshot")


def test_hostile_links_are_named_as_text_on_every_page(
    hostile_server: str, page: Page, screenshots_dir: Path
) -> None:
    """Every deep-link key of every page at once set to a phishing link and a tracking pixel:
    Chromium renders the page's warning as text and nothing of the Markdown. (Which key each
    page names, one after another, is the AppTest sweep in tests/test_hostile_links.py.)"""
    query = "&".join(f"{key}={quote(BAD_LINK)}" for key in KEYS)
    warned = set()
    for path in PAGES:
        visit(page, hostile_server, f"{path}?{query}")
        assert_inert(page, f"{path}?{','.join(KEYS)}")
        warnings = page.get_by_test_id("stAlert").all_inner_texts()
        said = [t.replace(WORD_JOINER, "") for t in warnings if "This link's " in t]
        if said:
            assert f"='{BAD_LINK}' names no" in said[0], said
            warned.add(path)
        if path == "leaderboard":  # the phishing link, named as text in the cohort's warning
            warning = page.get_by_test_id("stAlert").filter(has_text="This link's cohort=")
            assert f"cohort='{BAD_LINK}' names no cohort" in shown(warning)
            shoot(page, screenshots_dir, "hostile-link-warning")
    assert {"leaderboard", "decisions", "markets"} <= warned, warned
