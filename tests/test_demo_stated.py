"""A demo season under the protocol extension `stated_probability`, and the v1
leaderboard of a season unchanged to the cent with the extension on.

The extended season (the lineup's seven LLM families on the simulated model server, the
baselines and the oracle; two decision weeks, stopped on day 15) stores the personas' stated
probabilities (some malformed and retried, some missing), the hourly job stores the
extension's figures with intervals, and each cohort's replay bundle verifies. Then the v1
numbers: a season whose trading the extension cannot change (the baselines and the oracle,
which decide from the prompt's state, not its text) gives the very same leaderboard of each
cohort with the extension on and off, and on the LLM season the v1 leaderboard of a cohort
does not move when the extension's data is taken away. Across cohorts, v1's figures leave the
extended cohorts out (methodology §18): with every cohort extended, there are none.
"""

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine

from arena.analytics.replay.bundle import build_bundle
from arena.analytics.replay.format import read_jsonl
from arena.analytics.replay.verify import verify_bundle
from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.stored import current_stored
from arena.config import Methodology
from arena.lineup import load_lineup
from arena.storage.db import create_db_engine
from arena.storage.tables import AGENTS, COHORTS, DECISION_ATTEMPTS, DECISIONS, FAMILIES, TRADES
from tests.stated_season import BASELINE_DAYS, BASELINES, DemoSeasons

LINEUP = load_lineup(None)
LLM_FAMILIES = sorted(f.id for f in LINEUP.families if f.kind == "llm")


@pytest.fixture(scope="module")
def season(demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    folder = tmp_path_factory.mktemp("demo_stated")
    url = demo_seasons.copy(folder, LINEUP, "stated_probability", 15)
    engine = create_db_engine(url)
    yield engine
    engine.dispose()


def test_every_cohort_is_stamped_with_the_extension(season: Engine) -> None:
    with season.connect() as conn:
        query = select(COHORTS.c.constants).order_by(COHORTS.c.number)
        stamps = list(conn.execute(query).scalars())
    assert len(stamps) == 2
    for stamp in stamps:
        assert stamp["extensions"] == ["stated_probability"] and stamp["is_default"] is False


def test_the_personas_probabilities_are_stored_and_missing_ones_stay_missing(
    season: Engine,
) -> None:
    with season.connect() as conn:
        rows = conn.execute(
            select(AGENTS.c.family_id, FAMILIES.c.kind, TRADES.c.probability)
            .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
            .join(FAMILIES, FAMILIES.c.id == AGENTS.c.family_id)
            .where(TRADES.c.trade_type == "BUY")
        ).all()
        others = conn.execute(
            select(func.count())
            .select_from(TRADES)
            .where(TRADES.c.trade_type != "BUY", TRADES.c.probability.is_not(None))
        ).scalar_one()
        feedback = conn.execute(
            select(func.count())
            .select_from(DECISION_ATTEMPTS)
            .where(
                DECISION_ATTEMPTS.c.outcome == "malformed",
                DECISION_ATTEMPTS.c.error.like("%probability%"),
            )
        ).scalar_one()
    stated = [p for family, kind, p in rows if kind == "llm" and p is not None]
    assert len(stated) > 30 and all(0 <= p <= 1 for p in stated)
    assert len({family for family, kind, p in rows if kind == "llm" and p is not None}) >= 5
    assert any(p is None for _, kind, p in rows if kind == "llm")  # left out: missing
    assert all(p is not None for family, _, p in rows if family == "oracle")
    assert all(p is None for family, _, p in rows if family.startswith("baseline-"))
    assert others == 0  # SELL, SETTLE and REFUND trades state nothing
    assert feedback > 0  # a malformed probability was retried with its error


def test_the_hourly_job_stored_the_figures_with_intervals(season: Engine) -> None:
    stored = current_stored(season, "stated_probability")
    assert stored is not None
    figures = stored.frame.set_index("family_id")
    stating = figures[figures["stated_bets"] > 0]
    assert set(LLM_FAMILIES) | {"oracle"} >= set(stating.index) >= {"oracle"}
    assert len(stating) >= 6
    for name in ("consistent_share", "mean_edge", "stake_efficiency"):
        assert stating[name].notna().all(), name
        assert (stating[f"{name}_ci_low"] <= stating[name] + 1e-9).all()
        assert (stating[name] <= stating[f"{name}_ci_high"] + 1e-9).all()
    scored = stating[stating["resolved_bets"] > 0]
    assert len(scored) >= 3
    for name in ("stated_brier", "implied_brier", "market_brier", "log_growth"):
        assert scored[[name, f"{name}_ci_low", f"{name}_ci_high"]].notna().all().all(), name
    # Somewhere an interval is a real range, not a point.
    assert (scored["stated_brier_ci_high"] > scored["stated_brier_ci_low"]).any()
    assert (figures.loc[["baseline-favorite"], "missing_bets"] > 0).all()


def test_each_extended_cohort_bundles_and_verifies(season: Engine) -> None:
    for number in (1, 2):
        built = build_bundle(season, number, provisional=True)
        report = verify_bundle(built.bundle)
        assert report.ok, [(c.name, c.mismatches) for c in report.checks if not c.ok]
        trades = read_jsonl(built.bundle.files["trades.jsonl"])
        assert trades and all("probability" in trade for trade in trades)
        assert any(trade["probability"] is not None for trade in trades)


def test_the_v1_leaderboard_ignores_the_extensions_data(season: Engine, tmp_path: Path) -> None:
    """The same trades with and without the extension's data give the same v1 leaderboard of
    each cohort: nothing of v1 reads a stated probability, and the stamp's extensions only
    decide the all-cohort scope, which leaves extended cohorts out."""
    source = str(season.url).removeprefix("sqlite:///")
    copy = tmp_path / "stripped.db"
    with sqlite3.connect(source) as origin, sqlite3.connect(copy) as target:
        origin.backup(target)  # a whole copy, WAL included
    stripped = create_db_engine(f"sqlite:///{copy}")
    try:
        with stripped.begin() as conn:
            conn.execute(update(TRADES).values(probability=None))
            conn.execute(update(COHORTS).values(constants=Methodology().stamp()))
        for cohort in (1, 2):
            before = leaderboard(season, cohort=cohort, replicates=200, null_seeds=10)
            after = leaderboard(stripped, cohort=cohort, replicates=200, null_seeds=10)
            assert not before.empty
            pd.testing.assert_frame_equal(before, after)
        assert leaderboard(season, replicates=50, null_seeds=0).empty  # every cohort extended
        assert not leaderboard(stripped, replicates=50, null_seeds=0).empty
    finally:
        stripped.dispose()


def test_a_season_the_extension_cannot_change_has_the_same_v1_leaderboard_to_the_cent(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The baselines and the oracle decide from the prompt's state, so their season trades the
    same with and without the extension: each cohort's leaderboard is the same, to the cent
    and the last bit of every interval; only the stamp and the oracle's stated probabilities
    differ (and the all-cohort v1 leaderboard, which leaves the extended cohorts out).

    Both seasons are `DemoSeasons`' (played once per run): the v1 one is also the v1 season of
    tests/test_v2_scope.py and tests/test_v2_read.py."""
    urls = {
        name: demo_seasons.copy(
            tmp_path_factory.mktemp(f"baselines_{name or 'v1'}"), BASELINES, name, BASELINE_DAYS
        )
        for name in ("", "stated_probability")
    }
    engines = {name: create_db_engine(url) for name, url in urls.items()}
    try:
        boards = {
            name: [
                leaderboard(engine, cohort=cohort, replicates=300, null_seeds=10)
                for cohort in (1, 2)
            ]
            for name, engine in engines.items()
        }
        trades = {}
        for name, engine in engines.items():
            with engine.connect() as conn:
                trades[name] = conn.execute(
                    select(
                        TRADES.c.id,
                        TRADES.c.market_id,
                        TRADES.c.side,
                        TRADES.c.amount,
                        TRADES.c.price,
                        TRADES.c.probability,
                        AGENTS.c.family_id,
                    )
                    .join(AGENTS, AGENTS.c.id == TRADES.c.agent_id)
                    .where(TRADES.c.trade_type == "BUY")
                    .order_by(TRADES.c.id)
                ).all()
                stamps = list(conn.execute(select(COHORTS.c.constants)).scalars())
                assert all(("extensions" in s) == bool(name) for s in stamps)
        for v1, extended in zip(boards[""], boards["stated_probability"], strict=True):
            assert len(v1) == 4
            pd.testing.assert_frame_equal(v1, extended, check_exact=True)
        assert any(v1["total_pnl"].abs().sum() > 0 for v1 in boards[""])
        assert len(leaderboard(engines[""], replicates=50, null_seeds=0)) == 4
        assert leaderboard(engines["stated_probability"], replicates=50, null_seeds=0).empty
        assert [t[:5] for t in trades[""]] == [t[:5] for t in trades["stated_probability"]]
        assert all(t.probability is None for t in trades[""])
        oracle = [t for t in trades["stated_probability"] if t.family_id == "oracle"]
        assert oracle and all(t.probability is not None for t in oracle)
        # The v1 season's bundle carries no probability column: its bytes are v1's.
        v1_trades = read_jsonl(
            build_bundle(engines[""], 1, provisional=True).bundle.files["trades.jsonl"]
        )
        assert v1_trades and all("probability" not in trade for trade in v1_trades)
        with engines[""].connect() as conn:
            legs = conn.execute(select(DECISIONS.c.legs)).scalars()
            assert all("probability" not in leg["request"] for row in legs for leg in row or [])
    finally:
        for engine in engines.values():
            engine.dispose()


def test_a_misspelt_extension_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.app.cli import main

    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{tmp_path / 'demo.db'}")
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--weeks", "1", "--extensions", "stated_probabilty"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exited.value.code != 0 and len(err) == 1
    assert "unknown protocol extension 'stated_probabilty'" in err[0]
    assert "known: stated_probability" in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "demo.db").exists()  # refused before touching the database
