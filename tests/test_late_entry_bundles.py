"""A late entrant's shadow cohort gets a replay bundle like a live cohort's.

The finished test season (`finished_season`) is copied to each backend and a baseline family
plays cohort 1 afterwards through the real player (`play_late_entry`): once cleanly, once
contaminated (its knowledge cutoff after the cohort's start, played anyway). The real bundle
job keeps both shadows' bundles beside the live ones (untouched), they are reached by the
cohort's number and the family, and `arena verify` checks each in full, marks included; one
changed byte is named, and a forged mark is caught by the late entry's marks rule. A late
entrant of the scripted v2 cohort (`test_v2_bundles.play`) verifies in full under v2's rules.
"""

import io
import json
import zipfile
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from arena.agents.responders import BaselineResponder
from arena.analytics.replay.bundle import build_bundle
from arena.analytics.replay.format import MANIFEST, BundleFiles, build_files
from arena.analytics.replay.kept import bundle_file_name, kept_bundle_zip, kept_bundles
from arena.analytics.replay.marks import MARKS
from arena.analytics.replay.status import bundle_status
from arena.analytics.replay.verify import verify_bundle
from arena.core.errors import InputError
from arena.engine.bundles import build_bundles
from arena.engine.late_entry import play_late_entry
from arena.lineup import Lineup
from arena.storage.db import create_db_engine
from arena.storage.tables import TRADES
from tests.analytics.finished_season import (
    FINISHED_AT,
    ResolvedSource,
    finished_copy,
)
from tests.engine.test_v2_engine import (  # the v2 cohort fixture
    V2Arena,
    stamped_before_rule_sets,
    v2,  # noqa: F401
)
from tests.factories import WEEK1
from tests.late_entry_rows import copy_shadow, newcomer, season_lineup_with
from tests.test_v2_bundles import play

CLEAN, TAINTED = "late-favorite", "late-tainted"
PLAYED_AT = FINISHED_AT + timedelta(hours=1)
KEPT_AT = FINISHED_AT + timedelta(hours=2)
LATE_CHECK = "late entrant's snapshot values at its recorded marks"


@pytest.fixture(params=["sqlite", "postgres"])
def played(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A writable copy of the finished season on each backend."""
    with finished_copy(request, tmp_path) as url:
        yield url


def play_and_keep(url: str) -> dict[int | str, str]:
    """Play both late entrants over cohort 1 and run the bundle job; what it built."""
    engine = create_db_engine(url)
    try:
        families = [newcomer(CLEAN, date(2025, 1, 1)), newcomer(TAINTED, date(2026, 6, 1))]
        lineup = season_lineup_with(*families)
        with engine.connect() as conn:
            traded = sorted(conn.execute(select(TRADES.c.market_id).distinct()).scalars())
        source = ResolvedSource(engine, void=traded[0])
        for family, contaminated in ((CLEAN, False), (TAINTED, True)):
            result = play_late_entry(
                engine,
                PLAYED_AT,
                lineup,
                family,
                [1],
                BaselineResponder,
                allow_contaminated=contaminated,
                source=source,
            )
            assert result.completed == [1], result.counts()
        return build_bundles(engine, KEPT_AT).built
    finally:
        engine.dispose()


def unzip(data: bytes) -> BundleFiles:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return BundleFiles({name: archive.read(name) for name in archive.namelist()})


def one_byte_changed(data: bytes) -> bytes:
    """`data` with one digit past its middle changed (still valid JSON or CSV)."""
    index = next(i for i in range(len(data) // 2, len(data)) if chr(data[i]).isdigit())
    digit = (data[index] - ord("0") + 1) % 10
    return data[:index] + bytes([ord("0") + digit]) + data[index + 1 :]


def test_a_late_entrants_bundle_is_kept_reached_and_verified_in_full(played: str) -> None:
    engine = create_db_engine(played, role="reader")
    try:
        live_before = {n: kept_bundle_zip(engine, n) for n in (1, 2)}
        listed_before = kept_bundles(engine)
    finally:
        engine.dispose()
    built = play_and_keep(played)
    assert sorted(map(str, built)) == [f"1 late:{CLEAN}", f"1 late:{TAINTED}"]
    engine = create_db_engine(played, role="reader")
    try:
        # the live cohorts' bundles, listing and links are as they were
        assert {n: kept_bundle_zip(engine, n) for n in (1, 2)} == live_before
        assert kept_bundles(engine).equals(listed_before)
        assert bundle_status(engine, 1).kept_hash == unzip(live_before[1] or b"").hash  # type: ignore[union-attr]
        late_kept = kept_bundles(engine, late_entry=True)
        assert late_kept["late_entry_family"].tolist() == sorted([CLEAN, TAINTED])
        places = []
        for family, contaminated in ((CLEAN, False), (TAINTED, True)):
            bundle = unzip(kept_bundle_zip(engine, 1, late_entry=family) or b"")
            assert bundle.hash == built[f"1 late:{family}"]
            status = bundle_status(engine, 1, late_entry=family)
            assert status is not None and status.kept_hash == bundle.hash
            name = bundle_file_name(1, bundle.hash, family)
            assert name.startswith(f"forecaster-arena-cohort-1-late-entry-{family}-replay-")
            # what it is, where a reader looks first
            record = bundle.manifest["late_entry"]
            assert (record["of"], record["family"]) == (1, family)
            assert record["contaminated"] is contaminated
            assert json.loads(bundle.files["cohort.json"])["late_entry"] == record
            head = bundle.files["README.txt"].decode().splitlines()[:3]
            assert head[0] == f"Forecaster Arena replay bundle: cohort 1, late entrant {family}"
            assert head[2].startswith("CONTAMINATED") is contaminated
            (row,) = [json.loads(line) for line in bundle.files["leaderboard.jsonl"].splitlines()]
            assert (row["family_id"], row["rank"]) == (family, 1)
            assert row["rank_beside_incumbents"] >= 1
            places.append(row["rank_beside_incumbents"])
            # a rebuild by number and family gives the kept bytes
            assert build_bundle(engine, 1, late_entry=family).bundle.files == bundle.files
            report = verify_bundle(bundle, bundle.hash)
            assert report.ok, [(c.name, c.mismatches) for c in report.checks if not c.ok]
            checks = {check.name: check for check in report.checks}
            assert checks[LATE_CHECK].compared > 0 and checks["leaderboard point estimates"].ok
            taint = " (CONTAMINATED)" if contaminated else ""
            assert report.title.startswith(
                f"Replay bundle of cohort 1, late entrant {family}{taint}:"
            )
            changed = dict(bundle.files)
            changed[MARKS] = one_byte_changed(changed[MARKS])
            tampered = verify_bundle(BundleFiles(changed), bundle.hash)
            assert not tampered.ok
            assert [(f.path, f.status) for f in tampered.tampered] == [(MARKS, "changed")]
            if not contaminated:
                forged_mark_is_caught(bundle)
        # the two played alike: each is placed among the incumbents alone, never behind the
        # other late entrant, so a bundle rebuilt after another (better) late entry keeps its
        # bytes: here a copy of the oracle, the season's best, entering cohort 1 afterwards
        assert places[0] == places[1], places
        writer = create_db_engine(played)
        copy_shadow(writer, 1, "oracle", family="ahead")
        writer.dispose()
        kept = unzip(kept_bundle_zip(engine, 1, late_entry=CLEAN) or b"")
        assert build_bundle(engine, 1, late_entry=CLEAN).bundle.files == kept.files
        with pytest.raises(InputError, match="no late entrant 'nobody'"):
            build_bundle(engine, 1, late_entry="nobody")
    finally:
        engine.dispose()


def forged_mark_is_caught(bundle: BundleFiles) -> None:
    """A run mark changed and the manifest rebuilt (no file check fails): the mark is no
    longer the run's frozen price, and the late entry's marks rule names it."""
    runs = [json.loads(line) for line in bundle.files[MARKS].splitlines()]
    forged = next(run for run in runs if run["provenance"]["source"] == "run")
    forged["provenance"]["price"] = "0.010000"
    lines = [json.dumps(run, sort_keys=True, separators=(",", ":")) for run in runs]
    files = {name: data for name, data in bundle.files.items() if name != MANIFEST}
    files[MARKS] = ("\n".join(lines) + "\n").encode()
    meta = {k: v for k, v in bundle.manifest.items() if k not in ("files", "format")}
    report = verify_bundle(build_files(files, meta))
    assert not report.tampered
    (late,) = [check for check in report.checks if check.name == LATE_CHECK]
    where = f"position {forged['position_id']} run mark"
    assert any(where in line for line in late.mismatches), late.mismatches


def test_a_late_entrant_of_a_v2_cohort_verifies_under_v2s_rules(v2: V2Arena) -> None:  # noqa: F811
    """A cohort of the `frozen-quotes` rule set (its Gamma fallbacks executed); the original's
    rule set's late entrant: tests/engine/test_v2_source_rules.py."""
    stamped_before_rule_sets(v2.engine)
    play(v2)  # four decision weeks of the scripted v2 cohort, its positions still open
    family = newcomer(CLEAN, date(2025, 1, 1))
    lineup = Lineup(families=[*v2.lineup.families, family])
    at = WEEK1 + timedelta(weeks=6)  # past the cohort's five-week window
    result = play_late_entry(v2.engine, at, lineup, CLEAN, [1], BaselineResponder)
    assert result.trades > 0, result.counts()
    built = build_bundle(v2.engine, 1, late_entry=CLEAN, provisional=True).bundle
    assert json.loads(built.files["cohort.json"])["final"] is False  # positions open
    (row,) = [json.loads(line) for line in built.files["leaderboard.jsonl"].splitlines()]
    assert row["capital"] == 10000.0 and row["rank"] == 1
    report = verify_bundle(built)
    assert report.ok, [(c.name, c.mismatches) for c in report.checks if not c.ok]
    names = {check.name for check in report.checks}
    assert {LATE_CHECK, "frozen prices follow their quotes", "trades carry their quotes"} <= names
