"""What every chart shares: the legend pick, the x pan, the families' colours."""

import altair as alt
import pandas as pd

from arena.dashboard.palette import BASELINE_GREYS as BASELINE_GREYS  # what the charts share
from arena.dashboard.palette import FAMILY_COLORS as FAMILY_COLORS
from arena.dashboard.palette import family_colors, family_keys

# Series not picked in the legend fade to this opacity.
FADED = 0.12


def legend_pick(field: str) -> alt.Parameter:
    """A point selection on `field`, bound to the legend (click an entry to isolate it)."""
    return alt.selection_point(fields=[field], bind="legend")


def zoom_x() -> alt.Parameter:
    """An interval selection bound to the x scale: drag to pan, double-click to reset. The
    wheel is left to the page (``zoom=False``): a reader scrolling past a chart must not zoom
    it instead."""
    return alt.selection_interval(bind="scales", encodings=["x"], zoom=False)


REFERENCE_COLOR = "#5b6472"  # the break-even rule and its label


def family_order(frame: pd.DataFrame) -> list[str]:
    """The display names of a frame's families: LLM families by name, then baselines by name
    (the legend's and the tooltip's order)."""
    kinds = frame.drop_duplicates("display_name").set_index("display_name")["kind"]
    llms = sorted(str(name) for name, kind in kinds.items() if kind != "baseline")
    return llms + sorted(str(name) for name, kind in kinds.items() if kind == "baseline")


def family_color_scale(frame: pd.DataFrame, field: str = "display_name") -> alt.Scale:
    """The families' colours (`arena.dashboard.palette`: one per family on every chart, LLM
    families in distinct hues, baselines in greys) over `field`'s values (display names or
    ids), in legend order: models by name, then baselines."""
    keys = [str(v) for v in frame[field].dropna()] if field in frame else []
    baselines: set[str] = set()
    if "kind" in frame:
        baselines = set(frame.loc[frame["kind"] == "baseline", field].astype(str))
    order = family_keys(keys, baselines)
    return alt.Scale(domain=order, range=family_colors(order, baselines))


def vega_field(name: str) -> str:
    """`name` as a Vega-Lite field name: dots and brackets would be read as nested access."""
    for char in ("\\", ".", "[", "]"):
        name = name.replace(char, "\\" + char)
    return name
