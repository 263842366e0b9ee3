"""The Compare page's script output, in-process (AppTest): the README's pair without shared
markets, links naming no family or the same one twice, no pair while only one side is picked,
and an extended cohort left out across cohorts. Moved from tests/e2e/test_page_compare.py: none of
these needs a browser (what is on screen, the CSV download, stays there)."""

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import all_text, read, run_page, widget

BAD_CELL = re.compile(r"^(None|nan|NaN|NaT|<NA>|null)$|^\[\"|^\{\"")


def text(at: AppTest) -> str:
    """Everything the page writes, warnings included, as read."""
    return read("\n".join([all_text(at), *(str(w.value) for w in at.warning)]))


def shown(at: AppTest, label: str) -> str:
    """What the selectbox labelled `label` shows."""
    box = widget(at, "selectbox", label)
    return str(box.format_func(box.value))


def cells(at: AppTest) -> list[str]:
    """The first table's cells as text."""
    frame = at.dataframe[0].value
    return [str(v).strip() for row in frame.itertuples(index=False) for v in row]


def open_compare(**params: str) -> AppTest:
    at = run_page("compare", **params)
    assert not at.exception, [e.value for e in at.exception]
    assert [h for h in at.title if read(str(h.value)) == "Compare"]
    return at


def test_the_readme_link_and_a_pair_without_shared_markets(on_analysed: str) -> None:
    at = open_compare(family="oracle", versus="llm-a")

    assert shown(at, "Family") == "Oracle (simulation only)"
    assert shown(at, "Versus") == "Model A"
    assert at.query_params["family"] == "oracle" and at.query_params["versus"] == "llm-a"
    found = cells(at)
    assert any("no shared markets" in c for c in found), found
    assert any("no shared resolved bets" in c for c in found), found
    assert not [c for c in found if BAD_CELL.search(c)], found


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"family": "gpt-9", "versus": "llm-a"}, "family='gpt-9'"),
        ({"family": "llm-a", "versus": "gpt-9"}, "versus='gpt-9'"),
    ],
)
def test_a_link_naming_no_family_warns_and_shows_nothing(
    on_analysed: str, query: dict[str, str], named: str
) -> None:
    at = open_compare(**query)

    assert f"This link's {named} names no" in text(at)
    assert len(at.dataframe) == 0


def test_the_same_family_twice_asks_for_two(on_analysed: str) -> None:
    at = open_compare(family="llm-a", versus="llm-a")

    assert "Pick two different families." in text(at)
    assert len(at.dataframe) == 0


def test_with_one_side_picked_it_waits_for_the_other(on_analysed: str) -> None:
    """A link naming one side (or a side set back to "Pick a family") computes nothing until the
    person picks the other: the default pair is for a link naming neither
    (tests/dashboard/test_compare_head_to_head.py)."""
    at = open_compare(versus="llm-a")

    assert re.search(r"^Pick two families above", text(at), re.MULTILINE)
    assert len(at.dataframe) == 0
    assert "family" not in at.query_params


def test_across_cohorts_an_extended_cohort_is_left_out_and_named(on_mixed: str) -> None:
    at = open_compare(family="baseline-favorite", versus="llm-a")
    note = "1 extended cohort (#2) is left out of these v1 figures; choose it in the cohort filter"
    assert note in text(at)
    assert len(at.dataframe) >= 1

    at = open_compare(family="baseline-favorite", versus="llm-a", cohort="2")
    assert "extended cohort" not in text(at)
    assert len(at.dataframe) >= 1
