"""The Risk section of the Family and Agent pages: max drawdown and Sharpe ± its standard error.

Why one module: both pages show the same figures (`arena.analytics.stats.risk`) in the same
words, a family's from its combined book, an agent's from its own curve; what a person reads
is formatted here (`fmt`), the numbers stay raw in the read models and CSVs. `risk_figures`
is pure (tested without Streamlit); `show_risk` draws it.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from arena.dashboard import fmt

SHARPE_HELP = (
    "Mean daily return over its standard deviation, annualised with √365 (risk-free rate 0, "
    "paper: no fees). ± is its standard error (Mertens 2002, which allows for the skewed, "
    "heavy-tailed daily returns of binary bets): a Sharpe within about two standard errors "
    "of 0 is not distinguishable from no edge."
)


@dataclass(frozen=True)
class RiskFigure:
    """One metric as shown: its label, its value, a grey note under it, its help."""

    label: str
    value: str
    note: str | None
    help: str


def risk_figures(figures: Mapping[str, Any], *, drawdown_on: str) -> list[RiskFigure]:
    """The section's metrics from ``max_drawdown_pct`` (%), ``sharpe``, ``sharpe_se`` and
    ``sharpe_days`` (a leaderboard row, or an agent's risk row converted by `agent_figures`);
    `drawdown_on` says which curve the drawdown was taken on."""
    days: Any = figures.get("sharpe_days")
    n = 0 if fmt.missing(days) else int(days)
    note = f"daily, n = {fmt.count(n)}" if n else "no daily return yet"
    if n == 1:
        note = "daily, n = 1: needs two days"
    return [
        RiskFigure(
            "Max drawdown",
            fmt.drawdown(figures.get("max_drawdown_pct")),
            None,
            f"The largest fall from a peak, as a share of the peak, on {drawdown_on}; the "
            "starting balance counts as the first peak.",
        ),
        RiskFigure(
            "Sharpe (annualised)",
            fmt.sharpe(figures.get("sharpe"), figures.get("sharpe_se")),
            note,
            SHARPE_HELP,
        ),
    ]


def agent_figures(row: Mapping[str, Any]) -> dict[str, Any]:
    """An `agent_risk` row (drawdown as a fraction, ``days``) in the leaderboard's terms."""
    drawdown: Any = row.get("max_drawdown")
    return {
        "max_drawdown_pct": None if fmt.missing(drawdown) else float(drawdown) * 100.0,
        "sharpe": row.get("sharpe"),
        "sharpe_se": row.get("sharpe_se"),
        "sharpe_days": row.get("days"),
    }


def show_risk(figures: Mapping[str, Any], *, drawdown_on: str, caption: str) -> None:
    """The metrics side by side, with `caption` (what the figures cover) under them."""
    shown = risk_figures(figures, drawdown_on=drawdown_on)
    for where, figure in zip(st.columns(len(shown) + 2)[: len(shown)], shown, strict=True):
        where.metric(
            figure.label,
            figure.value,
            figure.note,
            delta_color="off",
            delta_arrow="off",
            help=figure.help,
        )
    st.caption(caption)
