"""v2's two rule sets on the read side: cohorts of the original's rules (`source-7c78b0c`) rank
by dollar P/L summed over cohorts, as the original's aggregate leaderboard does; cohorts
stamped before the rule set was (`frozen-quotes`) keep ranking by return; and the two are
never pooled: each has its own protocol key, scope, stored analyses and selector entry.

The book: two families, A in both cohorts of a group and B in the first alone. A makes $100 in
each cohort (+$200 on $20,000: 1%), B $150 in its one (1.5% on $10,000): by summed dollars A
leads, by return B does. The same book twice, under each rule set."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine

from arena.analytics.query import scope as scopes
from arena.analytics.query.scope import cohort_id_of, protocol_key, protocols_present
from arena.analytics.stats import leaderboard as boards
from arena.analytics.stats.leaderboard import leaderboard, ranked
from arena.analytics.stored import stored_result
from arena.analytics.views.versions import version_scope
from arena.config import Methodology, cohort_stamp
from arena.engine.analyses import store_analyses
from arena.engine.settlement import settle_market
from arena.engine.snapshots import take_snapshots
from arena.markets.resolution import Verdict
from arena.storage.db import session_scope
from arena.storage.tables import COHORTS
from tests.factories import WEEK1, market, new_cohort_agents, trade_into

SOURCE = Methodology(version="v2").stamp()
FROZEN = {key: value for key, value in SOURCE.items() if key != "rule_set"}


def test_the_rule_set_is_part_of_a_v2_protocol_key() -> None:
    assert SOURCE["rule_set"] == "source-7c78b0c"
    assert protocol_key("v2", SOURCE) == "v2"  # the original's rules: the key it always had
    assert protocol_key("v2", FROZEN) == "v2+frozen-quotes"
    assert protocol_key("v1", Methodology().stamp()) == "v1"
    horizon = cohort_stamp(Methodology(version="v2"), ["horizon"])
    assert protocol_key("v2", {**horizon, "horizon_days": 14}) == "v2+horizon-14d"
    frozen_horizon = {k: v for k, v in horizon.items() if k != "rule_set"}
    assert protocol_key("v2", {**frozen_horizon, "horizon_days": 14}) == (
        "v2+frozen-quotes+horizon-14d"
    )
    rules = [scopes.rule_key(k) for k in ("v1+horizon-14d", "v2+horizon-14d")]
    assert rules == ["v1", "v2"]
    assert scopes.rule_key("v2+frozen-quotes+horizon-14d") == "v2+frozen-quotes"
    assert [boards.ranked_on(k) for k in ("v1", "v2", "v2+frozen-quotes")] == [
        "return_pct",
        "total_pnl",
        "return_pct",
    ]


def _group(engine: Engine, first: int, stamp: dict[str, Any]) -> None:
    """Cohorts `first` (A and B) and `first` + 1 (A alone), stamped v2 `stamp`; A wins $100
    in each, B $150; settled and valued."""
    a1, b1 = new_cohort_agents(engine, ("fam-a", "fam-b"), number=first)
    (a2,) = new_cohort_agents(engine, ("fam-a",), number=first + 1)
    with engine.begin() as conn:
        conn.execute(
            update(COHORTS)
            .where(COHORTS.c.number.in_([first, first + 1]))
            .values(methodology_version="v2", constants=stamp)
        )
    names = [f"g{first}-{n}" for n in range(3)]
    with session_scope(engine) as s:
        for name in names:
            s.add(market(name, prices=["0.5", "0.5"]))
    t = WEEK1 + timedelta(weeks=first - 1, minutes=5)
    trade_into(engine, a1, names[0], "YES", "100", "0.5", t)
    trade_into(engine, b1, names[1], "YES", "150", "0.5", t)
    trade_into(engine, a2, names[2], "YES", "100", "0.5", t + timedelta(weeks=1))
    settled = t + timedelta(weeks=1, days=1)
    for name in names:
        settle_market(engine, name, Verdict("resolved", "Yes", "test"), settled)
    take_snapshots(engine, settled + timedelta(hours=1))


@pytest.fixture
def both_rule_sets(engine: Engine) -> Engine:
    """Cohorts 1–2 under the original's rules, 3–4 the same book under frozen quotes."""
    _group(engine, 1, SOURCE)
    _group(engine, 3, FROZEN)
    return engine


def test_the_original_s_rules_rank_by_summed_pnl_frozen_quotes_by_return(
    both_rule_sets: Engine,
) -> None:
    engine = both_rule_sets
    assert protocols_present(engine) == {"v2": [1, 2], "v2+frozen-quotes": [3, 4]}
    with engine.connect() as conn:
        ids = cohort_id_of(conn, None, "v2")
    assert isinstance(ids, tuple) and len(ids) == 2  # never the frozen cohorts
    args: dict[str, Any] = {"replicates": 400, "null_seeds": 0}
    source = leaderboard(engine, methodology="v2", **args).set_index("family_id")
    frozen = leaderboard(engine, methodology="v2+frozen-quotes", **args).set_index("family_id")
    for board in (source, frozen):  # the same book: the same money, never pooled
        assert board["cohorts"].to_dict() == {"fam-a": 2, "fam-b": 1}
        assert board["total_pnl"].to_dict() == pytest.approx({"fam-a": 200.0, "fam-b": 150.0})
        assert board["return_pct"].to_dict() == pytest.approx({"fam-a": 1.0, "fam-b": 1.5})
    assert source["rank"].to_dict() == {"fam-a": 1, "fam-b": 2}  # by summed dollars
    assert frozen["rank"].to_dict() == {"fam-a": 2, "fam-b": 1}  # by return
    # Cohort 1 holds two events (A's and B's), cohort 2 one: a replicate draws A's event of
    # cohort 1 w times (0, 1, 2; B's 2 − w). A has $100 (w + 1), B $150 (2 − w): A leads
    # the dollars unless w = 0 (¾ of replicates); on return (A's over $20,000, B's over
    # $10,000) only when w = 2 (¼).
    assert source.loc["fam-a", "p_rank_1"] == pytest.approx(0.75, abs=0.08)
    assert frozen.loc["fam-a", "p_rank_1"] == pytest.approx(0.25, abs=0.08)
    assert source.loc["fam-a", "rank_low"] == 1 and source.loc["fam-a", "rank_high"] == 2
    shown = ranked(source.reset_index().iloc[::-1], "v2")
    assert shown["family_id"].tolist() == ["fam-a", "fam-b"]
    shown = ranked(frozen.reset_index().iloc[::-1], "v2+frozen-quotes")
    assert shown["family_id"].tolist() == ["fam-b", "fam-a"]
    # A chosen cohort is read under its own rules: one cohort, one capital, the same order.
    one = leaderboard(engine, cohort=1, **args).set_index("family_id")
    assert one["rank"].to_dict() == {"fam-a": 2, "fam-b": 1}


def test_the_selector_and_the_hourly_job_keep_the_rule_sets_apart(
    both_rule_sets: Engine,
) -> None:
    engine = both_rule_sets
    scope = version_scope(engine, "v2")
    assert (scope.pooled, scope.extended) == ([1, 2], [])
    assert scope.other == {"v2+frozen-quotes": [3, 4]}  # another protocol, not "extended"
    frozen = version_scope(engine, "v2+frozen-quotes")
    assert frozen.pooled == [3, 4] and frozen.other == {"v2": [1, 2]}
    outcome = store_analyses(engine, datetime(2026, 12, 31, tzinfo=UTC))
    assert {"all:v2", "all:v2+frozen-quotes"} <= set(outcome.scopes)
    for key, leader in (("v2", "fam-a"), ("v2+frozen-quotes", "fam-b")):
        stored = stored_result(engine, "leaderboard", methodology=key)
        assert stored is not None
        board: pd.DataFrame = stored.frame
        assert board["cohorts"].sum() == 3  # its own two cohorts' agents alone
        assert board.loc[board["rank"] == 1, "family_id"].tolist() == [leader]
