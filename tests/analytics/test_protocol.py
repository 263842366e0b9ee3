"""The Methodology page's read models: the constants a cohort ran under, as a person reads
them and linked to their section, and which cohorts ran under which methodology version.
Also the display labels other pages take from the read-model modules."""

import re
from datetime import timedelta
from decimal import Decimal as D
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine

from arena.analytics.export.tables import EXPORT_DESCRIPTIONS, EXPORTS
from arena.analytics.views.database import (
    OVERVIEW_TABLES,
    family_names,
    table_label,
    table_meaning,
)
from arena.analytics.views.protocol import (
    PROTOCOL_COLUMNS,
    VERSION_COLUMNS,
    latest_stamp,
    methodology_versions,
    number_ranges,
    protocol_constants,
    stamped_methodology,
)
from arena.config import Methodology
from arena.storage.db import session_scope
from arena.storage.tables import COHORTS
from tests.factories import WEEK1, new_cohort_agents

METHODOLOGY = Path(__file__).resolve().parents[2] / "docs" / "methodology.md"


def _streamlit_slugs(text: str) -> set[str]:
    """Streamlit's heading anchors (as tests/test_docs.py's `streamlit_slug`)."""
    headings = re.findall(r"^#{1,6} +(.+?) *#*$", text, re.MULTILINE)
    return {re.sub(r"[^a-z0-9]+", "-", h.lower()).strip("-") for h in headings}


def test_protocol_rows_read_as_a_person_reads_them() -> None:
    rows = protocol_constants(Methodology()).set_index("constant")

    assert list(protocol_constants(Methodology()).columns) == list(PROTOCOL_COLUMNS)
    assert rows.loc["starting_balance", "value"] == "$10,000"
    assert rows.loc["starting_balance", "raw"] == "10000"
    assert rows.loc["max_bet_fraction", "value"] == "25% of cash"
    assert rows.loc["min_bet", "value"] == "$50"
    assert rows.loc["decision_schedule", "value"] == "weekly, Sundays 00:05 UTC"
    assert rows.loc["snapshot_interval_minutes", "value"] == "every 10 minutes"
    assert rows.loc["bootstrap", "value"] == "95%, 2,000 replicates"
    assert rows.loc["random_null", "value"] == "200 seeds"
    assert "1–5" in str(rows.loc["decision_schedule", "meaning"])
    for row in protocol_constants(Methodology()).itertuples():
        assert "None" not in f"{row.value}{row.meaning}" and "nan" not in str(row.value)


def test_protocol_rows_follow_the_stamp() -> None:
    research = Methodology(min_bet=D("100"), max_bet_fraction=D("0.1"), decision_window_weeks=3)
    rows = protocol_constants(research).set_index("constant")

    assert rows.loc["min_bet", "value"] == "$100"
    assert rows.loc["max_bet_fraction", "value"] == "10% of cash"
    assert "1–3" in str(rows.loc["decision_schedule", "meaning"])


def test_every_protocol_row_links_to_a_heading_of_the_methodology() -> None:
    slugs = _streamlit_slugs(METHODOLOGY.read_text(encoding="utf-8"))
    for row in protocol_constants(Methodology()).itertuples():
        assert row.anchor in slugs, (row.constant, row.anchor)


def test_a_stamp_reads_back_as_its_methodology() -> None:
    stamp = Methodology(min_bet=D("75")).stamp()
    assert stamped_methodology(stamp) == Methodology(min_bet=D("75"))
    assert stamped_methodology({}) is None
    assert stamped_methodology({"min_bet": "-1"}) is None


def test_versions_list_which_cohorts_ran_under_which_constants(engine: Engine) -> None:
    assert latest_stamp(engine) is None
    empty = methodology_versions(engine)
    assert list(empty.columns) == list(VERSION_COLUMNS)
    # both versions are listed (v2's row from migration 0010), newest first, with no cohort
    assert empty["methodology_version"].tolist() == ["v2", "v1"]
    assert empty["cohorts"].tolist() == [0, 0]
    assert empty["cohort_numbers"].tolist() == ["", ""]

    for number in (1, 2, 3, 5):
        new_cohort_agents(engine, ("baseline-cash",), number=number)
    research = Methodology(min_bet=D("100")).stamp()
    with session_scope(engine) as s:
        s.execute(update(COHORTS).where(COHORTS.c.number == 2).values(constants=research))

    everything = methodology_versions(engine)
    assert everything["methodology_version"].tolist() == ["v2", "v1", "v1"]
    assert everything["cohorts"].tolist()[0] == 0  # no cohort ran v2
    found = everything[everything["methodology_version"] == "v1"].reset_index(drop=True)

    assert found["methodology_version"].tolist() == ["v1", "v1"]
    stock, override = found.iloc[0], found.iloc[1]
    assert (stock["cohort_numbers"], stock["cohorts"], bool(stock["is_default"])) == (
        "1, 3, 5",
        3,
        True,
    )
    assert stock["overrides"] == "" and stock["title"] == "Forecaster Arena Methodology v1"
    assert stock["first_week_start"] == WEEK1
    assert stock["last_week_start"] == WEEK1 + timedelta(weeks=4)
    assert (override["cohort_numbers"], bool(override["is_default"])) == ("2", False)
    assert override["overrides"] == "min_bet=100"
    number, methodology = latest_stamp(engine) or (0, None)
    assert number == 5 and methodology == Methodology()

    # A v2 cohort: v2's row counts it, stock (its stamp is v2's), and v1's rows are unchanged.
    new_cohort_agents(engine, ("baseline-cash",), number=6)
    with session_scope(engine) as s:
        s.execute(
            update(COHORTS)
            .where(COHORTS.c.number == 6)
            .values(methodology_version="v2", constants=Methodology(version="v2").stamp())
        )
    mixed = methodology_versions(engine)
    assert mixed["methodology_version"].tolist() == ["v2", "v1", "v1"]
    v2 = mixed.iloc[0]
    assert (v2["cohorts"], v2["cohort_numbers"], bool(v2["is_default"])) == (1, "6", True)
    assert v2["overrides"] == ""
    assert mixed.iloc[1:].reset_index(drop=True).equals(found)


@pytest.mark.parametrize(
    ("numbers", "written"),
    [([], ""), ([4], "4"), ([1, 2, 3], "1–3"), ([5, 1, 2, 3, 3, 8, 9], "1–3, 5, 8–9")],
)
def test_number_ranges(numbers: list[int], written: str) -> None:
    assert number_ranges(numbers) == written


def test_every_overview_table_and_export_has_a_label() -> None:
    for table in OVERVIEW_TABLES:
        assert table_label(table.name) != table.name and table_meaning(table.name)
    assert table_label("unknown_table") == "unknown_table"
    assert set(EXPORT_DESCRIPTIONS) == set(EXPORTS)


def test_family_names_by_id(engine: Engine) -> None:
    new_cohort_agents(engine, ("gpt-5.1", "baseline-cash"))
    names = family_names(engine)
    assert set(names) == {"gpt-5.1", "baseline-cash"}
    assert all(isinstance(name, str) and name for name in names.values())
