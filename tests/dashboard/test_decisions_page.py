"""The Decisions page through AppTest over the analysed season: links naming no decision or no
family warn and show nothing in their place. (The list and a decision read in Chromium:
tests/e2e/test_page_decisions.py.)"""

import re

from tests.dashboard.apptest import headings, read, run_page


def test_links_naming_nothing_warn(on_analysed: str) -> None:
    for value in ("99999", "abc"):
        at = run_page("decisions", decision=value)
        assert not at.exception, [e.value for e in at.exception]
        warnings = " ".join(read(w.value) for w in at.warning)
        assert f"This link's decision='{value}' names no decision in this database" in warnings
        assert not [h for h in headings(at) if re.fullmatch(r"Decision \d+", h)], headings(at)

    at = run_page("decisions", family="gpt-9")

    assert not at.exception, [e.value for e in at.exception]
    warnings = " ".join(read(w.value) for w in at.warning)
    assert "This link's family='gpt-9' names no family" in warnings, warnings
    assert not at.dataframe
