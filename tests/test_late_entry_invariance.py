"""Late entrants never touch a live figure.

A shadow cohort (a late entrant's replay of a live cohort) sits in `cohorts` beside the live
ones with the SAME number and week start. On the finished test season, on each backend, every
live read model, export and bundle is computed; then three shadows are added (a new family, an
incumbent family's id, a contaminated one still tracking), the live jobs run over them at a
later time as the scheduler runs them, and everything is computed again: it must be equal to
the cent and the byte. Each read is compared on its own, so a failure names the read.
"""

import dataclasses
import io
import zipfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import Engine

from arena.analytics.export.bundle import build_bundle as export_bundle
from arena.analytics.export.tables import EXPORTS, ExportFilters, write_csv
from arena.analytics.query import scope
from arena.analytics.query.selects import newest_slot
from arena.analytics.replay.bundle import build_bundle as replay_bundle
from arena.analytics.replay.format import BundleFiles
from arena.analytics.replay.kept import kept_bundle_zip, kept_bundles
from arena.analytics.replay.status import bundle_status
from arena.analytics.replay.verify import verify_bundle
from arena.analytics.stats.calibration import brier_over_time, calibration_summary, reliability
from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.stats.replicates import replicate_agents, replicated_cohorts
from arena.analytics.stats.risk import leaderboard_risk
from arena.analytics.stats.stated import stated_bets
from arena.analytics.stored import bytes_frame, current_stored
from arena.analytics.views import (
    agents,
    cohorts,
    curves,
    decisions,
    horizon,
    markets,
    operations,
    protocol,
    realised,
    status,
    versions,
)
from arena.analytics.views.detectability import detectability_frame
from arena.config import load_settings
from arena.engine.jobs import ANALYSES, BUNDLE, RESOLVE, SNAPSHOT, JobContext, run_job, slot_for
from arena.engine.late_entry import play_late_entry
from arena.lineup import Lineup
from arena.storage.db import create_db_engine
from arena.storage.tables import ANALYSIS_RESULTS, COHORTS, TRADES
from tests.analytics.finished_season import (
    FINISHED_AT,
    ResolvedSource,
    finished_copy,
)
from tests.analytics.season import LLM_A, LLM_B
from tests.late_entry_rows import (
    baseline_responders,
    copy_shadow,
    newcomer,
    season_lineup_with,
)

FIRST = FINISHED_AT + timedelta(days=1)  # the live jobs once before the shadows exist
LATER = FINISHED_AT + timedelta(days=2)  # and again over them
READ_AT = datetime(2026, 9, 1, tzinfo=UTC)
CHEAP: dict[str, Any] = {"replicates": 40, "seed": 3}
NO_NULL: dict[str, Any] = {**CHEAP, "null_seeds": 0}
ALL_ROWS = 10**6


@pytest.fixture(params=["sqlite", "postgres"])
def season_copy(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    """A writable copy of the finished season on each backend."""
    with finished_copy(request, tmp_path) as url:
        yield url


def run_live_jobs(engine: Engine, url: str, at: datetime) -> None:
    """The live jobs as the scheduler runs them: snapshot, resolve, analyses, bundle."""
    ctx = JobContext(
        engine,
        load_settings(database_url=url),
        Lineup(families=[]),
        ResolvedSource(engine, void=""),
        lambda family: None,
        owner="invariance",
    )
    for offset, name in enumerate((SNAPSHOT, RESOLVE, ANALYSES, BUNDLE)):
        when = at + timedelta(minutes=10 * offset)
        result = run_job(ctx, name, slot_for(name, when), when)
        assert result.status == "ok", (name, result.error)


def csv_of(engine: Engine, table: str, filters: ExportFilters) -> bytes:
    out = io.StringIO()
    write_csv(engine, table, filters, out, 1_000_000)
    return out.getvalue().encode()


def stored_analyses(engine: Engine) -> list[tuple[str, Any]]:
    """What the hourly job stored: every scope's frame and data time, one read each. Not the
    Database page's `overview` (row counts of every table: it describes the database, whose
    shadow rows are rows, not a figure of the arena)."""
    table = ANALYSIS_RESULTS
    with engine.connect() as conn:
        rows = conn.execute(
            select(table.c.name, table.c.scope, table.c.data_as_of, table.c.frame)
            .where(table.c.name != "overview")
            .order_by(table.c.name, table.c.scope)
        ).all()
    return [(f"stored {n}[{s}]", (as_of, bytes_frame(frame))) for n, s, as_of, frame in rows]


def zip_files(data: bytes) -> dict[str, bytes]:
    """An export zip's files (its entries carry the wall-clock time they were written)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def live_status(engine: Engine) -> status.ArenaStatus:
    """The arena's status, without which job ran last (the test runs the jobs again)."""
    found = status.arena_status(engine, READ_AT)
    return dataclasses.replace(found, last_job_run=None, last_job=None)


def verified(engine: Engine, number: int) -> tuple[bool, list[str], str]:
    """`arena verify` of the kept bundle: whether all matched, what was tampered, its hash."""
    data = kept_bundle_zip(engine, number)
    assert data is not None
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        files = BundleFiles({i.filename: archive.read(i) for i in archive.infolist()})
    report = verify_bundle(files)
    return report.ok, [check.path for check in report.tampered], files.hash


Read = tuple[str, Callable[[], Any]]


def scoped_reads(engine: Engine, numbers: list[int], keys: list[str]) -> list[Read]:
    """The scoped read models: every scope (all cohorts, each cohort, each protocol group)."""
    reads: list[Read] = []
    scopes: list[dict[str, Any]] = [{}, *({"cohort": n} for n in numbers)]
    scopes += [{"methodology": k} for k in keys if k != "v1"]
    for w in scopes:
        tag = ",".join(f"{k}={v}" for k, v in w.items()) or "all"
        reads += [
            (f"leaderboard[{tag}]", partial(leaderboard, engine, **w, **CHEAP)),
            (f"calibration[{tag}]", partial(calibration_summary, engine, **w, **CHEAP)),
            (f"reliability[{tag}]", partial(reliability, engine, **w)),
            (f"brier_over_time[{tag}]", partial(brier_over_time, engine, **w)),
            (f"risk[{tag}]", partial(leaderboard_risk, engine, **w)),
            (f"realised_cohort[{tag}]", partial(realised.realised_by_cohort, engine, **w)),
            (f"realised_family[{tag}]", partial(realised.realised_by_family, engine, **w)),
            (f"detectability[{tag}]", partial(detectability_frame, engine, **w, **NO_NULL)),
            (f"curves[{tag}]", partial(curves.portfolio_curves, engine, "ALL", **w)),
            (f"curves_1D[{tag}]", partial(curves.portfolio_curves, engine, "1D", **w)),
        ]
    return reads


def cohort_reads(engine: Engine, numbers: list[int], families: list[str]) -> list[Read]:
    """Each cohort's pages (by number) and each family's."""
    reads: list[Read] = []
    for n in numbers:
        reads += [
            (f"standings[{n}]", partial(cohorts.cohort_standings, engine, n)),
            (f"standings_realised[{n}]", partial(cohorts.cohort_standings_realised, engine, n)),
            (f"decisions_by_week[{n}]", partial(cohorts.decisions_by_week, engine, n)),
            (f"cohort_version[{n}]", partial(scope.cohort_version, engine, n)),
            (f"horizon[{n}]", partial(horizon.horizon_summary, engine, [n])),
            (f"replay_bundle[{n}]", partial(replay_hash, engine, n)),
            (f"kept_zip[{n}]", partial(kept_bundle_zip, engine, n)),
            (f"verify[{n}]", partial(verified, engine, n)),
            (f"bundle_status[{n}]", partial(bundle_status, engine, n)),
            (f"stated_bets[{n}]", partial(stated_bets, engine, cohort=n)),
            (f"replicate_agents[{n}]", partial(replicate_agents, engine, cohort=n)),
            (f"decisions[{n}]", partial(decisions.decisions, engine, cohort=n, limit=ALL_ROWS)),
        ]
        reads += [
            (f"export[{t},{n}]", partial(csv_of, engine, t, ExportFilters(n))) for t in EXPORTS
        ]
    for f in families:
        reads += [
            (f"family_standings[{f}]", partial(cohorts.family_standings, engine, f)),
            (f"family_cohorts[{f}]", partial(agents.family_cohorts, engine, f)),
            (f"decisions[{f}]", partial(decisions.decisions, engine, family=f, limit=ALL_ROWS)),
        ]
    return reads


def replay_hash(engine: Engine, number: int) -> str:
    return replay_bundle(engine, number).hash


def _newest(engine: Engine) -> Any:
    with engine.connect() as conn:
        return newest_slot(conn)


def every_read(engine: Engine) -> list[tuple[str, Any]]:
    """(name, value) of every live read of the database, in a fixed order."""
    numbers = cohorts.cohort_numbers(engine)
    keys = list(scope.protocols_present(engine))
    families = sorted(agents.filter_options(engine).families)
    reads: list[Read] = [
        ("newest_slot", lambda: _newest(engine)),
        ("leaderboard_is_current", lambda: current_stored(engine, "leaderboard") is not None),
        ("cohort_numbers", lambda: numbers),
        ("protocols_present", lambda: scope.protocols_present(engine)),
        ("versions_present", lambda: scope.versions_present(engine)),
        ("excluded_cohorts", lambda: scope.excluded_cohorts(engine)),
        ("extended_cohorts", lambda: scope.extended_cohorts(engine)),
        ("extension_names", lambda: scope.extension_names(engine)),
        ("cohorts", lambda: cohorts.cohorts(engine)),
        ("agent_index", lambda: agents.agent_index(engine)),
        ("filter_options", lambda: agents.filter_options(engine)),
        ("family_returns", lambda: agents.family_returns(engine)),
        ("decisions", lambda: decisions.decisions(engine, limit=10**6)),
        ("decision_weeks", lambda: decisions.decision_weeks(engine)),
        ("markets", lambda: markets.markets(engine, limit=10**6)),
        ("markets_held", lambda: markets.markets(engine, held=True, limit=10**6)),
        ("categories", lambda: markets.categories(engine)),
        ("settlement_failures", lambda: operations.settlement_failures(engine)),
        ("api_spend", lambda: operations.api_spend(engine)),
        ("spend_by_family", lambda: operations.spend_by_family(engine)),
        ("spend_by_week", lambda: operations.spend_by_week(engine)),
        ("status", lambda: live_status(engine)),
        ("horizon_overruns", lambda: horizon.horizon_overruns(engine)),
        ("methodology_versions", lambda: protocol.methodology_versions(engine)),
        ("latest_stamp", lambda: protocol.latest_stamp(engine)),
        ("version_scope", lambda: versions.version_scope(engine)),
        ("replicated_cohorts", lambda: replicated_cohorts(engine)),
        ("stated_bets", lambda: stated_bets(engine)),
        ("replicate_agents", lambda: replicate_agents(engine)),
        ("kept_bundles", lambda: kept_bundles(engine)),
        ("stored_analyses", lambda: stored_analyses(engine)),
        *scoped_reads(engine, numbers, keys),
        *cohort_reads(engine, numbers, families),
    ]
    reads += [(f"export[{t}]", partial(csv_of, engine, t, ExportFilters())) for t in EXPORTS]
    for m in traded_markets(engine):
        reads += [
            (f"market_positions[{m}]", partial(markets.market_positions, engine, m)),
            (f"market_trades[{m}]", partial(markets.market_trades, engine, m)),
            (f"market_brier[{m}]", partial(markets.market_brier, engine, m)),
        ]
    reads.append(
        (
            "export_bundle",
            lambda: zip_files(
                export_bundle(
                    engine, list(EXPORTS), ExportFilters(), cap=10**6, exported_at=READ_AT
                ).data
            ),
        )
    )
    return [(name, read()) for name, read in reads]


def traded_markets(engine: Engine) -> list[str]:
    """The live season's traded markets (read before the shadows, which trade the same)."""
    with engine.connect() as conn:
        found = conn.execute(select(TRADES.c.market_id).distinct().order_by(TRADES.c.market_id))
        return [str(m) for m in found.scalars()][:4]


# Money is Decimal (object columns): compared exactly, to the cent and below. Floats (means,
# Brier, rates) to 12 significant digits: PostgreSQL's SUM over double precision adds in the
# plan's row order, which other rows in the table (the shadows') may change in the last bit.
FLOATS: dict[str, Any] = {"check_exact": False, "rtol": 1e-12, "atol": 1e-12}


def assert_same(name: str, before: Any, after: Any) -> None:
    if dataclasses.is_dataclass(before) and not isinstance(before, type):
        assert type(after) is type(before), name
        for field in dataclasses.fields(before):
            assert_same(
                f"{name}.{field.name}", getattr(before, field.name), getattr(after, field.name)
            )
        return
    if isinstance(before, pd.DataFrame):
        pd.testing.assert_frame_equal(after, before, obj=name, **FLOATS)
    elif isinstance(before, pd.Series):
        pd.testing.assert_series_equal(after, before, obj=name, **FLOATS)
    elif isinstance(before, tuple | list) and any(
        isinstance(item, pd.DataFrame | tuple | list) for item in before
    ):
        assert isinstance(after, tuple | list) and len(after) == len(before), name
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            assert_same(f"{name}[{index}]", old, new)
    else:
        assert after == before, name


NEWCOMER = newcomer()


def test_late_entrants_never_touch_a_live_read_job_or_bundle(season_copy: str) -> None:
    engine = create_db_engine(season_copy)
    try:
        run_live_jobs(engine, season_copy, FIRST)
        before = every_read(engine)

        copy_shadow(engine, 1, LLM_A)  # a new family: llm-a-late
        copy_shadow(engine, 1, LLM_A, family=LLM_B)  # an incumbent family's id
        tracking = copy_shadow(engine, 2, LLM_B, contaminated=True)
        with engine.begin() as conn:  # still being played: the live jobs must leave it be
            conn.execute(update(COHORTS).where(COHORTS.c.id == tracking).values(status="tracking"))
        run_live_jobs(engine, season_copy, LATER)
        played = play_late_entry(  # and one the engine's own player plays, asking the source
            engine,  # about the markets only it held: its last snapshot is the newest of all
            LATER + timedelta(days=1),
            season_lineup_with(NEWCOMER),
            NEWCOMER.id,
            [1, 2],
            baseline_responders,
            source=ResolvedSource(engine, void=""),
        )
        assert played.trades > 0 and played.settled_recorded > 0 and played.asked
        after = every_read(engine)

        failed = [f"{name}: read only with shadows" for name in dict(after).keys() - dict(before)]
        for name, old in before:
            try:
                assert name in dict(after), "read no longer made"
                assert_same(name, old, dict(after)[name])
            except (AssertionError, ValueError) as error:
                failed.append(f"{name}: {str(error)[:300]}")
        assert not failed, "\n".join(failed)
    finally:
        engine.dispose()
