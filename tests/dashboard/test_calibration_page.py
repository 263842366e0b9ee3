"""The Calibration page's script output, in-process (AppTest): links naming nothing warn and
show no table, and across all cohorts an extended cohort is left out and named. Moved from
tests/e2e/test_page_calibration.py, which keeps what needs a browser (the columns on screen,
the families picked and dropped in the multiselect, the computation asked for)."""

import re

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import all_text, headings, read, run_page
from tests.dashboard_caches import clear_dashboard_caches

# What a cell must never hold: a null, pandas' and JSON's missing markers, raw JSON.
MISSING = {"", "None", "none", "nan", "NaN", "NaT", "<NA>", "null"}
RAW_JSON = re.compile(r'^\s*[\[{]\s*"')
LEFT_OUT = (
    "1 extended cohort (#2) is left out of these v1 figures; choose it in the cohort filter "
    "to see it."
)


def open_calibration(**params: str) -> AppTest:
    at = run_page("calibration", **params)
    assert not at.exception, [e.value for e in at.exception]
    assert "Calibration" in headings(at)
    return at


def text(at: AppTest) -> str:
    """Everything the page writes, warnings included, as read."""
    return read("\n".join([all_text(at), *(str(w.value) for w in at.warning)]))


def summary_cells(**params: str) -> tuple[dict[str, list[str]], str]:
    """The Brier summary's cells by column (none missing-looking or raw JSON), and the page's
    text."""
    at = open_calibration(**params)
    frame: pd.DataFrame = at.dataframe[0].value
    cells = {str(c): [str(v) for v in frame[c]] for c in frame.columns}
    assert any(cells.values()), "no cell"
    for column, values in cells.items():
        for value in values:
            assert value.strip() not in MISSING, (column, value)
            assert not RAW_JSON.match(value), (column, value)
    return cells, text(at)


@pytest.mark.parametrize("link", ["gpt-9", "llm-a,gpt-9"])
def test_a_family_link_naming_nothing_warns(on_analysed: str, link: str) -> None:
    at = open_calibration(family=link)

    assert "This link's family='gpt-9' names no family" in text(at)
    assert len(at.dataframe) == 0


def test_a_cohort_link_naming_nothing_warns(on_analysed: str) -> None:
    at = open_calibration(cohort="99")

    assert "This link's cohort='99' names no cohort" in text(at)


def test_all_cohorts_leave_an_extended_cohort_out_and_say_so(
    on_analysed: str, mixed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cohort 2 re-stamped as extended: the all-cohort table is cohort 1's (the same cells as
    cohort 1 chosen on the v1 database) under a note naming cohort 2; cohort 2 chosen by
    number reads as on the v1 database, without the note."""
    v1_cohort_1, _ = summary_cells(cohort="1")
    v1_cohort_2, _ = summary_cells(cohort="2")
    v1_all, shown = summary_cells()
    assert "extended cohort" not in shown

    monkeypatch.setenv("ARENA_DATABASE_URL", mixed_url)
    clear_dashboard_caches()
    mixed_all, shown = summary_cells()
    assert LEFT_OUT in shown
    assert mixed_all == v1_cohort_1 != v1_all

    mixed_cohort_2, shown = summary_cells(cohort="2")
    assert mixed_cohort_2 == v1_cohort_2
    assert "extended cohort" not in shown
