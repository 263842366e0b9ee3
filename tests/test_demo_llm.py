"""`arena demo` plays the lineup's LLM families through HTTP against the simulated model server.

One in-process season (two decision weeks, stopped a day into the second week) with the
gambler persona's transport-fault rate raised, so 429s, 5xx and slow answers all occur. The
server's request log must match `decision_attempts` one to one (count, model id, hash of the
messages as the engine built them), a slow answer must be a timeout, every LLM row is marked
simulated, and the pages badge it.
"""

import dataclasses
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

import arena.sim.personas as model_server
from arena.agents.parsing import retry_feedback
from arena.analytics.replay.bundle import build_bundle
from arena.analytics.replay.verify import verify_bundle
from arena.analytics.views.simulated import SERVED_BY, simulated_families
from arena.app.demo import DEMO_START, DemoSummary, run_demo
from arena.config import load_settings
from arena.lineup import load_lineup
from arena.sim.wire import messages_sha256
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db
from arena.storage.tables import AGENTS, COHORTS, DECISION_ATTEMPTS, DECISIONS
from tests.dashboard_caches import clear_dashboard_caches
from tests.stated_season import DemoSeasons, checkpoint

SEED = 1
FAULTY = "x-ai/grok-4.1-fast"  # the gambler: its fault rate is raised for this season
DASHBOARD = Path(__file__).resolve().parent.parent / "dashboard.py"
LINEUP = load_lineup(None)
LLM_MODELS = {f.model: f for f in LINEUP.enabled() if f.kind == "llm"}  # the demo plays these


def play(folder: Path) -> DemoSummary:
    """The season into `folder`/demo.db, the gambler's fault rate raised while it plays."""
    url = f"sqlite:///{folder / 'demo.db'}"
    engine = create_db_engine(url)
    faulty = dataclasses.replace(model_server.persona_for(FAULTY), fault=0.5)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setitem(model_server._BY_MODEL, FAULTY, faulty)
            init_db(engine)
            settings = load_settings(database_url=url, llm_api_key=None)
            summary = run_demo(
                engine,
                settings,
                LINEUP,
                weeks=2,
                seed=SEED,
                stop_at=DEMO_START + timedelta(days=7, hours=1),
            )
    finally:
        engine.dispose()
    checkpoint(folder / "demo.db")
    return summary


@pytest.fixture(scope="module")
def season(
    demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, DemoSummary, str]]:
    """A copy of the season, its summary and URL: played once per test run
    (`DemoSeasons.once`), not once per xdist worker running one of these tests."""
    played, summary = demo_seasons.once(f"test_demo_llm: seed {SEED}, {FAULTY} faulty", play)
    copy = tmp_path_factory.mktemp("demo_llm") / "demo.db"
    shutil.copyfile(played / "demo.db", copy)
    url = f"sqlite:///{copy}"
    engine = create_db_engine(url)
    try:
        yield engine, summary, url
    finally:
        engine.dispose()


def attempts(engine: Engine) -> list[dict[str, Any]]:
    """Every LLM attempt in insertion (= request) order, with its decision's prompts."""
    d, a, x = DECISIONS, AGENTS, DECISION_ATTEMPTS
    query = (
        select(
            x.c.decision_id,
            x.c.attempt_no,
            x.c.outcome,
            x.c.raw_response,
            x.c.error,
            x.c.tokens_in,
            x.c.tokens_out,
            x.c.cost_usd,
            x.c.provider,
            a.c.model_id,
            a.c.family_id,
            d.c.prompt_system,
            d.c.prompt_user,
        )
        .join(d, d.c.id == x.c.decision_id)
        .join(a, a.c.id == d.c.agent_id)
        .where(a.c.model_id.in_(list(LLM_MODELS)))
        .order_by(x.c.id)
    )
    with engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(query)]


def expected_requests(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(model, messages hash) of each attempt, rebuilding the conversation as decide_one does."""
    conversations: dict[int, list[dict[str, str]]] = {}
    expected = []
    for row in rows:
        messages = conversations.setdefault(
            row["decision_id"],
            [
                {"role": "system", "content": row["prompt_system"]},
                {"role": "user", "content": row["prompt_user"]},
            ],
        )
        expected.append((row["model_id"], messages_sha256(messages)))
        if row["outcome"] == "malformed":
            messages += [
                {"role": "assistant", "content": row["raw_response"]},
                {"role": "user", "content": retry_feedback(row["error"])},
            ]
    return expected


def test_the_request_log_matches_the_decision_attempts(
    season: tuple[Engine, DemoSummary, str],
) -> None:
    engine, summary, _ = season
    rows = attempts(engine)
    log = summary.server_log
    assert len(rows) == len(log) > 0
    assert [(r.model, r.messages_sha256) for r in log] == expected_requests(rows)
    assert {r.model for r in log} == set(LLM_MODELS)  # all seven families asked over HTTP
    for entry, row in zip(log, rows, strict=True):
        if entry.fault == "slow":
            assert row["outcome"].startswith("transport_") and "timed out" in row["error"]
        elif entry.fault in ("429", "500"):
            assert row["outcome"].startswith("transport_") and f"HTTP {entry.fault}" in row["error"]
        else:
            assert row["outcome"] in ("valid", "malformed")
            assert row["provider"] == "simulated"
            # Tokens from the server's usage block, cost at the lineup's list prices.
            assert row["tokens_in"] > 0 and row["tokens_out"] > 0
            family = LLM_MODELS[row["model_id"]]
            assert row["cost_usd"] == pytest.approx(
                family.cost_usd(row["tokens_in"], row["tokens_out"])
            )
            assert row["cost_usd"] > 0


def test_faults_show_as_retried_attempts(season: tuple[Engine, DemoSummary, str]) -> None:
    engine, summary, _ = season
    faults = {entry.fault for entry in summary.server_log if entry.fault}
    assert faults == {"429", "500", "slow"}
    retried = {r["family_id"] for r in attempts(engine) if r["outcome"] == "transport_retry"}
    assert LLM_MODELS[FAULTY].id in retried


def test_the_llm_families_are_marked_simulated(season: tuple[Engine, DemoSummary, str]) -> None:
    engine, summary, _ = season
    assert summary.served_by == SERVED_BY
    assert simulated_families(engine) == sorted(f.id for f in LLM_MODELS.values())
    with engine.connect() as conn:
        providers = set(
            conn.execute(
                select(DECISIONS.c.provider)
                .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
                .where(AGENTS.c.model_id.in_(list(LLM_MODELS)), DECISIONS.c.status != "error")
            ).scalars()
        )
    assert providers == {"simulated"}


@pytest.mark.parametrize("page", ["leaderboard", "agent", "decisions"])
def test_the_pages_badge_simulated_families(
    season: tuple[Engine, DemoSummary, str], page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, url = season
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    monkeypatch.delenv("ARENA_ADMIN_PASSWORD", raising=False)
    clear_dashboard_caches()
    try:
        at = AppTest.from_file(str(DASHBOARD), default_timeout=60)
        if page == "agent":
            at.query_params["family"] = LLM_MODELS[FAULTY].id
        at.switch_page(f"app_pages/{page}.py")
        at.run()
        assert not at.exception
        badges = [str(w.value) for w in at.warning if "Simulated" in str(w.value)]
        assert badges and SERVED_BY in badges[0]
    finally:
        clear_dashboard_caches()


# What every cohort's bundle has from its first decision run (settlements and Brier rows come
# only once markets resolve).
ALWAYS_COMPARED = (
    "answers parsed, decisions re-derived",
    "decision legs planned",
    "BUY / SELL trades recomputed",
    "positions' final state",
    "agents' final cash and value",
    "portfolio snapshots",
    "leaderboard point estimates",
)


def test_every_cohort_of_the_season_bundles_and_verifies(
    season: tuple[Engine, DemoSummary, str],
) -> None:
    """Each cohort of a demo season, bundled (provisional: its positions are still
    open) then verified from the files alone, matches 100%; every HTTP attempt is in it."""
    engine, _, _ = season
    with engine.connect() as conn:
        numbers = conn.execute(select(COHORTS.c.number).order_by(COHORTS.c.number)).scalars()
        cohorts = list(numbers)
    assert cohorts == [1, 2]
    for number in cohorts:
        built = build_bundle(engine, number, provisional=True)
        report = verify_bundle(built.bundle)
        assert report.ok, [(c.name, c.mismatches) for c in report.checks if not c.ok]
        compared = {check.name: check.compared for check in report.checks}
        assert all(compared[name] > 0 for name in ALWAYS_COMPARED), compared
        with engine.connect() as conn:
            stored = conn.execute(
                select(func.count())
                .select_from(DECISION_ATTEMPTS)
                .join(DECISIONS, DECISIONS.c.id == DECISION_ATTEMPTS.c.decision_id)
                .where(
                    DECISIONS.c.cohort_id
                    == select(COHORTS.c.id).where(COHORTS.c.number == number).scalar_subquery()
                )
            ).scalar_one()
        assert len(built.bundle.files["attempts.jsonl"].splitlines()) == stored > 0
