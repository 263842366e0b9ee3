"""The Markets page's script output, in-process (AppTest): a market or snapshot link naming
nothing warns and opens nothing. Moved from tests/e2e/test_page_markets.py, which keeps what
needs a browser (the list's columns on screen, the sort control, a market and a snapshot
opened and read on screen, the Polymarket links)."""

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import headings, read, run_page


def open_markets(**params: str) -> AppTest:
    at = run_page("markets", **params)
    assert not at.exception, [e.value for e in at.exception]
    assert "Markets" in headings(at)
    return at


def warnings(at: AppTest) -> list[str]:
    return [read(str(w.value)) for w in at.warning]


def test_a_market_link_naming_nothing_warns(on_analysed: str) -> None:
    at = open_markets(market="no-such-market")

    said = "This link's market='no-such-market' names no market in this database"
    assert any(said in w for w in warnings(at)), warnings(at)
    assert not [h for h in headings(at) if re.fullmatch(r"Market \S+", h)], headings(at)


@pytest.mark.parametrize("value", ["999", "x"])
def test_a_snapshot_link_naming_nothing_warns(on_analysed: str, value: str) -> None:
    at = open_markets(snapshot=value)

    said = f"This link's snapshot='{value}' names no market snapshot"
    assert any(said in w for w in warnings(at)), warnings(at)
