"""The Markets page in Chromium at 1440×900: the list reads as text (question once, prices as
"Yes 0.62 · No 0.38", never JSON), its key columns are in view without scrolling, it sorts by
close date or recency through the link, it keeps no filter it does not use in the address bar,
a market or snapshot link opens it; a real (Gamma) market links to Polymarket. A link naming
nothing (script output only) is checked in-process: tests/dashboard/test_markets_page.py.

How "in view" is measured: Streamlit's dataframe (glide-data-grid) draws on a canvas, but it
mirrors into a hidden ARIA table exactly the columns whose left edge lies inside the grid's
visible width (checked at 1440, 1420 and 1400 px: a column starting 5 px before the grid's
right edge is listed, one starting at it is not). A listed column followed by another listed
column therefore ends inside the grid; the last listed one is wholly in view only when it is
the table's last column (aria-colcount). The grid's own box must lie inside the viewport.
The ARIA table holds the cells' data (a Styler's display text is drawn, not mirrored), so it
shows a null cell as "" where the canvas draws "None": an empty cell is a failure.
"""

import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, ViewportSize, expect

from tests.e2e.conftest import dashboard_server, settle
from tests.e2e.shots import shoot

VIEWPORT: ViewportSize = {"width": 1440, "height": 900}
# What a cell must never show: a null (mirrored as ""), pandas' and JSON's missing markers.
MISSING = {"", "None", "none", "nan", "NaN", "NaT", "<NA>", "null"}
RAW_JSON = re.compile(r'^\s*[\[{]\s*"')


def open_page(page: Page, base: str, path: str, heading: str) -> None:
    """`path` at 1440×900, its run finished, no exception shown."""
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{base}/{path}")
    # The conftest's 30 s wait: a fresh server's first visit on a loaded machine can take 20.
    expect(page.get_by_role("heading", name=heading, exact=True).first).to_be_visible()
    settle(page)
    page.wait_for_timeout(400)  # the grids paint (and mirror) their cells after the run
    expect(page.get_by_test_id("stException")).to_have_count(0)


def headers_in_view(grid: Locator) -> list[str]:
    """The grid's column headers wholly inside the viewport, left to right (see the module
    docstring for how)."""
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"], box
    table = grid.locator("table[role=grid]")
    expect(table.locator("th[role=columnheader]").first).to_be_attached()
    headers = table.locator("th[role=columnheader]")
    names = [headers.nth(i).inner_text().strip() for i in range(headers.count())]
    last = int(headers.nth(headers.count() - 1).get_attribute("aria-colindex") or 0)
    first = int(headers.nth(0).get_attribute("aria-colindex") or 0)
    assert first == 1, "the grid is scrolled sideways"
    total = int(table.get_attribute("aria-colcount") or 0)
    return names if last == total else names[:-1]


def cells_by_column(grid: Locator) -> dict[str, list[str]]:
    """The mirrored cells (the rows and columns the grid has painted), by column header."""
    grid.scroll_into_view_if_needed()  # a grid below the fold paints nothing
    table = grid.locator("table[role=grid]")
    expect(table.locator("td[role=gridcell]").first).to_be_attached()
    headers = table.locator("th[role=columnheader]")
    names = {
        headers.nth(i).get_attribute("aria-colindex"): headers.nth(i).inner_text().strip()
        for i in range(headers.count())
    }
    cells: dict[str, list[str]] = {name: [] for name in names.values()}
    found = table.locator("td[role=gridcell]")
    for i in range(found.count()):
        cell = found.nth(i)
        name = names.get(cell.get_attribute("aria-colindex"))
        if name is not None:
            cells[name].append(cell.inner_text())
    return cells


def assert_readable(grid: Locator, *, may_be_empty: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """No painted cell is missing-looking or raw JSON; returns the cells by column."""
    cells = cells_by_column(grid)
    assert any(cells.values()), "no cell painted"
    for column, values in cells.items():
        for value in values:
            if value == "" and column in may_be_empty:
                continue
            assert value.strip() not in MISSING, (column, value)
            assert not RAW_JSON.match(value), (column, value)
    return cells


def test_the_list_reads_as_text_with_prices_in_view(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, streamlit_server, "markets", "Markets")

    grid = page.get_by_test_id("stDataFrame").first
    shown = headers_in_view(grid)
    for column in ("Market", "Prices (last sync)", "Status", "Closes", "Volume", "Agents"):
        assert column in shown, shown
    assert shown[:2] == ["Market", "Prices (last sync)"]  # the question once, prices next
    cells = assert_readable(grid)
    assert all(
        re.fullmatch(r".+ \d\.\d{2,3}( · .+ \d\.\d{2,3})*( · \+\d+ more)?", p)
        for p in cells["Prices (last sync)"]
    ), cells["Prices (last sync)"]
    assert any(p.startswith("Yes ") and " · No " in p for p in cells["Prices (last sync)"])
    # No Polymarket column over simulated markets, and the caption says why.
    assert "Polymarket" not in cells
    expect(page.get_by_text("none has a Polymarket page")).to_be_visible()
    shoot(page, screenshots_dir, "markets")


def test_sort_is_a_link_and_unused_filters_leave_the_address_bar(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    # Another page's filters in the link: Markets does not use them, so they go.
    open_page(page, streamlit_server, "markets?cohort=3&family=oracle&sort=closing", "Markets")

    expect(page).not_to_have_url(re.compile(r"[?&](cohort|family)="))
    expect(page).to_have_url(re.compile(r"sort=closing"))
    expect(
        page.get_by_text(re.compile(r"market\(s\), by close date, soonest first"))
    ).to_be_visible()
    closes = cells_by_column(page.get_by_test_id("stDataFrame").first)["Closes"]
    assert closes == sorted(closes) and len(closes) > 3  # ISO times sort as text
    shoot(page, screenshots_dir, "markets-closing-first")

    page.get_by_role("radio", name="Newest", exact=True).click()

    expect(page).to_have_url(re.compile(r"sort=newest"))
    settle(page)
    expect(page.get_by_text(re.compile(r"market\(s\), newest first"))).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_a_market_link_opens_it(streamlit_server: str, page: Page, screenshots_dir: Path) -> None:
    open_page(page, streamlit_server, "markets?held=yes&market=900020", "Markets")

    expect(page.get_by_role("heading", name="Market 900020", exact=True)).to_be_visible()
    main = page.get_by_test_id("stMain")
    texts = main.get_by_test_id("stText")
    expect(texts.get_by_text("Prices: Yes 0.00 · No 1.00")).to_be_visible()
    expect(texts.get_by_text("Best Picture Winner 2026", exact=True)).to_be_visible()  # event
    body = main.inner_text()
    assert '["' not in body and "None" not in body and "nan" not in body.split()
    grids = page.get_by_test_id("stDataFrame")
    for index in range(1, grids.count()):  # positions, trades, Brier rows
        assert_readable(grids.nth(index))
    assert "Family" in headers_in_view(grids.nth(1))
    shoot(page, screenshots_dir, "market-detail")


def test_a_snapshot_link_opens_it(streamlit_server: str, page: Page) -> None:
    open_page(page, streamlit_server, "markets?snapshot=1", "Markets")

    expect(page.get_by_role("heading", name="Market snapshot #1")).to_be_visible()
    grid = page.get_by_test_id("stDataFrame").first
    assert headers_in_view(grid)[:3] == ["Rank", "Market", "Prices as shown"]
    assert_readable(grid)


@pytest.fixture(scope="module")
def gamma_server(analysed_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The analysed season with two of its markets made real Polymarket (Gamma) markets: one
    with its event's slug stored, one with only its own slug."""
    folder = tmp_path_factory.mktemp("e2e-gamma")
    target = folder / "gamma.db"
    shutil.copyfile(Path(analysed_url.removeprefix("sqlite:///")), target)
    with sqlite3.connect(target) as conn:
        conn.execute("UPDATE markets SET source = 'gamma' WHERE id IN ('900020', '900013')")
        conn.execute("UPDATE markets SET event_slug = NULL WHERE id = '900013'")
    with dashboard_server(f"sqlite:///{target}", folder) as base_url:
        yield base_url


def test_a_real_market_links_to_polymarket(gamma_server: str, page: Page) -> None:
    open_page(page, gamma_server, "markets?held=yes", "Markets")

    grid = page.get_by_test_id("stDataFrame").first
    # Scrolled to its right edge until the grid lists the Polymarket column: on a loaded
    # machine one scroll may land before the grid has its full width (the column then
    # missing from the cells, seen once).
    page.wait_for_function(
        """(g) => {
            const s = g.querySelector('.dvn-scroller');
            if (s) s.scrollLeft = s.scrollWidth;
            return [...g.querySelectorAll('th[role=columnheader]')]
                .some((h) => h.innerText.trim() === 'Polymarket');
        }""",
        arg=grid.element_handle(),
        polling=200,
    )
    page.wait_for_timeout(400)  # the cells paint (and mirror) after the scroll
    cells = assert_readable(grid, may_be_empty=("Polymarket",))  # simulated: no link
    links = [c for c in cells["Polymarket"] if c]
    assert "https://polymarket.com/event/best-picture-winner-2026-400005" in links
    assert any(c.startswith("https://polymarket.com/market/will-the-fed-cut") for c in links)

    open_page(page, gamma_server, "markets?market=900020", "Markets")

    expect(page.get_by_role("link", name="Open on Polymarket")).to_have_attribute(
        "href", "https://polymarket.com/event/best-picture-winner-2026-400005"
    )
