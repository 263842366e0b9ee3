"""The "When will we know?" page (AppTest) over the suite's seasons: the hourly job's stored
frame shown as sentences and two formatted tables with raw CSVs; the sidebar's Methodology
selector (as on every page) scopes a read to one protocol group (computed live on request),
and a link naming no group says so."""

from typing import Any

import pandas as pd
import pytest
from sqlalchemy import create_engine

from arena.analytics.stored import current_stored
from arena.analytics.views.detectability import display, pair_sentences
from tests.dashboard.apptest import all_text, headings, read, run_page


def test_the_stored_frame_as_sentences_tables_and_csvs(on_analysed: str) -> None:
    at = run_page("detectability")
    assert not at.exception, [e.value for e in at.exception]
    assert headings(at)[:3] == [
        "When will we know?",
        "Pairs of families",
        "Against the market and random traders",
    ]
    engine = create_engine(on_analysed)
    stored = current_stored(engine, "detectability")
    engine.dispose()
    assert stored is not None, "the analyses job stores the detectability frame"
    text = read(all_text(at))
    assert "by the hourly `analyses` job" in text
    models, baselines = (pair_sentences(stored.frame, models_only=m) for m in (True, False))
    assert sorted(models + baselines) == sorted(pair_sentences(stored.frame))
    assert models and all(read(s) in text for s in models)
    expander = at.expander[0]
    assert [e.label for e in at.expander] == [f"Pairs with a baseline ({len(baselines)})"]
    shown = read("\n".join(str(m.value) for m in expander.markdown))
    assert all(s in shown for s in baselines)
    pairs, references = at.dataframe[0].value, at.dataframe[1].value
    expected = display(stored.frame, "pair")
    assert list(pairs["who"]) == list(expected["who"])
    assert list(pairs["verdict"]) == list(expected["verdict"])
    assert pairs["difference"].str.endswith("pp").sum() == len(expected) // 2
    assert set(references["against"]) == {"the market", "random traders"}
    assert [getattr(b, "label", None) for b in at.get("download_button")] == [
        "Pairs CSV",
        "Market and random traders CSV",
    ]
    # Plain v1 cohorts only: no scope to choose, as on every page.
    assert "Methodology" not in [box.label for box in at.sidebar.selectbox]
    assert "Protocol" not in [box.label for box in at.selectbox]


def _selector(at: Any) -> Any:
    return next(box for box in at.sidebar.selectbox if box.label == "Methodology")


def test_a_protocol_group_is_read_alone_and_a_bad_link_named(on_mixed: str) -> None:
    at = run_page("detectability", methodology="v1+stated_probability")
    assert not at.exception, [e.value for e in at.exception]
    picker = _selector(at)  # the sidebar's, as on every page
    assert picker.value == "v1+stated_probability"
    assert picker.options == ["v1 (archived): Gamma prices", "v1 + stated probability (cohort 2)"]
    # The hourly job stores every protocol group's all-cohort scope (``all:<key>``).
    pairs: pd.DataFrame = at.dataframe[0].value
    assert set(pairs["cohorts"]) == {1}  # cohort 2 alone
    assert "by the hourly `analyses` job" in read(all_text(at))

    bad = run_page("detectability", methodology="v9+nothing")
    assert not bad.exception
    assert any("v9+nothing" in read(str(w.value)) for w in bad.warning)
    assert _selector(bad).value == "v1"


@pytest.mark.parametrize("cohort", ["1"])
def test_a_cohort_of_the_group(on_analysed: str, cohort: str) -> None:
    at = run_page("detectability", cohort=cohort)
    assert not at.exception, [e.value for e in at.exception]
    assert set(at.dataframe[0].value["cohorts"]) == {1}
    assert at.query_params.get("cohort") == cohort
