"""The Family page through AppTest over the analysed season: it opens on the best-ranked LLM
family (the select box and the link's keys say so), a bad link warns and shows nothing else,
and with cohort 2 re-stamped as extended its figures are cohort 1's while its table lists both.
(The headline, table widths, CSV download, chart and row links in Chromium:
tests/e2e/test_page_family.py.)"""

import json
import re

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import all_text, ok, read, run_page, widget
from tests.dashboard_caches import clear_dashboard_caches


def metric_text(at: AppTest, label: str) -> str:
    """A metric as a person reads it: its value, then its grey note (an interval, a caveat)."""
    (box,) = [m for m in at.metric if m.label == label]
    return read(f"{box.value}\n{box.proto.delta or ''}").strip()


def shown_value(box: object) -> str:
    """A select box's choice as shown (its format_func applied)."""
    options, index = box.options, box.index  # type: ignore[attr-defined]
    assert index is not None
    return str(options[index])


def table_columns(table: object) -> dict[str, pd.Series]:
    """A dataframe's shown columns by their label, in the table's order."""
    frame: pd.DataFrame = table.value  # type: ignore[attr-defined]
    proto = table.proto  # type: ignore[attr-defined]
    config = json.loads(proto.columns or "{}")
    order = list(proto.column_order) or list(frame.columns)
    return {
        config.get(c, {}).get("label", c): frame[c]
        for c in order
        if c in frame.columns and not config.get(c, {}).get("hidden")
    }


def test_family_opens_on_the_best_llm_family_and_says_so(on_analysed: str) -> None:
    at = ok(run_page("family"))

    # Model B (0%) is above Model A (−4.7%); the oracle and cash baseline are not models.
    assert dict(at.query_params) == {"family": "llm-b"}
    assert shown_value(widget(at, "selectbox", "Family")) == "Model B (llm-b)"
    assert "Opened on the best-ranked LLM family by return" in read(all_text(at))
    assert "95% interval" in metric_text(at, "Return")
    assert "%" in metric_text(at, "P(rank #1)")
    assert "2 of 6" in metric_text(at, "Rank")
    assert re.search(r"^Computed .* by the hourly", read(all_text(at)), re.M)


def test_a_bad_family_link_warns_and_shows_nothing_else(on_analysed: str) -> None:
    at = ok(run_page("family", family="gpt-9"))

    assert any("This link's family='gpt-9' names no family" in read(w.value) for w in at.warning)
    assert at.query_params["family"] == "gpt-9"
    assert not at.metric
    assert not at.dataframe


def test_an_extended_cohort_is_listed_but_left_out_of_the_figures(
    analysed_url: str, mixed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cohort 2 re-stamped as extended: the headline figures are cohort 1's (as the v1
    database's cohort 1 row reads), a note names cohort 2, and the table still lists it."""
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD", raising=False)
    monkeypatch.setenv("ARENA_DATABASE_URL", analysed_url)
    clear_dashboard_caches()
    at = ok(run_page("family", family="llm-a"))
    assert "extended cohort" not in read(all_text(at))
    all_v1 = metric_text(at, "Return")

    monkeypatch.setenv("ARENA_DATABASE_URL", mixed_url)
    clear_dashboard_caches()
    try:
        at = ok(run_page("family", family="llm-a"))
        text = read(all_text(at))
        assert (
            "1 extended cohort (#2) is left out of these v1 figures; it is listed in the table "
            "below."
        ) in text, text
        assert re.search(r"Extended: #2 \(listed here", text), text
        assert re.search(r"^Over 1 v1 cohort: 2 decisions ", text, re.M), text
        assert metric_text(at, "Return") != all_v1
        assert "P/L over time, all its v1 cohorts" in [read(s.value) for s in at.subheader]
        cohorts = table_columns(at.dataframe[0])["Cohort"]
        assert sorted(str(c).strip() for c in cohorts) == ["1", "2"], cohorts
    finally:
        clear_dashboard_caches()
