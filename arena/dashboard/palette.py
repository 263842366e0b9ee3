"""One colour per family on every chart of the dashboard.

Why: a chart that coloured the families it happened to hold in its own order gave a family a
different hue on each chart. The colours come from the whole lineup instead (`family_lineup`,
in the order the families joined): the entry sets them at the start of each run (`use_lineup`),
and every chart's family scale (`charts.style.family_color_scale`) looks them up here, by family
id or display name (pages label some charts with either). A family the lineup does not hold (a
chart unit test, a page run outside the entry) gets the next free hue after the lineup's.

The colours live in a context variable, not a module global: each script run (a thread of its
own) sets its database's lineup, and nothing leaks between sessions or tests.
"""

from collections.abc import Collection, Sequence
from contextvars import ContextVar

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


class Lineup:
    """Each family's colour by id and by display name, and which families are baselines."""

    def __init__(self, families: Sequence[tuple[str, str, str]] = ()) -> None:
        self.colors: dict[str, str] = {}
        self.baselines: set[str] = set()
        self.hues = self.greys = 0
        for family_id, name, kind in families:
            if kind == "baseline":
                color = BASELINE_GREYS[self.greys % len(BASELINE_GREYS)]
                self.greys += 1
                self.baselines.update((family_id, name))
            else:
                color = FAMILY_COLORS[self.hues % len(FAMILY_COLORS)]
                self.hues += 1
            self.colors.setdefault(family_id, color)
            self.colors.setdefault(name, color)


_LINEUP: ContextVar[Lineup | None] = ContextVar("family_lineup", default=None)
NO_LINEUP = Lineup()


def _lineup() -> Lineup:
    return _LINEUP.get() or NO_LINEUP


def use_lineup(families: Sequence[tuple[str, str, str]]) -> None:
    """Colour this run's charts by `families` ((id, display name, kind), lineup order)."""
    _LINEUP.set(Lineup(families))


def family_keys(keys: Sequence[str], baselines: Collection[str] = ()) -> list[str]:
    """`keys` (ids or display names, each once) as a legend lists them: models by name, then
    baselines by name (a baseline: in `baselines` or the lineup's)."""
    known = _lineup().baselines
    unique = list(dict.fromkeys(keys))
    llms = sorted(k for k in unique if k not in baselines and k not in known)
    return llms + sorted(k for k in unique if k in baselines or k in known)


def family_colors(keys: Sequence[str], baselines: Collection[str] = ()) -> list[str]:
    """Each of `keys`' colour: the lineup's, else the next hue (grey for `baselines`) after
    the lineup's, in the order of `keys`."""
    lineup = _lineup()
    hue, grey, colors = lineup.hues, lineup.greys, []
    for key in keys:
        if key in lineup.colors:
            colors.append(lineup.colors[key])
        elif key in baselines:
            colors.append(BASELINE_GREYS[grey % len(BASELINE_GREYS)])
            grey += 1
        else:
            colors.append(FAMILY_COLORS[hue % len(FAMILY_COLORS)])
            hue += 1
    return colors
