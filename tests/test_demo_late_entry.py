"""`arena demo --late-entry newcomer` on the finished `arena demo --weeks 2 --seed 1`
season that tests/test_demo.py plays (shared through `demo_seasons`, not played again): the
bundled lineup's disabled `newcomer` never played a live cohort; its late entry leaves a shadow
per cohort, its every model attempt one request to the simulated model server (over HTTP, the
real client), and a second run asks the server nothing and writes nothing."""

import shutil
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.app.demo_late_entry import play_demo_late_entry, season_finished
from arena.config import load_settings
from arena.engine.late_entry import LateEntryResult
from arena.lineup import load_lineup
from arena.sim.model_server import LoggedRequest
from arena.sim.world import DEFAULT_TAIL_WEEKS
from arena.storage.db import create_db_engine
from arena.storage.tables import AGENTS, COHORTS, DECISION_ATTEMPTS, DECISIONS, TRADES
from tests.stated_season import DemoSeasons
from tests.test_demo import SEED, WEEKS, arena_demo, checkpoint


def _played(demo_seasons: DemoSeasons, target: Path) -> str:
    def play(folder: Path) -> str:
        result = arena_demo(
            f"sqlite:///{folder / 'demo.db'}", "--weeks", str(WEEKS), "--seed", str(SEED)
        )
        assert result.returncode == 0, result.stderr
        checkpoint(folder / "demo.db")
        return result.stdout

    played, _ = demo_seasons.once(f"arena demo --weeks {WEEKS} --seed {SEED}", play)
    shutil.copyfile(played / "demo.db", target)
    return f"sqlite:///{target}"


def _rows(engine: Engine) -> dict[str, int]:
    mine = select(AGENTS.c.id).where(AGENTS.c.family_id == "newcomer")
    with engine.connect() as conn:
        return {
            "shadows": conn.execute(
                select(func.count()).where(COHORTS.c.late_entry_of.is_not(None))
            ).scalar_one(),
            "decisions": conn.execute(
                select(func.count()).where(DECISIONS.c.agent_id.in_(mine))
            ).scalar_one(),
            "attempts": conn.execute(
                select(func.count())
                .select_from(DECISION_ATTEMPTS.join(DECISIONS))
                .where(DECISIONS.c.agent_id.in_(mine))
            ).scalar_one(),
            "trades": conn.execute(
                select(func.count()).where(TRADES.c.agent_id.in_(mine))
            ).scalar_one(),
        }


def test_the_demo_late_entrant_plays_over_http_and_a_second_run_does_nothing(
    demo_seasons: DemoSeasons, tmp_path: Path
) -> None:
    url = _played(demo_seasons, tmp_path / "demo.db")
    engine = create_db_engine(url)
    settings = load_settings(database_url=url)
    lineup = load_lineup()
    try:
        assert season_finished(engine)
        with engine.connect() as conn:  # disabled: the season never played it
            live = select(func.count()).where(AGENTS.c.family_id == "newcomer")
            assert conn.execute(live).scalar_one() == 0

        def play() -> tuple[LateEntryResult, list[LoggedRequest]]:
            return play_demo_late_entry(
                engine, settings, lineup, "newcomer", seed=SEED, weeks=WEEKS,
                tail_weeks=DEFAULT_TAIL_WEEKS,
            )  # fmt: skip

        result, calls = play()
        rows = _rows(engine)
        assert result.cohorts == [1, 2] and result.shadows_created == 2
        assert result.contaminated == []
        assert rows["shadows"] == 2 and rows["decisions"] == sum(result.decided.values()) > 0
        # Every attempt it recorded is one request the simulated server served for its model.
        assert calls and {c.model for c in calls} == {"simlab/newcomer-1"}
        assert rows["attempts"] == len(calls)
        assert rows["trades"] == result.trades

        again, calls_again = play()
        assert calls_again == [] and again.shadows_created == 0 and again.decided == {}
        assert again.trades == 0 and _rows(engine) == rows
    finally:
        engine.dispose()
