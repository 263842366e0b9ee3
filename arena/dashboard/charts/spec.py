"""A chart as the Vega-Lite dict a page sends, built without Altair's schema validation.

Why: `st.altair_chart` calls ``chart.to_dict()``, which validates the whole spec against
Vega-Lite's JSON schema on every script run: 0.15–0.6 s per chart on a loaded 2-core machine,
most of a chart page's script time beyond its reads. The specs are fixed code: the chart
functions' unit tests (tests/test_dashboard_charts.py) validate every one of them on small,
empty and real frames, so a page need not validate them again. The frames stay frames under
content-hash names in ``datasets`` (Streamlit sends them as Arrow, as `st.altair_chart` does).
"""

import hashlib
from typing import Any

import altair as alt
import pandas as pd

# Altair's default theme's only setting: Streamlit drops it (its charts size to the page).
DEFAULT_THEME_VIEW = {"continuousWidth": 300, "continuousHeight": 300}


def frame_name(frame: pd.DataFrame) -> str:
    """A name for `frame` from its content: the same data gets the same name on each rerun."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr(list(frame.columns)).encode())
    digest.update(repr([str(t) for t in frame.dtypes]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return f"data-{digest.hexdigest()}"


def _name_frames(node: Any, frames: dict[str, pd.DataFrame]) -> None:
    """Replace every DataFrame `node` (a chart, a layer) holds by a named dataset, in place."""
    data = getattr(node, "data", alt.Undefined)
    if isinstance(data, pd.DataFrame):
        name = frame_name(data)
        frames[name] = data
        node.data = alt.NamedData(name=name)
    for child in getattr(node, "layer", None) or []:
        _name_frames(child, frames)


def vega_lite(chart: alt.Chart | alt.LayerChart) -> dict[str, Any]:
    """`chart`'s Vega-Lite dict, unvalidated, its frames under ``datasets`` by content name.

    `chart` is not changed (a copy's data are renamed)."""
    copy = chart.copy(deep=True)
    frames: dict[str, pd.DataFrame] = {}
    _name_frames(copy, frames)
    spec: dict[str, Any] = copy.to_dict(validate=False)
    config = spec.get("config")
    if isinstance(config, dict) and config.get("view") == DEFAULT_THEME_VIEW:
        del config["view"]
        if not config:
            del spec["config"]
    spec["datasets"] = {**spec.get("datasets", {}), **frames}
    return spec
