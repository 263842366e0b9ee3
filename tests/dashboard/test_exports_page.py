"""The Exports page offers one table as one CSV beside the zip, and the data dictionary
(AppTest, in-process)."""

from tests.dashboard.apptest import run_page
from tests.dashboard.test_data_page import download_buttons


def test_exports_offers_one_table_as_a_csv_beside_the_zip(on_analysed: str) -> None:
    at = run_page("exports", cohort="1")
    assert not at.exception, [e.value for e in at.exception]
    buttons = download_buttons(at)
    assert {"Download trades.csv", "Download DATA_DICTIONARY.csv", "Download zip"} <= set(buttons)

    at.selectbox(key="export-one").set_value("positions").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Download positions.csv" in download_buttons(at)
