"""Replay bundles of methodology v2 cohorts: provenance bundled, `arena verify`
recomputes from the recorded prices, v1 bundles keep their bytes.

- A scripted v2 cohort of the `frozen-quotes` rule set (stamped before the key), played through
  the real engine on SQLite and on PostgreSQL (a plan over the total cap answered again, one
  always over it held, marks at order-book midpoints and at prior values, a sale), bundles its
  quotes, trades' provenance and marks, and verifies 100% under its own stamp.
- A consistent forgery of any recorded price (files edited, the manifest re-hashed) is caught
  by the recomputation, named by the check it breaks.
- A short `arena demo --methodology v2` season verifies 100%, and the same season copied to
  PostgreSQL gives the same bundle, byte for byte.
- The v1 test season's bundles are the bytes the code before this change built (pinned).
"""

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from arena.analytics.replay.bundle import V2_FILES, BuiltBundle, build_bundle
from arena.analytics.replay.format import (
    FILES,
    MANIFEST,
    BundleFiles,
    build_files,
    jsonl_bytes,
    read_jsonl,
)
from arena.analytics.replay.marks import MARKS, MarkRuns, mark_runs
from arena.analytics.replay.report import Report
from arena.analytics.replay.verify import verify_bundle
from arena.storage.db import create_db_engine
from tests.analytics.finished_season import copy_database, finished_season
from tests.engine.test_v2_engine import (
    FOUR_LEGS,
    V2Arena,
    answer,
    bet,
    book,
    stamped_before_rule_sets,
    v2,  # noqa: F401  (the fixture: a v2 cohort on each backend, real loopback servers)
)
from tests.factories import WEEK1
from tests.pg import PostgresCluster
from tests.stated_season import DemoSeasons

V2_CHECKS = (
    "frozen prices follow their quotes",
    "trades carry their quotes",
    "snapshot values at the recorded marks",
)


def failing(report: Report) -> dict[str, list[str]]:
    return {check.name: check.mismatches for check in report.checks if not check.ok}


def assert_verifies_in_full(built: BuiltBundle, settled: bool = True) -> Report:
    """Every check matched, no file changed, and every check compared something (but the
    settlement and Brier checks of a cohort with nothing `settled`), the v2 ones included."""
    report = verify_bundle(built.bundle, published_hash=built.hash)
    assert report.ok and not report.tampered, failing(report)
    names = [check.name for check in report.checks]
    assert set(V2_CHECKS) <= set(names)
    idle = set() if settled else {"settlements and refunds recomputed", "Brier rows recomputed"}
    assert all(c.compared > 0 for c in report.checks if c.name not in idle), [
        (c.name, c.compared) for c in report.checks
    ]
    return report


# --------------------------------------------------------------------------------------------
# A scripted v2 cohort through the real engine, on each backend


def over_the_cap() -> dict[str, Any]:
    """Two bets, each under 25% of the cash, together over it."""
    return bet(("100", "YES", 1500), ("300", "Alice", 1500))


def play(arena: V2Arena) -> None:
    """Four decision weeks and a valuation after each, the books moving between them."""
    models = arena.models
    models.script_model("test/a", answer(over_the_cap(), "test/a"), answer(FOUR_LEGS, "test/a"))
    arena.decide()  # week 1: over the cap, answered again, four legs
    arena.clob.add_book(book("t100y", ["0.50"], ["0.54"]))  # YES 0.52: disagrees with Gamma
    arena.clob.add_book(book("t300a", ["0.70"], ["0.70"]))  # crossed: Alice keeps her value
    arena.snapshot(WEEK1 + timedelta(hours=1))
    arena.snapshot(WEEK1 + timedelta(hours=2))  # nothing moved: the same records
    arena.clob.add_book(book("t300a", ["0.60"], ["0.66"]))  # Alice 0.63 at the CLOB again
    arena.clob.add_book(book("t100y", ["0.41"], ["0.45"]))  # YES 0.43: agrees with Gamma
    arena.snapshot(WEEK1 + timedelta(hours=3))
    yes = next(t.position_id for t in arena.trades() if (t.market_id, t.side) == ("100", "YES"))
    sale = {"action": "SELL", "sells": [{"position_id": yes, "percentage": 50}], "reasoning": "r"}
    models.script_model("test/a", answer(sale, "test/a"))
    week2 = WEEK1 + timedelta(weeks=1)
    arena.decide(week2 + timedelta(minutes=5))  # week 2: half the YES sold at 0.43
    arena.snapshot(week2 + timedelta(hours=1))
    models.script_model("test/a", answer(bet(("100", "YES", 2000), ("300", "Alice", 600)), "t"))
    week3 = WEEK1 + timedelta(weeks=2)
    arena.decide(week3 + timedelta(minutes=5))  # week 3: always over the cap, a fallback HOLD
    arena.snapshot(week3 + timedelta(hours=1))
    models.script_model("test/a", answer(bet(("300", "Bob", 100), ("100", "NO", 200)), "t"))
    week4 = WEEK1 + timedelta(weeks=3)
    arena.decide(week4 + timedelta(minutes=5))  # week 4: more Bob, and the NO side
    arena.snapshot(week4 + timedelta(hours=1))


@pytest.fixture
def scripted(v2: V2Arena) -> BuiltBundle:  # noqa: F811
    """A cohort stamped before v2 named its rule set (`frozen-quotes`): its Gamma fallbacks
    still execute, and its bundle verifies under its own stamp."""
    stamped_before_rule_sets(v2.engine)
    play(v2)
    return build_bundle(v2.engine, 1, provisional=True)


def test_a_scripted_v2_cohort_bundles_its_provenance_and_verifies(
    scripted: BuiltBundle,
) -> None:
    files = scripted.bundle.files
    assert sorted(files) == sorted([*FILES, *V2_FILES, MANIFEST])
    cohort = json.loads(files["cohort.json"])
    assert cohort["methodology_version"] == "v2"
    assert (cohort["constants"]["prices"], cohort["constants"]["bet_cap"]) == (
        "clob_mid",
        "decision_total",
    )
    # the frozen universe's quotes, the trades' provenance
    items = [i for s in read_jsonl(files["market_snapshots.jsonl"]) for i in s["items"]]
    assert items and all(len(i["quotes"]) == len(i["outcomes"]) for i in items)
    reasons = {q["fallback_reason"] for i in items for q in i["quotes"]}
    assert {"crossed_book", "unknown_token", "empty_book", "no_token"} <= reasons
    trades = read_jsonl(files["trades.jsonl"])
    assert {t["trade_type"] for t in trades} == {"BUY", "SELL"}
    assert all(t["price_quote"]["source"] == t["price_source"] for t in trades)
    # the cap: one answer over it answered again, one decision held on it
    attempts = read_jsonl(files["attempts.jsonl"])
    capped = [a for a in attempts if a["error"] and "total cap" in a["error"]]
    assert len(capped) == 4 and all(a["outcome"] == "malformed" for a in capped)
    decisions = read_jsonl(files["decisions.jsonl"])
    assert [d["status"] for d in decisions] == ["ok", "ok", "fallback_hold", "ok"]
    # the marks: order-book midpoints, prior values, a record kept over several slots
    runs = read_jsonl(files[MARKS])
    statuses = {run["provenance"]["status"] for run in runs}
    assert {"accepted", "accepted_with_gamma_disagreement", "prior_value"} <= statuses
    assert any(run["from_slot"] < run["to_slot"] for run in runs)
    board = read_jsonl(files["leaderboard.jsonl"])
    assert [row["capital"] for row in board] == [10000.0]
    assert board[0]["portfolio_value"] == pytest.approx(10000.0 + board[0]["total_pnl"])
    assert b"marks.jsonl" in files["README.txt"]

    report = assert_verifies_in_full(scripted, settled=False)
    compared = {check.name: check.compared for check in report.checks}
    rows = files["portfolio_snapshots.csv"].count(b"\n") - 1
    assert compared["snapshot values at the recorded marks"] >= rows


# --------------------------------------------------------------------------------------------
# Forgeries: a recorded price changed and the manifest re-hashed to match


def forged(bundle: BundleFiles, name: str, change: Callable[[list[dict[str, Any]]], None]) -> Any:
    """The bundle with `name`'s rows changed by `change` and a manifest that lists the new
    bytes (so every file matches its hash: only the recomputation can tell)."""
    rows = read_jsonl(bundle.files[name])
    change(rows)
    data = jsonl_bytes(rows)
    payload = {path: value for path, value in bundle.files.items() if path != MANIFEST}
    meta = {k: v for k, v in bundle.manifest.items() if k not in ("files", "format")}
    return build_files({**payload, name: data}, meta)


def _a_clob_mark(runs: list[dict[str, Any]]) -> None:
    run = next(r for r in runs if r["provenance"]["source"] == "clob_mid")
    run["provenance"]["mark"] = run["provenance"]["price"] = run["provenance"]["clob_price"] = (
        "0.99"
    )


def _a_prior_value(runs: list[dict[str, Any]]) -> None:
    run = next(r for r in runs if r["provenance"]["status"] == "prior_value")
    run["provenance"]["price"] = run["provenance"]["mark"] = "0.123"


def _a_frozen_clob_price(snapshots: list[dict[str, Any]]) -> None:
    quote = next(q for i in snapshots[0]["items"] for q in i["quotes"] if q["clob_price"])
    quote["clob_price"] = str(Decimal(quote["clob_price"]) + Decimal("0.01"))


def _a_frozen_status(snapshots: list[dict[str, Any]]) -> None:
    quote = next(q for i in snapshots[0]["items"] for q in i["quotes"] if q["status"] == "accepted")
    quote["status"] = "accepted_with_gamma_disagreement"


def _a_trade_quote(trades: list[dict[str, Any]]) -> None:
    trades[0]["price_quote"]["gamma_price"] = "0.01"


def _a_trade_source(trades: list[dict[str, Any]]) -> None:
    trade = next(t for t in trades if t["price_source"] == "gamma")
    trade["price_source"] = trade["price_quote"]["source"] = "clob_mid"


def _a_capped_cash(attempts: list[dict[str, Any]]) -> None:
    attempt = next(a for a in attempts if a["error"] and "total cap" in a["error"])
    attempt["error"] = attempt["error"].replace("$10,000.00", "$12,000.00")


def _a_capped_answer_made_valid(attempts: list[dict[str, Any]]) -> None:
    attempt = next(a for a in attempts if a["error"] and "total cap" in a["error"])
    attempt["outcome"], attempt["error"] = "valid", None


def _the_portfolio_value(board: list[dict[str, Any]]) -> None:
    board[0]["portfolio_value"] += 1.0


FORGERIES = [
    (MARKS, _a_clob_mark, "snapshot values at the recorded marks"),
    (MARKS, _a_prior_value, "snapshot values at the recorded marks"),
    ("market_snapshots.jsonl", _a_frozen_clob_price, "frozen prices follow their quotes"),
    ("market_snapshots.jsonl", _a_frozen_status, "frozen prices follow their quotes"),
    ("trades.jsonl", _a_trade_quote, "trades carry their quotes"),
    ("trades.jsonl", _a_trade_source, "trades carry their quotes"),
    ("attempts.jsonl", _a_capped_cash, "answers parsed, decisions re-derived"),
    ("attempts.jsonl", _a_capped_answer_made_valid, "answers parsed, decisions re-derived"),
    ("leaderboard.jsonl", _the_portfolio_value, "leaderboard point estimates"),
]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_forged_recorded_price_is_caught_by_the_recomputation(scripted: BuiltBundle) -> None:
    for name, change, check in FORGERIES:
        bundle = forged(scripted.bundle, name, change)
        report = verify_bundle(bundle)
        assert not report.tampered, (name, change.__name__)  # every file matches its hash
        assert check in failing(report), (change.__name__, failing(report))


def test_the_marks_file_is_lossless() -> None:
    """Runs read back give each row's records, whatever the order positions come and go."""
    rows: list[tuple[int, str, dict[str, Any] | None]] = [
        (1, "s1", {"5": {"mark": "0.1"}, "6": {"mark": "0.2"}}),
        (1, "s2", {"5": {"mark": "0.1"}, "6": {"mark": "0.3"}}),
        (1, "s3", {"6": {"mark": "0.3"}}),
        (1, "s4", {"5": {"mark": "0.1"}, "6": {"mark": "0.3"}}),  # 5 again: a new run
        (2, "s1", {}),
        (2, "s2", None),
        (2, "s3", {"7": {"mark": "0.5"}}),
    ]
    runs = mark_runs(rows)
    assert len(runs) == 5
    readers = {agent: MarkRuns([r for r in runs if r["agent_id"] == agent]) for agent in (1, 2)}
    for agent, slot, provenance in rows:
        expected = {int(pid): record for pid, record in (provenance or {}).items()}
        assert readers[agent].at(slot) == expected
    assert all(not reader.finish() for reader in readers.values())
    # a run starting at no row of its agent is named
    stray = MarkRuns([{**runs[0], "from_slot": "s0"}])
    stray.at("s1")
    assert stray.finish()


# --------------------------------------------------------------------------------------------
# A short demo season of v2


@pytest.fixture(scope="module")
def v2_demo(demo_seasons: DemoSeasons, tmp_path_factory: pytest.TempPathFactory) -> str:
    return demo_seasons.v2(tmp_path_factory.mktemp("v2_demo"))


def test_a_v2_demo_season_verifies_and_is_the_same_bundle_on_postgresql(
    v2_demo: str, pg_cluster: PostgresCluster, pg_template: str
) -> None:
    engine = create_db_engine(v2_demo, role="reader")
    url = pg_cluster.new_database(template=pg_template)
    try:
        built = {number: build_bundle(engine, number, provisional=True) for number in (1, 2)}
        for bundle in built.values():
            assert_verifies_in_full(bundle)
        runs = read_jsonl(built[1].bundle.files[MARKS])
        assert {r["provenance"]["status"] for r in runs} >= {"accepted", "prior_value"}
        copy_database(v2_demo, url)
        on_postgres = create_db_engine(url, role="reader")
        try:
            for number, bundle in built.items():
                again = build_bundle(on_postgres, number, provisional=True)
                assert again.bundle.files == bundle.bundle.files
        finally:
            on_postgres.dispose()
    finally:
        engine.dispose()
        pg_cluster.drop_database(url)


# --------------------------------------------------------------------------------------------
# v1 bundles keep their bytes

# Each file of the v1 test season's two bundles (tests.analytics.finished_season), as the code
# before v2's bundles built them (commit 55d225c): the first 16 hex digits of its SHA-256, the
# wall-clock latencies in decisions and attempts set to 0 (they are the one thing a rebuilt
# season does not repeat). The manifest follows from these and the package version.
V1_PINS = {
    1: {
        "README.txt": "765dc9660e1ac37b",
        "attempts.jsonl": "3552939f0681b741",
        "brier_scores.jsonl": "c73a131a36bc73b1",
        "cohort.json": "99c1f707d6ba9b5b",
        "decisions.jsonl": "80c46c3674455902",
        "leaderboard.jsonl": "15fb59fb2461a1ec",
        "lineup.jsonl": "3968b198c26067e5",
        "market_snapshots.jsonl": "706c7c27d412c611",
        "markets.jsonl": "11c1e7a002cc3a6c",
        "portfolio_snapshots.csv": "7d646f1d48a99395",
        "positions.jsonl": "6c48895156d8a065",
        "trades.jsonl": "2220ae8bba123c95",
    },
    2: {
        "README.txt": "5ea93a38b6d20be4",
        "attempts.jsonl": "1fdab7d2cfd03507",
        "brier_scores.jsonl": "cf505a860c961b5e",
        "cohort.json": "6015c33a2e223ed3",
        "decisions.jsonl": "6f1b078db6a7a4d3",
        "leaderboard.jsonl": "e83aeb6092c1bb13",
        "lineup.jsonl": "310d34fe03fb4c7a",
        "market_snapshots.jsonl": "65d22853f29a1da2",
        "markets.jsonl": "1929e15a189da93c",
        "portfolio_snapshots.csv": "7036327d2973a27c",
        "positions.jsonl": "ba95843cf1d7a800",
        "trades.jsonl": "5578318b16005df2",
    },
}
LATENCY = re.compile(rb'"latency_ms":\d+')


def pinned_digest(path: str, data: bytes) -> str:
    if path in ("decisions.jsonl", "attempts.jsonl"):
        data = LATENCY.sub(b'"latency_ms":0', data)
    return hashlib.sha256(data).hexdigest()[:16]


@pytest.fixture(scope="module")
def v1_season(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = create_db_engine(finished_season(tmp_path_factory.getbasetemp()).url, role="reader")
    yield engine
    engine.dispose()


def test_a_v1_bundle_is_byte_for_byte_what_it_was(v1_season: Engine) -> None:
    for cohort, pins in V1_PINS.items():
        built = build_bundle(v1_season, cohort)
        digests = {
            path: pinned_digest(path, data)
            for path, data in built.bundle.files.items()
            if path != MANIFEST
        }
        assert digests == pins, cohort
        assert MARKS not in built.bundle.files
        assert b"quotes" not in built.bundle.files["market_snapshots.jsonl"]
        assert b"price_source" not in built.bundle.files["trades.jsonl"]
        assert b"portfolio_value" not in built.bundle.files["leaderboard.jsonl"]
        report = verify_bundle(built.bundle)
        assert report.ok and not set(V2_CHECKS) & {c.name for c in report.checks}
