"""`arena demo --late-entry FAMILY`: a late entrant over the finished demo cohorts.

Why apart from `arena.app.demo`: the season is played first and closed; the late entrant then
plays the finished live cohorts through the engine's player (`arena.engine.late_entry`), its
decisions from the SIMULATED model server over HTTP (the real `ChatClient`, as the season's LLM
families), the simulated world as the market source (a market the season never resolved is
asked of it). The world and personas are rebuilt from the season's seed, weeks and tail, so
the server answers the late entrant from the same hidden probabilities. No CLOB price history
exists in the simulated CLOB, so marks between runs come from the runs' frozen prices or are
carried (recorded per position as such).
"""

from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import col
from sqlmodel import select as sqlmodel_select

from arena.app.demo import (
    DEMO_OWNER,
    LATENCY_SCALE,
    SLOW_SECONDS,
    demo_lineup,
    simulated_responders,
)
from arena.config import Settings
from arena.core.errors import InputError
from arena.core.late_entry import leakage_guard
from arena.engine.bundles import build_bundles
from arena.engine.cohorts import window_weeks_of
from arena.engine.late_entry import LateEntryResult, play_late_entry
from arena.lineup import Lineup
from arena.sim.model_server import LoggedRequest, ModelServer
from arena.sim.world import DEMO_START, demo_world
from arena.storage.db import session_scope
from arena.storage.models import Cohort
from arena.storage.tables import JOB_RUNS


def check_entrant(lineup: Lineup, family_id: str, start: datetime = DEMO_START) -> None:
    """Refuse, before a season is played, a family the lineup lacks or the guard would refuse
    on the demo's first week (the demo has no --allow-contaminated: it shows a clean entry)."""
    try:
        family = lineup.get(family_id)
    except KeyError:
        known = ", ".join(f.id for f in lineup.families)
        raise InputError(
            f"--late-entry: family {family_id!r} is not in the lineup", f"known: {known}"
        ) from None
    verdict = leakage_guard(1, start, family.knowledge_cutoff, False)
    if not verdict.allowed:
        raise InputError(
            f"--late-entry: {verdict.reason}",
            "the bundled lineup's `newcomer` has a cutoff before the demo; or use "
            "`arena late-entry --allow-contaminated`",
        )


def season_finished(engine: Engine) -> bool:
    """Whether the database holds a finished demo season (its final bundle run recorded)."""
    query = select(JOB_RUNS.c.id).where(
        JOB_RUNS.c.job == "bundle", JOB_RUNS.c.owner == DEMO_OWNER, JOB_RUNS.c.status == "ok"
    )
    with engine.connect() as conn:
        return conn.execute(query.limit(1)).first() is not None


def _finished_cohorts(engine: Engine) -> tuple[list[int], datetime]:
    """The season's live cohorts and the first instant every one's window is over."""
    with session_scope(engine) as session:
        live = sqlmodel_select(Cohort).where(col(Cohort.late_entry_of).is_(None))
        cohorts = list(session.exec(live))
        ends = [c.week_start + timedelta(weeks=window_weeks_of(c, 5)) for c in cohorts]
        return sorted(c.number for c in cohorts), max(ends, default=DEMO_START)


def play_demo_late_entry(
    engine: Engine,
    settings: Settings,
    lineup: Lineup,
    family_id: str,
    *,
    seed: int,
    weeks: int,
    tail_weeks: int,
    start: datetime = DEMO_START,
) -> tuple[LateEntryResult, list[LoggedRequest]]:
    """Play `family_id` over every finished demo cohort; the result and the server's log of
    chat requests (the late entrant's decisions, over HTTP)."""
    check_entrant(lineup, family_id, start)
    numbers, at = _finished_cohorts(engine)
    if not numbers:
        raise InputError("--late-entry: the database holds no demo cohort", "play a season first")
    entrant = lineup.get(family_id)
    players = demo_lineup(lineup).families
    chosen = Lineup(families=[*(f for f in players if f.id != family_id), entrant])
    world = demo_world(seed, weeks, tail_weeks=tail_weeks, start=start)
    server = ModelServer(
        seed=seed, world=world, slow_seconds=SLOW_SECONDS, retry_after=0,
        latency_scale=LATENCY_SCALE,
    ).start()  # fmt: skip
    responders, close = simulated_responders(settings, seed, world, server.base_url)
    try:
        result = play_late_entry(
            engine, at, chosen, family_id, numbers, responders, source=world, owner=DEMO_OWNER
        )
    finally:
        close()
        server.stop()
    build_bundles(engine, at)  # the completed shadows' bundles, as the hourly job would keep them
    return result, list(server.log)
