"""When will we know?: for every pair of families, and each family against the market and the
random traders, whether the observed difference is separable now (the two-sided 5% test
rejects), and if not, how many more weekly cohorts the gap would need, if it holds, to reach
the minimum detectable difference (80% power, α = 0.05)."""

from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.query.scope import protocols_present
from arena.analytics.views.detectability import (
    DETECTABILITY_COLUMNS,
    display,
    judged,
    pair_sentences,
)
from arena.config import METHODOLOGY_VERSION
from arena.core.detectability import z_sum, z_test
from arena.dashboard import fmt, notices, picks, reads, tables
from arena.dashboard.horizon_section import horizon_section

NO_FAMILY = "No family has an agent in this scope yet: the figures appear once cohorts trade."


def _columns(first: str) -> dict[str, Any]:
    return {
        "who": st.column_config.Column(first, width=260, pinned=True),
        "against": st.column_config.Column("Against", width=130),
        "metric": st.column_config.Column("Metric", width=70),
        "difference": st.column_config.Column(
            "Difference", width=100, help="Return in percentage points; Brier (lower is better)."
        ),
        "se": st.column_config.Column("SE", width=80, help="Standard error of the difference."),
        "p": st.column_config.Column(
            "p",
            width=90,
            help="Two-sided p of the difference against none (normal, from its SE). At p ≤ 0.05 "
            "the 5% test rejects: separable now.",
        ),
        "verdict": st.column_config.Column(
            "When",
            width=150,
            help=f"Separable now: the two-sided 5% test rejects (|difference| ≥ {z_test():.2f} × "
            "SE). Otherwise: the more cohorts the gap would need, if it holds, to reach the MDE.",
        ),
        "mde": st.column_config.Column(
            "MDE",
            width=80,
            help=f"Minimum detectable difference: {z_sum():.2f} × SE, the true gap a 5% test "
            "detects with 80% power. What the projection aims for; a smaller observed gap can "
            "already be separable now.",
        ),
        "cohorts": st.column_config.Column("Cohorts", width=75, help="Cohorts it rests on."),
    }


def _compare_link(frame: pd.DataFrame, cohort: int | None) -> None:
    """A link to Compare for one pair (its stable ids in the URL): there the portfolio figure
    judged here sits beside the pair's difference on the markets both traded."""
    rows = frame[(frame["comparison"] == "pair") & (frame["metric"] == "return")]
    # Two language models first (as the sentences above), then the pairs with a baseline.
    models = (rows["kind_a"] == "llm") & (rows["kind_b"] == "llm")
    rows = pd.concat([rows[models], rows[~models]])
    if rows.empty:
        return
    pairs = {
        (str(a), str(b)): f"{x} vs {y}"
        for a, b, x, y in rows[["family_a", "family_b", "name_a", "name_b"]].itertuples(index=False)
    }
    left, right = st.columns([2, 1], vertical_alignment="bottom")
    a, b = left.selectbox(
        "Compare a pair head to head",
        list(pairs),
        format_func=pairs.__getitem__,
        key="detectability-compare-pair",
    )
    params = {"family": a, "versus": b} | ({"cohort": str(cohort)} if cohort is not None else {})
    right.page_link(
        "app_pages/compare.py",
        label="Open in Compare",
        icon=":material/compare_arrows:",
        query_params=params,
    )


st.title("When will we know?")
st.caption(
    "For each comparison: the standard error (SE) of the difference from the leaderboard's "
    "paired cluster bootstrap (one draw for every family, so A − B is paired; a pair on the "
    "cohorts both entered), its two-sided p, and **separable now** when the 5% test rejects "
    f'(|difference| ≥ {z_test():.2f} × SE, p ≤ 0.05). Otherwise "not separable yet": the '
    "test does not reject, and — if the gap holds and the SE shrinks as 1/√cohorts — the "
    "more weekly cohorts it would take to reach the **minimum detectable difference** MDE = "
    f"(z₀.₉₇₅ + z₀.₈) × SE = {z_sum():.2f} × SE, the true gap a 5% test detects with 80% "
    "power. The market: return against 0 (a trader at the market's own prices expects "
    "nothing), Brier as skill vs market on the same bets. Random traders: return against "
    "their mean on the same cohorts, SE = their spread (each one agent); no Brier (the null "
    "replays P/L, no forecasts)."
)
picks.cohorts_or_stop()
groups: dict[str, list[int]] = reads.read(protocols_present)
# The sidebar's scope, as on every page (None: plain v1 cohorts only): cohorts run under
# different protocols are never pooled; its cohort filter offers the scope's own cohorts.
selected = picks.methodology_link()
key = selected or METHODOLOGY_VERSION
numbers = sorted(groups.get(key, []), reverse=True)
left, _ = st.columns([1, 2])
cohort = picks.cohort_link(numbers, all_label="All its cohorts", container=left)
picks.version_caption(selected, cohort)
methodology = None if cohort is not None or key == METHODOLOGY_VERSION else key
found = reads.stored_or_offer(
    "detectability", "detectability", cohort=cohort, methodology=methodology
)
if found is None:
    st.stop()
frame, stored = found
frame = judged(frame)  # today's rule, also on a frame stored under an earlier one
if frame.empty:
    notices.nothing_yet(NO_FAMILY)
reads.stored_caption(stored)
notices.simulated_notice([str(f) for f in frame["family_a"]])

st.subheader("Pairs of families")


def _sentences(texts: list[str]) -> None:
    st.markdown("\n".join(f"- {fmt.escaped(text)}" for text in texts))


_sentences(pair_sentences(frame, models_only=True) or ["No two models in this scope."])
with_baseline = pair_sentences(frame, models_only=False)
if with_baseline:
    with st.expander(f"Pairs with a baseline ({len(with_baseline)})"):
        _sentences(with_baseline)
pairs = display(frame, "pair")
tables.table(
    pairs.drop(columns=["family_id", "kind", "against"]),
    key="detectability-pairs",
    column_config=_columns("Pair (better return first)"),
)
_compare_link(frame, cohort)
st.subheader("Against the market and random traders")
tables.table(
    display(frame, "reference").drop(columns=["family_id", "kind"]),
    key="detectability-references",
    column_config=_columns("Family"),
)
st.caption(
    "More cohorts (while not separable): ⌈k × (MDE / |difference|)²⌉ − k, k the cohorts the "
    "comparison rests on. The projection assumes the gap holds; on the simulated world an "
    f"early gap is often luck (see the methodology). {fmt.DASH}: no standard error yet (no "
    "resolved bet, or every bootstrap replicate the same)."
)
scope = f"cohort-{cohort}" if cohort is not None else key
raw = frame[list(DETECTABILITY_COLUMNS)]
left, right = st.columns(2)
with left:
    tables.download_csv(
        raw[raw["comparison"] == "pair"], f"detectability-pairs-{scope}", label="Pairs CSV"
    )
with right:
    tables.download_csv(
        raw[raw["comparison"] != "pair"],
        f"detectability-references-{scope}",
        label="Market and random traders CSV",
    )
horizon_section([cohort] if cohort is not None else numbers, scope)
