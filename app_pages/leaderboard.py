"""Leaderboard: every family's v1 scores with 95% intervals, baselines as reference rows,
what each family's API calls cost against its skill (derived from the same stored frame), and
the portfolio curve per family."""

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from arena.analytics.query.scope import cohort_protocol, key_version, rule_key
from arena.analytics.stats.cost import COST_COLUMNS, cost_frame, scope_spend
from arena.analytics.stats.leaderboard import (
    CONTENDER_KIND,
    DEFAULT_MIN_RESOLVED,
    EDGE_COLUMNS,
    leaderboard,
    portfolio_value,
    ranked,
    with_edge,
)
from arena.analytics.stats.random_null import DEFAULT_NULL_SEEDS
from arena.analytics.views.execution import with_flags
from arena.analytics.views.late_entry import (
    cohort_sentence,
    late_entries,
    mark_sources,
    marks_sentence,
    with_late_columns,
)
from arena.analytics.views.realised import (
    SHOWN_COLUMNS,
    realised_by_family,
    with_realised,
)
from arena.dashboard import documents, fmt, notices, picks, portfolio, reads, tables

NO_AGENT = "This cohort has no agents: `arena start-cohort` creates one per enabled family."
# The all-cohort board of a scope without an agent (a version or protocol group chosen).
NO_SCOPE_AGENT = (
    "No cohort of this protocol yet: `arena start-cohort` creates one per enabled family "
    "(the sidebar's Methodology selector shows the protocols this database ran)."
)
STATS = documents.doc_link("methodology", "19-statistics-honest-uncertainty")
SCORING = documents.doc_link("methodology", "11-scoring")
LATE_ENTRY = documents.doc_link("methodology", "20-4-never-pooled-idempotent")

# The CSV: raw numbers and stable ids (the earlier columns first, in their order).
CSV_COLUMNS = [
    "rank",
    "display_name",
    "family_id",
    "kind",
    "cohorts",
    "total_pnl",
    "return_pct",
    "return_ci_low",
    "return_ci_high",
    "p_rank_1",
    "rank_low",
    "rank_high",
    "brier",
    "brier_ci_low",
    "brier_ci_high",
    "resolved_bets",
    "win_rate",
    "decisions",
    "fallback_holds",
    "api_cost_usd",
    "too_early",
    "skill_vs_market",
    "skill_vs_market_ci_low",
    "skill_vs_market_ci_high",
    "random_null_percentile",
    "agent_replicates",
    "replicate_return_low",
    "replicate_return_high",
    # Its rank differs under another execution rule (the Execution page); empty
    # where the execution sensitivity has no figures for the scope. New columns go last.
    "execution_not_robust",
    # How much of the return is realised (stakes resolved against stakes still
    # marked; `arena.analytics.views.realised`), raw: dollars, shares 0-1, position counts.
    *SHOWN_COLUMNS,
    # P(rank #1) among the model families (empty for a baseline), and the edge over the
    # market: −skill_vs_market, up is better.
    "p_rank_1_contenders",
    *EDGE_COLUMNS,
]
# Added last to a CSV whose columns ended otherwise (the late-entry one).
NEW_CSV_COLUMNS = ("p_rank_1_contenders", *EDGE_COLUMNS)
REFERENCE = "reference"
# The table: (column, label, width in px, help). The first seven fit a 1440-px screen with the
# sidebar open; Family is pinned, so scrolling right to the rest never hides it.
COLUMNS = [
    ("family", "Family", 170, None),
    ("return", "Return [95% CI]", 168, "P/L over the capital given, summed over cohorts."),
    (
        "brier_text",
        "Brier [95% CI]",
        150,
        "Mean squared error of implied confidence; lower is better.",
    ),
    ("rank_text", "Rank [95% CI]", 100, "Rank by return (1 = best) and its 95% interval."),
    (
        "first",
        "P(rank #1)",
        88,
        "Share of bootstrap replicates in which it has the best return among the model "
        "families. Baselines are reference rows, never contenders.",
    ),
    (
        "edge",
        "Edge over market ↑",
        170,
        "The market price's Brier − its Brier on the same bets: positive beats the market "
        "(up is better). The CSV keeps skill_vs_market, its negative, too.",
    ),
    (
        "random_null_percentile",
        "Random null",
        96,
        f"Percentile of its return among {DEFAULT_NULL_SEEDS} random traders on the same markets.",
    ),
    ("total_pnl", "P/L", 104, "Summed over its cohorts, marked to market."),
    (
        "realised",
        "Realised",
        176,
        "Of the dollars it staked: the share resolved (settled, refunded on a void, or sold) "
        "against the share still in open positions at a mark. Its return is settled money "
        "only as far as the first share goes.",
    ),
    ("resolved_bets", "Resolved bets", 104, None),
    ("win_rate", "Win rate", 80, "Share of resolved bets whose side won."),
    ("decisions", "Decisions", 84, None),
    (
        "fallback_holds",
        "Fallback HOLDs",
        116,
        "Decisions that ended in a HOLD because no valid answer came.",
    ),
    ("api_cost_usd", "API cost", 90, None),
    ("cohorts", "Cohorts", 72, None),
    ("status", "Note", 130, None),
    (
        "execution_flag",
        "Execution",
        150,
        "Flagged when its rank under another execution rule (display price, mid, book walk) "
        "differs from its rank under the cohort's own: see the Execution page.",
    ),
]
# Shown after Return when a family fields several agents in a cohort (ARENA_REPLICATES).
SPREAD_COLUMN = (
    "spread",
    "Replicates",
    160,
    "Agents per cohort × the lowest … highest return of one replicate; the row pools them "
    "(P/L and capital summed). The Replicates page has the spread against the gaps.",
)
FORMATS = {
    "random_null_percentile": fmt.percentile,
    "total_pnl": fmt.signed_money,
    "resolved_bets": fmt.count,
    "win_rate": fmt.share,
    "decisions": fmt.count,
    "fallback_holds": fmt.count,
    "api_cost_usd": fmt.cost,
    "cohorts": fmt.count,
}

# The Cost table: (column, label, width in px, help); its CSV is every `COST_COLUMNS` column.
COST_TABLE = [
    ("family", "Family", 150, None),
    (
        "api_cost_usd",
        "API spend",
        88,
        "The stored cost of every model call of its finished decisions, retries included.",
    ),
    ("cost_per_decision", "Cost / decision", 108, None),
    ("cost_per_resolved_bet", "Cost / resolved bet", 132, None),
    (
        "return_per_dollar",
        "Return per $ [95% CI]",
        176,
        "Return in percentage points per dollar of API spend; the interval is the return's "
        "divided by the spend.",
    ),
    (
        "edge_per_dollar",
        "Edge per $ ↑ [95% CI]",
        176,
        "Edge over the market per dollar of API spend (positive beats the market: up is "
        "better); the interval is the edge's divided by the spend.",
    ),
    (
        "front",
        "Pareto front",
        128,
        "On the front when no other paying family is at least as cheap per decision and at "
        "least as skilled, and better on one. Baselines spend nothing: reference only.",
    ),
]
COST_FORMATS = {
    "api_cost_usd": fmt.cost,
    "cost_per_decision": fmt.cost,
    "cost_per_resolved_bet": fmt.cost,
}
SIMULATED_COST = (
    "Their costs are the lineup's list prices times simulated token counts, not a real "
    "model's bill."
)


def replicated(board: pd.DataFrame) -> bool:
    """Whether any family fields several agents in one cohort (a frame stored before
    replicates existed has no such column)."""
    return "agent_replicates" in board and bool((board["agent_replicates"] > 1).any())


# Methodology v2 shows Brier as a diagnostic only. Under the original's rules it ranks by dollar
# P/L summed over cohorts: P/L first, return beside it. Its frozen-quotes cohorts rank by
# portfolio value per dollar of capital (their return): the value first.
PNL_COLUMN = (
    "pnl",
    "P/L [95% CI]",
    250,
    "Dollar P/L summed over its cohorts, marked to market: what v2 ranks on, as the original's "
    "aggregate leaderboard does.",
)
VALUE_COLUMN = (
    "portfolio_value",
    "Portfolio value",
    128,
    "Cash plus positions marked at order-book midpoints, summed over its cohorts: what these "
    "v2 cohorts rank on (per dollar of capital given, i.e. its return).",
)
VALUE_BESIDE = (
    "portfolio_value",
    "Portfolio value",
    128,
    "Cash plus positions marked at order-book midpoints, summed over its cohorts: its capital "
    "plus its P/L.",
)
V2_BRIER = (
    "brier_text",
    "Brier (diagnostic)",
    150,
    "Mean squared error of implied confidence; v2 does not rank on it.",
)
PNL_RANK = ("rank_text", "Rank [95% CI]", 100, "Rank by summed P/L (1 = best) and its interval.")
PNL_FIRST = (
    "first",
    "P(rank #1)",
    88,
    "Share of bootstrap replicates in which it has the best summed P/L among the model "
    "families. Baselines are reference rows, never contenders.",
)


def table_columns(board: pd.DataFrame, rules: str = "v1") -> list[tuple[str, str, int, str | None]]:
    """`COLUMNS` under protocol rules `rules` (`scope.rule_key`): v2 under the original's
    rules P/L first (what it ranks on), then return, value and Brier as a diagnostic; v2
    frozen-quotes portfolio value first; with the replicate spread after Return when the
    scope has replicates."""
    columns = list(COLUMNS)
    if rules == "v2":
        rest = [c for c in columns[5:] if c[0] != "total_pnl"]
        columns = [columns[0], PNL_COLUMN, columns[1], VALUE_BESIDE, V2_BRIER, PNL_RANK]
        columns += [PNL_FIRST, *rest]
    elif key_version(rules) == "v2":
        columns = [columns[0], VALUE_COLUMN, columns[1], V2_BRIER, *columns[3:]]
    if not replicated(board):
        return columns
    at = [key for key, *_ in columns].index("return") + 1
    return [*columns[:at], SPREAD_COLUMN, *columns[at:]]


def first_texts(board: pd.DataFrame) -> list[str]:
    """Each family's P(rank #1) among the model families; "reference" for a baseline ("—"
    for a model where a frame stored before the figure has none)."""
    pairs = zip(board["kind"], board["p_rank_1_contenders"], strict=True)
    return [fmt.share(p, 1) if kind == CONTENDER_KIND else REFERENCE for kind, p in pairs]


def realised_texts(board: pd.DataFrame) -> list[str]:
    """Each family's "62% resolved · 38% marked" ("—" where the board has no split)."""
    if "resolved_share" not in board:
        return ["—"] * len(board)
    pairs = zip(board["resolved_share"], board["marked_share"], strict=True)
    return [fmt.realised_split(resolved, marked) for resolved, marked in pairs]


def display(board: pd.DataFrame, rules: str = "v1") -> pd.DataFrame:
    """The table a person reads: display names, each interval one "value [low, high]" text.
    `board` carries the edge columns (`with_edge`)."""

    def interval(writer: Callable[..., str], value: str, prefix: str, **kw: Any) -> list[str]:
        rows = zip(board[value], board[f"{prefix}_low"], board[f"{prefix}_high"], strict=True)
        return [writer(v, low, high, **kw) for v, low, high in rows]

    texts = {
        "family": board["display_name"].tolist(),
        "return": interval(fmt.pct_interval, "return_pct", "return_ci"),
        "brier_text": interval(fmt.prob_interval, "brier", "brier_ci"),
        "rank_text": interval(fmt.rank_interval, "rank", "rank"),
        "first": first_texts(board),
        "edge": interval(fmt.prob_interval, "edge_over_market", "edge_over_market_ci", signed=True),
        "status": ["too early to rank" if early else "" for early in board["too_early"]],
        "realised": realised_texts(board),
        "execution_flag": [
            "rank not robust" if flag is True else "" for flag in board["execution_not_robust"]
        ]
        if "execution_not_robust" in board
        else [""] * len(board),
    }
    if replicated(board):
        texts["spread"] = interval(fmt.replicate_range, "agent_replicates", "replicate_return")
    if key_version(rules) == "v2":
        texts["portfolio_value"] = portfolio_value(board).tolist()
        texts["pnl"] = interval(fmt.money_interval, "total_pnl", "pnl_ci")
    columns = [key for key, *_ in table_columns(board, rules)]
    return board.assign(**texts)[columns].reset_index(drop=True)


def front_text(cost: pd.DataFrame) -> list[str]:
    """Where each family stands against the Pareto front, in words (baselines say why not)."""
    texts = []
    for kind, paid, pareto, skill in zip(
        cost["kind"], cost["paid"], cost["pareto"], cost["skill_vs_market"], strict=True
    ):
        if pareto:
            texts.append("on the front")
        elif kind == "baseline":
            texts.append("reference ($0)")
        elif not paid:
            texts.append("no spend yet")
        elif fmt.missing(skill):
            texts.append("no skill yet")
        else:
            texts.append("dominated")
    return texts


def display_cost(cost: pd.DataFrame) -> pd.DataFrame:
    """The Cost table a person reads: display names, each per-dollar figure with its interval
    as one text ("—" where nothing was spent)."""

    def interval(prefix: str) -> list[str]:
        rows = zip(cost[prefix], cost[f"{prefix}_ci_low"], cost[f"{prefix}_ci_high"], strict=True)
        return [fmt.rate_interval(v, low, high) for v, low, high in rows]

    texts = {
        "family": cost["display_name"].tolist(),
        "return_per_dollar": interval("return_per_dollar"),
        "edge_per_dollar": interval("edge_per_dollar"),
        "front": front_text(cost),
    }
    return cost.assign(**texts)[[key for key, *_ in COST_TABLE]].reset_index(drop=True)


def cost_section(board: pd.DataFrame, scope: str) -> None:
    """Cost against skill: the Pareto chart, the per-decision and per-dollar table, its CSV
    (all derived from the leaderboard frame already read: no other query, no bootstrap)."""
    # Altair loads here, as for the curves (`portfolio.curve_section`): on a cold server its import
    # takes seconds, and the title and the table are on screen before it.
    from arena.dashboard.charts import cost as cost_charts

    cost = cost_frame(board)
    with st.container(key="cost"):
        st.subheader("Cost")
        spend_section(cost, scope)
        st.caption(
            "The edge over the market (the market price's Brier minus the family's, as in the "
            "table: up is better) by API cost per decision, with 95% intervals; the dashed "
            "line is the market price's own, 0. "
            "A family is on the **Pareto front** (ringed, joined by the step line) when no "
            "other paying family is at least as cheap and at least as skilled, and better on "
            "one; the front runs through the "
            "point estimates, so where intervals overlap the order may not be real. Baselines "
            "call no model: grey points at \\$0, never on the front."
        )
        notices.simulated_notice(
            [str(f) for f in cost.loc[cost["paid"], "family_id"]], SIMULATED_COST
        )
        tables.chart(cost_charts.cost_pareto, cost)
        shown, formats = fmt.readable(display_cost(cost), COST_FORMATS)
        tables.table(
            shown,
            key="leaderboard-cost",
            reference=cost["kind"] == "baseline",
            grey=cost["too_early"],
            formats=formats,
            column_config={
                key: st.column_config.Column(
                    label,
                    width=width,
                    help=help,
                    pinned=key == "family",
                    # dollars line up even where a gap made the column text ("—")
                    alignment="right" if key in COST_FORMATS else None,
                )
                for key, label, width, help in COST_TABLE
            },
        )
        st.caption(
            "**API spend**: the stored cost of every call of its finished decisions, retries "
            "included. **Per \\$**: the return (in percentage points) or the edge over the "
            "market (up is better) divided by that spend; its interval is the statistic's 95% "
            "interval divided by the same spend, a fixed number, not an estimate. Undefined "
            "(—) for the baselines, "
            f"which spend nothing ([statistics]({STATS}))."
        )
        tables.download_csv(
            cost[list(COST_COLUMNS)], f"leaderboard-cost-{scope}", label="Download cost CSV"
        )


def spend_section(cost: pd.DataFrame, scope: str) -> None:
    """The scope's API spend in one figure, beside how many families paid it."""
    paid = int(cost["paid"].sum()) if len(cost) else 0
    if scope.startswith("cohort-"):
        where = scope.replace("cohort-", "cohort ")
    else:
        where = "all cohorts" if scope == "all" else f"all {scope} cohorts"
    st.metric(
        f"API spend, {where}",
        fmt.money(scope_spend(cost)),
        help="The stored cost of every model call of the finished decisions in scope, "
        "retries included; the table below splits it by family.",
    )
    st.caption(
        f"Spent by {fmt.count(paid)} model "
        f"famil{'y' if paid == 1 else 'ies'}; the baselines call no model (\\$0)."
    )


def board_table(board: pd.DataFrame, rules: str, key: str, leave_out: tuple[str, ...] = ()) -> None:
    """A leaderboard as a person reads it (`display` under protocol rules `rules`), without
    the columns `leave_out`."""
    shown = [c for c in table_columns(board, rules) if c[0] not in leave_out]
    tables.table(
        display(board, rules).drop(columns=list(leave_out), errors="ignore"),
        key=key,
        reference=board["kind"] == "baseline",
        grey=board["too_early"],
        formats={**FORMATS, "portfolio_value": fmt.money},
        column_config={
            name: st.column_config.Column(label, width=width, help=help, pinned=name == "family")
            for name, label, width, help in shown
        },
    )


NULL_COLUMN = "random_null_percentile"
NOT_LATE = (NULL_COLUMN, "realised")  # columns the late-entry board does not compute


def late_section(cohort: int | None, methodology: str | None) -> None:
    """Late entrants on the same cohorts (methodology §20), when the protocol shown (or the
    chosen cohort) has any: the incumbents of those cohorts and the late entrants, ranked on
    those cohorts alone with the main table's intervals and P(rank #1), and its own CSV."""
    entries = reads.read(late_entries, None if cohort is not None else (methodology or "v1"))
    if cohort is not None:
        entries = entries[entries["cohort_number"] == cohort]
    if entries.empty:
        return
    protocol = str(entries["protocol"].iloc[0])
    rules = rule_key(protocol)  # the originals' rules rank the late entrants beside them
    board = reads.read(
        leaderboard, cohort=cohort, methodology=protocol, late_entry=True, null_seeds=0
    )
    board = with_edge(with_late_columns(ranked(board.reset_index(drop=True), rules), entries))
    with st.container(key="late-entrants"):
        st.subheader("Late entrants on the same cohorts")
        st.caption(
            cohort_sentence(entries)
            + " Each late entrant is ranked as its own row, on those cohorts alone, paired "
            "with their incumbents by cohort (the same events resampled for both); it is never "
            f"pooled with the live table above ([late entry]({LATE_ENTRY})). "
            + marks_sentence(reads.read(mark_sources, entries))
        )
        # no random null (computed here without its seeds) nor realised split (not read here)
        board_table(board, rules, "leaderboard-late-table", leave_out=NOT_LATE)
        late_csv = [
            c for c in CSV_COLUMNS if c in board and c not in (NULL_COLUMN, *NEW_CSV_COLUMNS)
        ]
        tables.download_csv(
            board[[*late_csv, "late_entry", "contaminated", *NEW_CSV_COLUMNS]],
            f"leaderboard-late-{cohort if cohort is not None else protocol}",
            label="Download late-entry CSV",
        )


st.title("Leaderboard")
st.caption(
    "**Return** is P/L over the capital given, summed over a family's cohorts; **Brier** the "
    "mean squared error of its implied confidence (lower is better); **edge over market** the "
    "market price's Brier minus its own on the same bets (↑ positive beats the market; the CSV "
    "also keeps `skill_vs_market`, its negative); the "
    f"**random null** ranks its return among {DEFAULT_NULL_SEEDS} random traders on the same "
    f"markets ([scoring]({SCORING})). Brackets are 95% cluster-bootstrap intervals over events and "
    "**P(rank #1)** the share of bootstrap replicates in which it has the best return among "
    f"the model families ([statistics]({STATS})); baselines (the oracle, which sees the "
    "simulated world's hidden truth, among them) are tinted reference rows that never contend "
    "for rank #1, families with fewer than "
    f"{DEFAULT_MIN_RESOLVED} resolved bets greyed (too early to rank), not hidden."
)

numbers = picks.cohorts_or_stop()

pick, link = st.columns([1, 3], vertical_alignment="bottom")
cohort = picks.cohort_link(numbers, container=pick)
methodology = picks.methodology_link()  # in the sidebar; a bad cohort link is named first
# The rules the table is read under: the chosen cohort's own protocol, else the selector's.
chosen = reads.read(cohort_protocol, cohort) if cohort is not None else methodology
version = key_version(chosen) if chosen else "v1"  # a protocol group: its version's rules
rules = rule_key(chosen) if chosen else "v1"  # what it ranks on (v2: its rule set's)
picks.version_caption(methodology, cohort)
if version == "v1":
    notices.left_out_note(cohort, methodology=methodology)
link.page_link(
    "app_pages/compare.py",
    label="Compare two families",
    icon=":material/compare_arrows:",
    query_params={"cohort": str(cohort)} if cohort is not None else None,
)
result = reads.stored_or_offer(
    "leaderboard", "leaderboard", cohort=cohort, methodology=methodology if cohort is None else None
)
if result is not None:
    board, stored = result
    if board.empty:
        notices.nothing_yet(NO_AGENT if cohort is not None else NO_SCOPE_AGENT)
    board = with_edge(ranked(board.reset_index(drop=True), rules))
    from arena.analytics.stored import execution_flags  # the analyses: only when shown

    flags = reads.read(
        execution_flags,
        cohort,
        None if cohort is not None else methodology,
        live_if_missing=stored is None,  # computed now only when the leaderboard was
    )
    board = with_flags(board, flags)
    # Beside the (maybe stored) frame: a read of milliseconds, for the same scope.
    # (The scope as the stored frame's: a cohort alone, else the selector's version, if any.)
    scope_version = picks.scoped(methodology if cohort is None else None)
    board = with_realised(board, reads.read(realised_by_family, cohort, **scope_version))
    reads.stored_caption(stored)
    notices.simulated_notice([str(f) for f in board["family_id"]])
    board_table(board, rules, "leaderboard-table")
    if version == "v2":
        objective = (
            "by dollar P/L summed over cohorts, as the original's aggregate leaderboard does "
            "(the rank, its interval and P(rank #1) follow it; return is the column beside it)"
            if rules == "v2"
            else "by portfolio value (cash plus positions marked at order-book midpoints) on "
            "the capital given, i.e. by return: these cohorts ran v2's frozen-quotes rules"
        )
        st.caption(
            f"**Methodology v2** ranks {objective}; Brier is shown as a diagnostic only "
            f"([methodology v2]({documents.doc_link('methodology-v2')}))."
        )
    plain = methodology in (None, "v1")
    scope = f"cohort-{cohort}" if cohort is not None else "all" if plain else str(methodology)
    tables.download_csv(board[[c for c in CSV_COLUMNS if c in board]], f"leaderboard-{scope}")
    cost_section(board, scope)

late_section(cohort, methodology)

st.subheader("Portfolio over time")
# Across cohorts the summed curves are the selector's version's own, never v1's and v2's mixed.
summed = methodology if cohort is None and methodology not in (None, "v1") else None
portfolio.curve_section(
    f"leaderboard-{summed}" if summed else "leaderboard", cohort=cohort, methodology=summed
)
