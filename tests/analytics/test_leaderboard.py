"""The leaderboard read model on SQLite and PostgreSQL: hand-computed books, brute-force
bootstrap replicates, a season played through the engine, the random null and the CLI."""

import io
import math
import random
from decimal import Decimal as D
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.baselines import RANDOM_KEY, BaselineInput, random_legs, random_strategy
from arena.agents.prompts import PortfolioView, PromptMarket
from arena.analytics.stats import leaderboard as lb
from arena.analytics.stats import paired, random_null
from arena.analytics.stats.bootstrap import family_bootstrap
from arena.analytics.stats.null_replay import candidate
from arena.analytics.stats.one_run import one_run
from arena.app.cli import main
from arena.core import stats
from arena.core.errors import InputError
from arena.storage.db import session_scope
from arena.storage.models import Agent, BrierScore, Cohort, PortfolioSnapshot, Position
from tests.analytics import SEASON_SEED, build_book, season_fixture
from tests.factories import WEEK1

season = season_fixture()
REPLICATES = 2000


# --------------------------------------------------------------------------------------------
# A small book computed by hand


@pytest.fixture
def book(engine: Engine) -> Engine:
    build_book(engine)
    return engine


def row(frame: pd.DataFrame, family_id: str) -> pd.Series:
    return frame.set_index("family_id").loc[family_id]


def test_point_estimates_by_hand(book: Engine) -> None:
    frame = lb.leaderboard(book, replicates=REPLICATES, seed=0)
    assert list(frame.columns) == list(lb.LEADERBOARD_COLUMNS)
    assert list(frame["family_id"]) == ["m-a", "baseline-cash", "m-b"]
    a, b, cash = row(frame, "m-a"), row(frame, "m-b"), row(frame, "baseline-cash")
    # A: m1 +750, m2 −200, m4 +150 marked (1000 Blue at 0.45 vs 300 paid); cohort 2: m3 +25
    assert (a["cohorts"], a["capital"]) == (2, 20000.0)
    assert a["total_pnl"] == pytest.approx(725.0, abs=1e-6)
    assert a["return_pct"] == pytest.approx(3.625) and a["mtm_return_pct"] == a["return_pct"]
    assert a["resolved_only_return_pct"] == pytest.approx(575 / 20000 * 100)
    assert a["unresolved_share"] == pytest.approx(450 / (10700 + 10025))
    # B: m1 −1000, m3 +25, nothing in cohort 2
    assert b["total_pnl"] == pytest.approx(-975.0, abs=1e-6)
    assert b["return_pct"] == pytest.approx(-4.875)
    assert cash["total_pnl"] == 0.0 and math.isnan(cash["brier"]) and cash["bets"] == 0

    # implied confidences 500/2500, 200/2375, 100/2500 (A); 1000/2500, 100/2250 (B)
    a_rows = [(0.2 - 1) ** 2, (200 / 2375) ** 2, (100 / 2500 - 1) ** 2]
    b_rows = [0.4**2, (100 / 2250 - 1) ** 2]
    assert a["brier"] == pytest.approx(sum(a_rows) / 3)
    assert b["brier"] == pytest.approx(sum(b_rows) / 2)
    assert (a["resolved_bets"], b["resolved_bets"], a["bets"], b["bets"]) == (3, 2, 4, 2)
    assert a["win_rate"] == pytest.approx(2 / 3) and b["win_rate"] == pytest.approx(0.5)
    # the market's Brier on the same bets: prices 0.4 (won), 0.3 (lost), 0.8 (won) for A
    assert a["market_brier"] == pytest.approx((0.36 + 0.09 + 0.04) / 3)
    assert b["market_brier"] == pytest.approx((0.36 + 0.04) / 2)
    assert a["skill_vs_market"] == pytest.approx(a["brier"] - a["market_brier"])
    assert a["skill_bets"] == 3
    # A backed the underdog in m1, m2 and m4 (named, no frozen universe: price < 0.5)
    assert a["against_favourite_share"] == pytest.approx(3 / 4)
    assert a["against_favourite_resolved"] == 2 and a["against_favourite_win_rate"] == 0.5
    assert b["against_favourite_share"] == 0.0 and math.isnan(b["against_favourite_win_rate"])
    assert a["too_early"] and bool(frame["too_early"].all())
    assert list(frame["kind"]) == ["llm", "baseline", "llm"]
    assert list(frame["rank"]) == [1, 2, 3]


def test_intervals_and_ranks_equal_a_brute_force_loop(book: Engine) -> None:
    """Recompute every replicate by hand from per-event P/L and the same index matrix."""
    frame = lb.leaderboard(book, replicates=REPLICATES, seed=3)
    with session_scope(book) as s:
        c1, c2 = sorted(c.id for c in s.exec(select(Cohort)) if c.id is not None)
    # clusters in label order: c1|event:E1, c1|event:E2, c1|market:m3, c2|market:m3
    labels = sorted([f"{c1}|event:E1", f"{c1}|event:E2", f"{c1}|market:m3", f"{c2}|market:m3"])
    hand = {
        "m-a": {f"{c1}|event:E1": 550.0, f"{c1}|event:E2": 150.0, f"{c2}|market:m3": 25.0},
        "m-b": {f"{c1}|event:E1": -1000.0, f"{c1}|market:m3": 25.0},
        "baseline-cash": {},
    }
    strata = [int(label.split("|")[0]) for label in labels]
    indices = stats.bootstrap_indices(strata, REPLICATES, seed=3)
    families = ["m-a", "baseline-cash", "m-b"]
    returns: dict[str, list[float]] = {f: [] for f in families}
    first = dict.fromkeys(families, 0.0)
    for b in range(REPLICATES):
        totals = {f: sum(hand[f].get(labels[j], 0.0) for j in indices[b]) for f in families}
        best = max(totals.values())
        winners = [f for f in families if totals[f] >= best - 1e-9]
        for f in families:
            returns[f].append(totals[f] / 20000 * 100)
            first[f] += (1 / len(winners)) if f in winners else 0.0
    for f in families:
        got = row(frame, f)
        low, high = np.quantile(returns[f], [0.025, 0.975])
        assert got["return_ci_low"] == pytest.approx(low, abs=1e-9)
        assert got["return_ci_high"] == pytest.approx(high, abs=1e-9)
        assert got["pnl_ci_low"] == pytest.approx(low * 200, abs=1e-6)
        assert got["p_rank_1"] == pytest.approx(first[f] / REPLICATES)
    assert row(frame, "baseline-cash")["return_ci_low"] == 0.0


def test_same_seed_same_frame_and_cohort_scope(book: Engine) -> None:
    first = lb.leaderboard(book, replicates=500, seed=7)
    pd.testing.assert_frame_equal(first, lb.leaderboard(book, replicates=500, seed=7))
    draws = [family_bootstrap(book, replicates=500, seed=k).boot.indices for k in (7, 7, 8)]
    assert np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[0], draws[2])
    one = lb.leaderboard(book, cohort=2, replicates=500)
    assert set(one["cohorts"]) == {1}
    assert row(one, "m-a")["total_pnl"] == pytest.approx(25.0, abs=1e-6)
    assert row(one, "m-b")["total_pnl"] == 0.0
    with pytest.raises(InputError, match="cohort 9 does not exist"):
        lb.leaderboard(book, cohort=9)


def test_paired_comparison_on_the_markets_both_traded(book: Engine) -> None:
    pairs = paired.pairwise_comparisons(book, metric="pnl", replicates=500)
    assert list(pairs.columns) == list(paired.PAIRED_COLUMNS)
    ab = pairs[(pairs["family_a"] == "m-a") & (pairs["family_b"] == "m-b")].iloc[0]
    # both traded m1 in cohort 1 only: A +750, B −1000
    assert (ab["markets"], ab["clusters"]) == (1, 1)
    assert ab["mean_difference"] == pytest.approx(1750.0)
    assert ab["p_value"] == pytest.approx(1.0)  # one cluster: both signs equally extreme
    brier = paired.paired_comparison(book, "m-b", "m-a", metric="brier", replicates=500).iloc[0]
    assert brier["mean_difference"] == pytest.approx(0.4**2 - 0.8**2)
    with pytest.raises(InputError):
        paired.paired_comparison(book, "m-a", "nobody")
    with pytest.raises(InputError):
        paired.pairwise_comparisons(book, metric="sharpe")


def test_an_empty_database_gives_an_empty_frame(engine: Engine) -> None:
    frame = lb.leaderboard(engine)
    assert frame.empty and list(frame.columns) == list(lb.LEADERBOARD_COLUMNS)
    assert random_null.database_random_null(engine).empty


# --------------------------------------------------------------------------------------------
# A season played through the engine


def test_season_leaderboard_matches_independent_queries(season: Engine) -> None:
    frame = lb.leaderboard(season, replicates=REPLICATES, seed=0, null_seeds=50)
    with session_scope(season) as s:
        agents = list(s.exec(select(Agent)))
        family_of = {a.id: a.family_id for a in agents}
        pnl: dict[str, D] = {}
        for agent in agents:
            latest = s.exec(
                select(PortfolioSnapshot)
                .where(PortfolioSnapshot.agent_id == agent.id)
                .order_by(col(PortfolioSnapshot.slot).desc())
            ).first()
            assert latest is not None
            pnl[agent.family_id] = pnl.get(agent.family_id, D(0)) + latest.total_pnl
        scores: dict[str, list[float]] = {}
        for b in s.exec(select(BrierScore)):
            scores.setdefault(family_of[b.agent_id], []).append(b.brier_score)
        contributions: dict[str, float] = {}
        for p in s.exec(select(Position)):
            value = p.realized_pnl
            if p.status == "open":
                mark = p.mark_price if p.mark_price is not None else p.avg_entry_price
                value += (p.shares * mark).quantize(D("0.000001")) - p.cost_basis
            fid = family_of[p.agent_id]
            contributions[fid] = contributions.get(fid, 0.0) + float(value)
    assert set(frame["family_id"]) == {
        "baseline-cash",
        "baseline-favorite",
        "baseline-random",
        "oracle",
    }
    for fid, total in pnl.items():
        got = row(frame, fid)
        assert got["total_pnl"] == pytest.approx(float(total), abs=1e-6)
        assert got["return_pct"] == pytest.approx(float(total) / 30000 * 100)
        assert got["resolved_bets"] == len(scores.get(fid, []))
        if fid in scores:
            assert got["brier"] == pytest.approx(sum(scores[fid]) / len(scores[fid]))
            assert got["brier_ci_low"] <= got["brier"] <= got["brier_ci_high"]
        # the market contributions add up to the snapshot P/L (marks are the last snapshot's)
        assert contributions.get(fid, 0.0) == pytest.approx(float(total), abs=0.01)
        assert got["return_ci_low"] <= got["return_pct"] + 1e-9
        assert got["rank_low"] <= got["rank"] <= got["rank_high"] or got["too_early"]
        assert 0 <= got["random_null_percentile"] <= 100
    assert frame["p_rank_1"].sum() == pytest.approx(1.0)
    assert row(frame, "baseline-cash")["p_rank_1"] < 0.5
    assert (frame["decisions"] > 0).all() and (frame["fallback_holds"] == 0).all()


def test_the_null_replays_the_random_baseline_exactly(season: Engine) -> None:
    """Seed S of the null is a `baseline-random` agent seeded S: the season's was seeded with
    SEASON_SEED, so the replay must reproduce its P/L in every cohort to the micro-dollar."""
    null = random_null.database_random_null(season, seeds=[SEASON_SEED, SEASON_SEED + 1])
    assert list(null.columns) == list(random_null.NULL_COLUMNS)
    with session_scope(season) as s:
        actual = {}
        for agent, cohort in s.exec(
            select(Agent, Cohort)
            .join(Cohort, col(Cohort.id) == Agent.cohort_id)
            .where(Agent.family_id == "baseline-random")
        ):
            latest = s.exec(
                select(PortfolioSnapshot)
                .where(PortfolioSnapshot.agent_id == agent.id)
                .order_by(col(PortfolioSnapshot.slot).desc())
            ).first()
            assert latest is not None
            actual[cohort.number] = float(latest.total_pnl)
    replay = null[null["seed"] == SEASON_SEED].set_index("cohort_number")["pnl"]
    assert replay.to_dict() == pytest.approx(actual, abs=1e-6)
    assert not null[null["seed"] == SEASON_SEED + 1]["pnl"].equals(replay)


def test_random_legs_are_the_strategy_s_bets() -> None:
    markets = [
        PromptMarket(
            "1", "q", None, None, "binary", ["No", "Yes"], [D("0.7"), D("0.3")], 1.0, None
        ),
        PromptMarket(
            "2",
            "q",
            None,
            None,
            "named",
            ["A", "B", "C"],
            [D("0.5"), D("0.3"), D("0.2")],
            1.0,
            None,
        ),
        PromptMarket("3", "q", None, None, "binary", ["Yes", "No"], [], 1.0, None),
        PromptMarket(
            "4", "q", None, None, "binary", ["Yes", "No"], [D("0.999"), D("0.001")], 1.0, None
        ),
    ]
    candidates = [
        c
        for c in (candidate(m.market_id, m.market_type, m.outcomes, m.prices) for m in markets)
        if c is not None
    ]
    assert [c.market_id for c in candidates] == ["1", "2", "4"]
    for seed in range(60):
        for cash in (D("10000"), D("900"), D("180")):
            portfolio = PortfolioView(cash=cash, max_bet=cash / 4, min_bet=D("50"), positions=[])
            text = random_strategy(BaselineInput(WEEK1, 3, 2, portfolio, markets), seed)
            expected = pd.read_json(io.StringIO(text), typ="series").get("bets", [])
            rng = random.Random(f"{RANDOM_KEY}:{seed}:3:2")
            legs = random_legs(rng, candidates, cash, D("50"))
            assert [(c.market_id, side, float(amount)) for c, side, amount in legs] == [
                (b["market_id"], b["side"], b["amount"]) for b in expected
            ]


def test_null_percentile_of_the_random_baseline_is_unremarkable(season: Engine) -> None:
    null = random_null.database_random_null(season, seeds=range(60))
    per_seed = null.groupby("seed")["pnl"].sum() / 30000 * 100
    assert per_seed.std() > 0
    frame = lb.leaderboard(season, replicates=200, null_seeds=60)
    got = row(frame, "baseline-random")
    assert got["random_null_percentile"] == pytest.approx(
        stats.percentile_of(got["return_pct"], per_seed.to_numpy())
    )


def test_world_null_runs_without_a_database() -> None:
    returns = random_null.random_null(SEASON_SEED, 1, seeds=range(5), tail_weeks=0)
    assert returns.shape == (5,) and np.isfinite(returns).all() and returns.std() > 0


# --------------------------------------------------------------------------------------------
# The command line


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_cli_leaderboard_csv_table_and_errors(
    book: Engine,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
    code, out, err = run(["leaderboard", "--format", "csv"], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split(",")[: len(lb.LEADERBOARD_CONTRACT_COLUMNS)] == list(
        lb.LEADERBOARD_CONTRACT_COLUMNS
    )
    parsed = pd.read_csv(io.StringIO(out))
    assert list(parsed["family_id"]) == ["m-a", "baseline-cash", "m-b"]
    assert parsed.loc[0, "total_pnl"] == pytest.approx(725.0)
    code, out, err = run(["leaderboard"], capsys)
    assert code == 0 and "m-a" in out and "too early to rank" in out and "[" in out
    code, out, err = run(["leaderboard", "--cohort", "9"], capsys)
    assert code == 1 and err.count("\n") == 1 and "cohort 9 does not exist" in err


def test_cli_leaderboard_on_an_empty_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{tmp_path / 'empty.db'}")
    assert run(["init-db"], capsys)[0] == 0
    code, out, _ = run(["leaderboard", "--format", "csv"], capsys)
    assert code == 0 and out.splitlines() == [
        ",".join(lb.csv_columns(pd.DataFrame(columns=list(lb.LEADERBOARD_COLUMNS))))
    ]
    code, out, _ = run(["leaderboard"], capsys)
    assert code == 0 and "no cohort yet" in out


def test_one_run_of_the_analyses_replays_each_scopes_null_once(
    season: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside `one_run` (one run of the hourly analyses) the leaderboard's percentiles
    and the detectability's null rows share one replay per scope; outside, each call replays
    afresh (the database may have changed)."""
    replays: list[tuple[int | None, str]] = []
    replay = random_null.replay_database_null

    def counted(engine: Engine, **scope: object) -> pd.DataFrame:
        replays.append((scope.get("cohort"), str(scope.get("methodology"))))  # type: ignore[arg-type]
        return replay(engine, **scope)  # type: ignore[arg-type]

    monkeypatch.setattr(random_null, "replay_database_null", counted)
    with one_run():
        first = random_null.database_random_null(season, seeds=range(20))
        again = random_null.database_random_null(season, seeds=range(20))
        one = random_null.database_random_null(season, cohort=1, seeds=range(20))
    pd.testing.assert_frame_equal(first, again)
    assert len(one) < len(first) and replays == [(None, "v1"), (1, "v1")]
    random_null.database_random_null(season, seeds=range(20))
    assert len(replays) == 3
