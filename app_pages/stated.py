"""Stated probability: the protocol extension `stated_probability`'s own view, for the cohorts
stamped with it. Beside each bet the model stated its probability that the side wins: its
Brier beside v1's implied confidence and the market on the same bets, whether the bets agree
with it, stakes against the Kelly stake it justifies, and skill where it deviates from the
price — each with its 95% cluster-bootstrap interval, from the hourly job's stored frame."""

import pandas as pd
import streamlit as st

from arena.analytics.stats.stated import DEVIATION, extended_cohorts
from arena.dashboard import documents, fmt, notices, picks, reads, tables
from arena.dashboard.charts import calibration as calibration_charts

NO_EXTENDED = (
    "No cohort here ran the stated-probability extension, so this page has nothing to show "
    "(`make demo` plays plain v1 cohorts). To see it filled, run `make demo-extensions`: a "
    "demo season whose cohorts ask for stated probabilities (and run 3 replicates per "
    "family), in data/demo-extensions.db, served like `make demo`. Or by hand: `arena demo "
    "--extensions stated_probability` into a new database; on a live deployment, start "
    "cohorts with `ARENA_EXTENSIONS=stated_probability`."
)
NOTES = documents.doc_link("methodology", "18-methodology-notes-every-interpretation-we-made")
STATISTICS = documents.doc_link("methodology", "19-statistics-honest-uncertainty")
# Column widths (px): the key columns of each table fit 1440 px with the sidebar open.
FAMILY, INTERVAL, SHARE = 150, 145, 120


def _interval(
    figures: pd.DataFrame, name: str, *, signed: bool = False, places: int = 3
) -> list[str]:
    return [
        fmt.prob_interval(value, low, high, places, signed=signed)
        for value, low, high in zip(
            figures[name], figures[f"{name}_ci_low"], figures[f"{name}_ci_high"], strict=True
        )
    ]


def _shares(figures: pd.DataFrame, name: str) -> list[str]:
    return [
        fmt.share_interval(value, low, high)
        for value, low, high in zip(
            figures[name], figures[f"{name}_ci_low"], figures[f"{name}_ci_high"], strict=True
        )
    ]


def _counts(figures: pd.DataFrame, name: str) -> list[str]:
    return [fmt.count(value) for value in figures[name]]


def quality_rows(figures: pd.DataFrame) -> pd.DataFrame:
    """Forecast quality on resolved bets: stated, implied (v1) and market Brier, as text."""
    return pd.DataFrame(
        {
            "family": figures["display_name"],
            "stated_brier": _interval(figures, "stated_brier"),
            "implied_brier": _interval(figures, "implied_brier"),
            "brier_gap": _interval(figures, "brier_gap", signed=True),
            "market_brier": _interval(figures, "market_brier"),
            "skill_vs_market": _interval(figures, "skill_vs_market", signed=True),
            "stated": [
                f"{fmt.count(s)} of {fmt.count(b)}"
                for s, b in zip(figures["stated_bets"], figures["bets"], strict=True)
            ],
            "resolved": _counts(figures, "resolved_bets"),
        }
    )


def conduct_rows(figures: pd.DataFrame) -> pd.DataFrame:
    """Saying and doing: consistency with the stated probability, and stakes against Kelly."""
    return pd.DataFrame(
        {
            "family": figures["display_name"],
            "consistent_share": _shares(figures, "consistent_share"),
            "mean_edge": _interval(figures, "mean_edge", signed=True),
            "stake_efficiency": _interval(figures, "stake_efficiency", places=2),
            "log_growth": _interval(figures, "log_growth", signed=True),
            "kelly_log_growth": _interval(figures, "kelly_log_growth", signed=True),
            "growth_gap": _interval(figures, "growth_gap", signed=True),
        }
    )


def deviating_rows(figures: pd.DataFrame) -> pd.DataFrame:
    """Skill where the stated probability deviates from the price by more than 0.1."""
    return pd.DataFrame(
        {
            "family": figures["display_name"],
            "deviating_bets": _counts(figures, "deviating_bets"),
            "deviating_brier": _interval(figures, "deviating_brier"),
            "deviating_market_brier": _interval(figures, "deviating_market_brier"),
            "deviating_skill": _interval(figures, "deviating_skill", signed=True),
        }
    )


st.title("Stated probability")
st.caption(
    "A protocol extension, not v1: cohorts stamped `stated_probability` asked every BET leg "
    "for the model's probability p that the side it buys wins, stored beside the bet. Its "
    "figures compare p with v1's implied confidence and with the price q paid, on the same "
    f"bets ([methodology: protocol extensions]({NOTES})). v1's numbers of these cohorts are "
    "computed as for any cohort; their cohorts are marked as not stock v1 on Cohorts and "
    "Methodology. Intervals: 95% cluster bootstrap over Polymarket events within cohorts "
    f"([methodology: statistics]({STATISTICS}))."
)

numbers: list[int] = sorted(reads.read(extended_cohorts), reverse=True)
if not numbers:
    notices.nothing_yet(NO_EXTENDED)
cohort = picks.extension_cohort_link(numbers, "All extended cohorts")
found = reads.stored_or_offer("stated_probability", "stated-probability figures", cohort=cohort)
if found is None:
    st.stop()
figures, stored = found
stating = figures[figures["stated_bets"] > 0].reset_index(drop=True)
silent = figures[figures["stated_bets"] == 0]
if stating.empty:
    notices.nothing_yet(
        "No bet in this scope stated a probability yet (`arena decide` runs on Sundays)."
    )
notices.simulated_notice([str(f) for f in stating["family_id"]])
reference = stating["kind"] == "baseline"

st.subheader("Forecast quality: the stated probability beside the implied confidence")
reads.stored_caption(stored)
tables.table(
    quality_rows(stating),
    key="stated-quality",
    reference=reference,
    column_config={
        "family": tables.column("Family", FAMILY),
        "stated_brier": tables.column("Stated p Brier [95%]", INTERVAL, "(p − outcome)²"),
        "implied_brier": tables.column(
            "Implied (v1) Brier [95%]", INTERVAL, "v1's Brier of the bet's size, same bets"
        ),
        "brier_gap": tables.column("Stated − implied [95%]", INTERVAL, "Negative: p scored better"),
        "market_brier": tables.column(
            "Market Brier [95%]", INTERVAL, "(price − outcome)², same bets"
        ),
        "skill_vs_market": tables.column(
            "Stated − market [95%]", INTERVAL, "Negative: p beat the market price"
        ),
        "stated": tables.column(
            "Bets stating p", 110, "Bets with a stated probability, of all BUYs."
        ),
        "resolved": tables.column("Resolved", 80, "Bets with a stated p whose market resolved."),
    },
)
scored = stating[stating["resolved_bets"] > 0]
if scored.empty:
    st.text("No bet that stated a probability has resolved yet: Brier needs an outcome.")
else:
    tables.chart(
        calibration_charts.stated_brier_intervals, scored.assign(family_id=scored["display_name"])
    )
st.caption(
    "Lower Brier is better. Only resolved bets that stated a probability are scored, so the "
    "three forecasts are compared on exactly the same bets."
    + (
        " Bets without a stated probability are recorded as missing, never filled in: "
        + ", ".join(
            f"{fmt.escaped(name)} ({fmt.count(bets)} bet{'s' if bets != 1 else ''}, none stated)"
            for name, bets in zip(silent["display_name"], silent["bets"], strict=True)
        )
        + "."
        if not silent.empty
        else ""
    )
)

st.subheader("Saying and doing: consistency and Kelly")
tables.table(
    conduct_rows(stating),
    key="stated-conduct",
    reference=reference,
    column_config={
        "family": tables.column("Family", FAMILY),
        "consistent_share": tables.column(
            "Agrees with p [95%]", SHARE, "Share of bets whose stated p is above the price paid"
        ),
        "mean_edge": tables.column("Mean p − price [95%]", INTERVAL),
        "stake_efficiency": tables.column(
            "Stake / Kelly [95%]",
            SHARE,
            "Σ stake / Σ Kelly stake at its own p and price (capped at 25% of cash); 1 = Kelly",
        ),
        "log_growth": tables.column("Log-growth [95%]", INTERVAL, "Per resolved bet, as staked"),
        "kelly_log_growth": tables.column(
            "Kelly log-growth [95%]", INTERVAL, "Had it staked Kelly"
        ),
        "growth_gap": tables.column("Actual − Kelly [95%]", INTERVAL),
    },
)
st.caption(
    "A bet agrees with its stated probability when p exceeds the price q it paid. Kelly stake "
    "= min((p − q)/(1 − q), 25%) × the cash before the bet, on bets with p > q; stake / Kelly "
    "below 1 means it bet less than its own p justifies. Log-growth: each resolved bet's "
    "ln(1 + f·(outcome/q − 1)) on the cash before it, f its stake's share of that cash "
    "(actual) or the Kelly fraction (counterfactual), averaged over resolved bets."
)

st.subheader(f"Skill where p deviates from the price by more than {DEVIATION:g}")
tables.table(
    deviating_rows(stating),
    key="stated-deviating",
    reference=reference,
    column_config={
        "family": tables.column("Family", FAMILY),
        "deviating_bets": tables.column("Resolved bets", 110),
        "deviating_brier": tables.column("Stated p Brier [95%]", INTERVAL),
        "deviating_market_brier": tables.column("Market Brier [95%]", INTERVAL),
        "deviating_skill": tables.column(
            "Skill vs market [95%]",
            INTERVAL,
            "Stated p Brier − market Brier; negative: p was right",
        ),
    },
)
st.caption(
    f"Resolved bets whose stated p differs from the price by more than {DEVIATION:g}: where "
    "the model disagreed with the market, was it right? Baselines are reference rows "
    "(tinted); the oracle states the simulated world's hidden probability."
)
tables.download_csv(figures, "stated-probability")
