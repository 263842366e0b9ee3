"""Every chart on the season's read models: a family has the same colour on each chart that
draws it (`arena.dashboard.palette`, set by the entry from the lineup), and no chart takes the
mouse wheel (a reader scrolling the page past a chart must not zoom it instead)."""

import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import Any

import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.views import curves
from arena.analytics.views.lineup_order import family_lineup
from arena.dashboard import palette
from arena.dashboard.charts import curves as curve_charts
from arena.dashboard.charts.spec import vega_lite
from arena.storage.db import create_db_engine
from tests.analytics.season import sqlite_season
from tests.test_dashboard_charts import READ_MODEL_CHARTS

# The charts that colour families, as the pages label them (ids or display names).
FAMILY_CHARTS = ("portfolio_curves", "cost_pareto", "brier_over_time", "api_spend_by_week")


@pytest.fixture(scope="module")
def season_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = create_db_engine(sqlite_season(tmp_path_factory.getbasetemp()).url, role="reader")
    yield engine
    engine.dispose()


def _in_run(engine: Engine, build: Callable[[], Any]) -> Any:
    """`build()` as the entry runs a page: in a context of its own, the lineup's colours set."""

    def run() -> Any:
        palette.use_lineup(family_lineup(engine))
        return build()

    return contextvars.Context().run(run)


def _colours(spec: dict[str, Any]) -> dict[str, str]:
    """Each family's colour in a chart (domain → range of its colour scales)."""
    found: dict[str, str] = {}
    for layer in spec.get("layer", [spec]):
        scale = layer.get("encoding", {}).get("color", {}).get("scale", {})
        found.update(zip(scale.get("domain", []), scale.get("range", []), strict=True))
    return found


def test_a_family_has_one_colour_on_every_chart(season_engine: Engine) -> None:
    lineup = family_lineup(season_engine)
    family_of = {key: fid for fid, name, _ in lineup for key in (fid, name)}
    by_family: dict[str, set[str]] = {}
    for name in FAMILY_CHARTS:
        build = functools.partial(READ_MODEL_CHARTS[name], season_engine)
        chart = _in_run(season_engine, build)
        colours = _colours(vega_lite(chart))
        assert colours, name
        for key, colour in colours.items():
            by_family.setdefault(family_of[key], set()).add(colour)
    # Families drawn on several charts (some charts hold only some families) keep one colour.
    assert all(len(colours) == 1 for colours in by_family.values()), by_family
    llms = [fid for fid, _, kind in lineup if kind == "llm" and fid in by_family]
    assert len(llms) >= 2 and len({min(by_family[f]) for f in llms}) == len(llms)


def test_a_chart_holding_fewer_families_keeps_their_colours(season_engine: Engine) -> None:
    """The lineup's second LLM family alone on a chart keeps its hue (not the first one's)."""
    llms = [name for _, name, kind in family_lineup(season_engine) if kind == "llm"]
    data = curves.portfolio_curves(season_engine, "ALL")

    def colours(frame: pd.DataFrame) -> dict[str, str]:
        return _colours(vega_lite(curve_charts.portfolio_curves(frame, "total_pnl", "P/L")))

    together = _in_run(season_engine, lambda: colours(data))
    alone = _in_run(season_engine, lambda: colours(data[data["display_name"] == llms[1]]))
    assert alone == {llms[1]: together[llms[1]]}
    assert together[llms[1]] != together[llms[0]]


def _scale_bindings(node: Any) -> Iterator[dict[str, Any]]:
    """Every parameter of a spec bound to the scales (pan and zoom), at any depth."""
    if isinstance(node, dict):
        if node.get("bind") == "scales":
            yield node
        for value in node.values():
            yield from _scale_bindings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _scale_bindings(value)


@pytest.mark.parametrize("name", sorted(READ_MODEL_CHARTS))
def test_no_chart_zooms_on_the_wheel(name: str, season_engine: Engine) -> None:
    spec = vega_lite(READ_MODEL_CHARTS[name](season_engine))
    for param in _scale_bindings(spec):
        assert param["select"].get("zoom") is False, (name, param)  # drag still pans


def test_time_charts_still_pan(season_engine: Engine) -> None:
    spec = vega_lite(READ_MODEL_CHARTS["portfolio_curves"](season_engine))
    (pan,) = list(_scale_bindings(spec))
    assert pan["select"]["type"] == "interval" and pan["select"]["encodings"] == ["x"]
