"""The "When will we know?" page (AppTest) over the suite's seasons: the hourly job's stored
frame shown as sentences and two formatted tables with raw CSVs; the sidebar's Methodology
selector (as on every page) scopes a read to one protocol group (computed live on request),
and a link naming no group says so; a gap the 5% test separates reads "separable now" with its
p, even from a frame stored under an earlier rule."""

import csv
import io
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import create_engine, update

from arena.analytics.stored import current_stored, frame_bytes
from arena.analytics.views.detectability import display, pair_sentences
from arena.dashboard import tables
from arena.storage.tables import ANALYSIS_RESULTS
from tests.dashboard.apptest import all_text, headings, read, run_page, use_database


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


@pytest.fixture
def gap_at_p_0016(
    analysed_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The analysed season with its stored all-cohort frame's first pair (return) set to d =
    2.4 pp, SE = 1, k = 4, judged as a frame stored under the earlier rule (|d| ≥ MDE) was:
    "not_yet", 2 more cohorts, no p. A completed cohort's frame is stored once and kept."""
    path = tmp_path / "gap.db"
    source = sqlite3.connect(analysed_url.removeprefix("sqlite:///"))
    with sqlite3.connect(path) as target:
        source.backup(target)
    source.close()
    url = f"sqlite:///{path}"
    engine = create_engine(url)
    stored = current_stored(engine, "detectability")
    assert stored is not None
    frame = stored.frame.drop(columns="p_value", errors="ignore")
    first = frame.index[(frame["comparison"] == "pair") & (frame["metric"] == "return")][0]
    frame.loc[first, ["value_a", "value_b", "difference", "se", "cohorts"]] = [5.4, 3.0, 2.4, 1, 4]
    frame.loc[first, ["mde", "cohorts_needed", "more_cohorts"]] = [2.801585, 5.4505, 2.0]
    frame.loc[first, ["detectable", "verdict"]] = [False, "not_yet"]
    with engine.begin() as conn:
        conn.execute(
            update(ANALYSIS_RESULTS)
            .where(ANALYSIS_RESULTS.c.name == "detectability", ANALYSIS_RESULTS.c.scope == "all")
            .values(frame=frame_bytes(frame))
        )
    engine.dispose()
    yield from use_database(monkeypatch, url)


def test_a_gap_at_p_0016_is_separable_now_on_the_page_and_in_the_csv(
    gap_at_p_0016: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """d = 2.4, SE = 1, k = 4: below the MDE (2.80 × SE) but p = 0.016, so the two-sided 5%
    test rejects: the sentence, the table and the CSV say separable now, with the p."""
    offered: list[pd.DataFrame] = []
    real = tables.download_csv

    def download_csv(frame: pd.DataFrame, *args: Any, **kwargs: Any) -> None:
        offered.append(frame)  # what the page's button would write
        real(frame, *args, **kwargs)

    monkeypatch.setattr(tables, "download_csv", download_csv)
    at = run_page("detectability")
    assert not at.exception, [e.value for e in at.exception]
    row = at.dataframe[0].value.iloc[0]
    assert (row["difference"], row["se"], row["mde"]) == ("+2.4 pp", "1.0 pp", "2.8 pp")
    assert (row["verdict"], row["cohorts"]) == ("separable now", 4)
    assert row["p"] == "0.016"
    text = read(all_text(at))
    assert "separable now (return +2.4 pp, p = 0.016)" in text
    first = next(csv.DictReader(io.StringIO(tables.csv_text(offered[0]))))  # the Pairs CSV
    assert (float(first["difference"]), float(first["se"]), first["cohorts"]) == (2.4, 1.0, "4")
    assert first["detectable"] == "true" and first["verdict"] == "separable"
    assert float(first["more_cohorts"]) == 0
    assert float(first["p_value"]) == pytest.approx(0.016395, abs=1e-6)
    assert "separable now (p = 0.016)" in first["sentence"]
