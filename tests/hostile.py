"""A hostile copy of the suite's season: every free-text column a page shows rewritten to
Markdown that would make a link, an image, an autolink, raw HTML and bold text.

Shared by the browser checks (`tests/e2e/test_hostile.py`: what Chromium renders is inert) and
the AppTest sweep (`tests/test_hostile_links.py`: every deep-link key of every page is named
as a bad link), so both read the same database and the same hostile strings.
"""

import sqlite3
from pathlib import Path

from arena.dashboard.links import LINK_KEYS
from arena.engine.analyses import store_analyses
from arena.storage.db import get_engine
from tests.analytics.season import LLM_A, Season

WORD_JOINER = "\u2060"  # fmt.WORD_JOINER: what breaks an autolink, invisible to a reader

LINK = "[click](https://evil.example/x)"
IMAGE = "![x](http://127.0.0.1:9/pixel.png)"
BARE = "https://evil.example"
HTML = "<img src=x>"
BOLD = "**bold**"
HOSTILE = f"{LINK} {IMAGE} {BARE} {HTML} {BOLD}"
NAME = f"Model A {LINK}"  # llm-a's display name
PHISH = "[Session expired - log in again](https://evil.example/login)"
BAD_LINK = f"{PHISH} {IMAGE}"
DECISION = 1  # llm-a's week-1 decision in cohort 1: three attempts (500, malformed, valid)
HUGE = "99999999999999999999999999"  # past 2**63-1: OverflowError in the driver before
PAGES = {
    "": "Forecaster Arena",
    "leaderboard": "Leaderboard",
    "compare": "Compare",
    "family": "Family",
    "agent": "Agent",
    "cohorts": "Cohorts",
    "calibration": "Calibration",
    "stated": "Stated probability",
    "replicates": "Replicates",
    "execution": "Execution",
    "detectability": "When will we know?",
    "decisions": "Decisions",
    "markets": "Markets",
    "exports": "Exports",
    "overview": "Overview",
    "operations": "Operations",
    "methodology": "Methodology",
}
KEYS = (*LINK_KEYS, "doc", "replicate", "section")  # every key a page reads from the URL
HELD_MARKET: list[str] = []  # a market an agent held (positions, trades): set by the fixture


def make_hostile(path: Path) -> None:
    """Rewrite the season copy at `path`: every free-text column a page shows gets HOSTILE."""
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE markets SET question = :h || ' ' || id, category = :h, "
            "uma_resolution_status = :h, resolution_outcome = :h",
            {"h": HOSTILE},
        )
        db.execute("UPDATE market_snapshot_items SET question = ? || ' ' || market_id", (HOSTILE,))
        db.execute("UPDATE families SET display_name = ? WHERE id = ?", (NAME, LLM_A))
        db.execute("UPDATE agents SET display_name = ? WHERE family_id = ?", (NAME, LLM_A))
        db.execute(
            "UPDATE decisions SET served_model = :h, provider = :h, error = :h, "
            "parsed_response = json_set(coalesce(parsed_response, '{}'), '$.reasoning', :h) "
            "WHERE id = :d",
            {"h": HOSTILE, "d": DECISION},
        )
        db.execute(
            "UPDATE decision_attempts SET served_model = :h, provider = :h, "
            "error = 'HTTP 500 ' || :h WHERE decision_id = :d",
            {"h": HOSTILE, "d": DECISION},
        )
        db.execute("UPDATE system_logs SET message = ?", (HOSTILE,))
        held = db.execute("SELECT market_id FROM positions ORDER BY id LIMIT 1").fetchone()
        HELD_MARKET[:] = [str(held[0])]


def hostile_copy(season: Season, folder: Path) -> str:
    """The URL of a hostile copy of `season` in `folder`, its hourly analyses stored after the
    rewrite (as the scheduler's job would have)."""
    target = folder / "hostile.db"
    with (
        sqlite3.connect(season.url.removeprefix("sqlite:///")) as origin,
        sqlite3.connect(target) as copy,
    ):
        origin.backup(copy)
    make_hostile(target)
    url = f"sqlite:///{target}"
    engine = get_engine(url)
    try:
        store_analyses(engine, season.end)
    finally:
        engine.dispose()
    return url
