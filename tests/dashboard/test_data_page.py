"""The data pages' script output, in-process (AppTest): a bad Exports link warns naming it
and offers no zip. Moved from tests/e2e/test_page_data.py, which keeps what needs a browser
(Overview, Operations, Exports and Methodology read on screen, downloads, section links)."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import headings, read, run_page


def download_buttons(at: AppTest) -> list[str]:
    """The labels of the page's download buttons (AppTest has no list of them)."""
    return [str(e.proto.label) for e in at.get("download_button")]


def test_exports_offers_its_zip(on_analysed: str) -> None:
    """The control for the bad links below: a good link's page has the zip button."""
    at = run_page("exports", cohort="1", family="llm-a")
    assert not at.exception, [e.value for e in at.exception]
    assert "Download zip" in download_buttons(at)


@pytest.mark.parametrize(
    ("query", "named"),
    [({"cohort": "99"}, "cohort='99'"), ({"family": "gpt-9"}, "family='gpt-9'")],
)
def test_a_bad_exports_link_warns_naming_it(
    on_analysed: str, query: dict[str, str], named: str
) -> None:
    at = run_page("exports", **query)
    assert not at.exception, [e.value for e in at.exception]
    assert "Exports" in headings(at)

    warnings = [read(str(w.value)) for w in at.warning]
    assert any(named in w for w in warnings), warnings
    assert "Download zip" not in download_buttons(at)
