"""What a page sends for a chart (`charts.spec.vega_lite`): the spec `st.altair_chart` would
send, without the schema validation, its frames as named datasets, the chart left as it was."""

import json
import re
from typing import Any

import pandas as pd
import pytest
from streamlit.elements import vega_charts

from arena.analytics.stats import cost
from arena.dashboard.charts import cost as cost_charts
from arena.dashboard.charts import curves as curve_charts
from arena.dashboard.charts.spec import frame_name, vega_lite
from tests.test_dashboard_charts import cost_board, curve_frame

DATASET_NAME = re.compile(r'"(data-)?[0-9a-f]{32}"')


def _without_data(spec: dict[str, Any]) -> str:
    """The spec's text with its datasets left out and their names blanked."""
    shown = {key: value for key, value in spec.items() if key != "datasets"}
    return DATASET_NAME.sub('"D"', json.dumps(shown, sort_keys=True))


CHARTS = {
    "portfolio_curves": lambda: curve_charts.portfolio_curves(
        curve_frame(6), "total_pnl", "P/L", break_even=0.0
    ),
    "cost_pareto": lambda: cost_charts.cost_pareto(cost.cost_frame(cost_board(4))),
}


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_the_page_sends_what_streamlit_would_have_sent(name: str) -> None:
    chart = CHARTS[name]()
    streamlit_spec = vega_charts._convert_altair_to_vega_lite_spec(chart)
    ours = vega_lite(chart)
    assert _without_data(ours) == _without_data(streamlit_spec)
    assert len(ours["datasets"]) == len(streamlit_spec["datasets"])
    assert all(isinstance(frame, pd.DataFrame) for frame in ours["datasets"].values())
    assert "config" not in ours  # Altair's default theme's 300 px view, as Streamlit drops it
    # The chart itself still holds its frames (a copy was renamed), and still validates.
    assert chart.to_dict()["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_a_frame_s_name_follows_its_content() -> None:
    frame = curve_frame(3)
    assert frame_name(frame) == frame_name(frame.copy())
    assert frame_name(frame) != frame_name(frame.assign(total_pnl=frame["total_pnl"] + 1))
    assert frame_name(frame) != frame_name(frame.rename(columns={"at": "when"}))


def test_a_chart_is_built_once_per_content_of_its_arguments() -> None:
    """`tables.chart` keeps each spec by the content of its arguments: a rerun over the same
    reads (a new frame object, equal values) skips Altair's build; other values rebuild; the
    datasets go out as the Arrow bytes of exactly the chart's frames."""
    import pyarrow as pa
    import streamlit as st

    from arena.dashboard import tables

    st.cache_data.clear()
    built: list[str] = []

    def counted(frame: pd.DataFrame, field: str, title: str, **kwargs: Any) -> Any:
        built.append(title)
        return curve_charts.portfolio_curves(frame, field, title, **kwargs)

    frame = curve_frame(4)
    tables.chart(counted, frame, "total_pnl", "P/L", break_even=0.0)
    tables.chart(counted, frame.copy(), "total_pnl", "P/L", break_even=0.0)
    assert built == ["P/L"]
    tables.chart(counted, frame.assign(total_pnl=frame["total_pnl"] + 1), "total_pnl", "P/L")
    tables.chart(counted, frame, "total_pnl", "P/L, again", break_even=0.0)
    assert built == ["P/L", "P/L", "P/L, again"]

    name = f"{counted.__module__}.{counted.__qualname__}"
    spec = tables._chart_spec(name, (frame, "total_pnl", "P/L"), (("break_even", 0.0),), counted)
    direct = vega_lite(counted(frame, "total_pnl", "P/L", break_even=0.0))
    assert _without_data(spec) == _without_data(direct)
    assert set(spec["datasets"]) == set(direct["datasets"])
    for key, data in spec["datasets"].items():
        assert isinstance(data, bytes)
        sent = pa.ipc.open_stream(data).read_all().to_pandas()
        expected = direct["datasets"][key].reset_index(drop=True)
        assert list(sent.columns) == list(expected.columns)
        assert len(sent) == len(expected)
    st.cache_data.clear()
