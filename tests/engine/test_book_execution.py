"""A `book_execution` cohort through the real decision job, on both backends.

The real loopback CLOB (`tests.markets.clob_server`) serves the RECORDED REAL Spurs book
(tests/fixtures/clob/, PROVENANCE.md) and the hand-made books of tests/engine/test_v2_engine.py;
the real `ClobClient` reads them; the scripted chat server answers the model. Every expected
figure is worked out by hand in the comment beside it. A new cohort's buys pay the fee in USDC
on top (its stamp's `fee_charged`); `in_shares` is a cohort stamped before that key, whose
fills, sales and marks are still the fee-in-shares ones.
"""

from collections.abc import Iterator
from datetime import datetime, timedelta
from decimal import Decimal as D

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arena.agents.prompts import BOOK_EXECUTION_HEADING
from arena.agents.responders import default_responders
from arena.analytics.export.tables import ExportFilters, iter_rows
from arena.analytics.query.scope import excluded_cohorts
from arena.analytics.replay.bundle import build_bundle
from arena.analytics.replay.verify import verify_bundle
from arena.analytics.stats.leaderboard import leaderboard
from arena.analytics.views.versions import version_scope
from arena.config import BOOK_EXECUTION, FEE_CHARGED, Methodology, cohort_stamp, load_settings
from arena.core.accounting import mark_value
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import DecideResult, run_decisions
from arena.engine.market_sync import upsert_markets
from arena.engine.snapshots import take_snapshots
from arena.lineup import parse_lineup
from arena.markets.clob import ClobClient
from arena.storage.book_models import DecisionBook
from arena.storage.db import session_scope
from arena.storage.models import Cohort, Decision, Market, PortfolioSnapshot, Position, Trade
from tests.engine.chat_server import answer, serve_models
from tests.engine.test_decision_books import SPURS, SPURS_MARKET, Arena
from tests.engine.test_v2_engine import BOOKS, LINEUP, MARKETS, bet, book
from tests.factories import WEEK1
from tests.faults.invariants import assert_books_balance
from tests.loopback import Reply
from tests.markets.clob_server import serve as serve_clob
from tests.test_book_walk import RECORDED_FEES

V1, V2 = Methodology(), Methodology(version="v2")
RUN = WEEK1 + timedelta(minutes=5)


def arena_with(engine: Engine, methodology: Methodology) -> Iterator[Arena]:
    with serve_models() as models, serve_clob(*BOOKS, SPURS) as clob:
        settings = load_settings(llm_api_key="sk-test-key", llm_base_url=models.url)
        lineup = parse_lineup(LINEUP)
        with session_scope(engine) as s:
            upsert_markets(s, [*MARKETS, SPURS_MARKET], WEEK1)
            spurs = s.get(Market, "500")
            assert spurs is not None
            spurs.fee_schedule = RECORDED_FEES.to_json()  # as Gamma's market 842093 sends it
            s.add(spurs)
        start_cohort(engine, WEEK1, lineup, methodology, extensions=[BOOK_EXECUTION])
        yield Arena(engine, models, clob, settings, lineup)


@pytest.fixture
def walks(engine: Engine) -> Iterator[Arena]:
    yield from arena_with(engine, V1)


@pytest.fixture
def in_shares(engine: Engine) -> Iterator[Arena]:
    """A cohort stamped before `fee_charged` existed: its stamp has no such key."""
    for arena in arena_with(engine, V1):
        with session_scope(engine) as s:
            cohort = s.exec(select(Cohort)).one()
            cohort.constants = {k: v for k, v in cohort.constants.items() if k != FEE_CHARGED}
            s.add(cohort)
        yield arena


def decide(arena: Arena, at: datetime, methodology: Methodology = V1) -> DecideResult:
    """A run with book recording OFF (`books=None`): the cohort's stamp records them anyway."""
    responders, close = default_responders(arena.settings, sleep=lambda _s: None)
    reader = ClobClient(arena.clob.url, max_attempts=1, min_interval=0.0, sleep=lambda _s: None)
    try:
        return run_decisions(
            arena.engine, at, arena.lineup, methodology, responders, prices=lambda: reader
        )
    finally:
        close()
        reader.close()


def trades(engine: Engine) -> dict[tuple[str, str], Trade]:
    with session_scope(engine) as s:
        rows = s.exec(select(Trade).order_by(col(Trade.id)))
        return {(t.market_id, t.trade_type): t for t in rows}


LEGS = bet(
    ("500", "YES", 500),  # the recorded Spurs asks, fee-enabled
    ("100", "YES", 100),  # asks 0.45 × 100 + 0.46 × 100 = $91 of depth: a partial fill
    ("200", "YES", 100),  # bid 0.30 ≥ ask 0.28: crossed
    ("300", "Carol", 100),  # an empty book
    ("300", "Bob", 100),  # the CLOB's 404: stored with no book, its status the reason
)


def test_a_book_execution_cohort_walks_its_runs_stored_books(walks: Arena) -> None:
    with session_scope(walks.engine) as s:
        cohort = s.exec(select(Cohort)).one()
    assert cohort.constants == cohort_stamp(V1, [BOOK_EXECUTION])
    walks.models.script_model("test/a", answer(LEGS, "test/a"))
    result = decide(walks, RUN)
    assert walks.books(result.snapshot_id)  # stored although recording is off
    # v1's recording read: the first token alone (a down CLOB costs one token), then the rest
    assert len(walks.clob.requests_to("POST", "/books")) == 2
    by = trades(walks.engine)
    spurs = by[("500", "BUY")]
    # $500 at 0.62, the fee on top: 500 / (0.62 + 0.04 × 0.62 × 0.38) = 500 / 0.629424 →
    # 794.377081 shares; fee 794.377081 × 0.009424 = 7.4862096… → 7.48620, inside the $500.
    assert (spurs.amount, spurs.price, spurs.shares) == (D("500"), D("0.62"), D("794.377081"))
    assert spurs.price_source == "book_walk" and spurs.book_fill is not None
    assert (spurs.book_fill["fee"], spurs.book_fill["fee_shares"]) == ("7.48620", "0.000000")
    thin = by[("100", "BUY")]
    # 100 shares at 0.45 ($45) + 100 at 0.46 ($46): $91 for 200 shares, VWAP 0.455, $9 unspent.
    assert (thin.amount, thin.shares, thin.price) == (D("91"), D("200"), D("0.455"))
    assert thin.book_fill is not None and thin.book_fill["partial"] is True
    with session_scope(walks.engine) as s:
        decision = s.exec(select(Decision)).one()
    system = walks.models.requests_for("test/a")[0].json["messages"][0]["content"]
    assert BOOK_EXECUTION_HEADING in system  # the model was told how its bets fill
    refused = {leg["index"]: leg["reason"] for leg in decision.legs if not leg["executed"]}
    assert refused == {2: "crossed_book", 3: "empty_book", 4: "unknown_token"}
    assert decision.amount_bet == D("591")
    assert_books_balance(walks.engine)


def test_a_cohort_stamped_before_fee_charged_still_pays_in_shares_and_verifies(
    in_shares: Arena,
) -> None:
    walks = in_shares
    walks.models.script_model("test/a", answer(bet(("500", "YES", 500)), "test/a"))
    decide(walks, RUN)
    bought = trades(walks.engine)[("500", "BUY")]
    # $500 at 0.62: 806.451612 gross; fee 7.59999 = 12.258049 shares; 794.193563 credited.
    assert (bought.amount, bought.shares) == (D("500"), D("794.193563"))
    assert bought.book_fill is not None and bought.book_fill["fee_shares"] == "12.258049"
    with session_scope(walks.engine) as s:
        position = s.exec(select(Position)).one()
    sale = {"action": "SELL", "sells": [{"position_id": position.id, "percentage": 100}]}
    sale["reasoning"] = "test"
    walks.models.script_model("test/a", answer(sale, "test/a"))
    decide(walks, RUN + timedelta(days=7))
    sold = trades(walks.engine)[("500", "SELL")]
    # 794.193563 shares into the 0.61 bid (454511.68 deep): 484.458073 (down) − fee
    # 794.193563 × 0.04 × 0.61 × 0.39 = 7.55754 (floored) = 476.900533; realised −23.099467.
    assert (sold.amount, sold.shares, sold.price) == (D("476.900533"), D("794.193563"), D("0.61"))
    assert sold.realized_pnl == D("-23.099467")
    assert_books_balance(walks.engine)
    # its bundle (a stamp without the key) recomputes those fills in shares
    reader = ClobClient(walks.clob.url, max_attempts=1, min_interval=0.0, sleep=lambda _s: None)
    try:
        take_snapshots(walks.engine, RUN + timedelta(days=7, minutes=10), prices=lambda: reader)
    finally:
        reader.close()
    report = verify_bundle(build_bundle(walks.engine, 1, provisional=True).bundle)
    assert report.ok, [(c.name, c.mismatches[:2]) for c in report.checks if not c.ok]
    assert next(c for c in report.checks if c.name == "book-walk fills recomputed").compared


def test_a_v2_book_execution_cohort_walks_books_and_keeps_the_mid_beside(engine: Engine) -> None:
    for arena in arena_with(engine, V2):
        arena.models.script_model("test/a", answer(bet(("100", "YES", 50)), "test/a"))
        decide(arena, RUN, V2)
        trade = trades(engine)[("100", "BUY")]
        # $50: 100 shares at 0.45 ($45), then $5 / 0.46 = 10.869565 (down): 110.869565 shares,
        # VWAP 49.9999999 / 110.869565 = 0.450980; the v2 mid 0.43 stays beside it.
        assert (trade.price, trade.shares, trade.price_source) == (
            D("0.45098"),
            D("110.869565"),
            "book_walk",
        )
        assert trade.price_quote is not None and trade.price_quote["price"] == "0.43"


def test_a_book_execution_run_with_no_clob_reader_is_a_clear_error(walks: Arena) -> None:
    walks.models.script_model("test/a", answer(bet(("500", "YES", 500)), "test/a"))
    responders, close = default_responders(walks.settings, sleep=lambda _s: None)
    try:
        with pytest.raises(Exception, match="book_execution cohort walks"):
            run_decisions(walks.engine, RUN, walks.lineup, V1, responders)
    finally:
        close()
    with session_scope(walks.engine) as s:  # refused before any claim: nothing to re-claim
        assert not s.exec(select(Decision)).all() and not s.exec(select(DecisionBook)).all()


def test_its_figures_stay_apart_from_v1_and_v2(walks: Arena) -> None:
    """The read side's scope leaves a book_execution cohort out of the plain v1 and v2
    figures (an extended cohort), while the cohort's own figures are there to read."""
    walks.models.script_model("test/a", answer(bet(("500", "YES", 500)), "test/a"))
    decide(walks, RUN)
    reader = ClobClient(walks.clob.url, max_attempts=1, min_interval=0.0, sleep=lambda _s: None)
    try:
        take_snapshots(walks.engine, RUN + timedelta(minutes=10), prices=lambda: reader)
    finally:
        reader.close()
    for version in ("v1", "v2"):
        scope = version_scope(walks.engine, version)
        assert scope.pooled == [] and 1 in scope.left_out
    assert version_scope(walks.engine, "v1").extended == [1]
    assert excluded_cohorts(walks.engine) == [1]
    pooled = leaderboard(walks.engine, replicates=20, null_seeds=1)
    own = leaderboard(walks.engine, cohort=1, replicates=20, null_seeds=1)
    assert pooled.empty or float(pooled["capital"].sum()) == 0.0
    assert not own.empty and float(own["capital"].sum()) > 0


def test_positions_are_marked_at_the_bid_with_the_mid_beside(in_shares: Arena) -> None:
    walks = in_shares  # its Spurs position is the hand-computed one of the sale above
    walks.models.script_model(
        "test/a", answer(bet(("500", "YES", 500), ("100", "YES", 100)), "test/a")
    )
    decide(walks, RUN)
    with session_scope(walks.engine) as s:
        ids = {p.market_id: p.id for p in s.exec(select(Position))}
    walks.clob.add_book(book("t100y", ["0.50"], ["0.50"]))  # crossed now: no bid mark
    before = len(walks.clob.requests_to("POST", "/books"))
    reader = ClobClient(walks.clob.url, max_attempts=1, min_interval=0.0, sleep=lambda _s: None)
    try:
        take_snapshots(walks.engine, RUN + timedelta(minutes=10), prices=lambda: reader)
    finally:
        reader.close()
    assert len(walks.clob.requests_to("POST", "/books")) == before + 1  # one batched read
    with session_scope(walks.engine) as s:
        row = s.exec(select(PortfolioSnapshot)).one()
        spurs_mark = s.get(Position, ids["500"]).mark_price  # type: ignore[union-attr]
    provenance = row.price_provenance or {}
    spurs = provenance[str(ids["500"])]
    # 794.193563 shares into the 0.61 bid: 484.458073 − fee 7.55754 = 476.900533, a share
    # 476.900533 / 794.193563 = 0.600484; the midpoint (0.61 + 0.62) / 2 = 0.615 beside it.
    assert (spurs["bid_value"], spurs["mark"], spurs["mid"]) == ("476.900533", "0.600484", "0.615")
    assert spurs_mark == D("0.600484")
    thin = provenance[str(ids["100"])]
    # crossed: the prior mark (the fill's VWAP 0.455) with the reason; 200 × 0.455 = 91
    assert (thin["status"], thin["fallback_reason"], thin["mark"]) == (
        "prior_value",
        "crossed_book",
        "0.455",
    )
    assert row.positions_value == D("476.900533") + D("91")
    assert row.total_value == D("9409") + D("567.900533")
    # The positions export values an open position at that mark, never at Gamma's price.
    exported = {
        r["market_id"]: r
        for r in iter_rows(walks.engine, "positions", ExportFilters(), cap=10)
        if r["status"] == "open"
    }
    assert (exported["500"]["mark_price"], exported["500"]["current_value"]) == (
        D("0.600484"),
        mark_value(exported["500"]["shares"], D("0.600484")),
    )
    assert exported["100"]["mark_price"] == D("0.455")


def test_a_silent_clob_leaves_the_run_without_books_and_every_leg_refused(walks: Arena) -> None:
    """The CLOB answers nothing: the run stores no books, so each BET is refused `no_book`
    and the cash stays; the decision is a zero_trade, re-claimed by the next run."""
    walks.clob.script("POST", "/books", Reply(503, {"error": "down"}))
    walks.clob.script("GET", "/book", Reply(503, {"error": "down"}))
    walks.models.script_model("test/a", answer(bet(("500", "YES", 500)), "test/a"))
    result = decide(walks, RUN)
    assert walks.books(result.snapshot_id) == {}
    assert result.statuses == {"zero_trade": 1}
    with session_scope(walks.engine) as s:
        decision = s.exec(select(Decision)).one()
        assert not s.exec(select(Trade)).all()
    assert [leg["reason"] for leg in decision.legs] == ["no_book"]
    assert_books_balance(walks.engine)
