"""Every chart function in `arena.dashboard.charts` builds a valid Vega-Lite spec.

Small hand-made frames shaped like the read models' (and empty ones, which a page may pass),
then the real read models' frames — on an empty migrated database and on the shared season —
so a column renamed in a read model fails here, not in a browser. `to_dict()` validates the
spec against Altair's Vega-Lite schema.
"""

import pkgutil
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from arena.analytics.stats import calibration, cost
from arena.analytics.views import curves, markets, operations
from arena.dashboard import charts
from arena.dashboard.charts import calibration as calibration_charts
from arena.dashboard.charts import cost as cost_charts
from arena.dashboard.charts import curves as curve_charts
from arena.dashboard.charts import markets as market_charts
from arena.dashboard.charts import replicates as replicate_charts
from arena.dashboard.charts import spec as chart_spec
from arena.dashboard.charts import style
from arena.storage.db import create_db_engine
from tests.analytics.season import sqlite_season

T0 = datetime(2026, 1, 4, tzinfo=UTC)
T1 = datetime(2026, 1, 11, tzinfo=UTC)


def _spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart's Vega-Lite dict (validated against the schema by Altair)."""
    spec = chart.to_dict()
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    return spec


def _layers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return list(spec["layer"]) if "layer" in spec else [spec]


def _marks(spec: dict[str, Any]) -> list[str]:
    return [layer["mark"]["type"] for layer in _layers(spec)]


def _fields(layer: dict[str, Any]) -> dict[str, str]:
    """Encoding channel → field (or aggregate(field)) of one layer."""
    out = {}
    for channel, encoding in layer["encoding"].items():
        if isinstance(encoding, dict) and "field" in encoding:
            field = encoding["field"]
            out[channel] = f"{encoding['aggregate']}({field})" if "aggregate" in encoding else field
    return out


def _rows(spec: dict[str, Any], layer: int = 0) -> int:
    """How many rows the dataset of the chart (or of its `layer`) holds."""
    data = spec.get("data") or _layers(spec)[layer]["data"]
    return len(spec["datasets"][data["name"]])


# --------------------------------------------------------------------------------------------
# Small frames, shaped like the read models'


def curve_frame(rows: int = 2) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "family_id": ["llm-a", "baseline-cash"][:rows],
            "display_name": ["LLM A", "Baseline: cash"][:rows],
            "kind": ["llm", "baseline"][:rows],
            "at": pd.to_datetime([T0, T1][:rows], utc=True),
            "total_value": [10_100.0, 10_000.0][:rows],
            "total_pnl": [100.0, 0.0][:rows],
            "capital": [10_000.0, 10_000.0][:rows],
            "return_pct": [1.0, 0.0][:rows],
            "agents": [1, 1][:rows],
        }
    )


def summary_frame(rows: int = 2) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "family_id": ["llm-a", "oracle"][:rows],
            "kind": ["llm", "baseline"][:rows],
            "resolved_bets": [40, 30][:rows],
            "brier": [0.21, 0.05][:rows],
            "brier_ci_low": [0.15, 0.02][:rows],
            "brier_ci_high": [0.28, 0.09][:rows],
            "market_brier": [0.19, 0.18][:rows],
            "market_brier_ci_low": [0.12, 0.11][:rows],
            "market_brier_ci_high": [0.25, 0.24][:rows],
        }
    )


def bins_frame(family: str = "llm-a", counts: tuple[int, ...] = (3, 0, 5)) -> pd.DataFrame:
    n = len(counts)
    return pd.DataFrame(
        {
            "family_id": [family] * n,
            "bin": list(range(n)),
            "bin_low": [i / n for i in range(n)],
            "bin_high": [(i + 1) / n for i in range(n)],
            "count": list(counts),
            "mean_forecast": [(i + 0.5) / n if c else float("nan") for i, c in enumerate(counts)],
            "observed_rate": [0.5 if c else float("nan") for c in counts],
        }
    )


def over_time_frame(rows: int = 2) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "family_id": ["llm-a", "llm-a"][:rows],
            "date": [date(2026, 1, 5), date(2026, 1, 12)][:rows],
            "cumulative_brier": [0.25, 0.22][:rows],
            "resolved_bets": [2, 5][:rows],
            "cumulative_market_brier": [0.2, 0.21][:rows],
        }
    )


def path_frame(rows: int = 2) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "at": pd.to_datetime([T0, T0][:rows], utc=True),
            "source": ["snapshot", "snapshot"][:rows],
            "snapshot_id": [1, 1][:rows],
            "outcome": ["Yes", "No"][:rows],
            "price": [0.4, 0.6][:rows],
        }
    )


def spend_frame(rows: int = 2) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "week_start": pd.to_datetime([T0, T1][:rows], utc=True),
            "family_id": ["llm-a", "llm-b"][:rows],
            "decisions": [1, 1][:rows],
            "tokens_in": [900, 800][:rows],
            "tokens_out": [90, 80][:rows],
            "cost_usd": [0.0123, 0.0045][:rows],
        }
    )


def cost_board(rows: int = 4) -> pd.DataFrame:
    """A leaderboard frame's cost inputs: two paying families on the front, a baseline at
    $0, a family without a skill (it never bet)."""
    nan = float("nan")
    return pd.DataFrame(
        {
            "family_id": ["llm-a", "llm-b", "baseline-random", "llm-c"][:rows],
            "display_name": ["LLM A", "LLM B", "Baseline: random", "LLM C"][:rows],
            "kind": ["llm", "llm", "baseline", "llm"][:rows],
            "decisions": [10, 10, 10, 10][:rows],
            "resolved_bets": [40, 20, 30, 0][:rows],
            "api_cost_usd": [2.0, 1.0, 0.0, 0.5][:rows],
            "return_pct": [4.0, -2.0, 1.0, 0.0][:rows],
            "return_ci_low": [1.0, -5.0, 0.0, 0.0][:rows],
            "return_ci_high": [8.0, 1.0, 2.0, 0.0][:rows],
            "skill_vs_market": [-0.05, -0.02, 0.01, nan][:rows],
            "skill_vs_market_ci_low": [-0.08, -0.06, -0.01, nan][:rows],
            "skill_vs_market_ci_high": [-0.01, 0.02, 0.03, nan][:rows],
            "too_early": [False, True, False, True][:rows],
        }
    )


# --------------------------------------------------------------------------------------------
# Each chart: marks, encodings, titles and scales as the pages showed them


def runs_frame(rows: int = 1) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "at": pd.to_datetime([T0, T1][:rows], utc=True),
            "runs": ["cohort 1 week 1", "cohort 1 week 2, cohort 2 week 1"][:rows],
            "decisions": [6, 12][:rows],
        }
    )


def _by_mark(spec: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for layer in _layers(spec):
        out.setdefault(layer["mark"]["type"], []).append(layer)
    return out


@pytest.mark.parametrize(
    ("field", "title", "value_format", "axis"),
    [
        ("total_value", "Portfolio value, $", "$,.2f", {"format": "$,.0f"}),
        ("total_pnl", "P/L, $ (summed over cohorts)", "$,.2f", {"format": "$,.0f"}),
        (
            "return_pct",
            "Return, %",
            "+.2f",
            {"format": "+.1~f", "labelExpr": "datum.label + '%'"},
        ),
    ],
)
@pytest.mark.parametrize("rows", [2, 0])
def test_portfolio_curves(
    field: str, title: str, value_format: str, axis: dict[str, str], rows: int
) -> None:
    frame = curve_frame(rows)
    spec = _spec(curve_charts.portfolio_curves(frame, field, title))

    # Lines, a dot per line at the hovered time, and the hover rule carrying the tooltip.
    assert _marks(spec) == ["line", "point", "rule"]
    lines, dots, rule = _layers(spec)
    assert lines["mark"] == {"type": "line", "interpolate": "step-after"}
    assert _fields(lines) == {"x": "at", "y": field, "color": "display_name", "strokeWidth": "kind"}
    encoding = lines["encoding"]
    assert encoding["y"]["title"] == title
    assert encoding["y"]["axis"] == axis  # $10,000 / +2.5%, never 10,000.000000
    assert encoding["y"]["scale"] == {"zero": False}
    assert encoding["x"]["scale"] == {"type": "utc"}
    # Solid lines: nothing is dashed but the break-even reference (absent here).
    assert not [layer for layer in _layers(spec) if "strokeDash" in layer["mark"]]
    assert all("strokeDash" not in layer["encoding"] for layer in _layers(spec))
    # LLM families in distinct hues first, baselines in greys; the legend under the chart,
    # in columns, its names never cut.
    color = encoding["color"]
    names = ["LLM A", "Baseline: cash"][:rows]
    assert color["scale"] == {
        "domain": names,
        "range": [style.FAMILY_COLORS[0], style.BASELINE_GREYS[0]][:rows],
    }
    assert color["legend"]["orient"] == "bottom" and color["legend"]["columns"] == 4
    assert color["legend"]["labelLimit"] >= 300
    assert encoding["opacity"]["value"] == style.FADED  # legend pick fades the others

    # Hover: the nearest time, on pointer over; a dot on every line and one tooltip with
    # every family's value at that time, in the legend's order.
    params = {p["name"]: p for p in spec["params"]}
    hover = params["hover"]["select"]
    assert hover == {
        "type": "point",
        "fields": ["at"],
        "nearest": True,
        "on": "pointerover",
        "clear": "pointerout",
    }
    assert dots["encoding"]["opacity"]["condition"]["param"] == "hover"
    assert rule["transform"] == [{"pivot": "display_name", "value": field, "groupby": ["at"]}]
    tooltip = rule["encoding"]["tooltip"]
    assert [t["title"] for t in tooltip] == ["Time (UTC)", *names]
    assert {t["format"] for t in tooltip[1:]} <= {value_format}
    others = [p["select"]["type"] for n, p in params.items() if n != "hover"]
    assert sorted(others) == ["interval", "point"]  # legend pick, x zoom
    assert spec["height"] == 460
    assert _rows(spec) == rows


@pytest.mark.parametrize("rows", [2, 0])
def test_portfolio_curves_mark_break_even_and_decision_runs(rows: int) -> None:
    spec = _spec(
        curve_charts.portfolio_curves(
            curve_frame(rows),
            "total_value",
            "Portfolio value, $",
            break_even=10_000.0,
            decisions=runs_frame(2),
        )
    )

    marks = _by_mark(spec)
    # The break-even: a dashed reference rule at $10,000, labelled where the lines end.
    (reference,) = [r for r in marks["rule"] if "strokeDash" in r["mark"]]
    assert _fields(reference) == {"y": "y"}
    assert spec["datasets"][reference["data"]["name"]][0]["y"] == 10_000.0
    if rows:
        (label,) = marks["text"]
        assert spec["datasets"][label["data"]["name"]][0]["label"] == "break-even $10,000"
    else:
        assert "text" not in marks  # no line end to put it at
    # Decision runs: a thin rule and a triangle on top at each, its cohorts in the tooltip.
    (runs,) = [r for r in marks["rule"] if "x" in r["encoding"] and "tooltip" not in r["encoding"]]
    assert _fields(runs) == {"x": "at"} and len(spec["datasets"][runs["data"]["name"]]) == 2
    (triangles,) = [p for p in marks["point"] if p["mark"].get("shape") == "triangle-down"]
    assert triangles["encoding"]["y"] == {"value": 0}
    assert [t["field"] for t in triangles["encoding"]["tooltip"]] == ["at", "runs", "decisions"]
    # Only the reference is dashed.
    assert [r["mark"]["strokeDash"] for r in _layers(spec) if "strokeDash" in r["mark"]] == [[6, 4]]


def test_return_chart_labels_break_even_as_zero() -> None:
    spec = _spec(
        curve_charts.portfolio_curves(curve_frame(), "return_pct", "Return, %", break_even=0)
    )
    (label,) = _by_mark(spec)["text"]
    assert spec["datasets"][label["data"]["name"]][0]["label"] == "break-even 0"


def test_family_colours_keep_models_apart_from_baselines() -> None:
    frame = pd.DataFrame(
        {
            "display_name": ["Zed", "Oracle", "Alpha", "Baseline: cash", "Alpha"],
            "kind": ["llm", "baseline", "llm", "baseline", "llm"],
        }
    )
    assert style.family_order(frame) == ["Alpha", "Zed", "Baseline: cash", "Oracle"]
    scale = style.family_color_scale(frame).to_dict()
    assert scale["range"] == [
        style.FAMILY_COLORS[0],
        style.FAMILY_COLORS[1],
        style.BASELINE_GREYS[0],
        style.BASELINE_GREYS[1],
    ]
    # No grey among the model hues, and no hue twice among the first nine models.
    assert len(set(style.FAMILY_COLORS)) == len(style.FAMILY_COLORS) == 9
    assert "#7f7f7f" not in style.FAMILY_COLORS


def test_a_family_name_with_a_dot_is_escaped_in_the_tooltip() -> None:
    frame = curve_frame().assign(display_name=["GPT-5.2 [x]", "Baseline: cash"])
    spec = _spec(curve_charts.portfolio_curves(frame, "total_value", "Value"))
    tooltip = _layers(spec)[2]["encoding"]["tooltip"]
    assert tooltip[1] == {
        "field": "GPT-5\\.2 \\[x\\]",
        "format": "$,.2f",
        "title": "GPT-5.2 [x]",
        "type": "quantitative",
    }


@pytest.mark.parametrize("rows", [2, 0])
def test_brier_intervals(rows: int) -> None:
    spec = _spec(calibration_charts.brier_intervals(summary_frame(rows)))

    assert _marks(spec) == ["rule", "point"]
    rule, point = _layers(spec)
    assert _fields(rule) == {
        "x": "brier_ci_low",
        "x2": "brier_ci_high",
        "y": "family_id",
        "yOffset": "forecaster",
        "color": "forecaster",
    }
    assert _fields(point)["x"] == "brier"
    assert rule["encoding"]["x"]["scale"] == {"domain": [0, 1]}
    assert spec["height"] == 70 + 45 * rows
    # One row per family and forecaster: the family's own Brier and the market's.
    assert _rows(spec) == 2 * rows


def test_reliability_points_keep_non_empty_bins_of_the_chosen_series() -> None:
    implied = pd.concat([bins_frame("llm-a"), bins_frame("oracle")], ignore_index=True)
    market = pd.concat(
        [bins_frame("llm-a", (1, 1, 0)), bins_frame("oracle", (2, 0, 0))], ignore_index=True
    )

    every_family = calibration_charts.reliability_points(implied, market, None)
    one_family = calibration_charts.reliability_points(implied, market, "llm-a")

    assert set(every_family["forecaster"]) == {"implied confidence"}
    assert every_family["family_id"].tolist() == ["llm-a", "llm-a", "oracle", "oracle"]
    assert (every_family["count"] > 0).all()
    assert every_family.index.tolist() == [0, 1, 2, 3]
    assert one_family["forecaster"].tolist() == [
        "implied confidence",
        "implied confidence",
        "market price",
        "market price",
    ]
    assert set(one_family["family_id"]) == {"llm-a"}
    assert calibration_charts.reliability_points(implied, market, "nobody").empty


@pytest.mark.parametrize("by_forecaster", [False, True])
@pytest.mark.parametrize("family", ["llm-a", "nobody"])
def test_reliability_diagram(by_forecaster: bool, family: str) -> None:
    points = calibration_charts.reliability_points(bins_frame(), bins_frame(), family)
    spec = _spec(calibration_charts.reliability_diagram(points, by_forecaster=by_forecaster))

    assert _marks(spec) == ["line", "line", "circle", "text"]
    diagonal, lines, dots, labels = _layers(spec)
    assert diagonal["mark"]["strokeDash"] == [4, 4]
    series = "forecaster" if by_forecaster else "family_id"
    assert _fields(lines) == {"x": "mean_forecast", "y": "observed_rate", "color": series}
    assert lines["encoding"]["color"]["title"] == ("Forecaster" if by_forecaster else "Family")
    assert _fields(dots)["size"] == "count"
    assert dots["encoding"]["size"]["scale"] == {"range": [40, 600]}
    assert _fields(labels)["text"] == "count"
    assert [(p["select"]["fields"], p["bind"]) for p in spec["params"]] == [([series], "legend")]
    assert spec["height"] == 420
    assert _rows(spec, layer=0) == 2  # the diagonal
    assert _rows(spec, layer=1) == len(points)


@pytest.mark.parametrize("with_market", [False, True])
@pytest.mark.parametrize("rows", [2, 0])
def test_brier_over_time(with_market: bool, rows: int) -> None:
    spec = _spec(calibration_charts.brier_over_time(over_time_frame(rows), with_market=with_market))

    assert _marks(spec) == ["line"]
    assert spec["mark"] == {"type": "line", "point": True, "interpolate": "step-after"}
    assert _fields(spec) == {
        "x": "date",
        "y": "cumulative_brier",
        "color": "family_id",
        "strokeDash": "forecaster",
    }
    assert spec["encoding"]["y"]["scale"] == {"zero": True}
    assert spec["height"] == 320
    # The market's line only next to one family's own.
    assert _rows(spec) == rows * (2 if with_market else 1)


@pytest.mark.parametrize("rows", [2, 0])
def test_price_path(rows: int) -> None:
    spec = _spec(market_charts.price_path(path_frame(rows)))

    assert _marks(spec) == ["line"]
    assert _fields(spec) == {"x": "at", "y": "price", "color": "outcome", "shape": "source"}
    assert spec["encoding"]["y"]["scale"] == {"domain": [0, 1]}
    assert spec["encoding"]["opacity"]["value"] == 0.15
    assert spec["height"] == 300
    assert _rows(spec) == rows


@pytest.mark.parametrize("rows", [2, 0])
def test_api_spend_by_week(rows: int) -> None:
    spec = _spec(cost_charts.api_spend_by_week(spend_frame(rows)))

    assert _marks(spec) == ["bar"]
    assert _fields(spec) == {"x": "week_start", "y": "sum(cost_usd)", "color": "family_id"}
    assert spec["encoding"]["x"]["timeUnit"] == "yearmonthdate"
    assert spec["encoding"]["y"]["title"] == "API cost, $"
    assert spec["height"] == 260
    assert _rows(spec) == rows


@pytest.mark.parametrize("rows", [4, 0])
def test_cost_pareto(rows: int) -> None:
    spec = _spec(cost_charts.cost_pareto(cost.cost_frame(cost_board(rows))))

    assert _marks(spec) == ["rule", "line", "rule", "point", "point", "text", "text"]
    market, front, bars, rings, points, *labels = _layers(spec)
    assert _fields(bars) == {
        "x": "cost_per_decision",
        "y": "edge_over_market_ci_low",
        "y2": "edge_over_market_ci_high",
        "color": "display_name",
    }
    assert _fields(points)["y"] == "edge_over_market"
    assert _fields(market) == {"y": "edge_over_market"}
    # the edge (−skill) upward on a plain axis; one title on every layer, so none is appended
    assert "reverse" not in points["encoding"]["y"]["scale"]
    titles = {layer["encoding"]["y"]["title"] for layer in (market, front, bars, points)}
    assert titles == {"Edge over market, 95% CI (↑ better)"}
    assert bars["encoding"]["x"]["title"] == "API cost per decision, $"
    assert front["mark"]["interpolate"] == "step-after"
    assert _fields(labels[0])["text"] == "display_name" and _fields(labels[0])["y"] == "label_y"
    assert spec["height"] == cost_charts.COST_HEIGHT
    data = spec["datasets"]
    drawn = data[bars["data"]["name"]]
    # LLM C has no skill (never bet): not drawn; the baseline is, at $0, off the front
    assert sorted(r["display_name"] for r in drawn) == (
        ["Baseline: random", "LLM A", "LLM B"] if rows else []
    )
    assert [r["display_name"] for r in data[front["data"]["name"]]] == (
        ["LLM B", "LLM A"] if rows else []  # cheapest first along the step line
    )
    assert len(data[rings["data"]["name"]]) == (2 if rows else 0)
    assert sum(len(data[label["data"]["name"]]) for label in labels) == len(drawn)


def test_cost_labels_move_apart_names_that_would_overlap() -> None:
    board = cost_board(3)
    board.loc[1, ["api_cost_usd", "skill_vs_market"]] = [0.01, 0.01]  # LLM B: $0.001, skill +0.01
    drawn = cost.cost_frame(board)
    placed = cost_charts.cost_labels(drawn).set_index("display_name")

    # The baseline ($0) and LLM B (near $0) share an edge (−0.01): the second name goes a line
    # lower.
    line = (0.08 - -0.03) / cost_charts.COST_HEIGHT * cost_charts.LABEL_GAP_PX
    assert placed.loc["Baseline: random", "label_y"] == pytest.approx(-0.01)
    assert placed.loc["LLM B", "label_y"] == pytest.approx(-0.01 - line)
    # LLM A sits far right: its name is written left of its point, where nothing else is
    assert placed.loc["LLM A", "label_y"] == pytest.approx(0.05)
    assert placed.loc["LLM A", "label_align"] == "right"
    assert placed.loc["LLM B", "label_align"] == "left"
    assert cost_charts.cost_labels(drawn.iloc[:0]).empty


# --------------------------------------------------------------------------------------------
# The real read models' frames: empty database and a season


@pytest.fixture(scope="module")
def empty_engine(
    sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    path = tmp_path_factory.mktemp("charts-empty") / "arena.db"
    shutil.copy(sqlite_template, path)
    engine = create_db_engine(f"sqlite:///{path}", role="reader")
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def season_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = create_db_engine(sqlite_season(tmp_path_factory.getbasetemp()).url, role="reader")
    yield engine
    engine.dispose()


def _first_market(engine: Engine) -> str:
    found = markets.markets(engine, held=True)
    return str(found["market_id"].iloc[0]) if not found.empty else "no-such-market"


READ_MODEL_CHARTS: dict[str, Callable[[Engine], Any]] = {
    "portfolio_curves": lambda e: curve_charts.portfolio_curves(
        curves.portfolio_curves(e, "ALL"),
        "total_pnl",
        "P/L",
        break_even=0.0,
        decisions=curves.decision_runs(e),
    ),
    "brier_intervals": lambda e: calibration_charts.brier_intervals(
        calibration.calibration_summary(e)
    ),
    "reliability_diagram": lambda e: calibration_charts.reliability_diagram(
        calibration_charts.reliability_points(
            calibration.reliability(e), calibration.reliability(e, forecaster="market"), None
        ),
        by_forecaster=False,
    ),
    "brier_over_time": lambda e: calibration_charts.brier_over_time(
        calibration.brier_over_time(e), with_market=True
    ),
    "reliability_intervals": lambda e: calibration_charts.reliability_intervals(
        calibration.reliability_diagram(
            calibration.reliability(e),
            calibration.reliability(e, forecaster="market"),
            sorted(set(calibration.reliability(e)["family_id"])),
            min_count=1,
        )
    ),
    "price_path": lambda e: market_charts.price_path(markets.price_path(e, _first_market(e))),
    "api_spend_by_week": lambda e: cost_charts.api_spend_by_week(operations.api_spend(e).by_week),
    "cost_pareto": lambda e: cost_charts.cost_pareto(cost.cost_ranking(e)),
}
# The layer holding a chart's data when it is not the first (a diagonal or a reference first).
DATA_LAYER = {"reliability_diagram": 1, "reliability_intervals": 1, "cost_pareto": 2}


@pytest.mark.parametrize("name", sorted(READ_MODEL_CHARTS))
def test_charts_take_the_read_models_frames(
    name: str, empty_engine: Engine, season_engine: Engine
) -> None:
    layer = DATA_LAYER.get(name, 0)
    assert _rows(_spec(READ_MODEL_CHARTS[name](empty_engine)), layer) == 0
    assert _rows(_spec(READ_MODEL_CHARTS[name](season_engine)), layer) > 0


def test_every_chart_function_is_tested() -> None:
    """A new chart in arena/dashboard/charts/ gets a test here (and a read-model check above)."""
    modules = [style, curve_charts, calibration_charts, cost_charts, market_charts]
    modules += [replicate_charts, chart_spec]
    found = {info.name for info in pkgutil.iter_modules(charts.__path__)}
    assert found == {module.__name__.rsplit(".", 1)[1] for module in modules}
    public = {
        name
        for module in modules
        for name, value in vars(module).items()
        if callable(value) and not name.startswith("_") and value.__module__ == module.__name__
    }
    assert public == set(READ_MODEL_CHARTS) | {
        "reliability_points",
        "family_order",
        "family_color_scale",
        "stated_brier_intervals",  # tested below: the test season runs no protocol extension
        "replicate_returns",  # tested in tests/analytics/test_replicates.py (replicates)
        "cost_labels",
        "vega_lite",  # tested in tests/test_chart_spec.py (what a page sends)
        "frame_name",
        "legend_pick",  # style's shared parts, in every chart above
        "zoom_x",
        "vega_field",
    }


def test_stated_brier_intervals_on_the_read_models_frames() -> None:
    """The stated-probability chart on the read model's frame of a few bets: one
    row per family and forecaster scored; a family with no resolved stated bet draws nothing;
    the empty frame draws nothing."""
    from arena.analytics.stats.stated import STATED_COLUMNS, stated_figures
    from tests.analytics.test_stated import NAMES, bets

    figures = stated_figures(bets(), NAMES, replicates=50)
    spec = _spec(calibration_charts.stated_brier_intervals(figures))
    assert _marks(spec) == ["rule", "point"]
    rule, point = _layers(spec)
    assert _fields(rule) == {
        "x": "brier_ci_low",
        "x2": "brier_ci_high",
        "y": "family_id",
        "yOffset": "forecaster",
        "color": "forecaster",
    }
    assert _fields(point)["x"] == "brier"
    assert _rows(spec) == 2 * 3  # two families × stated, implied (v1), market
    silent = figures.assign(stated_brier=float("nan"), implied_brier=float("nan"))
    silent["market_brier"] = float("nan")
    assert _rows(_spec(calibration_charts.stated_brier_intervals(silent))) == 0
    empty = pd.DataFrame(columns=list(STATED_COLUMNS))
    assert _rows(_spec(calibration_charts.stated_brier_intervals(empty))) == 0
