"""Every Altair chart the dashboard draws, one named function each, in a module per subject.

A chart function takes a read model's DataFrame (as `arena.analytics` returns it, or as the
page filtered it for its table and CSV) and a few parameters, and returns the chart spec; the
page only shows it (``tables.chart(function, frame, …)`` builds it once per content of its
arguments). Nothing here reads the database or touches Streamlit, so each spec can be built
and checked (``chart.to_dict()``) in a unit test, empty frames included.

Modules: `style` (colours, the legend pick, the x pan: what every chart shares), `curves`
(portfolio curves), `calibration` (Brier intervals, reliability, Brier over time, the stated
probability's Brier), `cost` (skill by cost, the Pareto front; API spend by week), `markets`
(a market's price path), `replicates` (replicate returns).

Shared interaction: where there are several series, clicking a legend entry isolates one
(`style.legend_pick`); time axes pan on drag (`style.zoom_x`, double-click resets) and never
take the mouse wheel, which scrolls the page. A family has one colour on every chart
(`style.family_color_scale`, from `arena.dashboard.palette`).
"""
