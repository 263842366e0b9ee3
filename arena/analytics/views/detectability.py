"""The "When will we know?" read model: for every comparison the leaderboard implies, whether
its difference is separable now (the two-sided 5% test rejects), the smallest difference it
can detect with 80% power, and how many more cohorts an observed gap would need for that.

Why one bootstrap draw: the pair figures are standard errors of A − B over the replicates of
the leaderboard's own paired cluster bootstrap (`family_bootstrap`): one draw resamples the same
events for every family, so A − B is paired and market difficulty cancels out of its SE.

Three comparisons, each a row per metric (long format: one stored frame, stable ids):

- ``pair``: family A − family B, return (pp) and Brier, on the cohorts both entered (k): their
  values, difference and SE all rest on those cohorts alone.
- ``market``: the family against the market. Return against 0 (a trader at the market's own
  prices expects nothing); Brier as skill vs market (family Brier − the market price's Brier on
  the same bets, the leaderboard's ``skill_vs_market`` replicates). k = the family's cohorts.
- ``null``: the family's return against the random null's mean return on the family's cohorts;
  SE = the null's spread (sd of the random traders' returns there, what the leaderboard's
  percentile compares against). A random trader is one agent, its return on one agent's
  capital per cohort (`random_null.trader_returns`), whatever the family's replicates. No
  Brier row: the null replays P/L only (`null_replay` draws legs and settles them; it records
  no implied confidence, so it has no Brier).

The arithmetic is `arena.core.detectability`: separable now (the two-sided 5% test rejects:
p ≤ 0.05), the MDE (the gap that test detects with 80% power) and the cohorts needed to reach
it. `judged` applies today's rule to a stored frame.
"""

import math
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from arena.analytics.query.selects import ratio
from arena.analytics.stats.bootstrap import FamilyBootstrap, family_bootstrap
from arena.analytics.stats.random_null import (
    DEFAULT_NULL_SEEDS,
    agent_capital,
    database_random_null,
    trader_returns,
)
from arena.config import METHODOLOGY_VERSION
from arena.core import stats
from arena.core.detectability import (
    NO_GAP,
    NOT_YET,
    SEPARABLE,
    SPOKEN_LIMIT,
    Detectability,
    detectability,
    p_text,
    projection_words,
    z_sum,
    z_test,
)

DETECTABILITY_COLUMNS: tuple[str, ...] = (
    "comparison",  # pair | market | null
    "family_a",
    "family_b",  # a family id, "market" or "random-null"
    "name_a",
    "name_b",
    "kind_a",
    "kind_b",
    "metric",  # return (pp) | brier
    "value_a",
    "value_b",
    "difference",
    "se",
    "mde",
    "detectable",
    "cohorts",
    "cohorts_needed",
    "more_cohorts",
    "verdict",  # separable | not_yet | no_gap | unknown
    "sentence",
    "p_value",  # two-sided, normal: separable ⇔ p ≤ 0.05
)
# The figures judged from (difference, se, cohorts) by `arena.core.detectability` (`judged`).
JUDGED_COLUMNS = (
    "se",
    "mde",
    "detectable",
    "cohorts_needed",
    "more_cohorts",
    "verdict",
    "sentence",
    "p_value",
)
MARKET = "market"
NULL = "random-null"
NAMES = {MARKET: "the market", NULL: "random traders"}


def replicate_se(replicates: np.ndarray) -> float:
    """The sd (ddof 1) of the finite replicates; NaN with fewer than two."""
    finite = replicates[np.isfinite(replicates)]
    return float(np.std(finite, ddof=1)) if finite.size >= 2 else math.nan


def _resamplable(fb: FamilyBootstrap) -> bool:
    """Whether the draw varies at all: some cohort holds two clusters (events) or more. With
    one cluster per cohort every replicate equals the data and every SE would be 0."""
    _, counts = np.unique(fb.boot.stratum_of, return_counts=True)
    return bool(counts.size) and int(counts.max()) >= 2


def _se(replicates: np.ndarray, column: int) -> float:
    return replicate_se(replicates[:, column])


def difference_text(metric: str, value: float) -> str:
    """A difference as the page shows it: "+3.1 pp" (return), "−0.012" (Brier)."""
    if math.isnan(value):
        return "—"
    text = f"{value:+.1f} pp" if metric == "return" else f"{value:+.3f}"
    return text.replace("-", "−")


def _judgement(
    names: tuple[str, str], metric: str, difference: float, se: float, cohorts: int
) -> dict[str, object]:
    """The `JUDGED_COLUMNS` of one comparison (`names`: A's and B's display names)."""
    found: Detectability = detectability(difference, se, cohorts)
    return {
        "se": found.se,
        "mde": found.mde,
        "detectable": found.detectable,
        "cohorts_needed": found.cohorts_needed,
        "more_cohorts": found.more_cohorts,
        "verdict": found.verdict,
        "sentence": f"{names[0]} vs {names[1]} ({metric} {difference_text(metric, difference)}): "
        + projection_words(found.verdict, found.more_cohorts, found.p_value),
        "p_value": found.p_value,
    }


def _row(
    comparison: str,
    a: tuple[str, str, str],
    b: tuple[str, str, str],
    metric: str,
    values: tuple[float, float],
    se: float,
    cohorts: int,
) -> dict[str, object]:
    """One comparison's row: a / b are (id, display name, kind)."""
    difference = values[0] - values[1]
    if math.isnan(difference) or (se == 0 and difference != 0):
        # Nothing observed yet, or a draw whose replicates never vary (one event behind the
        # figure): unknown, never "no gap" nor a "separable" resting on an SE of 0.
        se = math.nan
    return {
        "comparison": comparison,
        "family_a": a[0],
        "family_b": b[0],
        "name_a": a[1],
        "name_b": b[1],
        "kind_a": a[2],
        "kind_b": b[2],
        "metric": metric,
        "value_a": values[0],
        "value_b": values[1],
        "difference": difference,
        "cohorts": cohorts,
        **_judgement((a[1], b[1]), metric, difference, se, cohorts),
    }


def judged(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (a `detectability_frame`, perhaps stored) with its `JUDGED_COLUMNS` judged
    again from its differences, SEs and cohorts by today's `arena.core.detectability`: a
    frame stored under an earlier rule (a completed cohort's is stored once and kept) reads
    as one computed now. Columns in `DETECTABILITY_COLUMNS` order."""
    rows = [
        _judgement((a, b), metric, difference, se, int(cohorts))
        for a, b, metric, difference, se, cohorts in zip(
            frame["name_a"],
            frame["name_b"],
            frame["metric"],
            frame["difference"],
            frame["se"],
            frame["cohorts"],
            strict=True,
        )
    ]
    again = pd.DataFrame(rows, columns=list(JUDGED_COLUMNS), index=frame.index)
    out = frame.drop(columns=[c for c in JUDGED_COLUMNS if c in frame]).join(again)
    out["detectable"] = out["detectable"].astype(bool)
    return out[list(DETECTABILITY_COLUMNS)]


@dataclass(frozen=True)
class _Figures:
    """Each family's return (%) and Brier over a set of cohorts, and their replicates."""

    return_pct: np.ndarray  # (F,)
    returns: np.ndarray  # (B × F)
    brier: np.ndarray  # (F,)
    brier_reps: np.ndarray  # (B × F)


def _figures(fb: FamilyBootstrap, cohort_ids: frozenset[int] | None = None) -> _Figures:
    """The figures over every cohort in scope (None), or over the cohort ids given (a pair's
    shared cohorts): P/L and capital of those cohorts only, Brier rows of their clusters only,
    from the same draw."""
    s, boot = fb.sums, fb.boot
    if cohort_ids is None:
        pnl, capital, mask = fb.head["pnl"].to_numpy(), fb.head["capital"].to_numpy(), None
    else:
        books = fb.books[fb.books["cohort_id"].isin(list(cohort_ids))]
        sums = books.groupby("family_id")[["pnl", "capital"]].sum().reindex(fb.families)
        pnl, capital = sums["pnl"].to_numpy(), sums["capital"].to_numpy()
        mask = fb.in_cohorts(cohort_ids)[:, None]
    brier_sum, brier_n = s["brier_sum"], s["brier_n"]
    if mask is not None:
        brier_sum, brier_n = brier_sum * mask, brier_n * mask
    with np.errstate(divide="ignore", invalid="ignore"):  # a family outside those cohorts
        returns = fb.pnl_replicates(cohort_ids) / capital * 100.0
        return_pct = pnl / capital * 100.0
    return _Figures(
        return_pct,
        returns,
        ratio(brier_sum.sum(axis=0), brier_n.sum(axis=0)),
        boot.ratio(brier_sum, brier_n),
    )


def _pair_rows(fb: FamilyBootstrap, order: list[int]) -> Iterator[dict[str, object]]:
    """Every pair, on the cohorts both families entered: k counts them, and the difference
    and its SE are taken on them alone (a cohort only one of the two entered says nothing
    about the pair). The better return on those cohorts is A."""
    resamplable = _resamplable(fb)
    who = [(f, *fb.names.get(f, (f, "llm"))) for f in fb.families]
    ids = fb.data.agents.groupby("family_id")["cohort_id"].agg(lambda c: frozenset(map(int, c)))
    everything = _figures(fb)
    on_shared: dict[frozenset[int], _Figures] = {}
    for i, j in combinations(order, 2):
        mine, theirs = ids[fb.families[i]], ids[fb.families[j]]
        shared = mine & theirs
        if mine != theirs and shared not in on_shared:
            on_shared[shared] = _figures(fb, shared)
        found = everything if mine == theirs else on_shared[shared]
        if found.return_pct[j] > found.return_pct[i]:
            i, j = j, i
        for metric, observed, reps in (
            ("return", found.return_pct, found.returns),
            ("brier", found.brier, found.brier_reps),
        ):
            se = replicate_se(reps[:, i] - reps[:, j]) if resamplable else math.nan
            values = (observed[i], observed[j])
            yield _row("pair", who[i], who[j], metric, values, se, len(shared))


def _family_rows(
    fb: FamilyBootstrap, null_seeds: int, engine: Engine, scope: dict
) -> Iterator[dict[str, object]]:
    """Every pair, then each family against the market and the null."""
    s, boot = fb.sums, fb.boot
    resamplable = _resamplable(fb)
    capital = fb.head["capital"].to_numpy()
    returns = fb.pnl_replicates() / capital * 100.0
    return_pct = fb.head["pnl"].to_numpy() / capital * 100.0
    skill_reps = boot.ratio(s["skill_family_sum"] - s["skill_market_sum"], s["skill_n"])
    totals = {name: matrix.sum(axis=0) for name, matrix in s.items()}
    on_bets = ratio(totals["skill_family_sum"], totals["skill_n"])  # its Brier on priced bets
    market_brier = ratio(totals["skill_market_sum"], totals["skill_n"])
    entered = fb.data.agents.groupby("family_id")["cohort_number"].agg(lambda c: set(map(int, c)))
    who = [(f, *fb.names.get(f, (f, "llm"))) for f in fb.families]
    # Best return first (ties by id), so a pair reads "better vs worse" on return.
    order = sorted(range(len(who)), key=lambda i: (-return_pct[i], who[i][0]))
    yield from _pair_rows(fb, order)
    market = (MARKET, NAMES[MARKET], "reference")
    if not resamplable:  # every SE below would be a zero that means nothing
        returns, skill_reps = np.full_like(returns, np.nan), np.full_like(skill_reps, np.nan)
    for i in order:
        k = len(entered[fb.families[i]])
        yield _row("market", who[i], market, "return", (return_pct[i], 0.0), _se(returns, i), k)
        yield _row(
            "market", who[i], market, "brier", (on_bets[i], market_brier[i]), _se(skill_reps, i), k
        )
    yield from _null_rows(
        fb, entered, [who[i] for i in order], return_pct[order], null_seeds, engine, scope
    )


def _null_rows(
    fb: FamilyBootstrap,
    entered: pd.Series,
    who: list[tuple[str, str, str]],
    return_pct: np.ndarray,
    null_seeds: int,
    engine: Engine,
    scope: dict[str, Any],
) -> Iterator[dict[str, object]]:
    """Each family's return against the random traders' on its own cohorts (none: no seeds)."""
    if null_seeds <= 0:
        return
    null = database_random_null(engine, seeds=range(null_seeds), **scope)
    if null.empty:
        return
    pnl = null.pivot(index="seed", columns="cohort_number", values="pnl")
    reference = (NULL, NAMES[NULL], "reference")
    # One null trader is one agent: its return is on one agent's capital per cohort, the scale
    # of the family's own (pooled P/L over pooled capital: its agents' mean return).
    capital = agent_capital(fb.data.agents)
    for i, (family, _, _) in enumerate(who):
        traders = trader_returns(pnl, entered[family], float(capital[family]))
        if traders is None:
            continue
        seen = sum(1 for n in entered[family] if n in pnl.columns)
        values = (float(return_pct[i]), float(traders.mean()))
        yield _row("null", who[i], reference, "return", values, replicate_se(traders), seen)


def detectability_frame(
    engine: Engine,
    *,
    cohort: int | None = None,
    methodology: str = METHODOLOGY_VERSION,
    replicates: int = stats.DEFAULT_REPLICATES,
    seed: int = 0,
    null_seeds: int = DEFAULT_NULL_SEEDS,
) -> pd.DataFrame:
    """Every comparison's figures on a scope (cohort number `cohort`, or every cohort of
    `methodology`: a version or a protocol group's key), columns `DETECTABILITY_COLUMNS`:
    pairs in leaderboard-family order, then each family against the market, then against the
    null. Unknown cohort or group → InputError."""
    fb = family_bootstrap(
        engine, cohort=cohort, methodology=methodology, replicates=replicates, seed=seed
    )
    scope = {"cohort": cohort, "methodology": methodology}
    rows = list(_family_rows(fb, null_seeds, engine, scope)) if fb.families else []
    frame = pd.DataFrame(rows, columns=list(DETECTABILITY_COLUMNS))
    for column in ("cohorts",):
        frame[column] = frame[column].astype("int64")
    frame["detectable"] = frame["detectable"].astype(bool)
    return frame


def pair_sentences(frame: pd.DataFrame, models_only: bool | None = None) -> list[str]:
    """One sentence per pair, on return, with Brier's verdict after it: "GPT-5.2 vs Claude
    Opus 4.5: not separable yet (return +3.1 pp, p = 0.210); about 14 more weekly cohorts if
    the gap holds; Brier: no gap to detect". `models_only` True: pairs of two LLM families;
    False: pairs with a baseline; None: every pair."""
    pairs = frame[frame["comparison"] == "pair"]
    if models_only is not None:
        both = (pairs["kind_a"] == "llm") & (pairs["kind_b"] == "llm")
        pairs = pairs[both if models_only else ~both]
    out = []
    for _, group in pairs.groupby(["family_a", "family_b"], sort=False):
        by = {row.metric: row for row in group.itertuples(index=False)}
        head = by.get("return")
        if head is None:
            continue
        about = f"return {difference_text('return', head.difference)}"
        words = projection_words(head.verdict, head.more_cohorts, _p(head), about)
        text = f"{head.name_a} vs {head.name_b}: {words}"
        brier = by.get("brier")
        if brier is not None:
            text += f"; Brier: {projection_words(brier.verdict, brier.more_cohorts, _p(brier))}"
        out.append(text)
    return out


def _p(row: Any) -> float:
    """A row's p-value (NaN in a frame stored before it was one: `judged` gives it)."""
    return float(getattr(row, "p_value", math.nan))


# --------------------------------------------------------------------------------------------
# Presentation: the page's and the CLI's text (the CSV keeps the raw columns)

METRIC_NAMES = {"return": "Return", "brier": "Brier"}


def size_text(metric: str, value: float) -> str:
    """An SE or MDE: "3.1 pp" (return), "0.012" (Brier), "—" when there is none."""
    if math.isnan(value):
        return "—"
    return f"{value:.1f} pp" if metric == "return" else f"{value:.3f}"


def verdict_text(verdict: str, more_cohorts: float) -> str:
    """The table's verdict: "separable now" (the 5% test rejects), "14 more cohorts" (it does
    not; what the gap would need if it holds), "no gap", "—" (unknown)."""
    if verdict == SEPARABLE:
        return "separable now"
    if verdict == NOT_YET:
        if more_cohorts > SPOKEN_LIMIT:
            return "over 10 years"
        more = int(more_cohorts)
        return f"{more:,} more cohort" + ("" if more == 1 else "s")
    return "no gap" if verdict == NO_GAP else "—"


def display(frame: pd.DataFrame, comparison: str) -> pd.DataFrame:
    """The rows of one comparison (``pair``, or ``market`` and ``null`` together: pass
    ``reference``) as text columns: who, metric, difference, SE, p, verdict, MDE, cohorts."""
    wanted = ("market", "null") if comparison == "reference" else (comparison,)
    rows = frame[frame["comparison"].isin(wanted)]
    return pd.DataFrame(
        {
            "family_id": rows["family_a"].to_numpy(),
            "kind": rows["kind_a"].to_numpy(),
            "who": (rows["name_a"] + " vs " + rows["name_b"]).to_numpy()
            if comparison == "pair"
            else rows["name_a"].to_numpy(),
            "against": rows["name_b"].to_numpy(),
            "metric": [METRIC_NAMES[m] for m in rows["metric"]],
            "difference": [
                difference_text(m, v)
                for m, v in zip(rows["metric"], rows["difference"], strict=True)
            ],
            "se": [size_text(m, v) for m, v in zip(rows["metric"], rows["se"], strict=True)],
            "p": [p_text(p, named=False) or "—" for p in rows["p_value"]],
            "verdict": [
                verdict_text(v, n)
                for v, n in zip(rows["verdict"], rows["more_cohorts"], strict=True)
            ],
            "mde": [size_text(m, v) for m, v in zip(rows["metric"], rows["mde"], strict=True)],
            "cohorts": rows["cohorts"].to_numpy(),
        }
    )


def write_detectability_csv(frame: pd.DataFrame, handle: Any) -> None:
    """The frame as CSV (`DETECTABILITY_COLUMNS`, raw numbers): floats with 6 decimals, NaN as
    an empty cell, booleans as true/false, text cells formula-safe."""
    import csv

    from arena.core.csvsafe import cell

    def written(value: Any) -> Any:
        if isinstance(value, float | np.floating):
            return "" if np.isnan(value) else f"{float(value):.6f}"
        if isinstance(value, bool | np.bool_):
            return "true" if value else "false"
        return cell(int(value) if isinstance(value, np.integer) else value)

    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(DETECTABILITY_COLUMNS)
    for row in frame[list(DETECTABILITY_COLUMNS)].itertuples(index=False, name=None):
        writer.writerow([written(v) for v in row])


def detectability_table(frame: pd.DataFrame, title: str) -> Any:
    """A rich Table of every comparison (the page's two tables in one), text escaped."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from arena.core.text import printable

    table = Table(
        title=title,
        caption=f"separable now: the two-sided 5% test rejects (|difference| ≥ {z_test():.2f} "
        f"× SE, p ≤ 0.05); otherwise the more cohorts a gap that holds would need to reach "
        f"the MDE = {z_sum():.4f} × SE (the gap a 5% test detects with 80% power), the SE "
        "shrinking as 1/√cohorts",
        box=box.SIMPLE_HEAD,
    )
    right = ("SE", "p", "MDE", "cohorts")
    for name in ("comparison", "A", "B", "metric", "difference", "SE", "p", "when", "MDE"):
        table.add_column(name, justify="right" if name in right else "left")
    table.add_column("cohorts", justify="right")
    for row in frame.itertuples(index=False):
        table.add_row(
            row.comparison,
            escape(printable(str(row.name_a))),
            escape(printable(str(row.name_b))),
            row.metric,
            difference_text(row.metric, row.difference),
            size_text(row.metric, row.se),
            p_text(_p(row), named=False) or "—",
            verdict_text(row.verdict, row.more_cohorts),
            size_text(row.metric, row.mde),
            str(row.cohorts),
        )
    return table
