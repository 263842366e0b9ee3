"""What only a browser shows of the dashboard deep links the README and docs/dashboard.md give:
a link's `#fragment` is scrolled into view, and the address bar keeps a link's keys after the
run (a good link's and a spoiled one's: no silent fallback).

That every documented link opens what it names, and the same link naming nothing warns with its
name, is checked per link through AppTest (tests/dashboard/test_readme_links.py); the links, their
mapping onto the test season and what each page shows are tests/dashboard/readme_links.py.
"""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.dashboard.readme_links import (
    EXPECTED,
    SPOILED,
    demo_links,
    on_season,
    shows,
    spoiled,
    url,
)
from tests.e2e.conftest import settle

WIDTH, HEIGHT = 1440, 900
FRAGMENT_LINKS = [link for link in demo_links() if on_season(link)[2]]


def opens_what_it_names(page: Page, page_path: str, query: dict[str, str]) -> None:
    """The page shows the link's headings and names, no exception and no "names no" warning."""
    expected = EXPECTED[page_path](query)
    for heading in expected.headings:
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    for label, name in expected.boxes.items():
        expect(page.get_by_role("combobox", name=label)).to_have_value(shows(name))
    for name in expected.picked:
        expect(page.get_by_test_id("stMultiSelect")).to_contain_text(name)
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    names_nothing = page.get_by_test_id("stAlertContentWarning").filter(has_text="names no")
    expect(names_nothing).to_have_count(0)


def keeps_in_the_address_bar(page: Page, query: dict[str, str]) -> None:
    """Every key of the link is still in the address bar, with its value."""
    for key, value in query.items():
        expect(page).to_have_url(
            re.compile(rf"[?&]{key}={re.escape(value).replace(',', '(,|%2C)')}")
        )


def test_the_documents_give_a_link_with_a_fragment() -> None:
    assert FRAGMENT_LINKS, "no documented link has a #fragment: the scroll check checks nothing"


@pytest.mark.parametrize("link", FRAGMENT_LINKS)
def test_a_documented_link_scrolls_its_fragment_into_view(
    streamlit_server: str, page: Page, link: str
) -> None:
    page_path, query, fragment = on_season(link)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})

    page.goto(url(streamlit_server, page_path, query, fragment))

    opens_what_it_names(page, page_path, query)
    keeps_in_the_address_bar(page, query)
    expect(page.locator(f"[id='{fragment}']")).to_be_in_viewport()


def test_the_address_bar_keeps_a_good_and_a_spoiled_links_keys(
    streamlit_server: str, page: Page
) -> None:
    """One journey: a documented link with several keys, then another page's link spoiled."""
    links = [link for link in demo_links() if link not in FRAGMENT_LINKS]
    good = next(link for link in links if len(on_season(link)[1]) >= 2)
    good_page, query, _ = on_season(good)
    bad = next(link for link in links if on_season(link)[0] != good_page)
    bad_page, bad_query, key = spoiled(bad)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})

    page.goto(url(streamlit_server, good_page, query))
    opens_what_it_names(page, good_page, query)
    keeps_in_the_address_bar(page, query)

    page.goto(url(streamlit_server, bad_page, bad_query))
    warning = page.get_by_test_id("stAlertContentWarning")
    expect(warning).to_contain_text(f"{key}='{SPOILED[key]}'")
    settle(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    keeps_in_the_address_bar(page, bad_query)  # no silent fallback
