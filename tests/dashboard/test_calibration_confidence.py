"""The Calibration page says what it measures and which way each family is off: the
over/under-confidence table (implied confidence; stated probability beside it where a cohort
asked for one), the line when the return leader is not the Brier leader; the Methodology
page's Brier guide; the empty Stated probability and Replicates pages say how to fill them."""

import re

import pandas as pd
import pytest
from sqlalchemy import create_engine
from streamlit.testing.v1 import AppTest

from arena.analytics.stats.confidence_bets import return_vs_brier
from arena.analytics.stored import current_stored
from tests.dashboard.apptest import all_text, ok, read, run_page

PP = re.compile(r"^[+−]\d+\.\d pp \[[+−]\d+\.\d, [+−]\d+\.\d\]$")


def tables_with(at: AppTest, column: str) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe if column in d.value.columns]


def pp_value(cell: str) -> float:
    return float(cell.split(" ")[0].replace("−", "-"))


def test_calibration_says_what_it_measures_and_who_is_most_over_confident(
    on_analysed: str,
) -> None:
    at = ok(run_page("calibration"))
    boxes = " ".join(read(str(i.value)) for i in at.info)
    assert "What this page measures: bet size, not belief." in boxes
    assert "under-confident" in boxes

    (table,) = tables_with(at, "overconfidence")
    cells = table["overconfidence"].tolist()
    assert cells and all(PP.match(c) for c in cells), cells
    values = [pp_value(c) for c in cells]
    assert values == sorted(values, reverse=True)  # most over-confident first

    board = current_stored(create_engine(on_analysed), "leaderboard", None)
    assert board is not None
    found = return_vs_brier(board.frame)
    text = read(all_text(at))
    assert ("leads by return but ranks" in text) == (found is not None), text


def test_an_extended_cohort_puts_the_stated_view_beside(on_extended: str) -> None:
    at = ok(run_page("calibration", cohort="1"))
    implied, stated = tables_with(at, "overconfidence")
    assert all(PP.match(c) for c in stated["overconfidence"])
    text = read(all_text(at))
    assert "By stated probability (belief)" in text
    assert list(implied.columns) == list(stated.columns)


def test_methodology_brier_guide_fits_implied_confidence(on_analysed: str) -> None:
    text = read(all_text(ok(run_page("methodology"))))
    assert "0.25 is a coin flip" not in text
    assert "0.25 is what a constant 50% forecast scores" in text


@pytest.mark.parametrize("page", ["stated", "replicates"])
def test_empty_extension_pages_say_how_to_fill_them(on_analysed: str, page: str) -> None:
    at = ok(run_page(page))
    notes = " ".join(
        read(str(getattr(a, "value", ""))) for kind in ("info", "warning") for a in at.get(kind)
    )
    assert "make demo-extensions" in notes
    assert "`make demo` plays" in notes or "make demo plays" in notes
