"""A short demo season into a new SQLite file, with or without protocol extensions (issue 26).

Shared by the demo tests of the stated-probability extension and of replicates, and their
browser tests: two decision weeks of `arena demo` (the simulated model server's personas, the
baselines and the oracle), stopped after `days`, the hourly analyses stored at its end as the
demo stores them.
"""

from datetime import timedelta
from pathlib import Path

from arena.app.demo import DEMO_START, run_demo
from arena.config import load_settings
from arena.lineup import Lineup
from arena.storage.db import create_db_engine
from arena.storage.migrate import init_db

SEED = 1


def demo_season(
    folder: Path, lineup: Lineup, extensions: str, days: int, replicates: int = 1
) -> str:
    """Play the season into `folder`/demo.db (`replicates` agents per family); its URL."""
    url = f"sqlite:///{folder / 'demo.db'}"
    engine = create_db_engine(url)
    try:
        init_db(engine)
        settings = load_settings(
            database_url=url, llm_api_key=None, extensions=extensions, replicates=replicates
        )
        run_demo(
            engine, settings, lineup, weeks=2, seed=SEED, stop_at=DEMO_START + timedelta(days=days)
        )
    finally:
        engine.dispose()
    return url
