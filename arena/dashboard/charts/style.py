"""What every chart shares: the legend pick, the x zoom, the families' colours."""

import altair as alt
import pandas as pd

# Series not picked in the legend fade to this opacity.
FADED = 0.12


def legend_pick(field: str) -> alt.Parameter:
    """A point selection on `field`, bound to the legend (click an entry to isolate it)."""
    return alt.selection_point(fields=[field], bind="legend")


def zoom_x() -> alt.Parameter:
    """An interval selection bound to the x scale: drag to pan, wheel to zoom."""
    return alt.selection_interval(bind="scales", encodings=["x"])


# Families get distinct hues (category10 without its grey, which would read as a baseline);
# baselines (and the oracle) are greys, so the eye goes to the models first.
FAMILY_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#17becf",
)
# Neighbours in the list differ most: the baselines sit next to each other in the legend.
BASELINE_GREYS = ("#4d4d4d", "#a3a3a3", "#737373", "#c4c4c4", "#5e5e5e")
REFERENCE_COLOR = "#5b6472"  # the break-even rule and its label


def family_order(frame: pd.DataFrame) -> list[str]:
    """The display names of a frame's families: LLM families by name, then baselines by name
    (the legend's and the tooltip's order)."""
    kinds = frame.drop_duplicates("display_name").set_index("display_name")["kind"]
    llms = sorted(str(name) for name, kind in kinds.items() if kind != "baseline")
    return llms + sorted(str(name) for name, kind in kinds.items() if kind == "baseline")


def family_color_scale(frame: pd.DataFrame) -> alt.Scale:
    """A colour per display name (`family_order`): LLM families in distinct hues, baselines
    in greys."""
    order = family_order(frame)
    llms = set(frame.loc[frame["kind"] != "baseline", "display_name"].astype(str))
    colors, hue, grey = [], 0, 0
    for name in order:
        if name in llms:
            colors.append(FAMILY_COLORS[hue % len(FAMILY_COLORS)])
            hue += 1
        else:
            colors.append(BASELINE_GREYS[grey % len(BASELINE_GREYS)])
            grey += 1
    return alt.Scale(domain=order, range=colors)


def vega_field(name: str) -> str:
    """`name` as a Vega-Lite field name: dots and brackets would be read as nested access."""
    for char in ("\\", ".", "[", "]"):
        name = name.replace(char, "\\" + char)
    return name
