"""The Agent page's script output, in-process (AppTest): it opens on the newest cohort's
best-ranked LLM agent and says so (the link keeps the choice), short ranges that would be flat
are not offered (a link to one says why), and a link naming nothing warns and shows nothing in
its place. Moved from tests/e2e/test_page_agent.py, which keeps what needs a browser (the
tables on screen, the chart's hover, links followed)."""

import re
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import all_text, element_kinds, read, run_page, widget


def text(at: AppTest) -> str:
    """Everything the page writes, warnings included, as read."""
    return read("\n".join([all_text(at), *(str(w.value) for w in at.warning)]))


def shown(at: AppTest, label: str) -> str:
    """What the selectbox labelled `label` shows."""
    box = widget(at, "selectbox", label)
    return str(box.format_func(box.value))


def metric(at: AppTest, label: str) -> str:
    """The value of the metric labelled exactly `label`."""
    values = [str(m.value) for m in at.metric if m.label == label]
    assert values, f"no metric {label!r}"
    return values[0]


def open_agent(**params: str) -> AppTest:
    at = run_page("agent", **params)
    assert not at.exception, [e.value for e in at.exception]
    assert [t for t in at.title if read(str(t.value)) == "Agent"]
    return at


def ranges(at: AppTest) -> Any:
    """The chart's range control (a segmented control offering "ALL")."""
    found = [g for g in at.get("button_group") if "ALL" in getattr(g, "options", [])]
    assert found, "no range control"
    return found[0]


def test_agent_opens_on_the_best_llm_agent_and_says_so(on_analysed: str) -> None:
    at = open_agent()

    # Cohort 2 is the newest; its LLM agents: Model B (0%, rank 2 of 6) above Model A.
    assert at.query_params["cohort"] == "2" and at.query_params["family"] == "llm-b"
    assert shown(at, "Cohort") == "Cohort 2"
    assert shown(at, "Family") == "Model B (llm-b)"
    assert "Opened on cohort 2's best-ranked LLM agent by return" in text(at)
    assert "2 of 6" in metric(at, "Rank in cohort")


def test_flat_short_ranges_are_not_offered(on_analysed: str) -> None:
    # The season's portfolios last moved at 18:10 on its last day: 10M and 1H would be flat.
    at = open_agent(cohort="1", family="llm-a")
    offered = ranges(at).options
    for present in ("1D", "1W", "ALL"):
        assert present in offered, offered
    for hidden in ("10M", "1H"):
        assert hidden not in offered, offered
    assert re.search(
        r"10M and 1H are not offered: no portfolio shown has changed since "
        r"2026-01-20 18:10 UTC",
        text(at),
    )

    # A link to such a range says why it is not shown, and the address bar follows.
    at = open_agent(cohort="1", family="llm-a", range="10M")
    assert "Range 10M is not offered here" in text(at)
    assert at.query_params["range"] == "ALL"
    assert re.search(r"^ALL: ", text(at), re.MULTILINE)

    ranges(at).set_value("1D").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["range"] == "1D"
    assert re.search(r"^1D: .* one point per 10 minutes", text(at), re.MULTILINE)


@pytest.mark.parametrize(
    ("query", "named"),
    [({"cohort": "99"}, "cohort='99'"), ({"cohort": "1", "family": "gpt-9"}, "family='gpt-9'")],
)
def test_a_bad_agent_link_warns_and_shows_nothing_else(
    on_analysed: str, query: dict[str, str], named: str
) -> None:
    at = open_agent(**query)

    assert any(f"This link's {named} names no" in read(str(w.value)) for w in at.warning)
    key, value = list(query.items())[-1]
    assert at.query_params[key] == value  # not rewritten
    assert len(at.dataframe) == 0
    assert "vega_lite_chart" not in element_kinds(at)
    assert len(at.metric) == 0
